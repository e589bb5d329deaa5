// Background pack maintenance (DESIGN.md): tiered compaction of small packs by verbatim copy with
// dedup, a periodic GC pack of everything reachable, and deletion of replaced packs and orphan
// files only after a grace period longer than the longest request.
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { and, eq, inArray, isNull, isNotNull, lte, sql } from "drizzle-orm";
import { MultiPackIndex } from "../../git/multi-pack-index.ts";
import { listObjects, SEND } from "../../git/object-list.ts";
import { bytesToHex } from "../../git/oid.ts";
import { writePackIndexRaw } from "../../git/pack-index.ts";
import { PackSet } from "../../git/pack-set.ts";
import { writePack } from "../../git/pack-writer.ts";
import type { Oid } from "../../git/types.ts";
import { jobs, orgs, packs, repos, type Repo } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { enqueueJob } from "../jobs/queue.ts";
import { packKey, readRefs } from "./snapshot.ts";

/** Packs merged at once per tier. */
export const FAN_IN = 4;
/** Objects a tier-0 pack holds at most; each tier up holds FAN_IN times more. */
const TIER_BASE = 16;

/**
 * The tier a pack of `objectCount` objects belongs to by size: merging only packs of similar
 * size keeps every object's rewrite count logarithmic, and a big push is never re-merged with
 * each small commit that follows it.
 */
export function tierFor(objectCount: number): number {
  let tier = 0;
  for (let cap = TIER_BASE; objectCount > cap; cap *= FAN_IN) tier++;
  return tier;
}
/**
 * Compaction waits this long after the write that made it due, so a burst of writes (a CI bot's
 * commits, a series of pushes) is merged once when it settles, not between its writes.
 */
export const COMPACTION_DELAY_MS = 5000;
/** Replaced packs and orphan files are deleted only after this long (longer than any request). */
export const GRACE_MS = 60 * 60 * 1000;

type PackRow = typeof packs.$inferSelect;

function livePacks(ctx: Ctx, repoId: string): PackRow[] {
  return ctx.db.select().from(packs).where(and(eq(packs.repoId, repoId), isNull(packs.replacedAt))).all();
}

/**
 * Writes the pack of the `count` positions flagged SEND in `flags` to a temp file, with its idx
 * built from what the writer reports (ids, offsets, CRCs of entries copied as stored): nothing is
 * inflated or hashed again, unlike indexing the written pack.
 */
