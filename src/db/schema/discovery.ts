// Follows, pins and the contribution graph. Repository search is an FTS5 index over `repos` kept by
// triggers (migrations/*_search.sql), outside drizzle's schema.
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
