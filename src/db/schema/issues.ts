// Issues (issue 32, DECISIONS §5 "Issues"): the tracker beside the code. Issues and changes share
// one number sequence per repository (`repo_counters`), so `#N` names one thing. Text search has
// an index the schema cannot say: an FTS5 table on SQLite and a tsvector expression index on
// PostgreSQL, written by hand at the end of migrations 0021_issues / pg 0009_issues.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { users } from "./people.ts";
import { repos } from "./repos.ts";

/** The last number given to an issue or change of a repository (one row per repository, bumped in the creating transaction). */
export const repoCounters = sqliteTable("repo_counters", {
  repoId: text("repo_id")
    .primaryKey()
    .references(() => repos.id, { onDelete: "cascade" }),
  lastNumber: integer("last_number").notNull(),
});

/** An issue. `comments` counts its comments that are not deleted; `updated_at` moves with every comment and timeline event. */
export const issues = sqliteTable(
  "issues",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    number: integer("number").notNull(),
    title: text("title").notNull(),
    body: text("body"),
    bodyHtml: text("body_html"),
    state: text("state", { enum: ["open", "closed"] }).notNull(),
    closeReason: text("close_reason", { enum: ["completed", "not_planned"] }),
    closedAt: integer("closed_at"),
    closedByUserId: text("closed_by_user_id"),
    /** What closed it: `{ kind: "person", user_id }`, `{ kind: "change", number, commit }` or `{ kind: "commit", sha }`. */
    closedBy: text("closed_by", { mode: "json" }).$type<Record<string, unknown>>(),
    authorUserId: text("author_user_id"),
    comments: integer("comments").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull(),
    /** SQLite: the row's key in the `issues_fts` index (set by its trigger; unused on PostgreSQL). */
    ftsRowid: integer("fts_rowid"),
  },
  (t) => [
    uniqueIndex("issues_fts_rowid_uq").on(t.ftsRowid),
    uniqueIndex("issues_repo_number_uq").on(t.repoId, t.number),
    index("issues_repo_state_number_idx").on(t.repoId, t.state, t.number),
    index("issues_repo_state_updated_idx").on(t.repoId, t.state, t.updatedAt, t.number),
    index("issues_repo_state_comments_idx").on(t.repoId, t.state, t.comments, t.number),
    index("issues_repo_updated_idx").on(t.repoId, t.updatedAt, t.number),
    index("issues_repo_author_idx").on(t.repoId, t.authorUserId, t.number),
    index("issues_author_created_idx").on(t.authorUserId, t.createdAt),
    // Why (id, repo_id, state): a list driven by another table (an assignee's issues) counts per
    // state from the index alone, without reading each issue's row (bench/README §45).
    index("issues_id_repo_state_idx").on(t.id, t.repoId, t.state),
  ],
);

/** A repository's labels. `name_key` is the lower-cased name: names are unique per repository case-insensitively. */
export const labels = sqliteTable(
  "labels",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    nameKey: text("name_key").notNull(),
    /** Six lower-case hex digits, no `#`. */
    color: text("color").notNull(),
    description: text("description"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("labels_repo_name_uq").on(t.repoId, t.nameKey)],
);

/** Which labels an issue carries. */
export const issueLabels = sqliteTable(
  "issue_labels",
  {
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    labelId: text("label_id")
      .notNull()
      .references(() => labels.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.issueId, t.labelId] }), index("issue_labels_label_idx").on(t.labelId, t.issueId)],
);

/** Who an issue is assigned to. */
export const issueAssignees = sqliteTable(
  "issue_assignees",
  {
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.issueId, t.userId] }), index("issue_assignees_user_idx").on(t.userId, t.issueId)],
);

/** Comments on an issue. A deleted one keeps its row (`deleted_at`, body null) so list snapshots still know when it counted. */
export const issueComments = sqliteTable(
  "issue_comments",
  {
    id: id(),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    repoId: text("repo_id").notNull(),
    authorUserId: text("author_user_id"),
    body: text("body"),
    bodyHtml: text("body_html"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull(),
    editedAt: integer("edited_at"),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("issue_comments_issue_idx").on(t.issueId, t.createdAt, t.id), index("issue_comments_author_idx").on(t.authorUserId, t.createdAt)],
);

/**
 * The timeline of an issue: labeled, unlabeled, assigned, unassigned, closed, reopened, renamed,
 * edited, referenced. `dedupe` makes a background job's event idempotent (a commit or change
 * referencing the issue is recorded once).
 */
export const issueEvents = sqliteTable(
  "issue_events",
  {
    id: id(),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    repoId: text("repo_id").notNull(),
    kind: text("kind").notNull(),
    actorUserId: text("actor_user_id"),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    dedupe: text("dedupe"),
    createdAt: createdAt(),
  },
  (t) => [index("issue_events_issue_idx").on(t.issueId, t.createdAt, t.id), uniqueIndex("issue_events_dedupe_uq").on(t.issueId, t.dedupe)],
);
