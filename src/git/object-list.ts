// `rev-list --objects <wants> --not <haves>` over a pack set, in compact form: objects are named
// by their multi-pack-index position and every per-object fact (to send, held by the client,
// type) is a byte in a typed array, so listing a whole history costs a few bytes per object
// instead of strings, Sets and entry objects.
//
// A clone (no haves, no shallow boundary) walks commits straight through by position. Anything
// else takes the commit walk of revision.ts (limited, date ordered, with git's slop), which is
// proportional to the commits walked, then the same compact tree walk.
//
// Trees are read level by level (root trees, then their subtrees, ...), each level in pack
// order: a tree's delta base is usually the entry just before it in the pack (the same
// directory one version apart), so resolving them in that order with the base kept in the
// delta-base cache inflates each tree about once.
import { CLONE_MEMORY_SLACK, MemoryPacer } from "./buffer-pool.ts";
import { type ChainObject, ChainReader } from "./chain-reader.ts";
import type { CopyLog } from "./delta.ts";
import { filterRules, type FilterRules } from "./list-objects.ts";
import { MultiPackIndex } from "./multi-pack-index.ts";
import type { PackSet } from "./pack-set.ts";
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE } from "./pack-entry.ts";
import { CommitCache, limitCommits, type Peeled } from "./revision.ts";
import { lowerBound } from "./search.ts";
import { deepen, deepenByRevList, type ShallowPlan } from "./shallow.ts";
import { GitError, type ObjectReader, type Oid } from "./types.ts";
import type { CollectRequest } from "./walk.ts";
import type { WorkBudget } from "./work-budget.ts";
import { headerOidInto } from "./oid.ts";

/** Per-position flags of an ObjectList. */
export const SEND = 1;
/** The client has it (an uninteresting object): a thin pack may use it as a delta base. */
export const HAVE = 2;
/** Seen by the walk and not sent (e.g. a blob the filter omits). */
const SEEN = 4;

/** The objects of a fetch response, by multi-pack-index position. */
export interface ObjectList {
  midx: MultiPackIndex;
  /** Resolves the trees and commits of the walk (private buffers, reused). */
  reader: ChainReader;
  /** Flags per position: SEND, HAVE. */
  flags: Uint8Array;
  /** Type code (1 commit, 2 tree, 3 blob, 4 tag) of every position marked SEND. */
  types: Uint8Array;
  /** Number of positions marked SEND. */
  count: number;
  commitCount: number;
  shallow: Oid[];
  unshallow: Oid[];
  /** Trees read, tree entries parsed, and entries stepped over as copies of a base tree's. */
  stats: { trees: number; entries: number; skipped: number };
  /**
   * Wanted commits the clone walk met as a parent of another commit it walked: what they reach,
   * another want reaches too (a reachability record can leave them out).
   */
  reachedWants: Set<Oid>;
  /**
   * With ListOptions.thinBases: for objects sent, the client's version of the same path (a
   * position flagged HAVE), which a thin pack may send them as a delta against.
   */
  bases: Map<number, number> | null;
  /**
   * With thinBases: the entries of every tree the client has, as name hashes (sorted) and the
   * positions they name, recorded by the walk of the client's trees; pairing reads no tree again.
   */
  theirEntries: Map<number, TreeNames> | null;
}

/** A tree's entries: FNV-1a hashes of the names, sorted, and the position each names (-1 when absent). */
interface TreeNames {
  hashes: Uint32Array;
  children: Int32Array;
}

/** Options of listObjects. */
export interface ListOptions {
  /**
   * Use the packs' reachability records for a clone (no haves, no shallow, no filter): a pack
   * holding exactly what its recorded tips reach is counted as sent without being walked, when
   * every recorded tip is still wanted or is met by the walk of what lies outside the pack (a
   * fast-forward). Otherwise the listing falls back to the full walk, so the answer is exact.
   */
  reachability?: boolean;
  /**
   * Work allowed (OverBudget when spent): about a unit per microsecond of work, so that the
   * caller can try a fetch on the event loop and move it to a thread when it is not small.
   */
  budget?: WorkBudget;
  /**
   * Pair what is sent with the client's version of the same path (ObjectList.bases): the root
   * tree of each commit sent with the root tree of its parent the client has (or of the first
   * commit the client has), then entry by entry down the trees both sides have.
   */
  thinBases?: boolean;
}

