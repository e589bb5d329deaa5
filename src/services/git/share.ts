// Objects crossing from one repository to another. A fork names its parent's immutable packs
// instead of copying them (sharePacks); a change landed from a fork brings exactly the objects
// its commits need in a pack of their own (closurePack), never the fork's other packs: whatever
// else the fork holds (an unrelated branch of a private fork) must not become readable through
// the target (docs/architecture.md, "Reachability is the boundary").
import { rm } from "node:fs/promises";
import { listObjects } from "../../git/object-list.ts";
import type { Pack } from "../../git/pack-reader.ts";
import { PackSet } from "../../git/pack-set.ts";
import type { Oid } from "../../git/types.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { writePackFiles } from "./maintenance.ts";
import type { PackToPublish } from "./publish.ts";
import * as store from "./store.ts";
import { packKey } from "./snapshot.ts";

/** Whether the repository still exists (a fork whose parent was deleted meanwhile fails). */
export function repoIsLive(q: Queryable, repoId: string): Promise<boolean> {
  return store.repoIsLive(q, repoId);
}

/**
 * Why `repoId`'s live packs cannot be shared with a new fork, or null: a pack file it names that
 * storage lost. Why check the files: the fork will serve them for as long as it lives; a pack the
 * parent names but storage lost must fail the fork now, visibly, not its first clone.
 */
export async function missingPackFile(ctx: Ctx, repoId: string): Promise<string | null> {
  for (const p of await store.livePacks(ctx.db.read, repoId)) {
    for (const ext of ["idx", "pack"] as const) {
      const found = await ctx.store.stat(packKey(p.storageRepoId, p.name, ext));
      if (!found) return `pack-${p.name}.${ext} of the parent is missing from storage`;
    }
  }
  return null;
}

/** The other repositories whose stored packs `repoId`'s rows name (a fork's parent and its ancestors). */
export function sharedStorageOf(q: Queryable, repoId: string): Promise<string[]> {
  return store.sharedStorageOf(q, repoId);
}

/**
 * Makes every live pack of `fromRepoId` live in `toRepoId`'s pack list too, without copying a
 * byte: the new rows name the same stored files (`storage_repo_id`). Only for a new fork's first
 * refs (services/repos/forks.ts): the fork's refs are then its parent's, and what else the
 * shared packs hold stays unreadable through the fork because reads go by reachability. Call it
 * inside the transaction that writes those refs. Idempotent; answers how many packs became live.
 *
 * Liveness: a pack file stays while any row of any repository names it (sweep and purge check
 * that), so maintenance of either repository, or deleting `fromRepoId`, leaves `toRepoId` whole.
 */
export async function sharePacks(tx: Tx, fromRepoId: string, toRepoId: string): Promise<number> {
  if (fromRepoId === toRepoId) return 0;
  return store.sharePackRows(tx, fromRepoId, toRepoId, newId, now());
}

/**
 * A pack of what `wants` reach and the target's `haves` (its ref tips) do not: the objects a
 * landing from a fork adds to the target, read from the target's and the fork's packs together
 * (plus `extra`, such as the merge commit's own small pack). Entries are copied as stored; a delta
 * whose base is not in the pack is written whole, so the pack needs nothing the target lacks.
 * Null when the target already holds everything. The caller removes the files (`cleanup`).
 */
export async function closurePack(
  ctx: Ctx,
  from: { target: Pack[]; source: Pack[]; extra?: Pack[] },
  wants: Oid[],
  haves: Oid[],
): Promise<(PackToPublish & { cleanup(): Promise<void> }) | null> {
  const names = new Set(from.target.map((p) => p.name));
  // A fork lists its parent's packs too: each stored file once.
  const packs = [...(from.extra ?? []), ...from.source.filter((p) => !names.has(p.name)), ...from.target];
  const list = await listObjects(new PackSet(packs), { wants, haves, shallow: [] });
  if (list.count === 0) return null;
  const built = await writePackFiles(ctx, list.midx, list.flags, list.count);
  return { ...built, cleanup: async () => void (await Promise.all([rm(built.packPath, { force: true }), rm(built.idxPath, { force: true })])) };
}
