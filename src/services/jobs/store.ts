// The jobs domain's queries: the durable work queue (DESIGN.md "Background work").
import { and, asc, eq, inArray, isNull, lte, or } from "drizzle-orm";
import { jobs } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";

export type JobRow = typeof jobs.$inferSelect;

/** Inserts a job row (inside the transaction of the write that causes it). */
export async function insertJob(tx: Tx, row: Pick<JobRow, "id" | "kind" | "payload" | "runAt" | "createdAt">): Promise<void> {
  tx.insert(jobs).values(row).run();
}

/** The oldest due, unleased job of one of `kinds`, leased until `leaseUntil` (attempts counted). */
export async function leaseDueJob(tx: Tx, kinds: string[], t: number, leaseUntil: number): Promise<JobRow | null> {
  const row = tx
    .select()
    .from(jobs)
    .where(and(isNull(jobs.doneAt), inArray(jobs.kind, kinds), lte(jobs.runAt, t), or(isNull(jobs.lockedUntil), lte(jobs.lockedUntil, t))))
    .orderBy(asc(jobs.runAt))
    .limit(1)
    .get();
  if (!row) return null;
  tx.update(jobs).set({ lockedUntil: leaseUntil, attempts: row.attempts + 1 }).where(eq(jobs.id, row.id)).run();
  return { ...row, lockedUntil: leaseUntil, attempts: row.attempts + 1 };
}

/** Marks a job done. */
export async function finishJob(tx: Tx, id: string, t: number): Promise<void> {
  tx.update(jobs).set({ doneAt: t, lockedUntil: null, lastError: null }).where(eq(jobs.id, id)).run();
}

/** Records a failed attempt: retried at `runAt`, or given up (`doneAt` set). */
export async function failJob(tx: Tx, id: string, error: string, runAt: number, doneAt: number | null): Promise<void> {
  tx.update(jobs).set({ lastError: error, lockedUntil: null, runAt, doneAt }).where(eq(jobs.id, id)).run();
}

/** Whether a job of `kind` whose payload names `repoId` is still pending. */
export async function pendingJobFor(q: Queryable, kind: string, repoId: string): Promise<boolean> {
  const rows = q.select({ payload: jobs.payload }).from(jobs).where(and(eq(jobs.kind, kind), isNull(jobs.doneAt))).all();
  return rows.some((r) => (r.payload as { repoId?: string }).repoId === repoId);
}
