// Background pack maintenance (DESIGN.md): tiered compaction of small packs by verbatim copy with
// dedup, a periodic GC pack of everything reachable, and deletion of replaced packs and orphan
// files only after a grace period longer than the longest request.
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { MultiPackIndex } from "../../git/multi-pack-index.ts";
import { listObjects, SEND } from "../../git/object-list.ts";
import { bytesToHex } from "../../git/oid.ts";
import { writePackIndexRaw } from "../../git/pack-index.ts";
import type { Pack } from "../../git/pack-reader.ts";
import { PackSet } from "../../git/pack-set.ts";
import { writePack } from "../../git/pack-writer.ts";
import type { Oid } from "../../git/types.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import * as store from "./store.ts";
import type { PackRecord as PackRow } from "./store.ts";

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

/** The payload of the maintenance jobs. */
export interface RepoJob {
  repoId: string;
}

/** Merging a repository's small packs (one pending per repository; a repository's maintenance runs one job at a time). */
export const REPO_COMPACT = jobKind<RepoJob>("repo.compact", { key: (p) => `repo:${p.repoId}`, unique: (p) => p.repoId });
/** One pack of everything reachable (one pending per repository). */
export const REPO_GC = jobKind<RepoJob>("repo.gc", { key: (p) => `repo:${p.repoId}`, unique: (p) => p.repoId });
/** Deleting replaced packs once the grace period is over (unkeyed: it waits an hour and must not hold the others back). */
export const REPO_SWEEP = jobKind<RepoJob>("repo.sweep");
/** The periodic GC pass: a GC for every repository with more than one pack, every six hours across the cluster. */
export const REPO_GC_PASS = jobKind<unknown>("repo.gc-pass", { every: { ms: 6 * 3600 * 1000, scope: "cluster" } });

/**
 * Writes the pack of the `count` positions flagged SEND in `flags` to a temp file, with its idx
 * built from what the writer reports (ids, offsets, CRCs of entries copied as stored): nothing is
 * inflated or hashed again, unlike indexing the written pack.
 */
export async function writePackFiles(ctx: Ctx, midx: MultiPackIndex, flags: Uint8Array, count: number) {
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
  repoId: string,
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
    await ctx.git.storePack(repoId, built);
  } finally {
    await Promise.all([rm(built.packPath, { force: true }), rm(built.idxPath, { force: true })]);
  }
  return ctx.db.transaction(async (tx) => {
    const ids = sources.map((s) => s.id);
    if ((await store.countLive(tx, ids)) !== ids.length || !(await store.repoIsLive(tx, repoId))) return false;
    // Why: GC drops unreachable objects; if refs moved meanwhile, a new ref may need one of them.
    if (refsAtStart !== null && JSON.stringify(await store.readRefs(tx, repoId)) !== refsAtStart) return false;
    const t = now();
    const existing = await store.packByName(tx, repoId, built.name);
    if (existing) await store.revivePack(tx, existing.id, tier, reachTips);
    else
      await store.insertPack(tx, {
        id: newId(),
        repoId,
        storageRepoId: repoId,
        name: built.name,
        size: built.size,
        idxSize: built.idxSize,
        objectCount: built.objectCount,
        tier,
        createdAt: t,
        replacedAt: null,
        reachTips,
      });
    await store.markPacksReplaced(
      tx,
      ids.filter((id) => id !== existing?.id),
      t,
    );
    await ctx.work.enqueue(tx, REPO_SWEEP, { repoId }, { delayMs: GRACE_MS + 1000 });
    return true;
  });
}

/**
 * Merges FAN_IN packs of the lowest crowded tier into one pack of the next tier; repeats. Only the
 * repository's own packs: a pack it shares with another repository (a fork's inherited packs) is
 * immutable common ground, never rewritten into a private copy.
 */
export async function compactRepo(ctx: Ctx, payload: { repoId: string }): Promise<number> {
  const repoId = payload.repoId;
  if (!(await store.repoIsLive(ctx.db.read, repoId))) return 0;
  let merges = 0;
  for (;;) {
    const live = (await store.livePacks(ctx.db.read, repoId)).filter((p) => p.storageRepoId === repoId);
    const byTier = new Map<number, PackRow[]>();
    for (const p of live) byTier.set(p.tier, [...(byTier.get(p.tier) ?? []), p]);
    const tier = [...byTier.keys()].sort((a, b) => a - b).find((t) => byTier.get(t)!.length >= FAN_IN);
    if (tier === undefined) return merges;
    const group = byTier
      .get(tier)!
      .sort((a, b) => a.createdAt - b.createdAt)
      .slice(0, FAN_IN);
    // Newest first, as in a snapshot: the oldest pack's copy of a duplicate is kept. On object
    // storage the packs are read from local copies (openPackCopies), removed once written.
    const copies = await ctx.git.openPackCopies([...group].reverse(), ctx.tmpDir);
    let replaced: boolean;
    try {
      const midx = MultiPackIndex.build(copies.packs);
      const flags = new Uint8Array(midx.count).fill(SEND);
      replaced = await replacePacks(ctx, repoId, group, midx, flags, midx.count, Math.max(tier + 1, tierFor(midx.count)));
    } finally {
      await copies.close();
    }
    if (!replaced) return merges;
    merges++;
  }
}

