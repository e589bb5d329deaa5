// Repository events, outbound webhooks (SPEC §6.1) and mirrors (SPEC §6.2).
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { repos } from "./repos.ts";

export const events = sqliteTable(
  "events",
  {
    id: id(),
    repoId: text("repo_id").notNull(),
    orgId: text("org_id").notNull(),
    kind: text("kind").notNull(),
    payload: text("payload", { mode: "json" }).notNull(),
    actorUserId: text("actor_user_id"),
    createdAt: createdAt(),
  },
  (t) => [index("events_repo_idx").on(t.repoId, t.createdAt), index("events_org_idx").on(t.orgId, t.createdAt)],
);

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    /** HMAC key; needed in clear to sign deliveries (a hash could not sign). Never returned after creation. */
    secret: text("secret").notNull(),
    /** Sequence number of the last delivery queued for this hook: deliveries go out in this order. */
    lastSeq: integer("last_seq").notNull().default(0),
    /** The event kinds this hook receives; null = every kind. */
    events: text("events", { mode: "json" }).$type<string[] | null>(),
    createdAt: createdAt(),
  },
  (t) => [index("webhooks_repo_idx").on(t.repoId)],
);

/**
 * The delivery queue: one row per hook per event, written in the event's transaction. A hook's
 * deliveries go out one at a time in `seq` order; `pending` rows wait for their turn or a retry.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: id(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    repoId: text("repo_id").notNull(),
    eventId: text("event_id").notNull(),
    event: text("event").notNull(),
    seq: integer("seq").notNull(),
    /** The exact JSON sent (and signed) on every attempt. */
    body: text("body").notNull(),
    state: text("state", { enum: ["pending", "delivered", "failed"] })
      .notNull()
      .default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    /** A worker holds the delivery until then (an attempt in flight). */
    leaseUntil: integer("lease_until"),
    finishedAt: integer("finished_at"),
    /** The delivery this one re-sends (a redelivery keeps the body and gets a new id). */
    redeliveryOf: text("redelivery_of"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_seq_uq").on(t.webhookId, t.seq),
    index("webhook_deliveries_pending_idx").on(t.webhookId, t.seq).where(sql`state = 'pending'`),
    index("webhook_deliveries_finished_idx").on(t.finishedAt),
  ],
);

/** Every delivery attempt with its outcome (the deliveries list of DECISIONS §2). */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    event: text("event").notNull(),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    deliveredAt: integer("delivered_at").notNull(),
  },
  (t) => [index("webhook_attempts_hook_idx").on(t.webhookId, t.id)],
);

/** What a mirror repository needs beyond its Repo fields: the origin's match key and credentials. */
export const mirrors = sqliteTable(
  "mirrors",
  {
    repoId: text("repo_id")
      .primaryKey()
      .references(() => repos.id, { onDelete: "cascade" }),
    /** `generic:<normalized URL>` or `app:<owner/name>`, lowercased where the origin ignores case: what inbound pushes match. */
    originKey: text("origin_key").notNull(),
    /** Basic credentials taken out of origin_url at creation (kept in clear: they are presented to the origin). */
    username: text("username"),
    password: text("password"),
    createdAt: createdAt(),
  },
  (t) => [index("mirrors_origin_idx").on(t.originKey)],
);

/**
 * A sync asked for and not started yet (one per mirror): further requests while it waits are
 * folded into it, keeping the earliest webhook receipt for the freshness metric.
 */
export const mirrorSyncRequests = sqliteTable("mirror_sync_requests", {
  repoId: text("repo_id")
    .primaryKey()
    .references(() => repos.id, { onDelete: "cascade" }),
  jobId: text("job_id").notNull(),
  /** When the earliest inbound push folded into this sync was received; null when none was. */
  receivedAt: integer("received_at"),
  requestedAt: integer("requested_at").notNull(),
});
