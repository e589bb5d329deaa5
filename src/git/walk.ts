// Reachability over an ObjectReader: what to send for a fetch (rev-list --objects
// <wants> --not <haves>, with shallow boundaries and filters), ancestry tests for
// fast-forward checks, and the "is this object reachable from a ref" check of upload-pack.
import { filterRules, type ObjectFilter, TreeWalker } from "./list-objects.ts";
import { HAVE, listObjects, planShallow, SEND, type ObjectList } from "./object-list.ts";
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE } from "./pack-entry.ts";
import { PackSet } from "./pack-set.ts";
import { openIndexedPack, overlayReader } from "./pack-overlay.ts";
import type { IndexedPack } from "./pack-indexer.ts";
import { CommitCache, CommitQueue, limitCommits, type Peeled } from "./revision.ts";
import type { ShallowPlan } from "./shallow.ts";
import { GitError, type ObjectReader, type Oid } from "./types.ts";

/** What the client asked for and what it has. */
export interface CollectRequest {
  wants: Oid[];
  /** Objects the client has (common with us). */
  haves: Oid[];
  /** The client's current shallow commits. */
  shallow: Oid[];
  depth?: number;
  deepenSince?: number;
  /** Resolved ids of the deepen-not refs. */
  deepenNot?: Oid[];
  deepenRelative?: boolean;
  filter?: ObjectFilter;
  /** Ref tips, needed for deepen-relative (client shallow commits must be reachable from them). */
  tips?: Oid[];
  /** The shallow plan when already computed (v0 announces it before negotiating haves). */
  plan?: ShallowPlan;
}

/** Objects to send and shallow-info to report. */
export interface CollectResult {
  /** Tags, commits, trees, then blobs to send; each once. */
  oids: Oid[];
  shallow: Oid[];
  unshallow: Oid[];
  /** Objects the client is known to have next to what is sent: usable as thin-pack delta bases. */
  bases: Set<Oid>;
  /** How many of `oids` are commits. */
  commitCount: number;
}

/**
 * rev-list --objects <wants> --not <haves> with git upload-pack's shallow and filter semantics.
 * Over a pack set this is listObjects (object-list.ts) turned into ids; the server uses that
 * compact form directly.
 */
export async function collectObjects(reader: ObjectReader, req: CollectRequest): Promise<CollectResult> {
  if (reader instanceof PackSet) return fromList(await listObjects(reader, req));
  const cache = new CommitCache(reader);
  const tags: Oid[] = [];
  const wantCommits: Oid[] = [];
  const wantTrees: Oid[] = [];
  const wantBlobs: Oid[] = [];
  for (const oid of req.wants) {
    const p = await mustPeel(cache, oid);
    tags.push(...p.tags);
    if (p.type === "commit") wantCommits.push(p.oid);
    else if (p.type === "tree") wantTrees.push(p.oid);
    else wantBlobs.push(p.oid);
  }
  const haveCommits: Oid[] = [];
  const haveOthers = new Set<Oid>();
  for (const oid of req.haves) {
    const p = await cache.peel(oid);
    if (!p) continue;
    for (const t of p.tags) haveOthers.add(t);
    if (p.type === "commit") haveCommits.push(p.oid);
    else haveOthers.add(p.oid);
  }

  const plan = req.plan ?? (await planShallow(cache, req, wantCommits));

  const walk = await limitCommits(cache, {
    interesting: [...wantCommits, ...plan.extraWants],
    uninteresting: [...haveCommits, ...plan.unshallow],
    grafts: plan.grafts,
  });

  // Trees of the boundary commits are on the client; with shallow involved also those of
  // every commit it named (git's --objects-edge-aggressive).
  const trees = new TreeWalker(reader);
  const edges = new Set(walk.edges);
  if (plan.grafts.size > 0) for (const oid of [...haveCommits, ...plan.unshallow]) edges.add(oid);
  for (const oid of edges) await trees.markUninteresting((await cache.get(oid)).tree);
  for (const oid of haveOthers) {
    const head = await reader.readHeader(oid);
    if (head?.type === "tree") await trees.markUninteresting(oid);
    else trees.uninteresting.add(oid);
  }

  const seen = new Set<Oid>();
  const sendTags = tags.filter((t) => !haveOthers.has(t) && !seen.has(t) && seen.add(t));
  const wanted = new Set(wantCommits);
  // object:type other than commit: only the wanted commits go (git filters the others).
  const commits = walk.commits.map((c) => c.oid).filter((c) => filterRules(req.filter).commits || wanted.has(c));
  for (const c of walk.commits) seen.add(c.oid);
  const treeList: Oid[] = [];
  const blobList: Oid[] = [];
  await trees.collect(
    walk.commits.map((c) => c.tree),
    wantTrees,
    seen,
    treeList,
    blobList,
    req.filter,
  );
  // Explicitly wanted blobs are sent whatever the filter says.
  const listed = new Set(blobList);
  for (const b of wantBlobs) {
    if (listed.has(b)) continue;
    listed.add(b);
    blobList.push(b);
  }

  const bases = new Set<Oid>(trees.uninteresting);
  for (const e of edges) bases.add(e);
  return {
    oids: [...sendTags, ...commits, ...treeList, ...blobList],
    shallow: plan.shallow,
    unshallow: plan.unshallow,
    bases,
    commitCount: commits.length,
  };
}

