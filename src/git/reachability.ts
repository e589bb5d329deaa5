// What a repository's tips reach: the boundary of what may be read through it (docs/architecture.md,
// "Reachability is the boundary"). A repository's packs can hold objects its refs do not reach: a
// deleted branch, a force-pushed-away commit, the packs a fork shares with its parent. An object
// is readable through the repository only when one of its tips reaches it.
//
// One ReachIndex answers for one set of tips (ids are content: the answer depends on nothing
// else, so it holds for any pack set that has the objects). It is built by a commit walk from the
// tips that stops at **closures**, sets of objects already known to be exactly what some ids
// reach, once those ids are known to be reachable themselves:
//   - a pack with a reachability record (a GC pack, the first push into an empty repository:
//     Pack.reachTips) is the closure of its recorded tips;
//   - the previous index of the same repository is the closure of its own tips (a push that only
//     moves refs forward costs a walk of the new commits).
// A closure whose ids are not all met (a branch deleted, a ref rewound) is not trusted: the walk
// goes on through it. So the common answers (right after a push, right after GC) cost a walk of
// what changed, and the worst (records voided) a walk of every commit, once per set of tips.
//
// Commits and tags are answered exactly by the index; trees and blobs outside a record pack need
// the engine's tree walk (firstUnreachable), newest history first, stopping once found.
import { ChainReader } from "./chain-reader.ts";
import { bytesToHex, headerOidInto, hexInto, isOid } from "./oid.ts";
import { OidSet } from "./oid-set.ts";
import { OBJ_COMMIT } from "./pack-entry.ts";
import { sortOids, type PackIndex } from "./pack-index.ts";
import { copyBytes } from "./bytes.ts";
import type { PackSet } from "./pack-set.ts";
import type { ObjectReader, Oid } from "./types.ts";
import { firstUnreachable as walkFirstUnreachable } from "./walk.ts";

/** Objects read between two yields to the event loop (a walk of 200k commits must not hold it). */
const SLICE = 256;
/** Walked layers kept apart before they are merged into one table. */
const MAX_LAYERS = 8;
/** Tag chains longer than this are not followed (git's own peel limit is similar). */
const MAX_TAG_HOPS = 64;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Sorted raw object ids with a 256-entry fan-out: 20 bytes per id, lookups by binary search. */
export class SortedOids {
  private readonly fanout = new Uint32Array(257);

  private constructor(
    readonly table: Uint8Array,
    readonly count: number,
  ) {
    for (let i = 0; i < count; i++) this.fanout[table[20 * i]! + 1]!++;
    for (let b = 0; b < 256; b++) this.fanout[b + 1]! += this.fanout[b]!;
  }

  /** The ids of `set`, sorted. */
  static fromSet(set: OidSet): SortedOids {
    const n = set.size;
    const order = sortOids(set.table, n);
    const table = new Uint8Array(20 * n);
    for (let i = 0; i < n; i++) copyBytes(set.table, 20 * order[i]!, 20 * order[i]! + 20, table, 20 * i);
    return new SortedOids(table, n);
  }

  /** The ids of several tables in one (duplicates dropped). */
  static merge(tables: SortedOids[]): SortedOids {
    const set = new OidSet(tables.reduce((n, t) => n + t.count, 0));
    for (const t of tables) for (let i = 0; i < t.count; i++) set.add(t.table, 20 * i);
    return SortedOids.fromSet(set);
  }

  /** Bytes held. */
  get footprint(): number {
    return this.table.byteLength + this.fanout.byteLength;
  }

