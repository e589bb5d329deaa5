// Follows, pins and the contribution graph. Repository search is an FTS5 table (`repo_search`)
// over `repos` kept by triggers in migrations/*_discovery.sql, outside drizzle's schema;
// `repo_search_docs` gives each repository the stable integer id the FTS rows are keyed by.
import { blob, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns.ts";
import { users } from "./people.ts";
import { repos } from "./repos.ts";

export const follows = sqliteTable(
  "follows",
  {
    followerId: text("follower_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    followeeId: text("followee_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.followerId, t.followeeId] }),
    index("follows_followee_idx").on(t.followeeId, t.createdAt),
    index("follows_follower_idx").on(t.followerId, t.createdAt),
  ],
);

export const pins = sqliteTable(
  "pins",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.repoId] }), index("pins_repo_idx").on(t.repoId)],
);

/** One row per (person, repository, commit) credited: makes recording idempotent. */
export const contributions = sqliteTable(
  "contributions",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    sha: text("sha").notNull(),
    /** UTC day of the author date, as days since 1970-01-01. */
    day: integer("day").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.repoId, t.sha] }), index("contributions_repo_idx").on(t.repoId)],
);

/**
 * Per person who has credited commits: the next repository slot to hand out (slots are never
 * reused, so a deleted repository's entries left in `contribution_counts` can never be read as
 * another's) and a counter every credit moves (part of the graph cache's key).
 */
export const contributionPeople = sqliteTable("contribution_people", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  nextSlot: integer("next_slot").notNull(),
  version: integer("version").notNull(),
});

/** The repositories a person has credited commits in, each under a small per-person number (its slot in `contribution_counts`). */
export const contributionSlots = sqliteTable(
  "contribution_slots",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    slot: integer("slot").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.repoId] }), index("contribution_slots_repo_idx").on(t.repoId)],
);

/**
 * Commits credited per person and UTC day, one row per active day: `counts` holds 8 bytes per
 * repository, (slot, commits) as big-endian uint32s. What the graph reads (services/discovery/graph-json.ts).
 */
export const contributionCounts = sqliteTable(
  "contribution_counts",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    day: integer("day").notNull(),
    counts: blob("counts", { mode: "buffer" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day] })],
);

/** The FTS5 row id of each repository (maintained by triggers on `repos`; no foreign key, so a delete trigger still finds it). */
export const repoSearchDocs = sqliteTable("repo_search_docs", {
  docid: integer("docid").primaryKey({ autoIncrement: true }),
  repoId: text("repo_id").notNull().unique(),
});
