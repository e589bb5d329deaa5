// Request and response shapes of comments on changes (DECISIONS §5 "Reviews on changes"; issue 28 plan §2).
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString } from "../schemas.ts";

const NullableInt = (options: Record<string, unknown> = {}) => Type.Union([Type.Integer(), Type.Null()], options);

/** The most characters a comment body takes. */
export const MAX_COMMENT_BODY = 65_536;
/** The most lines one comment may span. */
export const MAX_COMMENT_LINES = 500;

export const CommentCreate = Type.Object({
  body: Type.String({ description: `1-${MAX_COMMENT_BODY} characters of Markdown`, examples: ["Should this retry on 503 too?"] }),
  path: Type.Optional(NullableString({ description: "a file of the patchset's diff; omit for a comment on the whole change" })),
  line: Type.Optional(NullableInt({ description: "the (last) line commented on, 1-based, on `side`; needed with `path`" })),
  start_line: Type.Optional(NullableInt({ description: `the first line of a range (at most ${MAX_COMMENT_LINES} lines); omit for one line` })),
  side: Type.Optional(
    Type.Union([Type.Literal("new"), Type.Literal("old"), Type.Null()], { description: "`new` (default): the head's lines; `old`: the merge base's" }),
  ),
  in_reply_to: Type.Optional(NullableString({ description: "a comment of the same change: this one joins its thread (and takes no path or line)" })),
  patchset: Type.Optional(NullableInt({ description: "the patchset the lines are on; default the current one" })),
  draft: Type.Optional(
    Type.Boolean({
      description: "a pending comment of the caller's next review: seen by its author alone, published by their next POST …/reviews (default false)",
    }),
  ),
});
export type CommentCreate = Static<typeof CommentCreate>;

export const CommentPatch = Type.Object({
  body: Type.Optional(Type.String({ description: "new text (the comment's author only)" })),
  resolved: Type.Optional(Type.Boolean({ description: "resolve or reopen the comment's thread (writers, or the change's author)" })),
});
export type CommentPatch = Static<typeof CommentPatch>;

export const CommentAuthor = Type.Union([Type.Object({ user_id: Type.String(), handle: Type.String() }), Type.Null()], {
  description: "null once the person's account is gone",
});

export const CommentSuggestion = Type.Union(
  [
    Type.Object({
      text: Type.String({ description: "the replacement lines the ```suggestion block proposes" }),
      applicable: Type.Boolean({ description: "whether it can be applied now (not applied, not outdated)" }),
      applied_commit: NullableString({ description: "the commit that applied it" }),
    }),
    Type.Null(),
  ],
  { description: "the comment's ```suggestion block, null without one" },
);

const COMMENT_EXAMPLE = {
  id: "c4m8x2k6p1q9s3t7",
  author: { user_id: "u7p4q8s6t1r3k9x2", handle: "bo" },
  body: "Should this retry on 503 too?",
  body_html: "<p>Should this retry on 503 too?</p>\n",
  path: "src/upload.ts",
  line: 12,
  start_line: null,
  side: "new",
  patchset: 2,
  in_reply_to: null,
  thread_id: "c4m8x2k6p1q9s3t7",
  review_id: null,
  resolved: false,
  outdated: false,
  current_line: 14,
  current_start_line: null,
  anchor_text: "  if (res.status === 503) return retry();\n",
  context_text: "  const res = await put(url, body);\n",
  suggestion: null,
  draft: false,
  created_at: 1795249012000,
  updated_at: 1795249012000,
  edited_at: null,
} as const;

export const Comment = Type.Object(
  {
    id: Type.String(),
    author: CommentAuthor,
    body: NullableString({ description: "the Markdown source; null when deleted (a thread's root with replies stays as a tombstone)" }),
    body_html: NullableString({ description: "the body rendered to sanitized HTML, `#N` and `@handle` linked" }),
    path: NullableString(),
    line: NullableInt({ description: "on `patchset`, as posted" }),
    start_line: NullableInt(),
    side: Type.Union([Type.Literal("new"), Type.Literal("old"), Type.Null()]),
    patchset: Type.Integer({ description: "the patchset it was made on" }),
    in_reply_to: NullableString(),
    thread_id: Type.String({ description: "the thread's root comment (its own id for a root)" }),
    review_id: NullableString({ description: "the review that published it" }),
    resolved: Type.Boolean({ description: "whether its thread is resolved (the flag lives on the root)" }),
    outdated: Type.Boolean({ description: "a later patchset changed the lines it is on" }),
    current_line: NullableInt({ description: "where `line` is on the current patchset; null when outdated or not a line comment" }),
    current_start_line: NullableInt(),
    anchor_text: NullableString({ description: "the lines commented on, as they were" }),
    context_text: NullableString({ description: "up to 3 lines before them" }),
    suggestion: CommentSuggestion,
    draft: Type.Boolean({ description: "a pending comment of its author's next review (listed to its author alone)" }),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    edited_at: NullableInt({ description: "when the body was last edited" }),
  },
  { examples: [COMMENT_EXAMPLE] },
);
export type Comment = Static<typeof Comment>;

export const CommentList = Type.Object(
  { comments: Type.Array(Comment), next_cursor: NextCursor },
  { examples: [{ comments: [COMMENT_EXAMPLE], next_cursor: null }] },
);
export type CommentList = Static<typeof CommentList>;

export const CommentListQuery = Type.Object({
  patchset: Type.Optional(Type.String({ description: "only comments made on this patchset" })),
  path: Type.Optional(Type.String({ description: "only threads on this file" })),
  limit: Type.Optional(Type.String()),
  cursor: Type.Optional(Type.String()),
});
export type CommentListQuery = Static<typeof CommentListQuery>;
