// The mail domain's queries: the durable outbox (`mail_outbox`). Async, so another database
// changes this file, not the outbox logic.
import { eq } from "drizzle-orm";
import type { mailOutbox } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type OutboxRow = typeof mailOutbox.$inferSelect;

/** Queues a message. */
export async function insertMessage(
  tx: Tx,
  row: Pick<OutboxRow, "id" | "toAddress" | "subject" | "textBody" | "htmlBody" | "runAt" | "createdAt"> & { headers?: OutboxRow["headers"] },
): Promise<void> {
  const { mailOutbox } = tables(tx);
  await tx.insert(mailOutbox).values({ ...row, attempts: 0 });
}

/** The outbox row `id`, or null. */
export async function messageById(q: Queryable, id: string): Promise<OutboxRow | null> {
  const { mailOutbox } = tables(q);
  return one(await q.select().from(mailOutbox).where(eq(mailOutbox.id, id)).limit(1)) ?? null;
}

/** Records a delivered message; its bodies are cleared (they carry single-use links). */
export async function recordSent(tx: Tx, id: string, at: number): Promise<void> {
  const { mailOutbox } = tables(tx);
  await tx.update(mailOutbox).set({ sentAt: at, lastError: null, textBody: "", htmlBody: "", headers: null }).where(eq(mailOutbox.id, id));
}

/** Records a failed attempt; `failedAt` gives the message up (and clears its bodies). */
export async function recordFailure(tx: Tx, id: string, error: string, failedAt: number | null): Promise<void> {
  const { mailOutbox } = tables(tx);
  const set = failedAt === null ? { lastError: error } : { lastError: error, failedAt, textBody: "", htmlBody: "", headers: null };
  await tx.update(mailOutbox).set(set).where(eq(mailOutbox.id, id));
}