/** Budget units per commit read, per tree read and per 64 tree entries scanned, per object listed. */
const COMMIT_UNITS = 8;
const TREE_UNITS = 4;
const OBJECT_UNITS = 1;

/** List what to send for `req` from `set` (whose multi-pack index is built or reused). */
export async function listObjects(set: PackSet, req: CollectRequest, opts: ListOptions = {}): Promise<ObjectList> {
  const midx = set.multiPackIndex();
  const flags = new Uint8Array(midx.count);
  const types = new Uint8Array(midx.count);
  const list: ObjectList = {
    midx,
    reader: new ChainReader(midx.packs),
    flags,
    types,
    count: 0,
    commitCount: 0,
    shallow: [],
    unshallow: [],
    stats: { trees: 0, entries: 0, skipped: 0 },
    reachedWants: new Set(),
    bases: null,
    theirEntries: null,
  };
  const budget = opts.budget;
  const cache = new CommitCache(budget ? spendingReader(set, budget) : set);
  const send = (p: number, type: number): void => {
    budget?.spend(OBJECT_UNITS);
    flags[p]! |= SEND;
    types[p] = type;
    list.count++;
  };

  const wantCommits: Oid[] = [];
  const wantTrees: number[] = [];
  const wantBlobs: number[] = [];
  // Every line of the request is looked up at least once: charged up front.
  budget?.spend(OBJECT_UNITS * (req.wants.length + req.haves.length + req.shallow.length + (req.deepenNot?.length ?? 0)));
  for (const oid of req.wants) {
    const p = await mustPeel(cache, oid);
    for (const t of p.tags) if (!(flags[mustFind(midx, t)]! & SEND)) send(mustFind(midx, t), OBJ_TAG);
    if (p.type === "commit") wantCommits.push(p.oid);
    else if (p.type === "tree") wantTrees.push(mustFind(midx, p.oid));
    else if (p.type === "blob") wantBlobs.push(mustFind(midx, p.oid));
  }
  const haveCommits: Oid[] = [];
  const haveOthers: Oid[] = [];
  for (const oid of req.haves) {
    const p = await cache.peel(oid);
    if (!p) continue;
    haveOthers.push(...p.tags);
    if (p.type === "commit") haveCommits.push(p.oid);
    else haveOthers.push(p.oid);
  }
  // A tag the client has is not sent, even when a want names it.
  for (const oid of haveOthers) {
    const p = midx.findHex(oid);
    if (p >= 0 && flags[p]! & SEND) {
      flags[p]! &= ~SEND;
      list.count--;
    }
  }

  const plan = req.plan ?? (await planShallow(cache, req, wantCommits));
  list.shallow = plan.shallow;
  list.unshallow = plan.unshallow;

  const rootTrees: number[] = [];
  const haveTrees: number[] = [];
  const clone = haveCommits.length === 0 && haveOthers.length === 0 && plan.unshallow.length === 0 && plan.grafts.size === 0 && plan.extraWants.length === 0;
  if (clone) {
    const needed = opts.reachability && !req.filter ? markRecordedPacks(list, req.wants) : null;
    await allCommits(list, wantCommits, rootTrees, send, needed, budget);
    // A recorded tip neither wanted nor met: its pack may hold what the refs no longer reach.
    if (needed && needed.size > 0) return listObjects(set, req, { ...opts, reachability: false });
  } else {
    const walk = await limitCommits(cache, {
      interesting: [...wantCommits, ...plan.extraWants],
      uninteresting: [...haveCommits, ...plan.unshallow],
      grafts: plan.grafts,
    });
    const edges = new Set(walk.edges);
    if (plan.grafts.size > 0) for (const oid of [...haveCommits, ...plan.unshallow]) edges.add(oid);
    for (const oid of edges) {
      const p = midx.findHex(oid);
      if (p >= 0) flags[p]! |= HAVE;
      haveTrees.push(mustFind(midx, (await cache.get(oid)).tree));
    }
    const pairs = opts.thinBases && edges.size > 0 ? (list.bases = new Map()) : null;
    if (pairs) list.theirEntries = new Map();
    let firstEdgeTree = -1;
    if (pairs) firstEdgeTree = mustFind(midx, (await cache.get(edges.values().next().value!)).tree);
    for (const c of walk.commits) {
      const p = mustFind(midx, c.oid);
      if (flags[p]! & SEND) continue;
      send(p, OBJ_COMMIT);
      list.commitCount++;
      const root = mustFind(midx, c.tree);
      rootTrees.push(root);
      if (pairs && !pairs.has(root)) {
        const parent = c.parents.find((q) => edges.has(q));
        const base = parent ? mustFind(midx, (await cache.get(parent)).tree) : firstEdgeTree;
        if (base !== root) pairs.set(root, base);
      }
    }
  }
  for (const oid of haveOthers) {
    const p = midx.findHex(oid);
    if (p < 0) continue;
    const head = await set.readHeader(oid);
    if (head?.type === "tree") haveTrees.push(p);
    else flags[p]! |= HAVE;
  }

  // Trees and blobs of the client's edge commits first: they are not sent (and may be delta bases).
  await walkTrees(list, [], haveTrees, true, NO_FILTER, send, budget);
  const rules = filterRules(req.filter);
  // Explicitly wanted trees are sent whatever the filter says (git's USER_GIVEN objects), and
  // their entries are judged at depth 0; the commits' root trees are at depth 0 themselves.
  const given: number[] = [];
  for (const p of wantTrees) {
    if (flags[p]! & (SEND | HAVE | SEEN)) continue;
    send(p, OBJ_TREE);
    given.push(p);
  }
  const roots: number[] = [];
  for (const p of rootTrees) {
    if (flags[p]! & (SEND | HAVE | SEEN)) continue;
    if (rules.trees && rules.maxDepth > 0) send(p, OBJ_TREE);
    else flags[p]! |= SEEN;
    roots.push(p);
  }
  await walkTrees(list, given, roots, false, rules, send, budget);
  // Explicitly wanted blobs are sent whatever the filter says.
  for (const p of wantBlobs) if (!(flags[p]! & SEND)) send(p, OBJ_BLOB);
  // object:type other than commit: only the wanted commits go (git filters the others).
  if (!rules.commits) {
    const wanted = new Set(wantCommits.map((oid) => mustFind(midx, oid)));
    for (let p = 0; p < midx.count; p++) {
      if (!(flags[p]! & SEND) || types[p] !== OBJ_COMMIT || wanted.has(p)) continue;
      flags[p] = (flags[p]! & ~SEND) | SEEN;
      list.count--;
      list.commitCount--;
    }
  }
  // The walk's resolved trees (tens of MB) are not needed by the pack writer that runs next.
  list.reader.clear();
  return list;
}

