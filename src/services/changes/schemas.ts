// Request and response shapes of changes, diffs and the lander (DECISIONS §3; SPEC §6.1).
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString } from "../schemas.ts";
import { DiffFile } from "../git/schemas.ts";
import { Check } from "../ci/schemas.ts";
import { CommitSummary } from "../repos/schemas.ts";

import { Comment, CommentCreate } from "./comment-schemas.ts";

export { Check, CheckList } from "../ci/schemas.ts";

const Sha = (options: Record<string, unknown> = {}) => Type.String({ pattern: "^[0-9a-f]{40}$", ...options });

export const ChangeSource = Type.Object(
  {
    org: Type.String({ description: "the fork's owner (org or person)", examples: ["ada"] }),
    repo: Type.String({ description: "the fork's name", examples: ["widgets"] }),
  },
  { description: "where `branch` lives when it is not in this repository (a fork); the caller needs read access to it" },
);
export type ChangeSource = Static<typeof ChangeSource>;

export const ChangeCreate = Type.Object({
  title: Type.String({ description: "1-200 characters", examples: ["Retry uploads on 503"] }),
  description: Type.Optional(NullableString({ description: "at most 65,536 characters" })),
  branch: Type.String({ description: "the branch holding the proposed commits", examples: ["retry-uploads"] }),
  source: Type.Optional(Type.Union([ChangeSource, Type.Null()])),
  target: Type.Optional(Type.String({ description: "the branch to land on; defaults to the repository's default branch", examples: ["main"] })),
  depends_on: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "the number of the change this one is stacked on" })),
});
export type ChangeCreate = Static<typeof ChangeCreate>;

/** A change's states (DECISIONS §3). Requests take them as plain strings checked by the service: a value outside answers 422 (SPEC §7), where a schema failure would be 400. */
export const CHANGE_STATES = ["open", "queued", "landed", "ejected", "closed"] as const;
/** The states PATCH may set: closing and reopening (the lander moves the others). */
export const SETTABLE_CHANGE_STATES = ["open", "closed"] as const;

export const ChangePatch = Type.Object({
  title: Type.Optional(Type.String({ description: "1-200 characters" })),
  description: Type.Optional(NullableString()),
  target: Type.Optional(Type.String()),
  depends_on: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  state: Type.Optional(
    Type.String({
      enum: [...SETTABLE_CHANGE_STATES],
      description: "`closed` closes (and leaves the queue); `open` reopens a closed change; any other value answers 422",
    }),
  ),
});
export type ChangePatch = Static<typeof ChangePatch>;

export const Verdict = Type.Object(
  {
    kind: Type.String({ description: "conflict, check_failed, head_moved, stack, target_missing, unrelated, forbidden, unsupported, approval" }),
    message: Type.String(),
    paths: Type.Optional(Type.Array(Type.String(), { description: "conflict: the paths both sides changed" })),
    check: Type.Optional(Type.String({ description: "check_failed: the required check's key" })),
    state: Type.Optional(Type.String({ description: "check_failed: the check's state" })),
    expected: Type.Optional(Type.String({ description: "head_moved: the head the land request was made for" })),
    actual: Type.Optional(NullableString({ description: "head_moved: the head now (null: branch deleted)" })),
    required: Type.Optional(Type.Integer({ description: "approval: the approvals the target's protection requires" })),
    approvals: Type.Optional(Type.Integer({ description: "approval: the approvals that count now" })),
    changes_requested_by: Type.Optional(Type.Array(Type.String(), { description: "approval: handles of writers whose standing review requests changes" })),
  },
  { examples: [{ kind: "conflict", message: "both sides changed src/upload.ts", paths: ["src/upload.ts"] }] },
);
export type Verdict = Static<typeof Verdict>;

// ---- Reviews, reviewers and checks (issue 28) ----------------------------------------------------

/** A review's verdicts (DECISIONS §5). */
export const REVIEW_VERDICTS = ["approve", "request_changes", "comment"] as const;
export type ReviewVerdict = (typeof REVIEW_VERDICTS)[number];

const PersonRef = Type.Object({ user_id: Type.String(), handle: Type.String() });

/** A reviewer's state on a change. */
export const REVIEWER_STATES = ["requested", "approved", "changes_requested", "commented"] as const;

export const Reviewer = Type.Object(
  {
    user_id: Type.String(),
    handle: Type.String(),
    state: Type.String({
      enum: [...REVIEWER_STATES],
      description: "approved / changes_requested: their standing review; commented: they reviewed without a standing verdict; requested: asked, no review yet",
    }),
    requested: Type.Boolean({ description: "whether they were asked to review (POST …/reviewers)" }),
  },
  { examples: [{ user_id: "u7p4q8s6t1r3k9x2", handle: "bo", state: "approved", requested: true }] },
);
export type Reviewer = Static<typeof Reviewer>;

