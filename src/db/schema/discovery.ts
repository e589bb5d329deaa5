// Follows, pins and the contribution graph. Repository search is an FTS5 table (`repo_search`)
// over `repos` kept by triggers in migrations/*_discovery.sql, outside drizzle's schema;
// `repo_search_docs` gives each repository the stable integer id the FTS rows are keyed by.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns.ts";
import { users } from "./people.ts";
import { repos } from "./repos.ts";

export const follows = sqliteTable("follows", {
  followerId: text("follower_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  followeeId: text("followee_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  createdAt: createdAt(),
}, (t) => [
  primaryKey({ columns: [t.followerId, t.followeeId] }),
  index("follows_followee_idx").on(t.followeeId, t.createdAt),
  index("follows_follower_idx").on(t.followerId, t.createdAt),
]);

export const pins = sqliteTable("pins", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  position: integer("position").notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.repoId] }), index("pins_repo_idx").on(t.repoId)]);

/** One row per (person, repository, commit) credited: makes recording idempotent. */
export const contributions = sqliteTable("contributions", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  sha: text("sha").notNull(),
  /** UTC day of the author date, as days since 1970-01-01. */
  day: integer("day").notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.repoId, t.sha] }), index("contributions_repo_idx").on(t.repoId)]);

/** Commits credited per person, UTC day and repository: what the graph reads (one row per active day and repo). */
export const contributionDays = sqliteTable("contribution_days", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  day: integer("day").notNull(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  count: integer("count").notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.day, t.repoId] }), index("contribution_days_repo_idx").on(t.repoId)]);

/**
 * Commits credited per person and UTC day, every repository together: the graph's `count` for
 * someone who opted in to private work, one row per active day. Kept by triggers on
 * `contribution_days` (migrations/*_discovery.sql) in the same transaction, so a deleted
 * repository's commits leave it as they leave the per-repository rows.
 */
export const contributionTotals = sqliteTable("contribution_totals", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  day: integer("day").notNull(),
  count: integer("count").notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.day] })]);

/** The repositories a person has credited commits in (kept by a trigger on `contribution_days`): the graph resolves names and visibility once per repository. */
export const contributionRepos = sqliteTable("contribution_repos", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
}, (t) => [primaryKey({ columns: [t.userId, t.repoId] }), index("contribution_repos_repo_idx").on(t.repoId)]);

/** The FTS5 row id of each repository (maintained by triggers on `repos`; no foreign key, so a delete trigger still finds it). */
export const repoSearchDocs = sqliteTable("repo_search_docs", {
  docid: integer("docid").primaryKey({ autoIncrement: true }),
  repoId: text("repo_id").notNull().unique(),
});
