// The queries on ci_caches (issue 30, dependency caches): lookups by scope (exact key, then key
// prefixes, newest first), the reservation that makes an entry immutable per (repo, scope, key,
// version), the restore stamp, and the eviction pass's reads (unused, stale reservations, the
// least recently used of a repository over its limit).
import { and, asc, desc, eq, gt, lt, sql } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import type { ciCaches } from "../../db/schema/index.ts";
import { tables } from "../../db/tables.ts";

/** A cache entry's row. */
export type CacheRow = typeof ciCaches.$inferSelect;

/** What a job's cache calls need to know of its run: the scope's inputs and the repository's default branch. */
export interface CacheJobFacts {
  ref: string;
  trusted: boolean;
  defaultBranch: string;
}

/** The run facts of job `jobId`'s run (null when the run or repository is gone). */
export async function cacheJobFacts(q: Queryable, runId: string): Promise<CacheJobFacts | null> {
  const { runs, repos } = tables(q);
  const r = one(
    await q
      .select({ ref: runs.ref, trusted: runs.trusted, defaultBranch: repos.defaultBranch })
      .from(runs)
      .innerJoin(repos, eq(repos.id, runs.repoId))
      .where(eq(runs.id, runId))
      .limit(1),
  );
  return r ? { ref: r.ref, trusted: !!r.trusted, defaultBranch: r.defaultBranch } : null;
}

/** The ready entry of exactly (repo, scope, key, version), if any. */
export async function exactEntry(q: Queryable, repoId: string, scope: string, cacheKey: string, version: string): Promise<CacheRow | null> {
  const { ciCaches: c } = tables(q);
  return (
    one(
      await q
        .select()
        .from(c)
        .where(and(eq(c.repoId, repoId), eq(c.scope, scope), eq(c.cacheKey, cacheKey), eq(c.version, version), eq(c.state, "ready")))
        .limit(1),
    ) ?? null
  );
}

/** The newest ready entry of (repo, scope, version) whose key starts with `prefix` (GitHub's restore-keys rule). */
export async function newestWithPrefix(q: Queryable, repoId: string, scope: string, prefix: string, version: string): Promise<CacheRow | null> {
  const { ciCaches: c } = tables(q);
  // Why substr and not LIKE: a key may hold % and _ (GitHub allows them); substr compares bytes as written on both databases.
  return (
    one(
      await q
        .select()
        .from(c)
        .where(
          and(
            eq(c.repoId, repoId),
            eq(c.scope, scope),
            eq(c.version, version),
            eq(c.state, "ready"),
            // Both databases count characters (code points), not UTF-16 units.
            sql`substr(${c.cacheKey}, 1, ${[...prefix].length}) = ${prefix}`,
          ),
        )
        .orderBy(desc(c.createdAt), desc(c.id))
        .limit(1),
    ) ?? null
  );
}

/** Stamps a restore: last_used_at = `t`, unless it was stamped within `coarseMs` (a hot key writes at most once per window). */
export async function touchEntry(q: Queryable, id: string, t: number, coarseMs: number): Promise<void> {
  const { ciCaches: c } = tables(q);
  await q
    .update(c)
    .set({ lastUsedAt: t })
    .where(and(eq(c.id, id), lt(c.lastUsedAt, t - coarseMs)));
}

/** Inserts a reservation; false when (repo, scope, key, version) already has a row (ready or reserved). */
export async function reserveEntry(tx: Tx, row: typeof ciCaches.$inferInsert): Promise<boolean> {
  const { ciCaches: c } = tables(tx);
  const out = await tx.insert(c).values(row).onConflictDoNothing().returning({ id: c.id });
  return out.length === 1;
}

/** The entry `id` of repository `repoId`, if any. */
export async function entryById(q: Queryable, repoId: string, id: string): Promise<CacheRow | null> {
  const { ciCaches: c } = tables(q);
  return (
    one(
      await q
        .select()
        .from(c)
        .where(and(eq(c.id, id), eq(c.repoId, repoId)))
        .limit(1),
    ) ?? null
  );
}

/** Marks a reservation ready with its stored size; false when it is no longer a reservation. */
export async function markReady(tx: Tx, id: string, size: number, t: number): Promise<boolean> {
  const { ciCaches: c } = tables(tx);
  const out = await tx
    .update(c)
    .set({ state: "ready", size, lastUsedAt: t })
    .where(and(eq(c.id, id), eq(c.state, "reserved")))
    .returning({ id: c.id });
  return out.length === 1;
}

/** Deletes the entry `id` (absent: nothing happens). */
export async function deleteEntry(q: Queryable, id: string): Promise<void> {
  const { ciCaches: c } = tables(q);
  await q.delete(c).where(eq(c.id, id));
}

/** An entry as the eviction pass handles it. */
export type EvictionRow = Pick<CacheRow, "id" | "repoId" | "key" | "size" | "lastUsedAt">;

/** Up to `limit` ready entries last used before `cutoff` (the 7-day rule). */
export async function unusedEntries(q: Queryable, cutoff: number, limit: number): Promise<EvictionRow[]> {
  const { ciCaches: c } = tables(q);
  return q
    .select({ id: c.id, repoId: c.repoId, key: c.key, size: c.size, lastUsedAt: c.lastUsedAt })
    .from(c)
    .where(and(eq(c.state, "ready"), lt(c.lastUsedAt, cutoff)))
    .orderBy(asc(c.lastUsedAt))
    .limit(limit);
}

/** Up to `limit` reservations made before `cutoff` (uploads that never committed). */
export async function staleReservations(q: Queryable, cutoff: number, limit: number): Promise<EvictionRow[]> {
  const { ciCaches: c } = tables(q);
  return q
    .select({ id: c.id, repoId: c.repoId, key: c.key, size: c.size, lastUsedAt: c.lastUsedAt })
    .from(c)
    .where(and(eq(c.state, "reserved"), lt(c.createdAt, cutoff)))
    .limit(limit);
}

/** Repositories whose ready entries total more than `max` bytes, with their totals. */
export async function reposOverLimit(q: Queryable, max: number): Promise<{ repoId: string; total: number }[]> {
  const { ciCaches: c } = tables(q);
  const total = sql<number>`sum(${c.size})`;
  const rows = await q.select({ repoId: c.repoId, total }).from(c).where(eq(c.state, "ready")).groupBy(c.repoId).having(gt(total, max));
  return rows.map((r) => ({ repoId: r.repoId, total: Number(r.total) }));
}

/** Up to `limit` ready entries of a repository, least recently used first. */
export async function leastRecentlyUsed(q: Queryable, repoId: string, limit: number): Promise<EvictionRow[]> {
  const { ciCaches: c } = tables(q);
  return q
    .select({ id: c.id, repoId: c.repoId, key: c.key, size: c.size, lastUsedAt: c.lastUsedAt })
    .from(c)
    .where(and(eq(c.repoId, repoId), eq(c.state, "ready")))
    .orderBy(asc(c.lastUsedAt), asc(c.createdAt))
    .limit(limit);
}

/** The repositories with any cache row (the orphan listing's candidates). */
export async function reposWithEntries(q: Queryable): Promise<string[]> {
  const { ciCaches: c } = tables(q);
  return (await q.selectDistinct({ repoId: c.repoId }).from(c)).map((r) => r.repoId);
}

/** The stored-object keys a repository's rows name (ready or reserved). */
export async function keysOfRepo(q: Queryable, repoId: string): Promise<Set<string>> {
  const { ciCaches: c } = tables(q);
  return new Set((await q.select({ key: c.key }).from(c).where(eq(c.repoId, repoId))).map((r) => r.key));
}
