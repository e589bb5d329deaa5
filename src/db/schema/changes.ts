// Changes (reviewable proposals) and the lander's queue.
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { repos } from "./repos.ts";

export const changes = sqliteTable("changes", {
  id: id(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
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
  verdict: text("verdict"),
  authorUserId: text("author_user_id"),
  queuedAt: integer("queued_at"),
  createdAt: createdAt(),
  updatedAt: integer("updated_at").notNull(),
}, (t) => [uniqueIndex("changes_repo_number_uq").on(t.repoId, t.number)]);
