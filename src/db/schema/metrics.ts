// Operation metrics and the audit log.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";

export const metrics = sqliteTable("metrics", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  orgId: text("org_id").notNull(),
  repoId: text("repo_id"),
  kind: text("kind").notNull(),
  bytes: integer("bytes").notNull().default(0),
  durationMs: integer("duration_ms").notNull().default(0),
  createdAt: createdAt(),
}, (t) => [index("metrics_org_kind_idx").on(t.orgId, t.kind, t.createdAt)]);

export const auditEvents = sqliteTable("audit_events", {
  id: id(),
  orgId: text("org_id").notNull(),
  action: text("action").notNull(),
  actorKind: text("actor_kind").notNull(),
  actorId: text("actor_id"),
  actorName: text("actor_name"),
  target: text("target"),
  data: text("data", { mode: "json" }),
  createdAt: createdAt(),
}, (t) => [index("audit_org_idx").on(t.orgId, t.createdAt)]);
