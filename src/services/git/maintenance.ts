// Background pack maintenance (DESIGN.md): tiered compaction of small packs by verbatim copy with
// dedup, a periodic GC pack of everything reachable, and deletion of replaced packs and orphan
// files only after a grace period longer than the longest request.
import { createReadStream, createWriteStream } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { once } from "node:events";
import { indexPack } from "../../git/pack-indexer.ts";
import { PackSet } from "../../git/pack-set.ts";
import { packObjects } from "../../git/pack-writer.ts";
import { collectObjects } from "../../git/walk.ts";
import type { Oid } from "../../git/types.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { enqueueJob } from "../jobs/queue.ts";
import { pendingJobFor } from "../jobs/store.ts";
import { packKey } from "./snapshot.ts";
import * as store from "./store.ts";
import type { PackRecord as PackRow } from "./store.ts";
import type { Pack } from "../../git/pack-reader.ts";

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

/** Writes a pack stream to a file, indexes it, and returns the files ready to upload. */
async function materialize(ctx: Ctx, stream: AsyncIterable<Uint8Array>) {
  const path = join(ctx.tmpDir, `repack-${newId()}.pack`);
  const out = createWriteStream(path);
  for await (const chunk of stream) if (!out.write(chunk)) await once(out, "drain");
  out.end();
  await once(out, "finish");
  try {
    const indexed = await indexPack(createReadStream(path), { tmpDir: ctx.tmpDir });
    return { ...indexed, idxSize: (await stat(indexed.idxPath)).size };
  } finally {
    await rm(path, { force: true });
  }
}

/**
 * Replaces `sources` with one new pack holding exactly `oids` (copied verbatim), in one
 * transaction that first checks the sources are still live. Returns false if it lost a race.
 */
async function replacePacks(
  ctx: Ctx,
  repoId: string,
  sources: PackRow[],
  opened: Pack[],
  oids: Oid[],
  tier: number,
  refsAtStart: string | null = null,
): Promise<boolean> {
  const set = new PackSet(opened);
  const built = await materialize(ctx, packObjects(set, oids, { ofsDelta: true }));
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
    if (existing) await store.revivePack(tx, existing.id, tier);
    else await store.insertPack(tx, { id: newId(), repoId, name: built.name, size: built.size, idxSize: built.idxSize, objectCount: built.objectCount, tier, createdAt: t, replacedAt: null });
    await store.markPacksReplaced(tx, ids.filter((id) => id !== existing?.id), t);
    await enqueueJob(tx, "repo.sweep", { repoId }, GRACE_MS + 1000);
    return true;
  });
}

/** Every object id stored in the given packs. */
function allOids(opened: Pack[]): Oid[] {
  const out = new Set<Oid>();
  for (const p of opened) for (let i = 0; i < p.idx.count; i++) out.add(p.idx.oidAt(i));
  return [...out];
}

/** Merges FAN_IN packs of the lowest crowded tier into one pack of the next tier; repeats. */
export async function compactRepo(ctx: Ctx, payload: { repoId: string }): Promise<number> {
  const repoId = payload.repoId;
  if (!(await store.repoIsLive(ctx.db.read, repoId))) return 0;
  let merges = 0;
  for (;;) {
    const live = await store.livePacks(ctx.db.read, repoId);
    const byTier = new Map<number, PackRow[]>();
    for (const p of live) byTier.set(p.tier, [...(byTier.get(p.tier) ?? []), p]);
    const tier = [...byTier.keys()].sort((a, b) => a - b).find((t) => byTier.get(t)!.length >= FAN_IN);
    if (tier === undefined) return merges;
    const group = byTier.get(tier)!.sort((a, b) => a.createdAt - b.createdAt).slice(0, FAN_IN);
    const opened = await Promise.all(group.map((row) => ctx.git.openPack(repoId, row)));
    const oids = allOids(opened);
    if (!(await replacePacks(ctx, repoId, group, opened, oids, Math.max(tier + 1, tierFor(oids.length))))) return merges;
    merges++;
  }
}

