// Request and response shapes of issues, labels, comments and timelines (DECISIONS §5 "Issues"; issue 32).
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString } from "../schemas.ts";

const NullableInt = (options: Record<string, unknown> = {}) => Type.Union([Type.Integer(), Type.Null()], options);

/** The most characters of an issue title. */
export const MAX_TITLE = 256;
/** The most characters of an issue body or comment. */
export const MAX_BODY = 65_536;
/** Labels and assignees one issue may carry. */
export const MAX_LABELS_PER_ISSUE = 50;
export const MAX_ASSIGNEES = 10;
/** Labels one repository may have. */
export const MAX_LABELS = 1000;
export const MAX_LABEL_NAME = 50;
export const MAX_LABEL_DESCRIPTION = 200;

const Person = Type.Object({ user_id: Type.String(), handle: Type.String() });
const NullablePerson = Type.Union([Person, Type.Null()], { description: "null once the person's account is gone" });

const LABEL_EXAMPLE = { name: "bug", color: "d73a4a", description: "Something isn't working" } as const;
export const Label = Type.Object(
  {
    name: Type.String(),
    color: Type.String({ description: "six lower-case hex digits, no #" }),
    description: NullableString(),
  },
  { examples: [LABEL_EXAMPLE] },
);
export type Label = Static<typeof Label>;

export const LabelList = Type.Object({ labels: Type.Array(Label) }, { examples: [{ labels: [LABEL_EXAMPLE] }] });
export type LabelList = Static<typeof LabelList>;

export const LabelCreate = Type.Object({
  name: Type.String({ description: `1-${MAX_LABEL_NAME} characters, unique per repository case-insensitively; no comma`, examples: ["bug"] }),
  color: Type.String({ description: "`#rrggbb` or `rrggbb`", examples: ["#d73a4a"] }),
  description: Type.Optional(NullableString({ description: `at most ${MAX_LABEL_DESCRIPTION} characters`, examples: ["Something isn't working"] })),
});
export type LabelCreate = Static<typeof LabelCreate>;

export const LabelPatch = Type.Object({
  name: Type.Optional(Type.String({ description: "a new name", examples: ["defect"] })),
  color: Type.Optional(Type.String({ examples: ["b60205"] })),
  description: Type.Optional(NullableString()),
});
export type LabelPatch = Static<typeof LabelPatch>;

const CLOSED_BY = Type.Union(
  [
    Type.Object({ kind: Type.Literal("person"), user_id: Type.String(), handle: Type.String() }),
    Type.Object({ kind: Type.Literal("change"), number: Type.Integer(), commit: NullableString() }),
    Type.Object({ kind: Type.Literal("commit"), sha: Type.String() }),
    Type.Null(),
  ],
  { description: "what closed it: a person, a change that landed with `fixes #N`, or a commit pushed to the default branch; null while open" },
);

