// Pack index (.idx) version 2, from gitformat-pack:
//
//   - A 4-byte magic number \377tOc, then a 4-byte version number (= 2).
//   - A 256-entry fan-out table: entry N is the number of objects whose first oid byte is <= N.
//   - A table of sorted object names (20 bytes each).
//   - A table of 4-byte CRC32 values of the packed object data.
//   - A table of 4-byte offset values (network order). If the MSB is set, the remaining 31 bits
//     index the next table; otherwise they are the pack offset.
//   - A table of 8-byte offset entries (empty for pack files less than 2 GiB).
//   - A copy of the pack checksum, then the SHA-1 checksum of all of the above.
import { bytesToHex, hexInto, hexToBytes, isOid } from "./oid.ts";
import { GitError, type Oid } from "./types.ts";

const MAGIC = 0xff744f63;
const HEADER = 8;
const FANOUT = 256 * 4;
const LARGE = 0x80000000;

/** A parsed .idx v2 kept as views over its bytes: fanout + binary search, no per-object strings. */
export class PackIndex {
  /** Number of objects in the pack. */
  readonly count: number;
  /** SHA-1 trailer of the pack this index describes (the pack's name). */
  readonly packChecksum: Oid;
  private readonly view: DataView;
  private readonly fanout: Uint32Array;
  private readonly oidBase: number;
  private readonly crcBase: number;
  private readonly offBase: number;
  private readonly largeBase: number;
  private readonly largeCount: number;
  private byOffset: { offsets: Float64Array; index: Uint32Array } | null = null;

