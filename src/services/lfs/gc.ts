// The lifetime of Git LFS objects (issue 31): an object is deleted only when no reachable commit
// of any repository of its network points at it (a pointer blob in a tree reachable from a ref,
// or from a change's patchset head) and it is older than the grace period. Gitea's LFS GC deleted
// objects still in use (go-gitea/gitea#31271); what keeps us from that:
//
// - every repository of the network is walked (a fork's history keeps its parent's objects);
// - a network whose walk fails anywhere (a ref naming a missing object, storage giving up)
//   deletes nothing: an incomplete walk would see too little;
// - the grace period (24 h from the later of the row's creation and the last batch that offered
//   the object as already held, `touched_at`) covers pushes that have not landed yet, including
//   those whose upload the batch skipped;
// - the row goes first, in a transaction whose delete re-reads both timestamps (a batch that
//   touched the row after the walk keeps it), only if it is still the row judged; the file after
//   it. A file with no row (an upload never verified) is deleted once older than the grace period.
//
// Runs as a periodic cluster job (once a day), one network at a time; the walk is the clone's
// (git/object-list.ts): a few bytes per object, and only blobs under 1 KiB are read. Its object
// reads and the scan of what it listed yield to the event loop between 5 ms slices.
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { listObjects, SEND } from "../../git/object-list.ts";
import { OBJ_BLOB } from "../../git/pack-entry.ts";
import { SlicedPackSet, TimeSlice } from "../../git/time-slice.ts";
import { now, type Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { lfsObjectKey } from "./lfs.ts";
import { MAX_POINTER_BYTES, parsePointer } from "./pointer.ts";
import * as store from "./store-lfs.ts";

/** Objects younger than this are never deleted (an upload's push may still be on its way). */
export const LFS_GC_GRACE_MS = 24 * 3600 * 1000;
/** The smallest pointer file (version, oid and size lines): smaller blobs are not read. */
const MIN_POINTER_BYTES = 100;
/** Rows judged per page. */
const PAGE = 500;

/** The daily LFS GC pass across the cluster. */
export const LFS_GC_PASS = jobKind<unknown>("lfs.gc-pass", { every: { ms: 24 * 3600 * 1000, scope: "cluster" }, leaseMs: 10 * 60_000 });

/** What one pass did. */
export interface LfsGcReport {
  networks: number;
  /** Networks left alone because a walk failed. */
  skipped: number;
  kept: number;
  deleted: number;
  /** Stored files without a row, deleted. */
  orphans: number;
  /** Temp files of fs uploads cut off by a crash (`lfs-*` in the temp dir), deleted. */
  temps: number;
}

/** The oids of every LFS pointer reachable in the network's repositories; null when a walk could not be completed. */
export async function referencedOids(ctx: Ctx, networkId: string): Promise<Set<string> | null> {
  const found = new Set<string>();
  for (const repo of await store.networkRepos(ctx.db.read, networkId)) {
    try {
      const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
      // The walk shares the event loop with requests: its reads yield between slices.
      const set = new SlicedPackSet(snapshot.objects.packs, ctx.git.multiPackIndexes);
      const slice = new TimeSlice();
      const wants = new Set(snapshot.refs.map((r) => r.oid));
      // A change's head may live in another repository's packs (a fork's change): only those held here.
      for (const head of await store.patchsetHeads(ctx.db.read, repo.id)) if (await set.has(head)) wants.add(head);
      if (wants.size === 0) continue;
      const list = await listObjects(set, { wants: [...wants], haves: [], shallow: [] });
      for (let p = 0; p < list.flags.length; p++) {
        const pause = slice.tick();
        if (pause) await pause;
        if (!(list.flags[p]! & SEND) || list.types[p] !== OBJ_BLOB) continue;
        const oid = list.midx.oidAt(p);
        const header = await set.readHeader(oid);
        if (!header || header.size > MAX_POINTER_BYTES || header.size < MIN_POINTER_BYTES) continue;
        const blob = await set.read(oid);
        const pointer = blob ? parsePointer(blob.data) : null;
        if (pointer) found.add(pointer.oid);
      }
    } catch (error) {
      ctx.log.warn("lfs gc: a walk failed; nothing of this network is deleted", {
        network: networkId,
        repo: repo.id,
        error: error instanceof Error ? error.message : String(error),
      });
      return null;
    }
  }
  return found;
}

/** One GC pass over every network (or one): unreferenced objects past the grace period, and unverified files past it. */
export async function collectLfsGarbage(
  ctx: Ctx,
  opts: {
    networkId?: string;
    graceMs?: number;
    /** Called once a row is judged deletable, before its deleting transaction (tests interleave a batch there). */
    beforeDelete?: (networkId: string, oid: string) => Promise<void>;
  } = {},
): Promise<LfsGcReport> {
  const cutoff = now() - (opts.graceMs ?? LFS_GC_GRACE_MS);
  const report: LfsGcReport = { networks: 0, skipped: 0, kept: 0, deleted: 0, orphans: 0, temps: 0 };
  const networks = opts.networkId ? [opts.networkId] : await networksToCollect(ctx);
  for (const networkId of networks) {
    report.networks++;
    const referenced = await referencedOids(ctx, networkId);
    if (!referenced) {
      report.skipped++;
      continue;
    }
    const rows = new Set<string>();
    for (let after = ""; ; ) {
      const page = await store.objectPage(ctx.db.read, networkId, after, PAGE);
      for (const row of page) {
        if (referenced.has(row.oid) || Math.max(row.createdAt, row.touchedAt ?? 0) > cutoff) {
          rows.add(row.oid);
          report.kept++;
          continue;
        }
        await opts.beforeDelete?.(networkId, row.oid);
        const removed = await ctx.db.transaction((tx) => store.deleteObject(tx, networkId, row.oid, row.createdAt, cutoff));
        if (removed) {
          await ctx.store.delete(lfsObjectKey(networkId, row.oid));
          report.deleted++;
        } else rows.add(row.oid);
      }
      if (page.length < PAGE) break;
      after = page[page.length - 1]!.oid;
    }
    // Files no row accounts for: uploads never verified (S3), or left by a crash between row and file.
    for await (const o of ctx.store.list(`lfs/${networkId}/`)) {
      const oid = o.key.slice(o.key.lastIndexOf("/") + 1);
      if (rows.has(oid) || o.modifiedAt > cutoff) continue;
      // A row may have appeared since the page was read (a verify in the meantime): asked again.
      if ((await store.objectsIn(ctx.db.read, networkId, [oid])).size > 0) continue;
      await ctx.store.delete(o.key);
      report.orphans++;
    }
  }
  // An fs upload streams into the temp dir (lfs.ts receiveObject) and removes its file however
  // the request ends, but not when the process dies: those are left to this pass. Only fs
  // storage streams (one node: its temp dir is this one).
  if (ctx.store.localPath && !opts.networkId) report.temps = await sweepTemps(ctx.tmpDir, cutoff);
  return report;
}

/** Removes `lfs-*` files of `dir` last written before `cutoff`; how many. */
async function sweepTemps(dir: string, cutoff: number): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith("lfs-")) continue;
    const info = await stat(join(dir, name)).catch(() => null);
    if (!info?.isFile() || info.mtimeMs > cutoff) continue;
    await rm(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

/** Every network with rows, and every network with stored files (unverified uploads). */
async function networksToCollect(ctx: Ctx): Promise<string[]> {
  const ids = new Set(await store.networksWithObjects(ctx.db.read));
  for await (const o of ctx.store.list("lfs/")) {
    const id = o.key.split("/")[1];
    if (id) ids.add(id);
  }
  return [...ids].sort();
}