  has(key: Uint8Array, at: number): boolean {
    let lo = this.fanout[key[at]!]!;
    let hi = this.fanout[key[at]! + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareRaw(this.table, 20 * mid, key, at);
      if (c === 0) return true;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return false;
  }
}

function compareRaw(a: Uint8Array, pa: number, b: Uint8Array, pb: number): number {
  for (let j = 0; j < 20; j++) {
    const c = a[pa + j]! - b[pb + j]!;
    if (c !== 0) return c;
  }
  return 0;
}

/** A closure the walk may stop at: everything it contains is reachable from `tips`. */
interface Closure {
  /** Ids it is the closure of, less those the others reach: each must be met for it to be trusted. */
  tips: readonly Oid[];
  /** An earlier index (rather than a record pack). */
  previous: boolean;
  contains(key: Uint8Array, at: number): boolean;
  /** The confirmed parts this closure contributes to the new index. */
  parts(): { packs: { name: string; idx: PackIndex }[]; layers: SortedOids[]; marked: Oid[]; treeRoots: Oid[] };
}

/** How an index was built (for logs and benchmarks). */
export interface ReachStats {
  /** Commits read by the walk. */
  walked: number;
  /** Closures trusted (record packs and the previous index). */
  closures: number;
  /** Closures found void (a recorded tip no longer reached) and walked through. */
  voided: number;
  /** Whether an earlier index was reused as a closure. */
  incremental: boolean;
  ms: number;
}

/** Options of ReachIndex.build. */
export interface ReachBuildOptions {
  /** The repository's indexes for earlier sets of tips, each reused when the new tips still reach its own. */
  previous?: ReachIndex[];
}

/** Everything one set of tips reaches, as far as commits and tags go; see the file comment. */
export class ReachIndex {
  private readonly markedSet: Set<Oid>;

  private constructor(
    /** The tips (sorted, distinct) this index answers for. */
    readonly tips: readonly Oid[],
    /**
     * The tips no other tip reaches (as far as the build saw): a later index may trust this one
     * once these are met, so deleting a merged branch costs no walk.
     */
    readonly required: readonly Oid[],
    /** Record packs whose every object is reachable. */
    private readonly packs: { name: string; idx: PackIndex }[],
    /** Reachable commits outside those packs, one table per walk. */
    private readonly layers: SortedOids[],
    /** Tips, tags met while peeling them, and blobs named by tips. */
    marked: Oid[],
    /** Trees named by tips (their content is reachable). */
    private readonly treeRoots: Oid[],
    readonly stats: ReachStats,
  ) {
    this.markedSet = new Set(marked);
  }

  /** Bytes held (for cache budgets); record packs' idx files are counted by their own cache. */
  get footprint(): number {
    let n = 256 + 64 * (this.markedSet.size + this.treeRoots.length);
    for (const l of this.layers) n += l.footprint;
    return n;
  }

  /** True when the id at `key[at..at+20)` is known reachable (exact for commits and tags). */
  containsRaw(key: Uint8Array, at: number): boolean {
    for (const l of this.layers) if (l.has(key, at)) return true;
    for (const p of this.packs) if (p.idx.indexOfRaw(key, at) >= 0) return true;
    return this.markedSet.size > 0 && this.markedSet.has(bytesToHex(key, at, 20));
  }

  /**
   * True when `oid` is known reachable. For a commit or a tag the answer is exact; a tree or blob
   * outside the record packs may be reachable although this says false (ask firstUnreachable).
   */
  contains(oid: Oid): boolean {
    if (!isOid(oid)) return false;
    if (this.markedSet.has(oid)) return true;
    const key = new Uint8Array(20);
    hexInto(oid, key, 0);
    return this.containsRaw(key, 0);
  }

  /**
   * The first of `oids` the tips do not reach, or null. Commits and tags are answered by the
   * index; a tree or blob outside the record packs by the engine's tree walk from the tips
   * (walk.ts firstUnreachable: newest history first, stopping once all are met).
   */
  async firstUnreachable(reader: ObjectReader, oids: readonly Oid[]): Promise<Oid | null> {
    const pending: Oid[] = [];
    for (const oid of oids) {
      if (!isOid(oid)) return oid;
      if (this.contains(oid)) continue;
      const head = await reader.readHeader(oid);
      if (head?.type !== "tree" && head?.type !== "blob") return oid;
      pending.push(oid);
    }
    return pending.length === 0 ? null : walkFirstUnreachable(reader, [...this.tips], pending);
  }

