// Cache eviction (issue 30): a durable periodic job, once an hour across the cluster, on the
// service clock (tests move it). In order: ready entries unused for 7 days; reservations older
// than an hour (uploads that never committed); then per repository, while its ready entries
// total more than SVC_CI_CACHE_MAX, the least recently used first. Each entry goes object first,
// then row: a crash in between leaves a row whose object is gone, which the next pass deletes
// again (deleting an absent object is no error); never an object no row names. Once a day the
// pass also lists each repository's cache prefix for objects no row names (an upload that
// finished after its reservation was swept) older than an hour. A deleted repository's objects
// go with its prefix (the repo.purge job deletes `repos/{id}/`).
import { now, type Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import * as caches from "./store-caches.ts";
import type { EvictionRow } from "./store-caches.ts";

/** An entry nobody restored for this long is deleted (GitHub's 7 days). */
export const CACHE_UNUSED_MS = 7 * 24 * 3600 * 1000;
/** A reservation older than this never committed. */
export const CACHE_RESERVATION_MS = 3600 * 1000;
/** How often the pass runs. */
const PASS_MS = 3600 * 1000;
/** Rows per read; a pass reads at most BATCHES of them per step, the next pass carries on. */
const BATCH = 500;
const BATCHES = 100;

/** The payload of a pass: its slot (wall-clock hour), which says whether it is the daily orphan listing. */
export interface EvictPayload {
  slot?: number;
}

/** The eviction pass, once per hour across the cluster. */
export const CI_CACHE_EVICT = jobKind<EvictPayload>("ci.cache-evict", { every: { ms: PASS_MS, scope: "cluster" } });

/** What one pass deleted. */
export interface EvictionReport {
  unused: number;
  stale: number;
  overLimit: number;
  orphans: number;
}

/** The job's handler: one pass; the first slot of each day also lists for orphans. */
export async function runCacheEviction(ctx: Ctx, p: EvictPayload): Promise<void> {
  await evictCaches(ctx, { orphans: (p.slot ?? 0) % 24 === 0 });
}

async function evict(ctx: Ctx, row: EvictionRow): Promise<void> {
  await ctx.store.delete(row.key);
  await ctx.db.transaction((tx) => caches.deleteEntry(tx, row.id));
}

/** One pass (idempotent; bounded per step, the next pass carries on). */
export async function evictCaches(ctx: Ctx, opts: { orphans?: boolean } = {}): Promise<EvictionReport> {
  const t = now();
  const report: EvictionReport = { unused: 0, stale: 0, overLimit: 0, orphans: 0 };
  for (let i = 0; i < BATCHES; i++) {
    const rows = await caches.unusedEntries(ctx.db.read, t - CACHE_UNUSED_MS, BATCH);
    for (const row of rows) await evict(ctx, row);
    report.unused += rows.length;
    if (rows.length < BATCH) break;
  }
  for (let i = 0; i < BATCHES; i++) {
    const rows = await caches.staleReservations(ctx.db.read, t - CACHE_RESERVATION_MS, BATCH);
    for (const row of rows) await evict(ctx, row);
    report.stale += rows.length;
    if (rows.length < BATCH) break;
  }
  const max = ctx.config.ciCacheMax;
  for (const repo of await caches.reposOverLimit(ctx.db.read, max)) {
    let total = repo.total;
    for (let i = 0; i < BATCHES && total > max; i++) {
      const rows = await caches.leastRecentlyUsed(ctx.db.read, repo.repoId, BATCH);
      for (const row of rows) {
        if (total <= max) break;
        await evict(ctx, row);
        total -= row.size;
        report.overLimit++;
      }
      if (rows.length < BATCH) break;
    }
  }
  if (opts.orphans) report.orphans = await deleteOrphans(ctx, t);
  return report;
}

/** Objects under each repository's cache prefix that no row names, older than a reservation's life. */
async function deleteOrphans(ctx: Ctx, t: number): Promise<number> {
  let n = 0;
  for (const repoId of await caches.reposWithEntries(ctx.db.read)) {
    // Why read the names before listing: a reservation made meanwhile is younger than the age bound.
    const named = await caches.keysOfRepo(ctx.db.read, repoId);
    for await (const o of ctx.store.list(`repos/${repoId}/ci-caches/`)) {
      if (named.has(o.key) || o.modifiedAt > t - CACHE_RESERVATION_MS) continue;
      await ctx.store.delete(o.key);
      n++;
    }
  }
  return n;
}
