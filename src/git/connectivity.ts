// Connectivity check after a push (git's check_connected): everything reachable from the
// new ref values must exist, so no ref ever points into a hole.
//
// git walks `rev-list --objects <new tips> --not --all`. Here the walk stops at any object
// already stored in the repository before the push: stored objects were checked when they
// arrived (or written by the server itself), so their closure is present. Only the objects
// of the new pack are walked, which bounds the cost by the size of the push.
import { MemoryPacer } from "./buffer-pool.ts";
import { parseCommit, parseTag } from "./object.ts";
import { bytesToHex, hexInto, isOid } from "./oid.ts";
import type { OidSet } from "./oid-set.ts";
import type { PackIndex } from "./pack-index.ts";
import type { Pack } from "./pack-reader.ts";
import type { PackSet } from "./pack-set.ts";
import { GitError, type ObjectReader, type Oid } from "./types.ts";

/** Options of checkConnectivity. */
export interface ConnectivityOptions {
  /** The repository's objects before the push; whatever is here needs no walk. */
  existing: ObjectReader;
}

/** The packs of a reader that is a pack set, else null. */
function packsOf(reader: ObjectReader): Pack[] | null {
  const set = reader as Partial<PackSet>;
  return typeof set.locate === "function" && Array.isArray(set.packs) ? set.packs : null;
}

const SP = 0x20;

/**
 * The check a push needs in the common case, without reading any object again: every new tip
 * and every object named by the new pack's commits, trees and tags (`links`, collected by the
 * indexer) is in the pack (`packIdx`) or already stored. Stored objects have their closure, so
 * everything reachable from the tips then exists. False when anything is not found: the pack
 * may carry unreachable objects with holes (git accepts those), so the caller then runs
 * checkConnectivity, which walks only what is reachable.
 */
export function linksClosed(links: OidSet, packIdx: PackIndex, existing: ObjectReader, newTips: Oid[]): boolean {
  const stored = packsOf(existing);
  if (!stored) return false;
  const present = (bytes: Uint8Array, at: number): boolean => {
    if (packIdx.indexOfRaw(bytes, at) >= 0) return true;
    for (const p of stored) if (p.idx.indexOfRaw(bytes, at) >= 0) return true;
    return false;
  };
  const key = new Uint8Array(20);
  for (const tip of newTips) {
    if (!isOid(tip)) return false;
    hexInto(tip, key, 0);
    if (!present(key, 0)) return false;
  }
  const table = links.table;
  for (let n = 0; n < links.size; n++) if (!present(table, 20 * n)) return false;
  return true;
}

/**
 * Throw GitError (code "missing") naming a missing object reachable from `newTips`.
 * The objects themselves were validated by the indexer (validateObject on every commit, tree
 * and tag of the pack), so this walk only follows links.
 */
export async function checkConnectivity(reader: ObjectReader, newTips: Oid[], opts: ConnectivityOptions): Promise<void> {
  const packs = packsOf(reader);
  const existing = packsOf(opts.existing);
  if (packs && existing) return checkPacks(packs, existing, newTips);
  return checkReaders(reader, newTips, opts.existing);
}

/**
 * The walk over pack sets (the server's case): an object is named by its pack and its position
 * in that pack's idx, "seen" is one byte per object of each pack walked, and tree entries are
 * looked up by their raw 20 bytes, so no oid string is built per tree entry (a push of a whole
 * history has millions of entries, mostly of objects already seen).
 */
