// CI: runner groups, registration tokens, machines, runs and jobs.
import { sql } from "drizzle-orm";
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { orgs } from "./orgs.ts";
import { repos } from "./repos.ts";

export const runnerGroups = sqliteTable("runner_groups", {
  id: id(),
  orgId: text("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  repoAccess: text("repo_access", { enum: ["all", "selected"] }).notNull().default("all"),
  allowPublic: integer("allow_public", { mode: "boolean" }).notNull().default(false),
  isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
  repos: text("repos", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
  createdAt: createdAt(),
  updatedAt: integer("updated_at").notNull(),
}, (t) => [uniqueIndex("runner_groups_org_name_uq").on(t.orgId, sql`lower(${t.name})`)]);

export const runnerRegistrationTokens = sqliteTable("runner_registration_tokens", {
  id: id(),
  orgId: text("org_id"),
  groupId: text("group_id"),
  hosted: integer("hosted", { mode: "boolean" }).notNull().default(false),
  secretHash: text("secret_hash").notNull(),
  expiresAt: integer("expires_at").notNull(),
  spentAt: integer("spent_at"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("runner_reg_hash_uq").on(t.secretHash)]);

export const runners = sqliteTable("runners", {
  id: id(),
  orgId: text("org_id"),
  groupId: text("group_id"),
  name: text("name").notNull(),
  labels: text("labels", { mode: "json" }).$type<string[]>().notNull(),
  os: text("os").notNull(),
  arch: text("arch").notNull(),
  version: text("version").notNull().default(""),
  ephemeral: integer("ephemeral", { mode: "boolean" }).notNull().default(false),
  credentialHash: text("credential_hash").notNull(),
  lastSeenAt: integer("last_seen_at").notNull(),
  removedAt: integer("removed_at"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("runners_cred_uq").on(t.credentialHash)]);

export const runs = sqliteTable("runs", {
  id: id(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  workflow: text("workflow").notNull(),
  commit: text("commit").notNull(),
  ref: text("ref").notNull(),
  event: text("event").notNull(),
  state: text("state").notNull(),
  createdAt: createdAt(),
  finishedAt: integer("finished_at"),
});

export const workflowJobs = sqliteTable("workflow_jobs", {
  id: id(),
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  key: text("key").notNull(),
  runsOn: text("runs_on", { mode: "json" }).$type<string[]>().notNull(),
  spec: text("spec", { mode: "json" }).notNull(),
  state: text("state").notNull(),
  verdict: text("verdict"),
  error: text("error"),
  runnerId: text("runner_id"),
  tokenId: text("token_id"),
  log: text("log").notNull().default(""),
  startedAt: integer("started_at"),
  finishedAt: integer("finished_at"),
  lastHeartbeatAt: integer("last_heartbeat_at"),
});