function fromList(list: ObjectList): CollectResult {
  const byType: Oid[][] = [[], [], [], [], []];
  const bases = new Set<Oid>();
  const { midx, flags, types } = list;
  for (let p = 0; p < midx.count; p++) {
    if (flags[p]! & SEND) byType[types[p]!]!.push(midx.oidAt(p));
    else if (flags[p]! & HAVE) bases.add(midx.oidAt(p));
  }
  return {
    oids: [...byType[OBJ_TAG]!, ...byType[OBJ_COMMIT]!, ...byType[OBJ_TREE]!, ...byType[OBJ_BLOB]!],
    shallow: list.shallow,
    unshallow: list.unshallow,
    bases,
    commitCount: list.commitCount,
  };
}

/** Shallow/unshallow lines and walk boundary for a request (git's send_shallow_list). */
export async function computeShallow(reader: ObjectReader, req: CollectRequest): Promise<ShallowPlan> {
  const cache = new CommitCache(reader);
  const wantCommits: Oid[] = [];
  for (const oid of req.wants) {
    const p = await cache.peel(oid);
    if (p?.type === "commit") wantCommits.push(p.oid);
  }
  return planShallow(cache, req, wantCommits);
}

async function mustPeel(cache: CommitCache, oid: Oid): Promise<Peeled> {
  const p = await cache.peel(oid);
  if (!p) throw new GitError(`missing object ${oid}`, "missing");
  return p;
}

/**
 * True when commit `ancestor` is reachable from commit `descendant` (or is it); for fast-forward checks.
 * `packs` are received packs not yet in `reader` (the objects a push brings).
 */
export async function isAncestor(reader: ObjectReader, ancestor: Oid, descendant: Oid, packs: IndexedPack[] = []): Promise<boolean> {
  if (ancestor === descendant) return true;
  if (packs.length === 0) return ancestry(reader, ancestor, descendant);
  const opened = await Promise.all(packs.map(openIndexedPack));
  try {
    return await ancestry(
      overlayReader(
        opened.map((o) => o.pack),
        reader,
      ),
      ancestor,
      descendant,
    );
  } finally {
    await Promise.all(opened.map((o) => o.close()));
  }
}

async function ancestry(reader: ObjectReader, ancestor: Oid, descendant: Oid): Promise<boolean> {
  const cache = new CommitCache(reader);
  const target = await cache.lookup(ancestor);
  const start = await cache.lookup(descendant);
  if (!target || !start) return false;
  // Exact, like git's in_merge_bases without a commit-graph: commit dates only order the walk
  // (newest first, so a fast-forward meets its old tip early); they never prune it, because
  // committer clocks can be skewed by any amount.
  const queue = new CommitQueue();
  const seen = new Set<Oid>([descendant]);
  queue.push(start);
  while (queue.size > 0) {
    const node = queue.pop()!;
    if (node.oid === ancestor) return true;
    for (const p of node.parents) {
      if (seen.has(p)) continue;
      seen.add(p);
      if (p === ancestor) return true;
      const pn = await cache.lookup(p);
      if (pn) queue.push(pn);
    }
  }
  return false;
}

/**
 * The first of `oids` that is not reachable from `tips` (allow-reachable-sha1-in-want), or null.
 * Commits and tags are checked with a limited commit walk; trees and blobs by walking the trees
 * of reachable commits, newest first, until every one is found.
 */
export async function firstUnreachable(reader: ObjectReader, tips: Oid[], oids: Oid[]): Promise<Oid | null> {
  const cache = new CommitCache(reader);
  const tipSet = new Set(tips);
  const tipCommits: Oid[] = [];
  const tipOthers = new Set<Oid>();
  for (const t of tipSet) {
    const p = await cache.peel(t);
    if (!p) continue;
    for (const tag of p.tags) tipOthers.add(tag);
    if (p.type === "commit") tipCommits.push(p.oid);
    else tipOthers.add(p.oid);
  }
  const pending = new Map<Oid, Oid>();
  const commits: Oid[] = [];
  for (const oid of oids) {
    if (tipSet.has(oid) || tipOthers.has(oid)) continue;
    const p = await cache.peel(oid);
    if (!p) return oid;
    // Commits and trees never point at tags: a tag is reachable only as a tip or through a tip's tag chain.
    if (p.tags.length > 0) return oid;
    if (p.type === "commit") {
      if (!tipCommits.includes(p.oid)) commits.push(p.oid);
    } else {
      pending.set(p.oid, oid);
    }
  }
  if (commits.length > 0) {
    const outside = await limitCommits(cache, { interesting: commits, uninteresting: tipCommits });
    const unreachable = new Set(outside.commits.map((c) => c.oid));
    const bad = commits.find((c) => unreachable.has(c));
    if (bad) return bad;
  }
  if (pending.size === 0) return null;
  for (const t of tipOthers) pending.delete(t);
  if (pending.size === 0) return null;
  const trees = new TreeWalker(reader);
  for (const t of tipOthers) {
    const head = await reader.readHeader(t);
    if (head?.type === "tree") await trees.markUninteresting(t);
  }
  const found = (): boolean => {
    for (const oid of [...pending.keys()]) if (trees.uninteresting.has(oid)) pending.delete(oid);
    return pending.size === 0;
  };
  if (found()) return null;
  // Newest history first: lazy fetches of a partial clone mostly ask for blobs of recent trees.
  const queue = new CommitQueue();
  const seen = new Set<Oid>(tipCommits);
  for (const c of tipCommits) queue.push(await cache.get(c));
  while (queue.size > 0) {
    const node = queue.pop()!;
    await trees.markUninteresting(node.tree);
    if (found()) return null;
    for (const p of node.parents) {
      if (seen.has(p)) continue;
      seen.add(p);
      const pn = await cache.lookup(p);
      if (pn) queue.push(pn);
    }
  }
  return pending.values().next().value ?? null;
}