async function writePackFiles(ctx: Ctx, midx: MultiPackIndex, flags: Uint8Array, count: number) {
  const tmp = join(ctx.tmpDir, `repack-${newId()}`);
  const oids = new Uint8Array(20 * count);
  const offsets = new Float64Array(count);
  const crcs = new Uint32Array(count);
  let n = 0;
  const record = (p: number, offset: number, crc: number) => {
    oids.set(midx.oids.subarray(20 * p, 20 * p + 20), 20 * n);
    offsets[n] = offset;
    crcs[n] = crc;
    n++;
  };
  const fd = openSync(`${tmp}.pack`, "w");
  let size = 0;
  try {
    for await (const chunk of writePack(midx, flags, count, { ofsDelta: true, thin: false, record })) {
      let done = 0;
      while (done < chunk.length) done += writeSync(fd, chunk, done, chunk.length - done, size + done);
      size += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
  const trailer = new Uint8Array(20);
  const rfd = openSync(`${tmp}.pack`, "r");
  try {
    readSync(rfd, trailer, 0, 20, size - 20);
  } finally {
    closeSync(rfd);
  }
  const name = bytesToHex(trailer);
  const idx = writePackIndexRaw(oids, offsets, crcs, n, name);
  await Bun.write(`${tmp}.idx`, idx);
  return { name, packPath: `${tmp}.pack`, idxPath: `${tmp}.idx`, objectCount: n, size, idxSize: idx.length };
}

/**
 * Replaces `sources` with one new pack holding exactly the positions of `midx` flagged SEND
 * (copied verbatim), in one transaction that first checks the sources are still live. Returns
 * false if it lost a race.
 */
async function replacePacks(
  ctx: Ctx,
  repo: Repo,
  sources: PackRow[],
  midx: MultiPackIndex,
  flags: Uint8Array,
  count: number,
  tier: number,
  refsAtStart: string | null = null,
  reachTips: string | null = null,
): Promise<boolean> {
  const built = await writePackFiles(ctx, midx, flags, count);
  try {
    await ctx.store.putFile(packKey(repo.id, built.name, "pack"), built.packPath);
    await ctx.store.putFile(packKey(repo.id, built.name, "idx"), built.idxPath);
  } finally {
    await Promise.all([rm(built.packPath, { force: true }), rm(built.idxPath, { force: true })]);
  }
  return ctx.db.transaction((tx) => {
    const ids = sources.map((s) => s.id);
    const still = tx.select({ id: packs.id }).from(packs).where(and(inArray(packs.id, ids), isNull(packs.replacedAt))).all();
    if (still.length !== ids.length || !tx.select({ id: repos.id }).from(repos).where(eq(repos.id, repo.id)).get()) return false;
    // Why: GC drops unreachable objects; if refs moved meanwhile, a new ref may need one of them.
    if (refsAtStart !== null && JSON.stringify(readRefs(tx, repo.id)) !== refsAtStart) return false;
    const t = now();
    const existing = tx.select().from(packs).where(and(eq(packs.repoId, repo.id), eq(packs.name, built.name))).get();
    if (existing) tx.update(packs).set({ replacedAt: null, tier, reachTips: reachTips ?? existing.reachTips }).where(eq(packs.id, existing.id)).run();
    else tx.insert(packs).values({ id: newId(), repoId: repo.id, name: built.name, size: built.size, idxSize: built.idxSize, objectCount: built.objectCount, tier, createdAt: t, reachTips }).run();
    const replaced = ids.filter((id) => id !== existing?.id);
    if (replaced.length) tx.update(packs).set({ replacedAt: t }).where(inArray(packs.id, replaced)).run();
    enqueueJob(tx, "repo.sweep", { repoId: repo.id }, GRACE_MS + 1000);
    return true;
  }, { behavior: "immediate" });
}


/** Merges FAN_IN packs of the lowest crowded tier into one pack of the next tier; repeats. */
export async function compactRepo(ctx: Ctx, payload: { repoId: string }): Promise<number> {
  const repo = ctx.db.select().from(repos).where(eq(repos.id, payload.repoId)).get();
  if (!repo) return 0;
  let merges = 0;
  for (;;) {
    const live = livePacks(ctx, repo.id);
    const byTier = new Map<number, PackRow[]>();
    for (const p of live) byTier.set(p.tier, [...(byTier.get(p.tier) ?? []), p]);
    const tier = [...byTier.keys()].sort((a, b) => a - b).find((t) => byTier.get(t)!.length >= FAN_IN);
    if (tier === undefined) return merges;
    const group = byTier.get(tier)!.sort((a, b) => a.createdAt - b.createdAt).slice(0, FAN_IN);
    // Newest first, as in a snapshot: the oldest pack's copy of a duplicate is kept.
    const opened = await Promise.all([...group].reverse().map((row) => ctx.git.openPack(repo.id, row)));
    const midx = MultiPackIndex.build(opened);
    const flags = new Uint8Array(midx.count).fill(SEND);
    if (!(await replacePacks(ctx, repo, group, midx, flags, midx.count, Math.max(tier + 1, tierFor(midx.count))))) return merges;
    merges++;
  }
}

/** A reachability record: the tips, without those another tip reaches (as far as the walk saw). */
function recordOf(tips: Oid[], reached: Set<Oid>): string {
  const kept = tips.filter((t) => !reached.has(t));
  return (kept.length ? kept : tips).join("\n");
}

/** Repacks everything reachable from the refs into one pack; replaced packs go after the grace period. */
export async function gcRepo(ctx: Ctx, payload: { repoId: string }): Promise<{ objects: number; packsReplaced: number }> {
  const repo = ctx.db.select().from(repos).where(eq(repos.id, payload.repoId)).get();
  if (!repo) return { objects: 0, packsReplaced: 0 };
  const live = livePacks(ctx, repo.id).sort((a, b) => b.createdAt - a.createdAt);
  const refsNow = readRefs(ctx.db, repo.id);
  const refsAtStart = JSON.stringify(refsNow);
  const tips = [...new Set(refsNow.map((r) => r.oid))];
  if (!live.length) return { objects: 0, packsReplaced: 0 };
  const opened = await Promise.all(live.map((row) => ctx.git.openPack(repo.id, row)));
  const set = new PackSet(opened);
  // The previous GC pack (and any pack with a reachability record) is not walked again.
  const list = tips.length ? await listObjects(set, { wants: tips, haves: [], shallow: [] }, { reachability: true }) : null;
  const objects = list?.count ?? 0;
  const maxTier = Math.max(...live.map((p) => p.tier));
  if (live.length === 1 && objects === opened[0]!.idx.count) {
    // Already one pack of exactly what the refs reach: record that, so clones need no walk.
    if (!live[0]!.reachTips) {
      ctx.db.transaction((tx) => {
        if (JSON.stringify(readRefs(tx, repo.id)) === refsAtStart) tx.update(packs).set({ reachTips: recordOf(tips, list!.reachedWants) }).where(eq(packs.id, live[0]!.id)).run();
      }, { behavior: "immediate" });
    }
    return { objects, packsReplaced: 0 };
  }
  if (!list || objects === 0) {
    // Nothing reachable: every pack is garbage.
    const t = now();
    const done = ctx.db.transaction((tx) => {
      if (JSON.stringify(readRefs(tx, repo.id)) !== refsAtStart) return false;
      tx.update(packs).set({ replacedAt: t }).where(inArray(packs.id, live.map((p) => p.id))).run();
      enqueueJob(tx, "repo.sweep", { repoId: repo.id }, GRACE_MS + 1000);
      return true;
    }, { behavior: "immediate" });
    return { objects: 0, packsReplaced: done ? live.length : 0 };
  }
  // The new pack holds exactly what the refs reach: its reachability record is the refs' targets,
  // less those another target reaches (so deleting such a ref later does not void the record).
  const ok = await replacePacks(ctx, repo, live, list.midx, list.flags, list.count, maxTier + 1, refsAtStart, recordOf(tips, list.reachedWants));
  return { objects, packsReplaced: ok ? live.length : 0 };
}

/** Deletes replaced packs past the grace period, and orphan files (no row) older than it. */
export async function sweepRepo(ctx: Ctx, payload: { repoId: string }, graceMs = GRACE_MS): Promise<number> {
  const cutoff = now() - graceMs;
  const old = ctx.db.select().from(packs).where(and(eq(packs.repoId, payload.repoId), isNotNull(packs.replacedAt), lte(packs.replacedAt, cutoff))).all();
  let deleted = 0;
  for (const p of old) {
    await ctx.store.delete(packKey(payload.repoId, p.name, "idx"));
    await ctx.store.delete(packKey(payload.repoId, p.name, "pack"));
    ctx.git.evict(payload.repoId, p.name);
    ctx.db.delete(packs).where(eq(packs.id, p.id)).run();
    deleted++;
  }
  const known = new Set(ctx.db.select({ name: packs.name }).from(packs).where(eq(packs.repoId, payload.repoId)).all().map((r) => r.name));
  for await (const obj of ctx.store.list(`repos/${payload.repoId}/packs/`)) {
    const m = /pack-([0-9a-f]{40})\.(pack|idx)$/.exec(obj.key);
    if (m && !known.has(m[1]!) && obj.modifiedAt < cutoff) {
      await ctx.store.delete(obj.key);
      deleted++;
    }
  }
  return deleted;
}

/** Every repository with its full name, for maintenance passes. */
export function allRepos(ctx: Ctx): { id: string; name: string }[] {
  return ctx.db
    .select({ id: repos.id, name: sql<string>`${orgs.name} || '/' || ${repos.name}` })
    .from(repos)
    .innerJoin(orgs, eq(orgs.id, repos.orgId))
    .all();
}

/**
 * Schedules a GC for every repository with more than one live pack, or with one pack that has no
 * reachability record yet (the periodic pass).
 */
export function scheduleGcPass(ctx: Ctx): number {
  const rows = ctx.db
    .select({ repoId: packs.repoId, n: sql<number>`count(*)`, recorded: sql<number>`count(${packs.reachTips})` })
    .from(packs)
    .where(isNull(packs.replacedAt))
    .groupBy(packs.repoId)
    .all();
  let n = 0;
  for (const r of rows) {
    if (r.n < 2 && r.recorded === r.n) continue;
    const pending = ctx.db.select({ id: jobs.id }).from(jobs).where(and(eq(jobs.kind, "repo.gc"), isNull(jobs.doneAt), sql`json_extract(${jobs.payload}, '$.repoId') = ${r.repoId}`)).get();
    if (!pending) {
      enqueueJob(ctx.db, "repo.gc", { repoId: r.repoId });
      n++;
    }
  }
  return n;
}

/** Schedules compaction when a repository has gathered enough small packs. */
export function maybeScheduleCompaction(ctx: Ctx, repoId: string): void {
  const live = ctx.db.select({ tier: packs.tier }).from(packs).where(and(eq(packs.repoId, repoId), isNull(packs.replacedAt))).all();
  const perTier = new Map<number, number>();
  for (const p of live) perTier.set(p.tier, (perTier.get(p.tier) ?? 0) + 1);
  if (![...perTier.values()].some((n) => n >= FAN_IN)) return;
  const pending = ctx.db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.kind, "repo.compact"), isNull(jobs.doneAt), sql`json_extract(${jobs.payload}, '$.repoId') = ${repoId}`))
    .get();
  if (!pending) enqueueJob(ctx.db, "repo.compact", { repoId }, COMPACTION_DELAY_MS);
}
