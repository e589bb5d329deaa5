// Background pack maintenance (DESIGN.md): tiered compaction of small packs by verbatim copy with
// dedup, a periodic GC pack of everything reachable, and deletion of replaced packs and orphan
// files only after a grace period longer than the longest request.
import { createReadStream, createWriteStream } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { once } from "node:events";
import { and, eq, inArray, isNull, isNotNull, lte, sql } from "drizzle-orm";
import { indexPack } from "../../git/pack-indexer.ts";
import { PackSet } from "../../git/pack-set.ts";
import { packObjects } from "../../git/pack-writer.ts";
import { collectObjects } from "../../git/walk.ts";
import type { Oid } from "../../git/types.ts";
import { jobs, orgs, packs, repos, type Repo } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { enqueueJob } from "../jobs/queue.ts";
import { packKey, readRefs } from "./snapshot.ts";
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

type PackRow = typeof packs.$inferSelect;

function livePacks(ctx: Ctx, repoId: string): PackRow[] {
  return ctx.db.select().from(packs).where(and(eq(packs.repoId, repoId), isNull(packs.replacedAt))).all();
}

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
  repo: Repo,
  sources: PackRow[],
  opened: Pack[],
  oids: Oid[],
  tier: number,
  refsAtStart: string | null = null,
): Promise<boolean> {
  const set = new PackSet(opened);
  const built = await materialize(ctx, packObjects(set, oids, { ofsDelta: true }));
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
    if (existing) tx.update(packs).set({ replacedAt: null, tier }).where(eq(packs.id, existing.id)).run();
    else tx.insert(packs).values({ id: newId(), repoId: repo.id, name: built.name, size: built.size, idxSize: built.idxSize, objectCount: built.objectCount, tier, createdAt: t }).run();
    const replaced = ids.filter((id) => id !== existing?.id);
    if (replaced.length) tx.update(packs).set({ replacedAt: t }).where(inArray(packs.id, replaced)).run();
    enqueueJob(tx, "repo.sweep", { repoId: repo.id }, GRACE_MS + 1000);
    return true;
  }, { behavior: "immediate" });
}

/** Every object id stored in the given packs. */
function allOids(opened: Pack[]): Oid[] {
  const out = new Set<Oid>();
  for (const p of opened) for (let i = 0; i < p.idx.count; i++) out.add(p.idx.oidAt(i));
  return [...out];
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
    const copies = await ctx.git.openPackCopies(repo.id, group, ctx.tmpDir);
    let replaced: boolean;
    try {
      const oids = allOids(copies.packs);
      replaced = await replacePacks(ctx, repo, group, copies.packs, oids, Math.max(tier + 1, tierFor(oids.length)));
    } finally {
      await copies.close();
    }
    if (!replaced) return merges;
    merges++;
  }
}

/** Repacks everything reachable from the refs into one pack; replaced packs go after the grace period. */
export async function gcRepo(ctx: Ctx, payload: { repoId: string }): Promise<{ objects: number; packsReplaced: number }> {
  const repo = ctx.db.select().from(repos).where(eq(repos.id, payload.repoId)).get();
  if (!repo) return { objects: 0, packsReplaced: 0 };
  const live = livePacks(ctx, repo.id);
  const refsNow = readRefs(ctx.db, repo.id);
  const refsAtStart = JSON.stringify(refsNow);
  const tips = [...new Set(refsNow.map((r) => r.oid))];
  if (!live.length) return { objects: 0, packsReplaced: 0 };
  const copies = await ctx.git.openPackCopies(repo.id, live, ctx.tmpDir);
  try {
    return await gcPacks(ctx, repo, live, copies.packs, tips, refsAtStart);
  } finally {
    await copies.close();
  }
}

/** GC of the opened live packs: one pack of everything reachable from `tips`. */
async function gcPacks(ctx: Ctx, repo: Repo, live: PackRow[], opened: Pack[], tips: Oid[], refsAtStart: string): Promise<{ objects: number; packsReplaced: number }> {
  const set = new PackSet(opened);
  const { oids } = await collectObjects(set, { wants: tips, haves: [], shallow: [] });
  const maxTier = Math.max(...live.map((p) => p.tier));
  if (live.length === 1 && oids.length === opened[0]!.idx.count) return { objects: oids.length, packsReplaced: 0 };
  if (oids.length === 0) {
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
  const ok = await replacePacks(ctx, repo, live, opened, oids, maxTier + 1, refsAtStart);
  return { objects: oids.length, packsReplaced: ok ? live.length : 0 };
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
  // Uploads a crash (or a give-up whose abort failed too) left open keep their parts billed.
  if (ctx.store.abortIncompleteUploads) deleted += await ctx.store.abortIncompleteUploads(`repos/${payload.repoId}/`, cutoff);
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

/** Schedules a GC for every repository with more than one live pack (the periodic pass). */
export function scheduleGcPass(ctx: Ctx): number {
  const rows = ctx.db.select({ repoId: packs.repoId, n: sql<number>`count(*)` }).from(packs).where(isNull(packs.replacedAt)).groupBy(packs.repoId).all();
  let n = 0;
  for (const r of rows) {
    if (r.n < 2) continue;
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