/** Repacks everything reachable from the refs into one pack; replaced packs go after the grace period. */
export async function gcRepo(ctx: Ctx, payload: { repoId: string }): Promise<{ objects: number; packsReplaced: number }> {
  const repoId = payload.repoId;
  if (!(await store.repoIsLive(ctx.db.read, repoId))) return { objects: 0, packsReplaced: 0 };
  const live = await store.livePacks(ctx.db.read, repoId);
  const refsNow = await store.readRefs(ctx.db.read, repoId);
  const refsAtStart = JSON.stringify(refsNow);
  const tips = [...new Set(refsNow.map((r) => r.oid))];
  if (!live.length) return { objects: 0, packsReplaced: 0 };
  const opened = await Promise.all(live.map((row) => ctx.git.openPack(repoId, row)));
  const set = new PackSet(opened);
  const { oids } = await collectObjects(set, { wants: tips, haves: [], shallow: [] });
  const maxTier = Math.max(...live.map((p) => p.tier));
  if (live.length === 1 && oids.length === opened[0]!.idx.count) return { objects: oids.length, packsReplaced: 0 };
  if (oids.length === 0) {
    // Nothing reachable: every pack is garbage.
    const t = now();
    const done = await ctx.db.transaction(async (tx) => {
      if (JSON.stringify(await store.readRefs(tx, repoId)) !== refsAtStart) return false;
      await store.markPacksReplaced(tx, live.map((p) => p.id), t);
      await enqueueJob(tx, "repo.sweep", { repoId }, GRACE_MS + 1000);
      return true;
    });
    return { objects: 0, packsReplaced: done ? live.length : 0 };
  }
  const ok = await replacePacks(ctx, repoId, live, opened, oids, maxTier + 1, refsAtStart);
  return { objects: oids.length, packsReplaced: ok ? live.length : 0 };
}

/** Deletes replaced packs past the grace period, and orphan files (no row) older than it. */
export async function sweepRepo(ctx: Ctx, payload: { repoId: string }, graceMs = GRACE_MS): Promise<number> {
  const cutoff = now() - graceMs;
  const old = await store.packsReplacedBefore(ctx.db.read, payload.repoId, cutoff);
  let deleted = 0;
  for (const p of old) {
    await ctx.store.delete(packKey(payload.repoId, p.name, "idx"));
    await ctx.store.delete(packKey(payload.repoId, p.name, "pack"));
    ctx.git.evict(payload.repoId, p.name);
    await ctx.db.transaction((tx) => store.deletePack(tx, p.id));
    deleted++;
  }
  const known = new Set(await store.packNames(ctx.db.read, payload.repoId));
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
export function allRepos(ctx: Ctx): Promise<{ id: string; name: string }[]> {
  return store.allRepoNames(ctx.db.read);
}

/** Schedules a GC for every repository with more than one live pack (the periodic pass). */
export async function scheduleGcPass(ctx: Ctx): Promise<number> {
  let n = 0;
  for (const r of await store.livePackCounts(ctx.db.read)) {
    if (r.n < 2) continue;
    if (!(await pendingJobFor(ctx.db.read, "repo.gc", r.repoId))) {
      await ctx.db.transaction((tx) => enqueueJob(tx, "repo.gc", { repoId: r.repoId }));
      n++;
    }
  }
  return n;
}

/** Schedules compaction when a repository has gathered enough small packs. */
export async function maybeScheduleCompaction(ctx: Ctx, repoId: string): Promise<void> {
  const perTier = new Map<number, number>();
  for (const tier of await store.liveTiers(ctx.db.read, repoId)) perTier.set(tier, (perTier.get(tier) ?? 0) + 1);
  if (![...perTier.values()].some((n) => n >= FAN_IN)) return;
  if (!(await pendingJobFor(ctx.db.read, "repo.compact", repoId))) await ctx.db.transaction((tx) => enqueueJob(tx, "repo.compact", { repoId }, COMPACTION_DELAY_MS));
}
