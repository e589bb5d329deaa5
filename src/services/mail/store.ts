// The mail domain's queries: the durable outbox (`mail_outbox`). Async, so another database
// changes this file, not the outbox logic.
import { and, asc, eq, isNull, lte, or } from "drizzle-orm";
import { mailOutbox } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";

export type OutboxRow = typeof mailOutbox.$inferSelect;

/** Rows still to deliver: neither sent nor given up on. */
const pending = and(isNull(mailOutbox.sentAt), isNull(mailOutbox.failedAt));
/** Nobody holds a lease on the row at `t`. */
const unleased = (t: number) => or(isNull(mailOutbox.lockedUntil), lte(mailOutbox.lockedUntil, t));

/** Queues a message. */
export async function insertMessage(tx: Tx, row: Pick<OutboxRow, "id" | "toAddress" | "subject" | "textBody" | "htmlBody" | "runAt" | "createdAt">): Promise<void> {
  tx.insert(mailOutbox).values({ ...row, attempts: 0 }).run();
}

/** The outbox row `id`, or null. */
export async function messageById(q: Queryable, id: string): Promise<OutboxRow | null> {
  return q.select().from(mailOutbox).where(eq(mailOutbox.id, id)).get() ?? null;
}

/** Leases row `id` until `leaseUntil` when it is pending and unleased at `t` (an attempt counted), or null. */
export async function leaseMessage(tx: Tx, id: string, t: number, leaseUntil: number): Promise<OutboxRow | null> {
  const row = tx.select().from(mailOutbox).where(and(eq(mailOutbox.id, id), pending, unleased(t))).get();
  return row ? lease(tx, row, leaseUntil) : null;
}

/** Leases up to `limit` pending rows due and unleased at `t`, oldest first. */
export async function leaseDueMessages(tx: Tx, t: number, leaseUntil: number, limit: number): Promise<OutboxRow[]> {
  const rows = tx.select().from(mailOutbox).where(and(pending, lte(mailOutbox.runAt, t), unleased(t))).orderBy(asc(mailOutbox.runAt)).limit(limit).all();
  return rows.map((row) => lease(tx, row, leaseUntil));
}

function lease(tx: Tx, row: OutboxRow, lockedUntil: number): OutboxRow {
  tx.update(mailOutbox).set({ lockedUntil, attempts: row.attempts + 1 }).where(eq(mailOutbox.id, row.id)).run();
  return { ...row, lockedUntil, attempts: row.attempts + 1 };
}

/** When the earliest pending row can next be tried (its run time, or the end of its lease), or null. */
export async function nextDueAt(q: Queryable): Promise<number | null> {
  const row = q.select({ runAt: mailOutbox.runAt, lockedUntil: mailOutbox.lockedUntil }).from(mailOutbox).where(pending).orderBy(asc(mailOutbox.runAt)).limit(1).get();
  return row ? Math.max(row.runAt, row.lockedUntil ?? 0) : null;
}

/**
 * Records the outcome of the attempt holding lease `lockedUntil` on row `id`: sent, retried at
 * `runAt`, or given up. The lease in the condition keeps a late writer from overwriting a newer
 * attempt's record. Bodies are cleared once the row is finished (they carry single-use links).
 */
export async function recordOutcome(
  tx: Tx,
  id: string,
  lockedUntil: number,
  outcome: { kind: "sent"; at: number } | { kind: "retry"; error: string; runAt: number } | { kind: "failed"; error: string; at: number },
): Promise<void> {
  const set =
    outcome.kind === "sent"
      ? { sentAt: outcome.at, lockedUntil: null, lastError: null, textBody: "", htmlBody: "" }
      : outcome.kind === "retry"
        ? { lastError: outcome.error, lockedUntil: null, runAt: outcome.runAt }
        : { lastError: outcome.error, lockedUntil: null, failedAt: outcome.at, textBody: "", htmlBody: "" };
  tx.update(mailOutbox).set(set).where(and(eq(mailOutbox.id, id), eq(mailOutbox.lockedUntil, lockedUntil))).run();
}
