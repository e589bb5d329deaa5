// Durable background work (DESIGN.md "Background work", services/jobs).
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";

export const jobs = sqliteTable(
  "jobs",
  {
    id: id(),
    kind: text("kind").notNull(),
    payload: text("payload", { mode: "json" }).notNull(),
    runAt: integer("run_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
    lockedUntil: integer("locked_until"),
    lastError: text("last_error"),
    doneAt: integer("done_at"),
    createdAt: createdAt(),
    /** Per-key FIFO: one attempt per key at a time, in `seq` order. */
    key: text("key"),
    seq: integer("seq").notNull().default(0),
    /** At most one row per (kind, unique_key) not yet started: an enqueue folds into it. */
    uniqueKey: text("unique_key"),
    /** The attempt holding the lease: outcomes and renewals match it. */
    leaseToken: text("lease_token"),
  },
  (t) => [
    index("jobs_due_idx").on(t.doneAt, t.runAt),
    index("jobs_claim_idx").on(t.kind, t.runAt).where(sql`done_at IS NULL`),
    index("jobs_key_idx").on(t.key, t.seq).where(sql`done_at IS NULL AND key IS NOT NULL`),
    uniqueIndex("jobs_unique_uq").on(t.kind, t.uniqueKey).where(sql`done_at IS NULL AND unique_key IS NOT NULL`),
  ],
);

/** Periodic kinds of scope `cluster`: the last slot some node took (once per slot across nodes). */
export const jobSchedules = sqliteTable("job_schedules", {
  name: text("name").primaryKey(),
  lastSlot: integer("last_slot").notNull(),
  updatedAt: integer("updated_at").notNull(),
});