/** A reachability record: the tips, without those another tip reaches (as far as the walk saw). */
function recordOf(tips: Oid[], reached: Set<Oid>): string {
  const kept = tips.filter((t) => !reached.has(t));
  return (kept.length ? kept : tips).join("\n");
}

/**
 * Repacks everything reachable from the refs into one pack; replaced packs go after the grace
 * period. A repository that shares packs with another (a fork) keeps the shared ones and repacks
 * only what the refs reach outside them into its own pack.
 */
export async function gcRepo(ctx: Ctx, payload: { repoId: string }): Promise<{ objects: number; packsReplaced: number }> {
  const repoId = payload.repoId;
  if (!(await store.repoIsLive(ctx.db.read, repoId))) return { objects: 0, packsReplaced: 0 };
  const live = (await store.livePacks(ctx.db.read, repoId)).sort((a, b) => b.createdAt - a.createdAt);
  if (live.some((p) => p.storageRepoId !== repoId)) return gcBesideShared(ctx, repoId, live);
  const refsNow = await store.readRefs(ctx.db.read, repoId);
  const refsAtStart = JSON.stringify(refsNow);
  const tips = [...new Set(refsNow.map((r) => r.oid))];
  if (!live.length) return { objects: 0, packsReplaced: 0 };
  const copies = await ctx.git.openPackCopies(live, ctx.tmpDir);
  try {
    return await gcPacks(ctx, repoId, live, copies.packs, tips, refsAtStart);
  } finally {
    await copies.close();
  }
}

/** GC of the opened live packs (newest first): one pack of everything reachable from `tips`. */
async function gcPacks(
  ctx: Ctx,
  repoId: string,
  live: PackRow[],
  opened: Pack[],
  tips: Oid[],
  refsAtStart: string,
): Promise<{ objects: number; packsReplaced: number }> {
  const set = new PackSet(opened);
  // The previous GC pack (and any pack with a reachability record) is not walked again.
  const list = tips.length ? await listObjects(set, { wants: tips, haves: [], shallow: [] }, { reachability: true }) : null;
  const objects = list?.count ?? 0;
  const maxTier = Math.max(...live.map((p) => p.tier));
  if (live.length === 1 && objects === opened[0]!.idx.count) {
    // Already one pack of exactly what the refs reach: record that, so clones need no walk.
    if (!live[0]!.reachTips) {
      const record = recordOf(tips, list!.reachedWants);
      await ctx.db.transaction(async (tx) => {
        if (JSON.stringify(await store.readRefs(tx, repoId)) === refsAtStart) await store.setReachTips(tx, live[0]!.id, record);
      });
    }
    return { objects, packsReplaced: 0 };
  }
  if (!list || objects === 0) {
    // Nothing reachable: every pack is garbage.
    const t = now();
    const done = await ctx.db.transaction(async (tx) => {
      if (JSON.stringify(await store.readRefs(tx, repoId)) !== refsAtStart) return false;
      await store.markPacksReplaced(
        tx,
        live.map((p) => p.id),
        t,
      );
      await ctx.work.enqueue(tx, REPO_SWEEP, { repoId }, { delayMs: GRACE_MS + 1000 });
      return true;
    });
    return { objects: 0, packsReplaced: done ? live.length : 0 };
  }
  // The new pack holds exactly what the refs reach: its reachability record is the refs' targets,
  // less those another target reaches (so deleting such a ref later does not void the record).
  const ok = await replacePacks(ctx, repoId, live, list.midx, list.flags, list.count, maxTier + 1, refsAtStart, recordOf(tips, list.reachedWants));
  return { objects, packsReplaced: ok ? live.length : 0 };
}
/**
 * GC of a repository with shared packs: what the refs reach and no shared pack holds goes into one
 * own pack; own packs are replaced, shared ones stay (they are another repository's files).
 */
async function gcBesideShared(ctx: Ctx, repoId: string, live: PackRow[]): Promise<{ objects: number; packsReplaced: number }> {
  const own = live.filter((p) => p.storageRepoId === repoId);
  const refsNow = await store.readRefs(ctx.db.read, repoId);
  const refsAtStart = JSON.stringify(refsNow);
  const tips = [...new Set(refsNow.map((r) => r.oid))];
  const opened = await Promise.all(live.map((row) => ctx.git.openPack(row)));
  const sharedIdx = opened.filter((_, i) => live[i]!.storageRepoId !== repoId).map((p) => p.idx);
  const list = tips.length ? await listObjects(new PackSet(opened), { wants: tips, haves: [], shallow: [] }, { reachability: true }) : null;
  let count = 0;
  if (list) {
    for (let p = 0; p < list.midx.count; p++) {
      if (!(list.flags[p]! & SEND)) continue;
      if (sharedIdx.some((idx) => idx.indexOfRaw(list.midx.oids, 20 * p) >= 0)) list.flags[p]! &= ~SEND;
      else count++;
    }
  }
  if (own.length === 0 || (own.length === 1 && count === own[0]!.objectCount)) return { objects: count, packsReplaced: 0 };
  if (!list || count === 0) {
    const t = now();
    const done = await ctx.db.transaction(async (tx) => {
      if (JSON.stringify(await store.readRefs(tx, repoId)) !== refsAtStart) return false;
      await store.markPacksReplaced(
        tx,
        own.map((p) => p.id),
        t,
      );
      await ctx.work.enqueue(tx, REPO_SWEEP, { repoId }, { delayMs: GRACE_MS + 1000 });
      return true;
    });
    return { objects: 0, packsReplaced: done ? own.length : 0 };
  }
  const maxTier = Math.max(...own.map((p) => p.tier));
  const ok = await replacePacks(ctx, repoId, own, list.midx, list.flags, count, maxTier + 1, refsAtStart, null);
  return { objects: count, packsReplaced: ok ? own.length : 0 };
}