export const ReviewerList = Type.Object(
  { reviewers: Type.Array(Reviewer) },
  { examples: [{ reviewers: [{ user_id: "u7p4q8s6t1r3k9x2", handle: "bo", state: "requested", requested: true }] }] },
);
export type ReviewerList = Static<typeof ReviewerList>;

export const ReviewersRequest = Type.Object({
  handles: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
    minItems: 1,
    maxItems: 20,
    description: "1-20 handles of people who can read the repository",
  }),
});
export type ReviewersRequest = Static<typeof ReviewersRequest>;

export const ReviewCreate = Type.Object({
  verdict: Type.String({ description: "approve, request_changes or comment (any other value answers 422)", examples: ["approve"] }),
  body: Type.Optional(NullableString({ description: "at most 65,536 characters (markdown)" })),
  comments: Type.Optional(
    Type.Array(CommentCreate, {
      maxItems: 100,
      description:
        "line or general comments posted with the review: each a POST …/comments body without `patchset` or `draft` (the review is on the current patchset); the caller's pending (draft) comments on the change are published with them, at most 100 together",
    }),
  ),
});
export type ReviewCreate = Static<typeof ReviewCreate>;

export const ReviewDismiss = Type.Object({
  message: Type.Optional(NullableString({ description: "why (at most 1,000 characters; shown in the change's activity, not stored on the review)" })),
});
export type ReviewDismiss = Static<typeof ReviewDismiss>;

const REVIEW_EXAMPLE = {
  id: "v3k9x2m7p4q8s6t1",
  author: { user_id: "u7p4q8s6t1r3k9x2", handle: "bo" },
  verdict: "approve",
  body: "Looks good.",
  body_html: "<p>Looks good.</p>",
  patchset: 2,
  head: "3f786850e387550fdab836ed7e6dc881de23001b",
  dismissed: false,
  dismissed_reason: null,
  created_at: 1795249012000,
  comments: [],
} as const;

export const Review = Type.Object(
  {
    id: Type.String(),
    author: Type.Union([PersonRef, Type.Null()], { description: "null once the person's account is gone" }),
    verdict: Type.String({ enum: [...REVIEW_VERDICTS] }),
    body: NullableString(),
    body_html: NullableString({ description: "the body rendered to sanitized HTML, `#N` and `@handle` linked" }),
    patchset: Type.Integer({ description: "the patchset current when the review was posted" }),
    head: Type.String({ description: "the change's head when the review was posted" }),
    dismissed: Type.Boolean(),
    dismissed_reason: NullableString({ description: "stale (a push after an approval, when the protection dismisses stale approvals) or manual (an admin)" }),
    created_at: Type.Integer({ description: "epoch milliseconds" }),
    comments: Type.Array(Comment, { description: "the comments posted with the review, oldest first" }),
  },
  { examples: [REVIEW_EXAMPLE] },
);
export type Review = Static<typeof Review>;

export const ReviewList = Type.Object({ reviews: Type.Array(Review, { description: "oldest first" }) }, { examples: [{ reviews: [REVIEW_EXAMPLE] }] });
export type ReviewList = Static<typeof ReviewList>;

const CHANGE_EXAMPLE = {
  number: 7,
  title: "Retry uploads on 503",
  description: "Backs off up to three times.",
  state: "queued",
  branch: "retry-uploads",
  source: null,
  target: "main",
  head: "3f786850e387550fdab836ed7e6dc881de23001b",
  base: "89e6c98d92887913cadf06b2adb97f26cde4849b",
  patchset: 2,
  depends_on: null,
  landed_commit: null,
  included_in: null,
  author: { user_id: "u1k3x9m2p7q4r8s6", handle: "ada" },
  verdict: null,
  waiting: "waiting for required check test: no result yet for 3f786850",
  checks: [{ key: "test", state: "running", run_id: "r3k9x2m7p4q8s6t1", job_id: "j7p4q8s6t1r3k9x2" }],
  reviewers: [{ user_id: "u7p4q8s6t1r3k9x2", handle: "bo", state: "approved", requested: true }],
  created_at: 1795248971422,
  updated_at: 1795249012000,
} as const;

export const Change = Type.Object(
  {
    number: Type.Integer(),
    title: Type.String(),
    description: NullableString(),
    state: Type.String({ enum: [...CHANGE_STATES] }),
    branch: Type.String(),
    source: Type.Union([ChangeSource, Type.Null()], { description: "null when the branch is in this repository" }),
    target: Type.String(),
    head: NullableString({ description: "the branch's commit this patchset is about" }),
    base: NullableString({ description: "the target's tip when this patchset was recorded" }),
    patchset: Type.Integer({ description: "starts at 1; grows each time the head moves" }),
    depends_on: Type.Union([Type.Integer(), Type.Null()]),
    landed_commit: NullableString({ description: "the target's commit that landed it" }),
    included_in: Type.Union([Type.Integer(), Type.Null()], { description: "the stack's top whose landing landed this change" }),
    author: Type.Union([Type.Object({ user_id: Type.String(), handle: Type.String() }), Type.Null()]),
    verdict: Type.Union([Verdict, Type.Null()], { description: "why the lander ejected it (state ejected)" }),
    waiting: NullableString({ description: "why a queued change is not landing yet" }),
    checks: Type.Array(Check, { description: "the check results of its head, by key (a change from a fork: none until CI runs fork changes)" }),
    reviewers: Type.Array(Reviewer, { description: "people asked to review and people who reviewed (not the author)" }),
    created_at: Type.Integer({ description: "epoch milliseconds" }),
    updated_at: Type.Integer({ description: "epoch milliseconds" }),
  },
  { examples: [CHANGE_EXAMPLE] },
);
export type Change = Static<typeof Change>;

