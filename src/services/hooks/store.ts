// The hooks domain's queries: webhook subscriptions, the per-hook delivery queue and the record
// of every attempt (SPEC §6.1; DECISIONS §2).
import { and, asc, count, desc, eq, lt, sql } from "drizzle-orm";
import type { webhookAttempts, webhookDeliveries, webhooks } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

/** A delivery with where and how to send it. */
export type DeliveryToSend = DeliveryRow & { url: string; secret: string };

/** Adds a subscription. */
export async function insertWebhook(
  tx: Tx,
  row: Pick<WebhookRow, "id" | "repoId" | "url" | "secret" | "createdAt"> & Partial<Pick<WebhookRow, "events">>,
): Promise<void> {
  const { webhooks } = tables(tx);
  await tx.insert(webhooks).values(row);
}

/** How many subscriptions a repository has. */
export async function countWebhooks(q: Queryable, repoId: string): Promise<number> {
  const { webhooks } = tables(q);
  return one(await q.select({ n: count() }).from(webhooks).where(eq(webhooks.repoId, repoId)).limit(1))!.n;
}

/** A repository's subscriptions, oldest first. */
export async function webhooksOfRepo(q: Queryable, repoId: string): Promise<WebhookRow[]> {
  const { webhooks } = tables(q);
  return await q.select().from(webhooks).where(eq(webhooks.repoId, repoId)).orderBy(asc(webhooks.createdAt), asc(webhooks.id));
}

/** The subscription `id` of the repository, or null. */
export async function webhookOfRepo(q: Queryable, repoId: string, id: string): Promise<WebhookRow | null> {
  const { webhooks } = tables(q);
  return (
    one(
      await q
        .select()
        .from(webhooks)
        .where(and(eq(webhooks.repoId, repoId), eq(webhooks.id, id)))
        .limit(1),
    ) ?? null
  );
}

/** Sets the event kinds a subscription receives (null: every kind). */
export async function setWebhookEvents(tx: Tx, id: string, events: string[] | null): Promise<void> {
  const { webhooks } = tables(tx);
  await tx.update(webhooks).set({ events }).where(eq(webhooks.id, id));
}

/** A stored delivery of hook `webhookId` (any state), or null (unknown or pruned). */
export async function deliveryOfHook(q: Queryable, webhookId: string, id: string): Promise<DeliveryRow | null> {
  const { webhookDeliveries } = tables(q);
  return (
    one(
      await q
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.id, id)))
        .limit(1),
    ) ?? null
  );
}

/** Removes a subscription with its queue and attempts (FK cascade). */
export async function deleteWebhook(tx: Tx, id: string): Promise<void> {
  const { webhooks } = tables(tx);
  await tx.delete(webhooks).where(eq(webhooks.id, id));
}

/** The latest attempt of each hook in `ids`. */
export async function lastAttempts(q: Queryable, ids: string[]): Promise<Map<string, AttemptRow>> {
  const { webhookAttempts } = tables(q);
  const out = new Map<string, AttemptRow>();
  for (const id of ids) {
    const row = one(await q.select().from(webhookAttempts).where(eq(webhookAttempts.webhookId, id)).orderBy(desc(webhookAttempts.id)).limit(1));
    if (row) out.set(id, row);
  }
  return out;
}

/** A page of a hook's attempts, newest first, before attempt id `before`. */
export async function attemptsPage(q: Queryable, webhookId: string, before: number | null, limit: number): Promise<AttemptRow[]> {
  const { webhookAttempts } = tables(q);
  const where = before === null ? eq(webhookAttempts.webhookId, webhookId) : and(eq(webhookAttempts.webhookId, webhookId), lt(webhookAttempts.id, before));
  return await q.select().from(webhookAttempts).where(where).orderBy(desc(webhookAttempts.id)).limit(limit);
}

/**
 * The subscriptions an event of kind `kind` of `repoId` goes to, with their sequence counters:
 * the repository's (at most 20) hooks read, then those whose `events` is null or names the kind
 * kept (in app code: no dialect-specific JSON query).
 */
export async function hooksForEvent(tx: Tx, repoId: string, kind: string): Promise<{ id: string; lastSeq: number }[]> {
  const { webhooks } = tables(tx);
  const rows = await tx.select({ id: webhooks.id, lastSeq: webhooks.lastSeq, events: webhooks.events }).from(webhooks).where(eq(webhooks.repoId, repoId));
  return rows.filter((h) => h.events === null || h.events.includes(kind)).map(({ id, lastSeq }) => ({ id, lastSeq }));
}

/** Queues one delivery as the hook's next in order. */
export async function queueDelivery(
  tx: Tx,
  row: Pick<DeliveryRow, "id" | "webhookId" | "orgId" | "repoId" | "eventId" | "event" | "seq" | "body" | "nextAttemptAt" | "createdAt"> &
    Partial<Pick<DeliveryRow, "redeliveryOf">>,
): Promise<void> {
  const { webhookDeliveries, webhooks } = tables(tx);
  await tx.insert(webhookDeliveries).values(row);
  await tx.update(webhooks).set({ lastSeq: row.seq }).where(eq(webhooks.id, row.webhookId));
}

/** A delivery with where and how to send it (null when it or its hook is gone). */
export async function deliveryToSend(q: Queryable, id: string): Promise<DeliveryToSend | null> {
  const { webhookDeliveries, webhooks } = tables(q);
  const r = one(
    await q
      .select({ d: webhookDeliveries, url: webhooks.url, secret: webhooks.secret })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(eq(webhookDeliveries.id, id))
      .limit(1),
  );
  return r ? { ...r.d, url: r.url, secret: r.secret } : null;
}

/** Whether the delivery still exists (its hook may have been deleted during the attempt). */
export async function deliveryExists(tx: Tx, id: string): Promise<boolean> {
  const { webhookDeliveries } = tables(tx);
  return one(await tx.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).limit(1)) !== undefined;
}

/** Records one attempt's outcome. */
export async function insertAttempt(tx: Tx, row: Omit<AttemptRow, "id">): Promise<void> {
  const { webhookAttempts } = tables(tx);
  await tx.insert(webhookAttempts).values(row);
}

/** Ends a delivery: delivered, or failed for good. */
export async function finishDelivery(tx: Tx, id: string, state: "delivered" | "failed", attempts: number, t: number): Promise<void> {
  const { webhookDeliveries } = tables(tx);
  await tx.update(webhookDeliveries).set({ state, attempts, finishedAt: t }).where(eq(webhookDeliveries.id, id));
}

/** Counts a failed attempt of a delivery that will be retried (its job holds the time of the retry). */
export async function retryDelivery(tx: Tx, id: string, attempts: number): Promise<void> {
  const { webhookDeliveries } = tables(tx);
  await tx.update(webhookDeliveries).set({ attempts }).where(eq(webhookDeliveries.id, id));
}

/** Deletes finished deliveries (and their attempts) that ended before `before`. */
export async function pruneFinished(tx: Tx, before: number): Promise<number> {
  const { webhookDeliveries } = tables(tx);
  return (
    await tx
      .delete(webhookDeliveries)
      .where(and(sql`${webhookDeliveries.state} <> 'pending'`, lt(webhookDeliveries.finishedAt, before)))
      .returning({ id: webhookDeliveries.id })
  ).length;
}
