// The jobs domain's queries: the durable work queue (DESIGN.md "Background work"). This file is
// the one dialect seam of the engine: PostgreSQL appends FOR UPDATE SKIP LOCKED to the claim and
// takes `seq` from a sequence (issue 27); nothing else changes.
import { and, eq, isNull, lt, sql } from "drizzle-orm";
import type { jobs } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { type Tables, tables } from "../../db/tables.ts";
import { x } from "../../db/dialect.ts";
import { statementCache } from "../../db/statements.ts";

const { stmt } = statementCache("jobs");

export type JobRow = typeof jobs.$inferSelect;

/** Inserts a job row (inside the transaction of the write that causes it). */
export async function insertJob(
  tx: Tx,
  row: Pick<JobRow, "id" | "kind" | "payload" | "runAt" | "createdAt"> & Partial<Pick<JobRow, "key" | "seq" | "uniqueKey">>,
): Promise<void> {
  const { jobs } = tables(tx);
  await tx.insert(jobs).values(row);
}

/** Rows per multi-row INSERT (13 columns: well under SQLite's and PostgreSQL's parameter limits). */
const INSERT_CHUNK = 500;

/**
 * Inserts job rows in multi-row statements (`enqueueMany`). A row whose `uniqueKey` is held by a
 * pending, not yet started row of its kind folds into that row (ON CONFLICT on `jobs_unique_uq`:
 * its run time moves earlier when the new one is sooner, nothing else changes), as `enqueue`
 * does. The rows must hold distinct unique keys. Answers, per unique key, the id of the row that
 * holds it now (the new row's, or the one folded into).
 */
export async function insertJobs(
  tx: Tx,
  rows: readonly Pick<JobRow, "id" | "kind" | "payload" | "runAt" | "createdAt" | "key" | "seq" | "uniqueKey">[],
): Promise<Map<string, string>> {
  const { jobs } = tables(tx);
  const held = new Map<string, string>();
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const part = rows.slice(i, i + INSERT_CHUNK);
    const back = await tx
      .insert(jobs)
      .values(part)
      .onConflictDoUpdate({
        target: [jobs.kind, jobs.uniqueKey],
        targetWhere: sql`done_at IS NULL AND unique_key IS NOT NULL`,
        set: { runAt: x(tx).least(sql`${jobs.runAt}`, sql`excluded.run_at`) },
      })
      .returning({ id: jobs.id, uniqueKey: jobs.uniqueKey });
    for (const r of back) if (r.uniqueKey !== null) held.set(r.uniqueKey, r.id);
  }
  return held;
}

/** The pending row of `kind` holding `uniqueKey`, or null. */
export async function pendingUnique(tx: Tx, kind: string, uniqueKey: string): Promise<{ id: string; runAt: number } | null> {
  const { jobs } = tables(tx);
  return (
    one(
      await tx
        .select({ id: jobs.id, runAt: jobs.runAt })
        .from(jobs)
        .where(and(eq(jobs.kind, kind), eq(jobs.uniqueKey, uniqueKey), isNull(jobs.doneAt)))
        .limit(1),
    ) ?? null
  );
}

/** Moves a pending row's run time earlier (a folded enqueue that asked for sooner). */
export async function runSooner(tx: Tx, id: string, runAt: number): Promise<void> {
  const { jobs } = tables(tx);
  await tx
    .update(jobs)
    .set({ runAt })
    .where(and(eq(jobs.id, id), isNull(jobs.doneAt), sql`${jobs.runAt} > ${runAt}`));
}

/** The next position in `key`'s queue (after every pending row of the key). */
export async function nextSeq(tx: Tx, key: string): Promise<number> {
  // Concurrent enqueuers of one key (other nodes) queue on this lock instead of failing to
  // serialize (PostgreSQL; SQLite's write lock already orders them).
  await x(tx).lockKey(`seq:${key}`);
  const [row] = await x(tx).rows<{ s: number | null }>(sql`SELECT max(seq) AS s FROM jobs WHERE key = ${key} AND done_at IS NULL`);
  return (row?.s ?? 0) + 1;
}

/** Row `j` heads its key's queue: no pending row of the key before it (or it has no key). */
const HEAD = "(j.key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs h WHERE h.key = j.key AND h.done_at IS NULL AND h.seq < j.seq))";

/** A claimable row (`?1` its kind, `?2` now): pending, of the kind, due, unleased, and the head of its key's queue. */
const CLAIMABLE = `j.done_at IS NULL AND j.kind = ?1 AND j.run_at <= ?2 AND (j.locked_until IS NULL OR j.locked_until <= ?2) AND ${HEAD}`;