/**
 * Mark every object of the packs with a reachability record as sent; returns the positions of
 * the recorded tips that are not wanted (each must be met by the commit walk), or null when no
 * pack has a usable record.
 */
function markRecordedPacks(list: ObjectList, wants: Oid[]): Set<number> | null {
  const { midx, flags } = list;
  const wanted = new Set(wants);
  const needed = new Set<number>();
  let any = false;
  for (let k = 0; k < midx.packs.length; k++) {
    const tips = midx.packs[k]!.reachTips;
    if (!tips) continue;
    const positions: number[] = [];
    for (const t of tips) {
      const p = midx.findHex(t);
      if (p < 0) return null;
      if (!wanted.has(t)) positions.push(p);
    }
    for (const p of positions) needed.add(p);
    const row = midx.positionsIn(k);
    for (let i = 0; i < row.length; i++) {
      const v = row[i]!;
      const p = v >= 0 ? v : -v - 1;
      if (flags[p]! & SEND) continue;
      flags[p]! |= SEND;
      list.count++;
    }
    any = true;
  }
  return any ? needed : null;
}

/**
 * Every commit reachable from `wants` (no boundary): straight through by position. Objects
 * already marked as sent (a recorded pack's) are not walked; `needed` loses each one met.
 */
async function allCommits(
  list: ObjectList,
  wants: Oid[],
  rootTrees: number[],
  send: (p: number, type: number) => void,
  needed: Set<number> | null = null,
  budget?: WorkBudget,
): Promise<void> {
  const { midx, flags } = list;
  const stack: number[] = [];
  const wanted = new Set<number>();
  for (const oid of wants) {
    const p = mustFind(midx, oid);
    wanted.add(p);
    if (flags[p]! & SEND) continue;
    send(p, OBJ_COMMIT);
    stack.push(p);
  }
  const key = new Uint8Array(20);
  const hints = takesHints(midx);
  const pacer = new MemoryPacer(64, CLONE_MEMORY_SLACK);
  while (stack.length > 0) {
    const p = stack.pop()!;
    list.commitCount++;
    pacer.tick();
    budget?.spend(COMMIT_UNITS);
    const obj = await list.reader.read(midx.packOf[p]!, midx.offsetOf(p));
    if (obj.code !== OBJ_COMMIT) throw new GitError(`object ${midx.oidAt(p)} is not a commit`);
    const data = obj.data;
    if (!headerOidInto(data, 0, "tree ", key)) throw new GitError(`invalid commit ${midx.oidAt(p)}: missing or bad tree line`);
    rootTrees.push(findOrMissing(midx, key, "tree"));
    const pushed = stack.length;
    for (let at = 46; headerOidInto(data, at, "parent ", key); at += 48) {
      const parent = findOrMissing(midx, key, "commit");
      if (flags[parent]! & SEND) {
        needed?.delete(parent);
        if (wanted.has(parent)) list.reachedWants.add(midx.oidAt(parent));
        continue;
      }
      send(parent, OBJ_COMMIT);
      stack.push(parent);
    }
    // A merge's parents are read one after the other: object storage fetches them side by side.
    if (hints && stack.length - pushed > 1) hint(midx, stack, pushed, stack.length);
  }
}

