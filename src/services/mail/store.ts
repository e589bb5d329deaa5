// The mail domain's queries: the durable outbox (`mail_outbox`). Async, so another database
// changes this file, not the outbox logic.
import { eq } from "drizzle-orm";
import { mailOutbox } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";

export type OutboxRow = typeof mailOutbox.$inferSelect;

/** Queues a message. */
export async function insertMessage(
  tx: Tx,
  row: Pick<OutboxRow, "id" | "toAddress" | "subject" | "textBody" | "htmlBody" | "runAt" | "createdAt">,
): Promise<void> {
  tx.insert(mailOutbox)
    .values({ ...row, attempts: 0 })
    .run();
}

/** The outbox row `id`, or null. */
export async function messageById(q: Queryable, id: string): Promise<OutboxRow | null> {
  return q.select().from(mailOutbox).where(eq(mailOutbox.id, id)).get() ?? null;
}

/** Records a delivered message; its bodies are cleared (they carry single-use links). */
export async function recordSent(tx: Tx, id: string, at: number): Promise<void> {
  tx.update(mailOutbox).set({ sentAt: at, lastError: null, textBody: "", htmlBody: "" }).where(eq(mailOutbox.id, id)).run();
}

/** Records a failed attempt; `failedAt` gives the message up (and clears its bodies). */
export async function recordFailure(tx: Tx, id: string, error: string, failedAt: number | null): Promise<void> {
  const set = failedAt === null ? { lastError: error } : { lastError: error, failedAt, textBody: "", htmlBody: "" };
  tx.update(mailOutbox).set(set).where(eq(mailOutbox.id, id)).run();
}
