// Operation metrics (per-org buckets with a fixed duration histogram) and the audit log.
import { blob, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";

/**
 * Operations of one kind in one org during one bucket: a minute, an hour or a day (`grain`, in
 * minutes). Every operation lands in all three, so a year's summary reads about 500 rows per kind
 * (whole days, then whole hours, then minutes at the edges) however many operations there were.
 */
export const metricBuckets = sqliteTable(
  "metric_buckets",
  {
    orgId: text("org_id").notNull(),
    kind: text("kind").notNull(),
    /** Bucket length in minutes: 1, 60 or 1440. */
    grain: integer("grain").notNull(),
    /** Bucket start, epoch milliseconds (UTC-aligned to the grain). */
    start: integer("start").notNull(),
    count: integer("count").notNull(),
    bytes: integer("bytes").notNull(),
    msSum: integer("ms_sum").notNull(),
    /** Duration histogram: `slot, count` varint pairs (services/metrics/histogram.ts). */
    hist: blob("hist", { mode: "buffer" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.kind, t.grain, t.start] })],
);

export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: id(),
    orgId: text("org_id").notNull(),
    action: text("action").notNull(),
    actorKind: text("actor_kind").notNull(),
    actorId: text("actor_id"),
    actorName: text("actor_name"),
    target: text("target"),
    data: text("data", { mode: "json" }),
    createdAt: createdAt(),
  },
  (t) => [index("audit_org_idx").on(t.orgId, t.createdAt), index("audit_org_action_idx").on(t.orgId, t.action, t.createdAt)],
);