  /**
   * Builds the index of `tips` over `set` (which holds every object they reach). Missing tips are
   * ignored (a change head whose objects live elsewhere). Yields to the event loop as it reads.
   */
  static async build(set: PackSet, tips: readonly Oid[], opts: ReachBuildOptions = {}): Promise<ReachIndex> {
    const started = performance.now();
    const tipList = [...new Set(tips)].filter(isOid).sort();
    // No multi-pack index: right after a push the pack set is new, and building one for a large
    // repository costs more than the walk of the pushed commits (bench/README.md).
    const packs = set.packs;
    const reader = new ChainReader(packs, 8 * 1024 * 1024);
    const WALKED = 1;
    const HIT = 2;
    /** Met as the parent of a walked commit: another id reaches it. */
    const REACHED = 4;

    const closures: Closure[] = [];
    const liveNames = new Set(packs.map((p) => p.name));
    // An earlier index is used only while its record packs are live: an index never holds on to
    // the idx of a pack maintenance replaced.
    for (const previous of opts.previous ?? []) {
      if (!previous.packs.every((p) => liveNames.has(p.name))) continue;
      closures.push({
        tips: previous.required,
        previous: true,
        contains: (key, at) => previous.containsRaw(key, at),
        parts: () => ({ packs: previous.packs, layers: previous.layers, marked: [...previous.markedSet], treeRoots: previous.treeRoots }),
      });
    }
    for (const pack of packs) {
      if (!pack.reachTips?.length) continue;
      const entry = { name: pack.name, idx: pack.idx };
      closures.push({
        tips: pack.reachTips,
        previous: false,
        contains: (key, at) => pack.idx.indexOfRaw(key, at) >= 0,
        parts: () => ({ packs: [entry], layers: [], marked: [], treeRoots: [] }),
      });
    }
    const active = new Set(closures.map((_, i) => i));
    const hits = closures.map(() => [] as number[]);
    const confirmed = new Set<number>();

    // Every id met gets a number (OidSet) and flags by that number.
    const seen = new OidSet(1024);
    let flags = new Uint8Array(1024);
    const numberOf = (key: Uint8Array, at: number): { n: number; fresh: boolean } => {
      const before = seen.size;
      const n = seen.add(key, at);
      if (n >= flags.length) {
        const grown = new Uint8Array(flags.length * 2);
        grown.set(flags);
        flags = grown;
      }
      return { n, fresh: seen.size > before };
    };
    const locate = (key: Uint8Array, at: number): { k: number; offset: number } | null => {
      for (let k = 0; k < packs.length; k++) {
        const i = packs[k]!.idx.indexOfRaw(key, at);
        if (i >= 0) return { k, offset: packs[k]!.idx.offsetAt(i) };
      }
      return null;
    };
    const marked: Oid[] = [];
    const markedHere = new Set<Oid>();
    const treeRoots: Oid[] = [];
    /** Commits to walk, by number. */
    const stack: number[] = [];
    let reads = 0;
    let walkedCount = 0;
    const key = new Uint8Array(20);

    /** The closure holding id number n, if any active one does. */
    const closureOf = (n: number): number => {
      for (const i of active) if (closures[i]!.contains(seen.table, 20 * n)) return i;
      return -1;
    };
    /** Takes id number n as reachable: into a closure, onto the commit stack, or through a tag. */
    const enter = async (start: number): Promise<void> => {
      let n = start;
      for (let hop = 0; hop < MAX_TAG_HOPS; hop++) {
        const c = closureOf(n);
        if (c >= 0) {
          flags[n]! |= HIT;
          hits[c]!.push(n);
          return;
        }
        const at = locate(seen.table, 20 * n);
        if (!at) return;
        const head = await packs[at.k]!.headerAt(at.offset);
        if (head.type === "commit") {
          stack.push(n);
          return;
        }
        const hex = seen.hexOf(n);
        marked.push(hex);
        markedHere.add(hex);
        if (head.type === "tree") treeRoots.push(hex);
        if (head.type !== "tag") return;
        const obj = await reader.read(at.k, at.offset);
        if (!headerOidInto(obj.data, 0, "object ", key)) return;
        const next = numberOf(key, 0);
        if (!next.fresh) return;
        n = next.n;
      }
    };
    const walk = async (): Promise<void> => {
      while (stack.length > 0) {
        const n = stack.pop()!;
        if (flags[n]! & WALKED) continue;
        flags[n]! |= WALKED;
        walkedCount++;
        const at = locate(seen.table, 20 * n);
        if (!at) continue;
        if (++reads % SLICE === 0) await yieldToLoop();
        const obj = await reader.read(at.k, at.offset);
        if (obj.code !== OBJ_COMMIT) continue;
        const data = obj.data;
        for (let off = 46; headerOidInto(data, off, "parent ", key); off += 48) {
          const parent = numberOf(key, 0);
          flags[parent.n]! |= REACHED;
          if (!parent.fresh) continue;
          const c = closureOf(parent.n);
          if (c >= 0) {
            flags[parent.n]! |= HIT;
            hits[c]!.push(parent.n);
          } else stack.push(parent.n);
        }
      }
    };
    const tipSet = new Set(tipList);
    const met = (oid: Oid): boolean => {
      if (tipSet.has(oid) || markedHere.has(oid)) return true;
      hexInto(oid, key, 0);
      const n = seen.lookup(key, 0);
      if (n >= 0 && flags[n]! & (WALKED | HIT)) return true;
      for (const i of confirmed) if (closures[i]!.contains(key, 0)) return true;
      return false;
    };

    for (const t of tipList) {
      hexInto(t, key, 0);
      const tip = numberOf(key, 0);
      if (tip.fresh) await enter(tip.n);
    }
    for (;;) {
      await walk();
      // A closure is trusted once every id it is the closure of is met: a tip, a commit the walk
      // passed or stopped at, or inside another trusted closure.
      for (let changed = true; changed; ) {
        changed = false;
        for (const i of active) {
          if (confirmed.has(i) || !closures[i]!.tips.every(met)) continue;
          confirmed.add(i);
          changed = true;
        }
      }
      const voided = [...active].filter((i) => !confirmed.has(i) && hits[i]!.length > 0);
      if (voided.length === 0) break;
      // Untrusted closures the walk stopped at: walk on through them.
      for (const i of voided) active.delete(i);
      for (const i of voided) for (const n of hits[i]!.splice(0)) await enter(n);
    }

    const kept: { name: string; idx: PackIndex }[] = [];
    const layers: SortedOids[] = [];
    let incremental = false;
    for (const i of confirmed) {
      // A trusted closure the walk never stopped at adds nothing the walk did not cover.
      if (hits[i]!.length === 0) continue;
      const parts = closures[i]!.parts();
      if (closures[i]!.previous) incremental = true;
      for (const p of parts.packs) if (!kept.some((x) => x.name === p.name)) kept.push(p);
      layers.push(...parts.layers);
      marked.push(...parts.marked);
      treeRoots.push(...parts.treeRoots);
    }
    if (walkedCount > 0) {
      const walked = new OidSet(walkedCount);
      for (let n = 0; n < seen.size; n++) if (flags[n]! & WALKED) walked.add(seen.table, 20 * n);
      layers.push(SortedOids.fromSet(walked));
    }
    // A tip is required of a later index unless another id reaches it: a walked commit names it
    // as a parent, or a trusted closure holds it without it being one of that closure's own.
    const required = tipList.filter((t) => {
      hexInto(t, key, 0);
      const n = seen.lookup(key, 0);
      if (n >= 0 && flags[n]! & REACHED) return false;
      for (const i of confirmed) if (!closures[i]!.tips.includes(t) && closures[i]!.contains(key, 0)) return false;
      return true;
    });
    const stats: ReachStats = {
      walked: walkedCount,
      closures: confirmed.size,
      voided: closures.length - confirmed.size,
      incremental,
      ms: Math.round((performance.now() - started) * 10) / 10,
    };
    return new ReachIndex(
      tipList,
      required,
      kept,
      layers.length > MAX_LAYERS ? [SortedOids.merge(layers)] : layers,
      [...new Set(marked)],
      [...new Set(treeRoots)],
      stats,
    );
  }
}