/** No filter: every tree and blob is sent. */
const NO_FILTER = filterRules(undefined);

/**
 * Read the trees `roots` and everything below them, level by level in pack order (so an object
 * is first met at its smallest depth). With `have`, mark it all as held by the client
 * (mark_tree_uninteresting); else mark as sent every object not already sent, held or seen that
 * `rules` let through (the roots themselves are already marked by the caller). `given` (wanted
 * trees, already marked) are read first: their entries are at depth 0, beside the roots.
 */
async function walkTrees(
  list: ObjectList,
  given: number[],
  roots: number[],
  have: boolean,
  rules: FilterRules,
  send: (p: number, type: number) => void,
  budget?: WorkBudget,
): Promise<void> {
  const { midx, flags } = list;
  let level = given;
  let pendingRoots: number[] | null = roots;
  if (have) {
    pendingRoots = [];
    for (const p of roots) {
      if (flags[p]! & HAVE) continue;
      flags[p]! |= HAVE;
      pendingRoots.push(p);
    }
  }
  const blobs = rules.blobLimit === 0 ? BLOBS_NONE : rules.blobLimit === Number.POSITIVE_INFINITY ? BLOBS_ALL : BLOBS_SIZED;
  const pacer = new MemoryPacer(64, CLONE_MEMORY_SLACK);
  const hints = takesHints(midx);
  // The entries of this level's trees are at `depth`.
  for (let depth = 0; level.length > 0 || pendingRoots; depth++) {
    const next: number[] = [];
    if (!have && (!rules.descend || depth >= rules.maxDepth)) level = [];
    const ordered = packOrder(midx, level);
    let hinted = 0;
    for (let i = 0; i < ordered.length; i++) {
      // Object storage: the next HINT_AHEAD trees of the level are kept coming while these are read.
      if (hints && hinted < ordered.length && hinted - i < HINT_AHEAD / 2) {
        const to = Math.min(ordered.length, hinted + HINT_AHEAD);
        // The client's trees are one version of each directory, whose delta bases (other
        // versions) this walk does not meet: their chains are fetched too, side by side.
        hint(midx, ordered, hinted, to, have);
        hinted = to;
      }
      const p = ordered[i]!;
      let obj: Awaited<ReturnType<typeof list.reader.read>>;
      try {
        obj = await list.reader.read(midx.packOf[p]!, midx.offsetOf(p));
      } catch (e) {
        // A client's tree we cannot read only means fewer thin bases (git ignores it too).
        if (have) continue;
        throw e;
      }
      if (obj.code !== OBJ_TREE) {
        if (have) continue;
        throw new GitError(`object ${midx.oidAt(p)} is not a tree`);
      }
      pacer.tick();
      const reader = list.reader;
      const n = scanTree(midx, flags, obj.data, p, have, rules.trees, blobs, next, send, reader.lastBase, reader.lastCopies);
      reader.setStarts(obj, startsScratch, n);
      budget?.spend(TREE_UNITS + (n >> 6));
      if (have && list.theirEntries) list.theirEntries.set(p, treeNames(midx, obj.data));
      list.stats.trees++;
      list.stats.entries += n;
      list.stats.skipped += scanSkipped;
      const pending = pendingBlobs;
      pendingBlobs = NO_PENDING;
      const pair = have ? undefined : list.bases?.get(p);
      if (pair !== undefined) {
        budget?.spend(n >> 5);
        pairEntries(list, obj.data, pair);
      }
      if (hints && pending.length > 1) hint(midx, pending, 0, pending.length);
      for (const q of pending) {
        if (await smallBlob(midx, q, rules.blobLimit)) send(q, OBJ_BLOB);
      }
    }
    if (pendingRoots) next.push(...pendingRoots);
    pendingRoots = null;
    level = next;
  }
}