const ISSUE_EXAMPLE = {
  number: 42,
  title: "Upload fails on files over 2 GiB",
  body: "Steps: push a 3 GiB file. Expected: it uploads. Seen: 413.",
  body_html: "<p>Steps: push a 3 GiB file. Expected: it uploads. Seen: 413.</p>\n",
  state: "closed",
  close_reason: "completed",
  closed_by: { kind: "change", number: 45, commit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904" },
  labels: [LABEL_EXAMPLE],
  assignees: [{ user_id: "u7p4q8s6t1r3k9x2", handle: "bo" }],
  author: { user_id: "u2k8q5x1m7p3s9t4", handle: "ada" },
  comments: 3,
  created_at: 1795249012000,
  updated_at: 1795252612000,
  closed_at: 1795252612000,
} as const;

export const Issue = Type.Object(
  {
    number: Type.Integer({ description: "shared with the repository's changes: `#N` names one thing" }),
    title: Type.String(),
    body: NullableString({ description: "Markdown source" }),
    body_html: NullableString({ description: "the body rendered to sanitized HTML, `#N`, `org/repo#N` and `@handle` linked" }),
    state: Type.Union([Type.Literal("open"), Type.Literal("closed")]),
    close_reason: Type.Union([Type.Literal("completed"), Type.Literal("not_planned"), Type.Null()]),
    closed_by: CLOSED_BY,
    labels: Type.Array(Label),
    assignees: Type.Array(Person),
    author: NullablePerson,
    comments: Type.Integer({ description: "comments not deleted" }),
    created_at: Type.Integer(),
    updated_at: Type.Integer({ description: "the last comment or timeline event (comment edits do not move it)" }),
    closed_at: NullableInt(),
  },
  { examples: [ISSUE_EXAMPLE] },
);
export type Issue = Static<typeof Issue>;

export const IssueCreate = Type.Object({
  title: Type.String({ description: `1-${MAX_TITLE} characters on one line`, examples: ["Upload fails on files over 2 GiB"] }),
  body: Type.Optional(NullableString({ description: `Markdown, at most ${MAX_BODY} characters`, examples: ["Steps: push a 3 GiB file."] })),
  labels: Type.Optional(
    Type.Array(Type.String(), { description: "names of existing labels (writers only)", maxItems: MAX_LABELS_PER_ISSUE, examples: [["bug"]] }),
  ),
  assignees: Type.Optional(
    Type.Array(Type.String(), { description: "handles of people who can write (writers only)", maxItems: MAX_ASSIGNEES, examples: [["bo"]] }),
  ),
});
export type IssueCreate = Static<typeof IssueCreate>;

export const IssuePatch = Type.Object({
  title: Type.Optional(Type.String({ description: "writers, or the issue's author", examples: ["Uploads over 2 GiB answer 413"] })),
  body: Type.Optional(NullableString({ description: "writers, or the issue's author" })),
  state: Type.Optional(Type.Union([Type.Literal("open"), Type.Literal("closed")], { description: "close or reopen (writers, or the issue's author)" })),
  close_reason: Type.Optional(
    Type.Union([Type.Literal("completed"), Type.Literal("not_planned")], { description: "with state closed; default completed", examples: ["not_planned"] }),
  ),
  labels: Type.Optional(Type.Array(Type.String(), { description: "the whole set of label names (writers)", maxItems: MAX_LABELS_PER_ISSUE })),
  assignees: Type.Optional(Type.Array(Type.String(), { description: "the whole set of assignee handles (writers)", maxItems: MAX_ASSIGNEES })),
});
export type IssuePatch = Static<typeof IssuePatch>;

export const IssueListQuery = Type.Object({
  state: Type.Optional(Type.String({ description: "open (default), closed or all", examples: ["open"] })),
  label: Type.Optional(Type.String({ description: "comma-separated label names: issues carrying all of them", examples: ["bug,ui"] })),
  assignee: Type.Optional(Type.String({ description: "a handle; `none` for unassigned", examples: ["bo"] })),
  author: Type.Optional(Type.String({ description: "a handle", examples: ["ada"] })),
  q: Type.Optional(Type.String({ description: "words that must all occur in the title or body (prefix match), at most 200 characters", examples: ["upload"] })),
  sort: Type.Optional(Type.String({ description: "created (default), updated or comments", examples: ["updated"] })),
  direction: Type.Optional(Type.String({ description: "desc (default) or asc", examples: ["desc"] })),
  limit: Type.Optional(Type.String({ description: "1-100, default 30", examples: ["30"] })),
  cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
});
export type IssueListQuery = Static<typeof IssueListQuery>;

export const IssueList = Type.Object(
  {
    issues: Type.Array(Issue),
    next_cursor: NextCursor,
    counts: Type.Object(
      { open: Type.Integer(), closed: Type.Integer() },
      { description: "issues matching every filter but state, per state (as of the first page)" },
    ),
  },
  { examples: [{ issues: [ISSUE_EXAMPLE], next_cursor: null, counts: { open: 12, closed: 30 } }] },
);
export type IssueList = Static<typeof IssueList>;

const COMMENT_EXAMPLE = {
  id: "c4m8x2k6p1q9s3t7",
  author: { user_id: "u7p4q8s6t1r3k9x2", handle: "bo" },
  body: "Reproduced on main; see #45.",
  body_html: '<p>Reproduced on main; see <a href="/acme/app/changes/45">#45</a>.</p>\n',
  created_at: 1795249012000,
  updated_at: 1795249012000,
  edited_at: null,
} as const;

export const IssueComment = Type.Object(
  {
    id: Type.String(),
    author: NullablePerson,
    body: Type.String(),
    body_html: Type.String({ description: "sanitized HTML, `#N` and `@handle` linked" }),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
    edited_at: NullableInt(),
  },
  { examples: [COMMENT_EXAMPLE] },
);
export type IssueComment = Static<typeof IssueComment>;

export const IssueCommentList = Type.Object(
  { comments: Type.Array(IssueComment), next_cursor: NextCursor },
  { examples: [{ comments: [COMMENT_EXAMPLE], next_cursor: null }] },
);
export type IssueCommentList = Static<typeof IssueCommentList>;

export const IssueCommentCreate = Type.Object({
  body: Type.String({ description: `1-${MAX_BODY} characters of Markdown`, examples: ["Reproduced on main; see #45."] }),
});
export type IssueCommentCreate = Static<typeof IssueCommentCreate>;

/** The kinds of timeline events. */
export const EVENT_KINDS = ["labeled", "unlabeled", "assigned", "unassigned", "closed", "reopened", "renamed", "edited", "referenced"] as const;
export type EventKindName = (typeof EVENT_KINDS)[number];

const EVENT_EXAMPLE = {
  id: "e8k2m5q1x7p3s9t4",
  kind: "closed",
  actor: { user_id: "u7p4q8s6t1r3k9x2", handle: "bo" },
  data: { reason: "completed", change: 45, commit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904" },
  created_at: 1795252612000,
} as const;

export const IssueEvent = Type.Object(
  {
    id: Type.String(),
    kind: Type.String({ description: EVENT_KINDS.join(", ") }),
    actor: NullablePerson,
    data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "labeled/unlabeled `{ label, color }`; assigned/unassigned `{ assignee: { user_id, handle } }`; closed `{ reason, change?, commit? }`; renamed `{ from, to }`; referenced `{ commit?, change?, repo?, message? }`",
    }),
    created_at: Type.Integer(),
  },
  { examples: [EVENT_EXAMPLE] },
);
export type IssueEvent = Static<typeof IssueEvent>;

export const IssueEventList = Type.Object(
  { events: Type.Array(IssueEvent), next_cursor: NextCursor },
  { examples: [{ events: [EVENT_EXAMPLE], next_cursor: null }] },
);
export type IssueEventList = Static<typeof IssueEventList>;

export const PageOnly = Type.Object({
  limit: Type.Optional(Type.String({ description: "1-100, default 30", examples: ["30"] })),
  cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
});
export type PageOnly = Static<typeof PageOnly>;
