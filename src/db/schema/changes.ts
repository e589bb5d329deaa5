// Changes (reviewable proposals) and the lander's queue.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { users } from "./people.ts";
import { repos } from "./repos.ts";

/**
 * States in which a change still follows its branch (its head moves with pushes); the heads of
 * its patchsets are readable through its repository (reachability roots, services/git/store.ts).
 */
export const LIVE_CHANGE_STATES = ["open", "queued", "ejected"] as const;

export const changes = sqliteTable(
  "changes",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    number: integer("number").notNull(),
    title: text("title").notNull(),
    description: text("description"),
    state: text("state").notNull(),
    branch: text("branch").notNull(),
    sourceRepoId: text("source_repo_id"),
    target: text("target").notNull(),
    head: text("head"),
    base: text("base"),
    patchset: integer("patchset").notNull().default(1),
    dependsOn: integer("depends_on"),
    landedCommit: text("landed_commit"),
    includedIn: integer("included_in"),
    /** JSON of the lander's last ejection verdict (null until ejected). */
    verdict: text("verdict", { mode: "json" }).$type<unknown>(),
    authorUserId: text("author_user_id"),
    queuedAt: integer("queued_at"),
    /** The head the land request was made for: the lander ejects the change when the head moved since. */
    queuedHead: text("queued_head"),
    /** Who asked to land it: the lander decides repo:write for them when it lands. */
    queuedByUserId: text("queued_by_user_id"),
    /** Why a queued change is not landing yet (e.g. a required check that has not reported). */
    waiting: text("waiting"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("changes_repo_number_uq").on(t.repoId, t.number),
    index("changes_queue_idx").on(t.state, t.repoId, t.target, t.queuedAt),
    index("changes_source_idx").on(t.sourceRepoId, t.branch),
    index("changes_repo_branch_idx").on(t.repoId, t.branch),
  ],
);

/** Every patchset a change had: the head (and the target's tip) each time its branch moved. */
export const changePatchsets = sqliteTable(
  "change_patchsets",
  {
    changeId: text("change_id")
      .notNull()
      .references(() => changes.id, { onDelete: "cascade" }),
    patchset: integer("patchset").notNull(),
    head: text("head").notNull(),
    base: text("base"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.changeId, t.patchset] })],
);

/**
 * Comments on a change: general ones (no path), line comments (path, side, line, start_line) and
 * replies (in_reply_to; grouped by thread_id = the root's id). A line comment is anchored to the
 * patchset it was made on (commit_oid/blob_oid/anchor_text); `anchored_patchset` and `cur_*` are
 * its position on the latest patchset it was mapped to, `outdated` once a later patchset changed
 * the lines. `body` null = a deleted root kept as a tombstone for its replies.
 */
export const changeComments = sqliteTable(
  "change_comments",
  {
    id: id(),
    changeId: text("change_id")
      .notNull()
      .references(() => changes.id, { onDelete: "cascade" }),
    repoId: text("repo_id").notNull(),
    authorUserId: text("author_user_id"),
    state: text("state", { enum: ["draft", "published"] })
      .notNull()
      .default("published"),
    body: text("body"),
    bodyHtml: text("body_html"),
    renderVersion: integer("render_version").notNull().default(0),
    threadId: text("thread_id").notNull(),
    inReplyTo: text("in_reply_to"),
    reviewId: text("review_id"),
    patchset: integer("patchset").notNull(),
    path: text("path"),
    side: text("side", { enum: ["new", "old"] }),
    line: integer("line"),
    startLine: integer("start_line"),
    commitOid: text("commit_oid"),
    blobOid: text("blob_oid"),
    anchorText: text("anchor_text"),
    contextText: text("context_text"),
    outdated: integer("outdated", { mode: "boolean" }).notNull().default(false),
    anchoredPatchset: integer("anchored_patchset").notNull(),
    curLine: integer("cur_line"),
    curStartLine: integer("cur_start_line"),
    suggestion: text("suggestion"),
    appliedCommit: text("applied_commit"),
    resolved: integer("resolved", { mode: "boolean" }).notNull().default(false),
    resolvedByUserId: text("resolved_by_user_id"),
    resolvedAt: integer("resolved_at"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull(),
    editedAt: integer("edited_at"),
  },
  (t) => [
    index("change_comments_change_idx").on(t.changeId, t.createdAt, t.id),
    index("change_comments_thread_idx").on(t.threadId, t.createdAt),
    index("change_comments_review_idx").on(t.reviewId),
    index("change_comments_author_idx").on(t.changeId, t.authorUserId, t.state),
    index("change_comments_anchor_idx").on(t.changeId, t.anchoredPatchset).where(sql`state = 'published' AND path IS NOT NULL`),
  ],
);

/** Reviews: a verdict with an optional body, on the patchset current when it was posted. */
export const changeReviews = sqliteTable(
  "change_reviews",
  {
    id: id(),
    changeId: text("change_id")
      .notNull()
      .references(() => changes.id, { onDelete: "cascade" }),
    repoId: text("repo_id").notNull(),
    authorUserId: text("author_user_id"),
    verdict: text("verdict", { enum: ["approve", "request_changes", "comment"] }).notNull(),
    body: text("body"),
    bodyHtml: text("body_html"),
    renderVersion: integer("render_version").notNull().default(0),
    patchset: integer("patchset").notNull(),
    head: text("head").notNull(),
    dismissed: integer("dismissed", { mode: "boolean" }).notNull().default(false),
    dismissedReason: text("dismissed_reason", { enum: ["stale", "manual"] }),
    dismissedByUserId: text("dismissed_by_user_id"),
    dismissedAt: integer("dismissed_at"),
    createdAt: createdAt(),
  },
  (t) => [index("change_reviews_change_idx").on(t.changeId, t.createdAt, t.id), index("change_reviews_person_idx").on(t.changeId, t.authorUserId, t.createdAt)],
);

/** People asked to review a change. */
export const changeReviewers = sqliteTable(
  "change_reviewers",
  {
    changeId: text("change_id")
      .notNull()
      .references(() => changes.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    requestedByUserId: text("requested_by_user_id"),
    requestedAt: integer("requested_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.changeId, t.userId] }), index("change_reviewers_user_idx").on(t.userId)],
);
