// One index over all the live packs of a repository (the in-memory counterpart of git's
// multi-pack-index, gitformat-pack "multi-pack-index files"): every distinct object id once,
// sorted, with the pack and the idx position of its preferred copy. Walks and pack writers name
// objects by their position here ("midx position"), so per-object state is a typed array slot,
// never a string, a Set entry or an object.
//
// Preferred copy: when several packs hold an object (a thin push's appended bases duplicate
// stored objects), the copy in the pack listed last wins. Snapshots list packs newest first, so
// that is the oldest pack: its copy sits inside a run of entries that is sent as it is, while a
// newer push pack's duplicate is a base appended at its tail.
import { copyBytes } from "./bytes.ts";
import { bytesToHex, hexInto, isOid } from "./oid.ts";
import { sortOids } from "./pack-index.ts";
import type { Pack } from "./pack-reader.ts";
import type { Oid } from "./types.ts";

/** Sorted distinct object ids of a set of packs, each mapped to its preferred (pack, idx position). */
export class MultiPackIndex {
  /** Number of distinct objects. */
  readonly count: number;
  /** Sorted object ids, 20 bytes each (the single pack's own table when there is one pack). */
  readonly oids: Uint8Array;
  /** Pack number (into `packs`) of each position's preferred copy. */
  readonly packOf: Uint16Array;
  /** Position of that copy in its pack's idx. */
  readonly idxPos: Uint32Array;
  /** Hash table over `oids` (slot → position + 1), built on first lookup by raw bytes. */
  private slots: Int32Array | null = null;
  private byPack: Int32Array[] | null = null;
  private readonly key = new Uint8Array(20);

  private constructor(
    readonly packs: Pack[],
    oids: Uint8Array,
    packOf: Uint16Array,
    idxPos: Uint32Array,
  ) {
    this.oids = oids;
    this.packOf = packOf;
    this.idxPos = idxPos;
    this.count = idxPos.length;
  }

  /** Merge the idx files of `packs` (at most 65,535). */
  static build(packs: Pack[]): MultiPackIndex {
    if (packs.length > 0xffff) throw new Error("too many packs for one multi-pack index");
    if (packs.length === 1) {
      const idx = packs[0]!.idx;
      const idxPos = new Uint32Array(idx.count);
      for (let i = 0; i < idx.count; i++) idxPos[i] = i;
      return new MultiPackIndex(packs, idx.oidTable, new Uint16Array(idx.count), idxPos);
    }
    let total = 0;
    for (const p of packs) total += p.idx.count;
    const all = new Uint8Array(20 * total);
    const fromPack = new Uint16Array(total);
    const fromPos = new Uint32Array(total);
    let n = 0;
    for (let k = 0; k < packs.length; k++) {
      const idx = packs[k]!.idx;
      all.set(idx.oidTable, 20 * n);
      fromPack.fill(k, n, n + idx.count);
      for (let i = 0; i < idx.count; i++) fromPos[n + i] = i;
      n += idx.count;
    }
    const order = sortOids(all, total);
    // Distinct ids; among equal ones (adjacent after the sort) the highest pack number wins.
    let distinct = 0;
    for (let r = 0; r < total; r++) if (r === 0 || !sameOid(all, order[r - 1]!, order[r]!)) distinct++;
    const oids = new Uint8Array(20 * distinct);
    const packOf = new Uint16Array(distinct);
    const idxPos = new Uint32Array(distinct);
    let d = -1;
    for (let r = 0; r < total; r++) {
      const e = order[r]!;
      if (d < 0 || !sameOid(all, order[r - 1]!, e)) {
        d++;
        copyBytes(all, 20 * e, 20 * e + 20, oids, 20 * d);
      } else if (fromPack[e]! < packOf[d]!) continue;
      packOf[d] = fromPack[e]!;
      idxPos[d] = fromPos[e]!;
    }
    return new MultiPackIndex(packs, oids, packOf, idxPos);
  }

  /** Position of the id at `bytes[at..at+20)`, or -1. */
  find(bytes: Uint8Array, at: number): number {
    const slots = this.slots ?? this.buildSlots();
    const mask = slots.length - 1;
    const oids = this.oids;
    let s = hashAt(bytes, at) & mask;
    for (;;) {
      const v = slots[s]!;
      if (v === 0) return -1;
      const p = 20 * (v - 1);
      let j = 0;
      while (j < 20 && oids[p + j] === bytes[at + j]) j++;
      if (j === 20) return v - 1;
      s = (s + 1) & mask;
    }
  }

  /** Position of a hex id, or -1 (also for anything that is not an id). */
  findHex(oid: Oid): number {
    if (!isOid(oid)) return -1;
    hexInto(oid, this.key, 0);
    return this.find(this.key, 0);
  }

  /** The id at position `p`. */
  oidAt(p: number): Oid {
    return bytesToHex(this.oids, 20 * p, 20);
  }

  /** Offset of position `p`'s preferred copy in its pack. */
  offsetOf(p: number): number {
    return this.packs[this.packOf[p]!]!.idx.offsetAt(this.idxPos[p]!);
  }

  /**
   * For pack `k`: idx position → midx position of that object, as `pos` when this copy is the
   * preferred one, else `-(pos + 1)` (another pack's copy is preferred). Built once.
   */
  positionsIn(k: number): Int32Array {
    if (!this.byPack) {
      this.byPack = this.packs.map((p) => new Int32Array(p.idx.count));
      const seen = this.packs.map((p) => new Uint8Array(p.idx.count));
      for (let p = 0; p < this.count; p++) {
        this.byPack[this.packOf[p]!]![this.idxPos[p]!] = p;
        seen[this.packOf[p]!]![this.idxPos[p]!] = 1;
      }
      // Duplicates: look their id up to find the preferred position.
      for (let k2 = 0; k2 < this.packs.length; k2++) {
        const table = this.packs[k2]!.idx.oidTable;
        const row = this.byPack[k2]!;
        const s = seen[k2]!;
        for (let i = 0; i < row.length; i++) if (!s[i]) row[i] = -(this.find(table, 20 * i) + 1);
      }
    }
    return this.byPack[k]!;
  }

  /**
   * Bytes this index holds beyond the idx files it is built from, the tables built on first use
   * (hash slots, per-pack positions) included once they exist (for cache budgets).
   */
  get footprint(): number {
    let bytes = (this.packs.length === 1 ? 0 : this.oids.byteLength) + this.packOf.byteLength + this.idxPos.byteLength + (this.slots?.byteLength ?? 0);
    for (const row of this.byPack ?? []) bytes += row.byteLength;
    return bytes;
  }

  private buildSlots(): Int32Array {
    let cap = 16;
    while (cap < 2 * this.count) cap *= 2;
    const slots = new Int32Array(cap);
    const mask = cap - 1;
    for (let p = 0; p < this.count; p++) {
      let s = hashAt(this.oids, 20 * p) & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = p + 1;
    }
    this.slots = slots;
    return slots;
  }
}

function sameOid(all: Uint8Array, a: number, b: number): boolean {
  for (let j = 0; j < 20; j++) if (all[20 * a + j] !== all[20 * b + j]) return false;
  return true;
}

/** Object ids are SHA-1 output: four of their bytes are as good a hash as any. */
function hashAt(b: Uint8Array, at: number): number {
  return ((b[at + 4]! << 24) | (b[at + 5]! << 16) | (b[at + 6]! << 8) | b[at + 7]!) >>> 0;
}