/**
 * Leases up to `limit` claimable rows of `kind`, oldest due first: each gets `leaseUntil`, the
 * lease token `token + index` and one more attempt. (PostgreSQL: the SELECT takes FOR UPDATE SKIP LOCKED.)
 */
export async function claim(tx: Tx, kind: string, t: number, limit: number, leaseUntil: number, token: string): Promise<JobRow[]> {
  const { jobs } = tables(tx);
  if (limit <= 0) return [];
  // PostgreSQL: rows another node is claiming now are skipped, not waited for.
  const ids = await stmt(tx, "claim", {
    sqlite: `SELECT j.id AS id FROM jobs j WHERE ${CLAIMABLE} ORDER BY j.run_at LIMIT ?3`,
    pg: `SELECT j.id AS id FROM jobs j WHERE ${CLAIMABLE.replaceAll("?1", "$1").replaceAll("?2", "$2")} ORDER BY j.run_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
  }).all<{ id: string }>(kind, t, limit);
  const out: JobRow[] = [];
  for (const [i, { id }] of ids.entries()) {
    // Started: an enqueue from now on queues the next run instead of folding into this one.
    const row = one(
      await tx
        .update(jobs)
        .set({ lockedUntil: leaseUntil, leaseToken: `${token}.${i}`, attempts: sql`${jobs.attempts} + 1`, uniqueKey: null })
        .where(eq(jobs.id, id))
        .returning(),
    );
    if (row) out.push(row);
  }
  return out;
}

/** Leases row `id` now, whatever its run time, when it is pending and unleased (runNow), or null. */
export async function claimOne(tx: Tx, id: string, t: number, leaseUntil: number, token: string): Promise<JobRow | null> {
  const { jobs } = tables(tx);
  return (
    one(
      await tx
        .update(jobs)
        .set({ lockedUntil: leaseUntil, leaseToken: token, attempts: sql`${jobs.attempts} + 1`, uniqueKey: null })
        .where(and(eq(jobs.id, id), isNull(jobs.doneAt), sql`(${jobs.lockedUntil} IS NULL OR ${jobs.lockedUntil} <= ${t})`))
        .returning(),
    ) ?? null
  );
}

/**
 * Per kind of `kinds` that has pending rows: when its next row can be claimed (the earliest
 * head's run time or lease end). The dispatcher's read on each wake-up: it claims in a write
 * transaction only the kinds due now, and sleeps until the earliest of the rest. One prepared
 * statement whatever the kinds (they go as a JSON array).
 */
export async function dueByKind(q: Queryable, kinds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (kinds.length === 0) return out;
  const rows = await stmt(q, "dueByKind", {
    sqlite: `SELECT j.kind AS kind, min(max(j.run_at, coalesce(j.locked_until, 0))) AS at FROM jobs j
      WHERE j.done_at IS NULL AND j.kind IN (SELECT value FROM json_each(?1)) AND ${HEAD} GROUP BY j.kind`,
    pg: `SELECT j.kind AS kind, min(greatest(j.run_at, coalesce(j.locked_until, 0))) AS at FROM jobs j
      WHERE j.done_at IS NULL AND j.kind IN (SELECT jsonb_array_elements_text($1::text::jsonb)) AND ${HEAD} GROUP BY j.kind`,
  }).all<{ kind: string; at: number }>(JSON.stringify(kinds));
  for (const r of rows) out.set(r.kind, Number(r.at));
  return out;
}

/**
 * When a row of one of `kinds` can next be claimed (the earliest head's run time or lease end),
 * or null: the dispatcher's one read while idle.
 */
export async function nextDueAt(q: Queryable, kinds: readonly string[]): Promise<number | null> {
  let at: number | null = null;
  for (const t of (await dueByKind(q, kinds)).values()) if (at === null || t < at) at = t;
  return at;
}

/** Whether the attempt holding `token` still holds row `id` (inside the transaction that depends on it). */
export async function holds(tx: Tx, id: string, token: string): Promise<boolean> {
  const { jobs } = tables(tx);
  return (
    one(
      await tx
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.id, id), eq(jobs.leaseToken, token), isNull(jobs.doneAt)))
        .limit(1),
    ) !== undefined
  );
}

const fenced = (jobs: Tables["jobs"], id: string, token: string) => and(eq(jobs.id, id), eq(jobs.leaseToken, token), isNull(jobs.doneAt));

/** Marks a job done (only while the lease is ours); answers whether it was. */
export async function finish(tx: Tx, id: string, token: string, t: number): Promise<boolean> {
  const { jobs } = tables(tx);
  return (
    (
      await tx
        .update(jobs)
        .set({ doneAt: t, lockedUntil: null, leaseToken: null, lastError: null })
        .where(fenced(jobs, id, token))
        .returning({ id: jobs.id })
    ).length > 0
  );
}

/** Records a failed attempt: retried at `runAt`, or given up (`doneAt` set). */
export async function fail(tx: Tx, id: string, token: string, error: string, runAt: number, doneAt: number | null): Promise<boolean> {
  const { jobs } = tables(tx);
  return (
    (
      await tx
        .update(jobs)
        .set({ lastError: error, lockedUntil: null, leaseToken: null, runAt, doneAt })
        .where(fenced(jobs, id, token))
        .returning({ id: jobs.id })
    ).length > 0
  );
}

/** Gives a row back without counting the attempt, to run again at `runAt` (shutdown, or "later"). */
export async function release(tx: Tx, id: string, token: string, runAt: number | null): Promise<boolean> {
  const { jobs } = tables(tx);
  const set =
    runAt === null
      ? { lockedUntil: null, leaseToken: null, attempts: x(tx).greatest(sql`${jobs.attempts} - 1`, sql`0`) }
      : { lockedUntil: null, leaseToken: null, runAt, attempts: x(tx).greatest(sql`${jobs.attempts} - 1`, sql`0`) };
  return (
    (
      await tx
        .update(jobs)
        .set(set)
        .where(fenced(jobs, id, token))
        .returning({ id: jobs.id })
    ).length > 0
  );
}

/** Extends a held lease; answers whether the lease was still ours. */
export async function renew(tx: Tx, id: string, token: string, leaseUntil: number): Promise<boolean> {
  const { jobs } = tables(tx);
  return (
    (
      await tx
        .update(jobs)
        .set({ lockedUntil: leaseUntil })
        .where(fenced(jobs, id, token))
        .returning({ id: jobs.id })
    ).length > 0
  );
}

/** Deletes the pending rows of `key` (their subject is gone, e.g. a deleted webhook); answers how many. */
export async function dropKey(tx: Tx, key: string): Promise<number> {
  const { jobs } = tables(tx);
  return (
    await tx
      .delete(jobs)
      .where(and(eq(jobs.key, key), isNull(jobs.doneAt)))
      .returning({ id: jobs.id })
  ).length;
}

/** A job row by id, or null. */
export async function jobById(q: Queryable, id: string): Promise<JobRow | null> {
  const { jobs } = tables(q);
  return one(await q.select().from(jobs).where(eq(jobs.id, id)).limit(1)) ?? null;
}

/** Per kind: pending, due by `t` (leased or not), leased now, and the oldest due run time (/metrics). */
export async function queueStats(q: Queryable, t: number): Promise<{ kind: string; pending: number; due: number; leased: number; oldestDue: number | null }[]> {
  return await x(q).rows<{ kind: string; pending: number; due: number; leased: number; oldestDue: number | null }>(sql`
    SELECT kind, count(*) AS pending,
      sum(CASE WHEN run_at <= ${t} THEN 1 ELSE 0 END) AS due,
      sum(CASE WHEN locked_until > ${t} THEN 1 ELSE 0 END) AS leased,
      min(CASE WHEN run_at <= ${t} THEN run_at END) AS "oldestDue"
    FROM jobs WHERE done_at IS NULL GROUP BY kind ORDER BY kind`);
}

/** Deletes finished rows that ended before `before`. */
export async function pruneDone(tx: Tx, before: number): Promise<number> {
  const { jobs } = tables(tx);
  return (await tx.delete(jobs).where(lt(jobs.doneAt, before)).returning({ id: jobs.id })).length;
}

/**
 * Takes slot `slot` of the periodic schedule `name` for this node: true for exactly one caller
 * per slot across every node (the row starts at `firstSlot` when it does not exist).
 */
export async function takeSlot(tx: Tx, name: string, slot: number, firstSlot: number, t: number): Promise<boolean> {
  const { jobSchedules } = tables(tx);
  await tx.insert(jobSchedules).values({ name, lastSlot: firstSlot, updatedAt: t }).onConflictDoNothing();
  return (
    (
      await tx
        .update(jobSchedules)
        .set({ lastSlot: slot, updatedAt: t })
        .where(and(eq(jobSchedules.name, name), lt(jobSchedules.lastSlot, slot)))
        .returning({ name: jobSchedules.name })
    ).length > 0
  );
}