async function checkPacks(packs: Pack[], existing: Pack[], newTips: Oid[]): Promise<void> {
  const seen: (Uint8Array | undefined)[] = [];
  // Objects to read and follow, as (pack number, idx position).
  const walkPack: number[] = [];
  const walkPos: number[] = [];
  const visit = (bytes: Uint8Array, at: number, follow: boolean): void => {
    for (const p of existing) if (p.idx.indexOfRaw(bytes, at) >= 0) return;
    for (let k = 0; k < packs.length; k++) {
      const idx = packs[k]!.idx;
      const pos = idx.indexOfRaw(bytes, at);
      if (pos < 0) continue;
      // 1: known to exist; 2: followed too (an oid named both as a blob and as a tree is followed).
      const bits = (seen[k] ??= new Uint8Array(idx.count));
      const state = follow ? 2 : 1;
      if (bits[pos]! >= state) return;
      bits[pos] = state;
      if (follow) {
        walkPack.push(k);
        walkPos.push(pos);
      }
      return;
    }
    throw new GitError(`missing necessary object ${bytesToHex(bytes, at, 20)}`, "missing");
  };
  const key = new Uint8Array(20);
  const visitOid = (oid: Oid): void => {
    if (!isOid(oid)) throw new GitError(`missing necessary object ${oid}`, "missing");
    hexInto(oid, key, 0);
    visit(key, 0, true);
  };
  for (const tip of newTips) visitOid(tip);
  const pacer = new MemoryPacer();
  while (walkPos.length > 0) {
    pacer.tick();
    const pack = packs[walkPack.pop()!]!;
    const obj = await pack.readAt(pack.idx.offsetAt(walkPos.pop()!));
    if (obj.type === "commit") {
      const c = parseCommit(obj.data);
      visitOid(c.tree);
      for (const p of c.parents) visitOid(p);
    } else if (obj.type === "tree") {
      forEachTreeLink(obj.data, (kind, at) => {
        if (kind !== GITLINK) visit(obj.data, at, kind === TREE);
      });
    } else if (obj.type === "tag") {
      visitOid(parseTag(obj.data).object);
    }
  }
}

/** The same walk over any readers, by oid. */
async function checkReaders(reader: ObjectReader, newTips: Oid[], existing: ObjectReader): Promise<void> {
  const seen = new Set<Oid>();
  const stack: { oid: Oid; blob: boolean }[] = newTips.map((oid) => ({ oid, blob: false }));
  while (stack.length > 0) {
    const { oid, blob } = stack.pop()!;
    if (seen.has(oid)) continue;
    seen.add(oid);
    if (await existing.has(oid)) continue;
    if (blob) {
      if (!(await reader.has(oid))) throw new GitError(`missing necessary object ${oid}`, "missing");
      continue;
    }
    const obj = await reader.read(oid);
    if (!obj) throw new GitError(`missing necessary object ${oid}`, "missing");
    if (obj.type === "commit") {
      const c = parseCommit(obj.data);
      stack.push({ oid: c.tree, blob: false });
      for (const p of c.parents) stack.push({ oid: p, blob: false });
    } else if (obj.type === "tree") {
      forEachTreeLink(obj.data, (kind, at) => {
        if (kind !== GITLINK) stack.push({ oid: bytesToHex(obj.data, at, 20), blob: kind !== TREE });
      });
    } else if (obj.type === "tag") {
      stack.push({ oid: parseTag(obj.data).object, blob: false });
    }
  }
}

const BLOB = 0;
const TREE = 1;
const GITLINK = 2;

/** Call `fn` with the kind and the oid's position of every entry of a tree (checked like parseTree). */
function forEachTreeLink(data: Uint8Array, fn: (kind: number, at: number) => void): void {
  let pos = 0;
  while (pos < data.length) {
    const sp = data.indexOf(SP, pos);
    if (sp <= pos) throw new GitError("invalid tree: malformed mode");
    const nul = data.indexOf(0, sp + 1);
    if (nul < 0 || nul + 21 > data.length) throw new GitError("invalid tree: truncated entry");
    for (let k = pos; k < sp; k++) {
      const c = data[k]!;
      if (c < 0x30 || c > 0x37) throw new GitError("invalid tree: malformed mode");
    }
    fn(entryKind(data, pos, sp), nul + 1);
    pos = nul + 21;
  }
}

/** What a tree entry's mode (data[from..to)) names: "40000"/"040000" a tree, "160000" a gitlink, else a blob. */
function entryKind(data: Uint8Array, from: number, to: number): number {
  if (to - from === 6 && data[from] === 0x31 && data[from + 1] === 0x36 && allZero(data, from + 2, to)) return GITLINK;
  if (to - from === 6 && data[from] === 0x30) from++;
  if (to - from === 5 && data[from] === 0x34 && allZero(data, from + 1, to)) return TREE;
  return BLOB;
}

function allZero(data: Uint8Array, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (data[k] !== 0x30) return false;
  return true;
}