  private constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.length < HEADER + FANOUT + 40 || this.view.getUint32(0) !== MAGIC) {
      throw new GitError("invalid pack index: bad header");
    }
    if (this.view.getUint32(4) !== 2) throw new GitError(`unsupported pack index version ${this.view.getUint32(4)}`);
    this.fanout = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      this.fanout[i] = this.view.getUint32(HEADER + 4 * i);
      if (i > 0 && this.fanout[i]! < this.fanout[i - 1]!) throw new GitError("invalid pack index: fanout not monotonic");
    }
    const n = this.fanout[255]!;
    this.count = n;
    this.oidBase = HEADER + FANOUT;
    this.crcBase = this.oidBase + 20 * n;
    this.offBase = this.crcBase + 4 * n;
    this.largeBase = this.offBase + 4 * n;
    const rest = bytes.length - 40 - this.largeBase;
    if (rest < 0 || rest % 8 !== 0) throw new GitError("invalid pack index: bad size");
    this.largeCount = rest / 8;
    this.packChecksum = bytesToHex(bytes, bytes.length - 40, 20);
  }

  /** Bytes this index holds: the idx file, the fan-out, and the pack-order table once built (for cache budgets). */
  get footprint(): number {
    return this.bytes.byteLength + this.fanout.byteLength + (this.byOffset ? this.byOffset.offsets.byteLength + this.byOffset.index.byteLength : 0);
  }

  /** Parse .idx v2 bytes (the array is kept, not copied). */
  static parse(bytes: Uint8Array): PackIndex {
    return new PackIndex(bytes);
  }

  /** Pack offset of `oid`, or -1 when the pack does not hold it. */
  find(oid: Oid): number {
    const i = this.indexOf(oid);
    return i < 0 ? -1 : this.offsetAt(i);
  }

  /** Position of `oid` in the sorted table, or -1. */
  indexOf(oid: Oid): number {
    if (!isOid(oid)) return -1;
    return this.indexOfRaw(hexToBytes(oid), 0);
  }

  /** Position of the object id stored as 20 bytes at `key[at..at+20)`, or -1. */
  indexOfRaw(key: Uint8Array, at: number): number {
    const b = this.bytes;
    const first = key[at]!;
    let lo = first === 0 ? 0 : this.fanout[first - 1]!;
    let hi = this.fanout[first]!;
    const k0 = ((key[at]! << 24) | (key[at + 1]! << 16) | (key[at + 2]! << 8) | key[at + 3]!) >>> 0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.oidBase + 20 * mid;
      let c = this.view.getUint32(p) - k0;
      for (let j = 4; c === 0 && j < 20; j++) c = b[p + j]! - key[at + j]!;
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /** The i-th object id in sorted order. */
  oidAt(i: number): Oid {
    return bytesToHex(this.bytes, this.oidBase + 20 * i, 20);
  }

  /** The sorted object id table: id i is at `[20i, 20i+20)` (a view, do not modify). */
  get oidTable(): Uint8Array {
    return this.bytes.subarray(this.oidBase, this.oidBase + 20 * this.count);
  }

  /** The raw 20 bytes of the i-th object id (a view, do not modify). */
  oidBytesAt(i: number): Uint8Array {
    return this.bytes.subarray(this.oidBase + 20 * i, this.oidBase + 20 * i + 20);
  }

  /** Pack offset of the i-th object. */
  offsetAt(i: number): number {
    const v = this.view.getUint32(this.offBase + 4 * i);
    if (!(v & LARGE)) return v;
    const k = v & 0x7fffffff;
    if (k >= this.largeCount) throw new GitError("invalid pack index: large offset out of range");
    const p = this.largeBase + 8 * k;
    return this.view.getUint32(p) * 2 ** 32 + this.view.getUint32(p + 4);
  }

  /** CRC32 of the i-th object's packed bytes. */
  crcAt(i: number): number {
    return this.view.getUint32(this.crcBase + 4 * i);
  }

  /** Offset of the entry following the one at `offset` (or -1 for the last entry). */
  nextOffset(offset: number): number {
    const { offsets } = this.sortedByOffset();
    const k = upperBound(offsets, offset);
    return k < offsets.length ? offsets[k]! : -1;
  }

  /** Sorted-table position of the object stored at `offset`, or -1. */
  indexAtOffset(offset: number): number {
    const { offsets, index } = this.sortedByOffset();
    const k = upperBound(offsets, offset) - 1;
    return k >= 0 && offsets[k] === offset ? index[k]! : -1;
  }

  /** Object id stored at `offset`, or null. */
  oidAtOffset(offset: number): Oid | null {
    const i = this.indexAtOffset(offset);
    return i < 0 ? null : this.oidAt(i);
  }

  /** Every entry in pack order: `offsets[k]` ascending, `index[k]` its position in the sorted table (computed once). */
  sortedByOffset(): { offsets: Float64Array; index: Uint32Array } {
    if (this.byOffset) return this.byOffset;
    const n = this.count;
    const offsets = new Float64Array(n);
    const index = new Uint32Array(n);
    const max = this.largeCount === 0 ? 2 ** 31 : this.maxOffset() + 1;
    const scale = 2 ** Math.max(1, Math.ceil(Math.log2(n + 1)));
    if (max * scale <= 2 ** 53) {
      // One native sort of exact float keys (offset * scale + position), as fast as it gets.
      const keys = new Float64Array(n);
      for (let i = 0; i < n; i++) keys[i] = this.offsetAt(i) * scale + i;
      keys.sort();
      for (let k = 0; k < n; k++) {
        const off = Math.floor(keys[k]! / scale);
        offsets[k] = off;
        index[k] = keys[k]! - off * scale;
      }
    } else {
      const all = Float64Array.from({ length: n }, (_, i) => this.offsetAt(i));
      for (let i = 0; i < n; i++) index[i] = i;
      index.sort((a, b) => all[a]! - all[b]!);
      for (let k = 0; k < n; k++) offsets[k] = all[index[k]!]!;
    }
    this.byOffset = { offsets, index };
    return this.byOffset;
  }

  private maxOffset(): number {
    let max = 0;
    for (let k = 0; k < this.largeCount; k++) {
      const p = this.largeBase + 8 * k;
      max = Math.max(max, this.view.getUint32(p) * 2 ** 32 + this.view.getUint32(p + 4));
    }
    return max;
  }
}

/** One object for writePackIndex. */
export interface PackIndexEntry {
  oid: Oid;
  offset: number;
  crc: number;
}

