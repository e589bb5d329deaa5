// Changes (reviewable proposals) and the lander's queue.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
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