/** The names of a tree the client has (TreeNames). */
function treeNames(midx: MultiPackIndex, data: Uint8Array): TreeNames {
  const hashes: number[] = [];
  const children: number[] = [];
  forEachEntry(data, (nameAt, nul) => {
    hashes.push(nameHash(data, nameAt, nul));
    children.push(midx.find(data, nul + 1));
  });
  const order = hashes.map((_, i) => i).sort((x, y) => hashes[x]! - hashes[y]!);
  return { hashes: Uint32Array.from(order, (i) => hashes[i]!), children: Int32Array.from(order, (i) => children[i]!) };
}

/**
 * Pair the entries of a tree being sent (`data`) with the entries of the same name in the
 * client's version of that directory (position `theirs`, recorded by the walk of the client's
 * trees): each entry sent gets the client's object as its thin base; a subtree's pair is used
 * when the walk reaches it. Names are matched by hash (a collision only costs a worse delta).
 */
function pairEntries(list: ObjectList, data: Uint8Array, theirs: number): void {
  const { midx, flags } = list;
  const bases = list.bases!;
  const names = list.theirEntries?.get(theirs);
  if (!names) return;
  const { hashes, children } = names;
  forEachEntry(data, (nameAt, nul) => {
    const h = nameHash(data, nameAt, nul);
    let lo = 0;
    let hi = hashes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hashes[mid]! < h) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= hashes.length || hashes[lo] !== h) return;
    const c = children[lo]!;
    if (c < 0 || !(flags[c]! & HAVE)) return;
    const q = midx.find(data, nul + 1);
    if (q < 0 || q === c || !(flags[q]! & SEND) || bases.has(q)) return;
    bases.set(q, c);
  });
}

/** Calls `fn(nameStart, nulAt)` for each "<mode> <name>\0<id>" entry of a well-formed tree. */
function forEachEntry(data: Uint8Array, fn: (nameAt: number, nul: number) => void): void {
  let at = 0;
  while (at < data.length) {
    const sp = data.indexOf(0x20, at);
    const nul = sp < 0 ? -1 : data.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 21 > data.length) return;
    fn(sp + 1, nul);
    at = nul + 21;
  }
}

function nameHash(data: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  return h >>> 0;
}

/** Blobs met in a tree: all sent, sent when small enough (decided after the scan), none sent. */
const BLOBS_ALL = 0;
const BLOBS_SIZED = 1;
const BLOBS_NONE = 2;

// Frozen: a sentinel that is never pushed to (scanTree swaps in a new array first).
const NO_PENDING = Object.freeze([] as number[]) as number[];
// module-state: scratch (synchronous, reused by every call; see below)
/** Blobs the last scanTree call left for the filter to decide. */
let pendingBlobs = NO_PENDING;
/** Entries the last scanTree call stepped over. */
let scanSkipped = 0;
let startsScratch = new Uint32Array(4096);

/**
 * One tree's entries (synchronous: this loop sees every entry of every tree of the history).
 * Marks what it finds, queues subtrees on `next`, leaves blobs a filter must decide in
 * pendingBlobs, and returns the number of entries (where each starts is in startsScratch).
 *
 * Most trees are deltas against another version of the same directory that this walk already
 * handled (`base`, with its entry starts), and nearly all their bytes are copied from it (98% of
 * the tree bytes of git.git's history). An entry that is a whole entry of the base copied as it
 * is names an object already handled: it is stepped over without being parsed or looked up.
 */