/** Write .idx v2 bytes for a pack, exactly as `git index-pack` does (duplicates kept, in pack order). */
export function writePackIndex(entries: PackIndexEntry[], packChecksum: Oid): Uint8Array {
  const n = entries.length;
  const oids = new Uint8Array(20 * n);
  const offsets = new Float64Array(n);
  const crcs = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    if (!isOid(e.oid)) throw new GitError(`invalid object id ${e.oid}`);
    hexInto(e.oid, oids, 20 * i);
    offsets[i] = e.offset;
    crcs[i] = e.crc >>> 0;
  }
  return writePackIndexRaw(oids, offsets, crcs, n, packChecksum);
}

/** writePackIndex over parallel arrays (`oids`: 20 raw bytes per object), without per-object strings. */
export function writePackIndexRaw(oids: Uint8Array, offsets: ArrayLike<number>, crcs: ArrayLike<number>, n: number, packChecksum: Oid): Uint8Array {
  const order = sortOids(oids, n);
  let large = 0;
  for (let i = 0; i < n; i++) if (offsets[i]! > 0x7fffffff) large++;
  const size = HEADER + FANOUT + 28 * n + 8 * large + 40;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC);
  view.setUint32(4, 2);
  const counts = new Uint32Array(256);
  for (let i = 0; i < n; i++) counts[oids[20 * i]!]!++;
  let acc = 0;
  for (let i = 0; i < 256; i++) {
    acc += counts[i]!;
    view.setUint32(HEADER + 4 * i, acc);
  }
  const oidBase = HEADER + FANOUT;
  const crcBase = oidBase + 20 * n;
  const offBase = crcBase + 4 * n;
  const largeBase = offBase + 4 * n;
  let k = 0;
  for (let r = 0; r < n; r++) {
    const i = order[r]!;
    for (let j = 0; j < 20; j++) out[oidBase + 20 * r + j] = oids[20 * i + j]!;
    view.setUint32(crcBase + 4 * r, crcs[i]! >>> 0);
    const offset = offsets[i]!;
    if (offset > 0x7fffffff) {
      view.setUint32(offBase + 4 * r, (LARGE | k) >>> 0);
      view.setUint32(largeBase + 8 * k, Math.floor(offset / 2 ** 32));
      view.setUint32(largeBase + 8 * k + 4, offset >>> 0);
      k++;
    } else {
      view.setUint32(offBase + 4 * r, offset);
    }
  }
  const tail = largeBase + 8 * large;
  out.set(hexToBytes(packChecksum), tail);
  out.set(new Bun.CryptoHasher("sha1").update(out.subarray(0, tail + 20)).digest(), tail + 20);
  return out;
}

/** Order of `n` raw oids: a counting sort on the first two bytes, then each bucket by the rest. */
export function sortOids(oids: Uint8Array, n: number): Uint32Array {
  if (n < 4096) {
    // Small packs (API commits): a plain sort beats walking 65,536 buckets.
    return Uint32Array.from({ length: n }, (_, i) => i).sort((a, b) => compareOids(oids, 20 * a, oids, 20 * b));
  }
  const start = new Uint32Array(65537);
  for (let i = 0; i < n; i++) start[((oids[20 * i]! << 8) | oids[20 * i + 1]!) + 1]!++;
  for (let b = 0; b < 65536; b++) start[b + 1]! += start[b]!;
  const fill = start.slice(0, 65536);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[fill[(oids[20 * i]! << 8) | oids[20 * i + 1]!]!++] = i;
  const cmp = (a: number, b: number) => compareOids(oids, 20 * a, oids, 20 * b);
  for (let b = 0; b < 65536; b++) {
    const s = start[b]!;
    const e = start[b + 1]!;
    if (e - s > 32) {
      order.subarray(s, e).sort(cmp);
      continue;
    }
    for (let i = s + 1; i < e; i++) {
      const v = order[i]!;
      let j = i - 1;
      while (j >= s && cmp(order[j]!, v) > 0) {
        order[j + 1] = order[j]!;
        j--;
      }
      order[j + 1] = v;
    }
  }
  return order;
}

function compareOids(a: Uint8Array, pa: number, b: Uint8Array, pb: number): number {
  for (let j = 0; j < 20; j++) {
    const c = a[pa + j]! - b[pb + j]!;
    if (c !== 0) return c;
  }
  return 0;
}

function upperBound(a: Float64Array, v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
