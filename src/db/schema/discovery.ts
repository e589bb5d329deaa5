// Follows, pins and the contribution graph.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { users } from "./people.ts";
import { repos } from "./repos.ts";

export const follows = sqliteTable("follows", {
  followerId: text("follower_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  followeeId: text("followee_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.followerId, t.followeeId] })]);

export const pins = sqliteTable("pins", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  position: integer("position").notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.repoId] })]);

export const contributions = sqliteTable("contributions", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  sha: text("sha").notNull(),
  day: text("day").notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.repoId, t.sha] })]);