function scanTree(
  midx: MultiPackIndex,
  flags: Uint8Array,
  data: Uint8Array,
  p: number,
  have: boolean,
  showTrees: boolean,
  blobs: number,
  next: number[],
  send: (p: number, type: number) => void,
  base: ChainObject | null,
  copies: CopyLog,
): number {
  let pending = NO_PENDING;
  const len = data.length;
  let n = 0;
  let skippedHere = 0;
  let at = 0;
  const baseStarts = base?.starts;
  const baseCount = baseStarts ? baseStarts.length : 0;
  const baseLen = base ? base.data.length : 0;
  const ops = copies.ops;
  const opCount = baseStarts ? copies.count : 0;
  let op = 0;
  while (at < len) {
    if (n + 1 >= startsScratch.length) {
      const grown = new Uint32Array(2 * startsScratch.length);
      grown.set(startsScratch);
      startsScratch = grown;
    }
    // Skip whole base entries copied as they are.
    while (op < opCount && ops[3 * op]! + ops[3 * op + 1]! <= at) op++;
    if (op < opCount && ops[3 * op]! <= at) {
      const segEnd = ops[3 * op]! + ops[3 * op + 1]!;
      let b = ops[3 * op + 2]! + (at - ops[3 * op]!);
      let k = lowerBound(baseStarts!, b);
      if (k < baseCount && baseStarts![k] === b) {
        let skipped = false;
        for (;;) {
          const entryEnd = k + 1 < baseCount ? baseStarts![k + 1]! : baseLen;
          const l = entryEnd - b;
          if (at + l > segEnd) break;
          if (n + 1 >= startsScratch.length) {
            const grown = new Uint32Array(2 * startsScratch.length);
            grown.set(startsScratch);
            startsScratch = grown;
          }
          startsScratch[n++] = at;
          at += l;
          b = entryEnd;
          k++;
          skippedHere++;
          skipped = true;
          if (at >= len || k >= baseCount) break;
        }
        if (skipped) continue;
      }
    }
    startsScratch[n++] = at;
    // "<mode> <name>\0<20-byte id>", scanned in place.
    let sp = at;
    while (sp < len && data[sp] !== 0x20) sp++;
    let nul = sp + 1;
    while (nul < len && data[nul] !== 0) nul++;
    if (sp === at || sp >= len || nul + 21 > len) throw new GitError(`invalid tree ${midx.oidAt(p)}: truncated entry`);
    const m = sp - at;
    const c = data[at];
    const kind = c === 0x34 || (m === 6 && c === 0x30) ? TREE : m === 6 && c === 0x31 && data[at + 1] === 0x36 ? GITLINK : BLOB;
    const id = nul + 1;
    at = nul + 21;
    if (kind === GITLINK) continue;
    const q = midx.find(data, id);
    if (q < 0) {
      if (have) continue;
      throw new GitError(`missing ${kind === TREE ? "tree" : "blob"} ${hex(data, id)}`, "missing");
    }
    const f = flags[q]!;
    if (have) {
      if (f & HAVE) continue;
      flags[q] = f | HAVE;
      if (kind === TREE) next.push(q);
      continue;
    }
    if (f & (SEND | HAVE | SEEN)) continue;
    if (kind === TREE) {
      if (showTrees) send(q, OBJ_TREE);
      else flags[q] = f | SEEN;
      next.push(q);
    } else if (blobs === BLOBS_ALL) {
      send(q, OBJ_BLOB);
    } else if (blobs === BLOBS_NONE) {
      flags[q] = f | SEEN;
    } else {
      if (pending === NO_PENDING) pending = [];
      flags[q] = f | SEEN;
      pending.push(q);
    }
  }
  pendingBlobs = pending;
  scanSkipped = skippedHere;
  return n;
}

/** True when the blob at `p` is smaller than `limit` bytes (blob:limit). */
async function smallBlob(midx: MultiPackIndex, p: number, limit: number): Promise<boolean> {
  const pack = midx.packs[midx.packOf[p]!]!;
  const head = await pack.headerAt(pack.idx.offsetAt(midx.idxPos[p]!));
  return head.size < limit;
}

/** `reader` spending COMMIT_UNITS of `budget` per object read (the commit walks' reads). */
function spendingReader(reader: ObjectReader, budget: WorkBudget): ObjectReader {
  return {
    has: (oid) => reader.has(oid),
    read: (oid) => {
      budget.spend(COMMIT_UNITS);
      return reader.read(oid);
    },
    readHeader: (oid) => reader.readHeader(oid),
    prefetch: reader.prefetch ? (oids) => reader.prefetch!(oids) : undefined,
  };
}

/** Entries hinted ahead of the one being read, when the packs are in object storage. */
const HINT_AHEAD = 512;

