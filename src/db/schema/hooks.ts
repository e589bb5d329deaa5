// Repository events and outbound webhooks.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { repos } from "./repos.ts";

export const events = sqliteTable("events", {
  id: id(),
  repoId: text("repo_id").notNull(),
  orgId: text("org_id").notNull(),
  kind: text("kind").notNull(),
  payload: text("payload", { mode: "json" }).notNull(),
  actorUserId: text("actor_user_id"),
  createdAt: createdAt(),
}, (t) => [index("events_repo_idx").on(t.repoId, t.createdAt)]);

export const webhooks = sqliteTable("webhooks", {
  id: id(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  url: text("url").notNull(),
  /** HMAC key; needed in clear to sign deliveries. */
  secret: text("secret").notNull(),
  createdAt: createdAt(),
});

export const webhookDeliveries = sqliteTable("webhook_deliveries", {
  id: id(),
  webhookId: text("webhook_id").notNull().references(() => webhooks.id, { onDelete: "cascade" }),
  eventId: text("event_id").notNull(),
  event: text("event").notNull(),
  attempt: integer("attempt").notNull(),
  statusCode: integer("status_code"),
  error: text("error"),
  durationMs: integer("duration_ms").notNull(),
  deliveredAt: integer("delivered_at").notNull(),
});