export const ChangeList = Type.Object(
  { changes: Type.Array(Change), next_cursor: NextCursor },
  { examples: [{ changes: [CHANGE_EXAMPLE], next_cursor: null }] },
);
export type ChangeList = Static<typeof ChangeList>;

export const ChangeListQuery = Type.Object({
  state: Type.Optional(Type.String({ enum: [...CHANGE_STATES], description: "only changes in this state; any other value answers 422" })),
  limit: Type.Optional(Type.String({ description: "1-100, default 30" })),
  cursor: Type.Optional(Type.String()),
});
export type ChangeListQuery = Static<typeof ChangeListQuery>;

const DIFF_EXAMPLE = {
  base: "89e6c98d92887913cadf06b2adb97f26cde4849b",
  head: "3f786850e387550fdab836ed7e6dc881de23001b",
  merge_base: "89e6c98d92887913cadf06b2adb97f26cde4849b",
  files: [
    {
      path: "src/upload.ts",
      status: "modified",
      old_mode: "100644",
      new_mode: "100644",
      old_oid: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
      new_oid: "d00491fd7e5bb6fa28c517a0bb32b8b506539d4d",
      binary: false,
      additions: 1,
      deletions: 1,
      patch: "@@ -1 +1 @@\n-retries = 0\n+retries = 3\n",
      patch_truncated: false,
    },
  ],
  additions: 1,
  deletions: 1,
  truncated: false,
  truncation: null,
} as const;

export const Diff = Type.Object(
  {
    base: Sha({ description: "the commit compared against (the target side)" }),
    head: Sha(),
    merge_base: NullableString({ description: "the best common ancestor the diff starts from (null: unrelated histories, diffed against the base itself)" }),
    files: Type.Array(DiffFile),
    additions: Type.Integer(),
    deletions: Type.Integer(),
    truncated: Type.Boolean({ description: "true when files or patches were left out" }),
    truncation: NullableString({ description: "what was left out and why" }),
  },
  { examples: [DIFF_EXAMPLE] },
);
export type Diff = Static<typeof Diff>;

/** Commits a compare lists at most: the newest ones of the range (GitHub's compare shows 250). */
export const COMPARE_COMMITS = 250;

export const Comparison = Type.Object(
  {
    ...Diff.properties,
    ahead: Type.Integer({ description: "commits the head has that the base has not (git rev-list --count base..head)" }),
    behind: Type.Integer({ description: "commits the base has that the head has not (git rev-list --count head..base)" }),
    commits: Type.Array(CommitSummary, {
      description: `the head's commits the base has not, oldest first; the newest ${COMPARE_COMMITS} when there are more (then fewer than \`ahead\`)`,
    }),
  },
  {
    examples: [
      {
        ...DIFF_EXAMPLE,
        ahead: 1,
        behind: 0,
        commits: [
          {
            sha: DIFF_EXAMPLE.head,
            message: "Retry uploads three times\n",
            author: { name: "Ada", email: "ada@example.com", date: 1795248971000, timezone: "+0100" },
            committer: { name: "Ada", email: "ada@example.com", date: 1795248971000, timezone: "+0100" },
            parents: [DIFF_EXAMPLE.base],
          },
        ],
      },
    ],
  },
);
export type Comparison = Static<typeof Comparison>;

export const Patchset = Type.Object({
  patchset: Type.Integer({ description: "1 for the head the change was opened with, then one more each time the head moved" }),
  head: Sha(),
  base: NullableString({ description: "the target's tip when this patchset was recorded" }),
  created_at: Type.Integer({ description: "epoch milliseconds" }),
});
export type Patchset = Static<typeof Patchset>;

export const PatchsetList = Type.Object(
  { patchsets: Type.Array(Patchset, { description: "oldest first" }) },
  { examples: [{ patchsets: [{ patchset: 1, head: CHANGE_EXAMPLE.head, base: CHANGE_EXAMPLE.base, created_at: 1795248971422 }] }] },
);
export type PatchsetList = Static<typeof PatchsetList>;

export const PatchsetDiffQuery = Type.Object({
  against: Type.Optional(Type.String({ description: "another patchset's number: the diff from its head to this one's (two-dot)" })),
});
export type PatchsetDiffQuery = Static<typeof PatchsetDiffQuery>;