/** Whether the packs take prefetch hints (object storage: each request is slow to start). */
function takesHints(midx: MultiPackIndex): boolean {
  return midx.packs.some((pack) => pack.source.prefetch !== undefined);
}

/**
 * Hint that the objects at `positions[from..to)` will be read soon: each pack's source fetches
 * their entries in the background (neighbours as one range). Delta bases are followed only with
 * `bases`: a walk of the whole history in pack order meets them just before.
 */
function hint(midx: MultiPackIndex, positions: ArrayLike<number>, from: number, to: number, bases = false): void {
  const byPack = new Map<number, number[]>();
  for (let i = from; i < to; i++) {
    const p = positions[i]!;
    const k = midx.packOf[p]!;
    const offsets = byPack.get(k);
    if (offsets) offsets.push(midx.offsetOf(p));
    else byPack.set(k, [midx.offsetOf(p)]);
  }
  for (const [k, offsets] of byPack) midx.packs[k]!.prefetch(offsets, bases);
}

/** `positions` sorted by (pack, offset); unsorted when the keys would not be exact. */
function packOrder(midx: MultiPackIndex, positions: number[]): number[] {
  if (positions.length < 2 || midx.packs.length > 4096) return positions;
  const keys = new Float64Array(positions.length);
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i]!;
    const off = midx.offsetOf(p);
    if (off >= OFFSET_SPAN) return positions;
    keys[i] = midx.packOf[p]! * OFFSET_SPAN + off;
  }
  keys.sort();
  const out = new Array<number>(positions.length);
  for (let i = 0; i < keys.length; i++) {
    const k = Math.floor(keys[i]! / OFFSET_SPAN);
    const idx = midx.packs[k]!.idx;
    const row = midx.positionsIn(k);
    out[i] = row[idx.indexAtOffset(keys[i]! - k * OFFSET_SPAN)]!;
  }
  return out;
}

const OFFSET_SPAN = 2 ** 41;
const BLOB = 0;
const TREE = 1;
const GITLINK = 2;

function hex(data: Uint8Array, at: number): string {
  return Buffer.from(data.buffer, data.byteOffset + at, 20).toString("hex");
}

function findOrMissing(midx: MultiPackIndex, key: Uint8Array, what: string): number {
  const p = midx.find(key, 0);
  if (p < 0) throw new GitError(`missing ${what} ${hex(key, 0)}`, "missing");
  return p;
}

function mustFind(midx: MultiPackIndex, oid: Oid): number {
  const p = midx.findHex(oid);
  if (p < 0) throw new GitError(`missing object ${oid}`, "missing");
  return p;
}

async function mustPeel(cache: CommitCache, oid: Oid): Promise<Peeled> {
  const p = await cache.peel(oid);
  if (!p) throw new GitError(`missing object ${oid}`, "missing");
  return p;
}

/** Shallow/unshallow lines and walk boundary of a request (git's send_shallow_list). */
export async function planShallow(cache: CommitCache, req: CollectRequest, wantCommits: Oid[]): Promise<ShallowPlan> {
  const clientShallow: Oid[] = [];
  // Deduplicated as it goes (a Set of 100,000 lines built at once holds the event loop ~50 ms).
  const seen = new Set<Oid>();
  for (const oid of req.shallow) {
    if (seen.has(oid)) continue;
    seen.add(oid);
    const head = await cache.reader.readHeader(oid);
    if (!head) continue;
    if (head.type !== "commit") throw new GitError(`invalid shallow object ${oid}`);
    clientShallow.push(oid);
  }
  const depth = req.depth ?? 0;
  const byRevList = req.deepenSince !== undefined || (req.deepenNot?.length ?? 0) > 0;
  if (depth > 0 && byRevList) {
    throw new GitError("deepen and deepen-since (or deepen-not) cannot be used together");
  }
  if (depth > 0) {
    return deepen(cache, { wants: wantCommits, clientShallow, depth, relative: req.deepenRelative === true, tips: req.tips ?? [] });
  }
  if (byRevList) {
    const not: Oid[] = [];
    for (const oid of req.deepenNot ?? []) {
      const p = await cache.peel(oid);
      if (p?.type === "commit") not.push(p.oid);
    }
    return deepenByRevList(cache, { wants: wantCommits, clientShallow, since: req.deepenSince, not });
  }
  return { shallow: [], unshallow: [], grafts: new Set(clientShallow), extraWants: [] };
}