/**
 * Deletes the pack files `name` under `storageRepoId`'s prefix if no pack row of any repository
 * names them and they are older than `cutoff` (a file stored again meanwhile is new: kept).
 * Answers the number of files deleted.
 */
async function deleteUnnamedPackFiles(ctx: Ctx, storageRepoId: string, name: string, cutoff: number): Promise<number> {
  if (await store.packFileNamed(ctx.db.read, storageRepoId, name)) return 0;
  let deleted = 0;
  for await (const obj of ctx.store.list(`repos/${storageRepoId}/packs/pack-${name}.`)) {
    if (obj.modifiedAt >= cutoff) continue;
    await ctx.store.delete(obj.key);
    deleted++;
  }
  ctx.git.evict(storageRepoId, name);
  return deleted;
}

/**
 * Forgets the repository's packs replaced before the grace period, then deletes pack files that
 * no row names any more: those rows' files (which may live under another repository's prefix,
 * for a fork) and orphans under its own prefix older than the grace period. A file stays while
 * any repository's row names it, so a fork's maintenance never deletes its parent's packs, nor
 * the parent's the fork's. Answers the number of files deleted.
 */
export async function sweepRepo(ctx: Ctx, payload: { repoId: string }, graceMs = GRACE_MS): Promise<number> {
  const cutoff = now() - graceMs;
  const old = await store.packsReplacedBefore(ctx.db.read, payload.repoId, cutoff);
  let deleted = 0;
  for (const p of old) {
    if (await ctx.db.transaction((tx) => store.deleteReplacedPack(tx, p.id, cutoff)))
      deleted += await deleteUnnamedPackFiles(ctx, p.storageRepoId, p.name, cutoff);
  }
  const known = await store.packNamesStoredUnder(ctx.db.read, payload.repoId);
  for await (const obj of ctx.store.list(`repos/${payload.repoId}/packs/`)) {
    const m = /pack-([0-9a-f]{40})\.(pack|idx)$/.exec(obj.key);
    if (m && !known.has(m[1]!) && obj.modifiedAt < cutoff && !(await store.packFileNamed(ctx.db.read, payload.repoId, m[1]!))) {
      await ctx.store.delete(obj.key);
      deleted++;
    }
  }
  // Uploads a crash (or a give-up whose abort failed too) left open keep their parts billed.
  if (ctx.store.abortIncompleteUploads) deleted += await ctx.store.abortIncompleteUploads(`repos/${payload.repoId}/`, cutoff);
  return deleted;
}

/** Every repository with its full name, for maintenance passes. */
export function allRepos(ctx: Ctx): Promise<{ id: string; name: string }[]> {
  return store.allRepoNames(ctx.db.read);
}

/**
 * Schedules a GC for every repository with more than one live pack, or with one pack that has no
 * reachability record yet (the periodic pass).
 */
export async function scheduleGcPass(ctx: Ctx): Promise<number> {
  let n = 0;
  for (const r of await store.livePackCounts(ctx.db.read)) {
    // A repository with shared packs collects only its own: due when it has two or more.
    if (r.own < r.n ? r.own < 2 : r.n < 2 && r.recorded === r.n) continue;
    // One pending GC per repository: an enqueue while one waits folds into it (REPO_GC.unique).
    await ctx.db.transaction((tx) => ctx.work.enqueue(tx, REPO_GC, { repoId: r.repoId }));
    n++;
  }
  return n;
}

/** Schedules compaction when a repository has gathered enough small packs. */
export async function maybeScheduleCompaction(ctx: Ctx, repoId: string): Promise<void> {
  const perTier = new Map<number, number>();
  for (const tier of await store.liveTiers(ctx.db.read, repoId)) perTier.set(tier, (perTier.get(tier) ?? 0) + 1);
  if (![...perTier.values()].some((n) => n >= FAN_IN)) return;
  // One pending compaction per repository (REPO_COMPACT.unique).
  await ctx.db.transaction((tx) => ctx.work.enqueue(tx, REPO_COMPACT, { repoId }, { delayMs: COMPACTION_DELAY_MS }));
}
