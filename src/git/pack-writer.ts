// Writing packs (gitformat-pack):
//
//   "PACK", version 2, the number of objects, the entries, then "a 20-byte SHA-1 checksum
//   of all of the above". An ofs-delta names its base by "a negative relative offset from
//   the delta object's position in the pack"; a ref-delta by the base's object name. A thin
//   pack may contain ref-deltas against objects the receiver already has.
//
// Serving copies stored entries verbatim (no recompression, no delta search): a stored delta
// stays a delta when its base is sent too (emitted first, re-pointed by offset or oid) or is one
// of the receiver's thin bases; any other delta is resolved and sent whole. A thin pack may also
// send an object that would go whole as a new delta against the receiver's version of the same
// path (WritePackOptions.bases), within a budget of bytes compared (THIN_DELTA_BYTES).
import { CLONE_MEMORY_SLACK, MemoryPacer } from "./buffer-pool.ts";
import { encodeDelta } from "./delta-encode.ts";
import { deflate } from "./inflate.ts";
import { hashObject } from "./oid.ts";
import { MultiPackIndex } from "./multi-pack-index.ts";
import { HAVE, SEND } from "./object-list.ts";
import { decodeEntryHeader, encodeOfsDistance, encodeTypeSize, OBJ_OFS_DELTA, OBJ_REF_DELTA, typeCode } from "./pack-entry.ts";
import type { PackIndex, PackIndexEntry } from "./pack-index.ts";
import { streamBytes, type Pack } from "./pack-reader.ts";
import { PackSet } from "./pack-set.ts";
import { GitError, type Oid, type RawObject } from "./types.ts";
import type { WorkBudget } from "./work-budget.ts";

/** Options of packObjects. */
export interface PackObjectsOptions {
  /** The receiver understands OFS_DELTA (else deltas are sent as REF_DELTA). */
  ofsDelta: boolean;
  /** Objects the receiver has: deltas against them may be sent as REF_DELTA (a thin pack). */
  thinBases?: Set<Oid>;
}

/** Options of writePack. */
export interface WritePackOptions {
  /** The receiver understands OFS_DELTA (else deltas are sent as REF_DELTA). */
  ofsDelta: boolean;
  /** Deltas against objects flagged HAVE may stay deltas (REF_DELTA): a thin pack. */
  thin: boolean;
  /**
   * Called for every object written, with its multi-pack-index position, pack offset and the
   * CRC32 of its entry bytes (to write the new pack's idx without reading it back). Stored
   * entries copied as they are get their CRC checked against their idx on the way.
   */
  record?(position: number, offset: number, crc: number): void;
  /**
   * With `thin`: for positions sent, the receiver's version of the same path (flagged HAVE). An
   * object that would go whole is sent as a new delta against it when that is smaller.
   */
  bases?: Map<number, number> | null;
  /** Bytes (base plus target) new deltas may compare in all (default THIN_DELTA_BYTES). */
  deltaBytes?: number;
  /** Work allowed (OverBudget when spent): a unit per entry, per 16 KiB copied and per 128 bytes rebuilt or delta-compressed. */
  budget?: WorkBudget;
}

/**
 * New thin deltas of one pack compare at most this many bytes (bases and targets together, a
 * second or two of work on a thread; a fetch of 3,528 commits of git.git used most of it):
 * beyond it, objects go as stored.
 */
export const THIN_DELTA_BYTES = 256 * 1024 * 1024;
/** Objects larger than this are never delta-compressed anew (git's own default stops at 512 MiB; a fetch rarely gains there). */
const THIN_DELTA_MAX_OBJECT = 8 * 1024 * 1024;

const CHUNK = 1 << 20;
/** Reads of a stored pack sent whole: small, so that many concurrent clones stay cheap. */
const STREAM_CHUNK = 256 * 1024;
const FLUSH = 64 * 1024;
/** Bytes of consecutive stored entries read at once. */
const WINDOW = 1 << 20;
const MAX_HEADER = 32;
/**
 * Windows read ahead of the one being sent when the pack is in object storage (its source takes
 * prefetch hints): each request there waits tens of milliseconds for its first byte, so several
 * are kept in flight (at most this many WINDOW-sized reads per pack being written). Local
 * files are read one window at a time, as before.
 */
const READ_AHEAD_WINDOWS = 8;

/** Consecutive selected entries `[first, last)` of one pack, read as the bytes `[from, to)`. */
interface Window {
  first: number;
  last: number;
  from: number;
  to: number;
  /** A single entry larger than WINDOW: only its header is read here, the rest is streamed. */
  big: boolean;
}

/** Stream a pack of exactly `oids` (deduplicated) from `set`, copying stored entries verbatim. */
export async function* packObjects(set: PackSet, oids: Iterable<Oid>, opts: PackObjectsOptions): AsyncIterable<Uint8Array> {
  const midx = set.multiPackIndex();
  const flags = new Uint8Array(midx.count);
  let count = 0;
  for (const oid of oids) {
    const p = midx.findHex(oid);
    if (p < 0) throw new GitError(`object ${oid} is missing`);
    if (flags[p]! & SEND) continue;
    flags[p] = SEND;
    count++;
  }
  for (const oid of opts.thinBases ?? []) {
    const p = midx.findHex(oid);
    if (p >= 0 && !(flags[p]! & SEND)) flags[p] = HAVE;
  }
  yield* writePack(midx, flags, count, { ofsDelta: opts.ofsDelta, thin: opts.thinBases !== undefined });
}

/** Stream a pack of every object of `packs` (each once), optionally filtered. */
export function mergePacks(packs: Pack[], keep?: (oid: Oid) => boolean): AsyncIterable<Uint8Array> {
  const midx = MultiPackIndex.build(packs);
  const flags = new Uint8Array(midx.count);
  let count = 0;
  for (let p = 0; p < midx.count; p++) {
    if (keep && !keep(midx.oidAt(p))) continue;
    flags[p] = SEND;
    count++;
  }
  return writePack(midx, flags, count, { ofsDelta: true, thin: false });
}

/**
 * Stream a pack of the `count` objects flagged SEND in `flags` (by position in `midx`),
 * copying stored entries as they are: pack by pack (oldest first), each pack's sent entries in
 * stored order, consecutive entries read and sent as one range. An entry is rewritten only where
 * it must be: an OFS_DELTA whose base moved (only its header changes), a delta whose base is sent
 * from another pack (re-pointed), or a delta whose base is not sent and not held by the receiver
 * (resolved and sent whole, the one case that inflates and deflates). A delta is only re-pointed
 * at a base already written or at a stored whole object, so no delta chain can form a cycle.
 * A single pack sent in full goes out as stored, trailer included.
 */
export async function* writePack(midx: MultiPackIndex, flags: Uint8Array, count: number, opts: WritePackOptions): AsyncIterable<Uint8Array> {
  const packs = midx.packs;
  if (packs.length === 1 && count === packs[0]!.idx.count && count > 0 && opts.ofsDelta && !opts.record) {
    const pack = packs[0]!;
    // Each piece read, and the packets made of it, is garbage once sent.
    const pacer = new MemoryPacer(8, CLONE_MEMORY_SLACK);
    for await (const piece of streamBytes(pack.source, 0, pack.source.size, STREAM_CHUNK)) {
      yield piece;
      pacer.tick();
    }
    return;
  }
  const out = new PackStream(count);
  yield* out.drain();
  let deltaLeft = opts.deltaBytes ?? THIN_DELTA_BYTES;
  /** Output offset of each position once written, else -1. */
  const written = new Float64Array(midx.count).fill(-1);
  let sent = 0;
  // Per window (about WINDOW bytes each) and per entry rewritten whole.
  const pacer = new MemoryPacer(4, CLONE_MEMORY_SLACK);
  // Every pack's windows in the order they are sent (packs oldest first), so that reads run
  // ahead across pack boundaries: the next pack's first windows are in flight while this one's
  // last are sent, rather than the pipeline draining at each pack.
  const plan = (function* (): Generator<{ k: number; pack: Pack; layout: PackLayout; w: Window }> {
    for (let k = packs.length - 1; k >= 0; k--) {
      const pack = packs[k]!;
      const layout = packLayout(midx, k, flags);
      for (const w of windowsOf(layout)) yield { k, pack, layout, w };
    }
  })();
  // Reads issued ahead, in window order (only one at a time for local files).
  const depth = packs.some((p) => p.source.prefetch) ? READ_AHEAD_WINDOWS : 1;
  const ahead: { k: number; pack: Pack; layout: PackLayout; w: Window; bytes: Promise<Uint8Array> }[] = [];
  const fill = (): void => {
    while (ahead.length < depth) {
      const next = plan.next();
      if (next.done) return;
      const { pack, w } = next.value;
      const bytes = pack.source.read(w.from, w.big ? Math.min(MAX_HEADER, w.to - w.from) : w.to - w.from);
      // Awaited in turn; a write that stops early leaves the rest to settle unobserved.
      bytes.catch(() => {});
      ahead.push({ ...next.value, bytes });
    }
  };
  for (fill(); ahead.length > 0; fill()) {
    const { k, pack, layout, w, bytes: reading } = ahead.shift()!;
    const { idx, row, offsets, index, n, packEnd } = layout;
    const { first, last: j, from, big } = w;
    const bytes = await reading;
    let copyFrom = 0;
    for (let e = first; e < j; e++) {
      const off = offsets[e]!;
      const end = e + 1 < n ? offsets[e + 1]! : packEnd;
      const ip = index[e]!;
      const p = row[ip]!;
      const at = off - from;
      const h = decodeEntryHeader(bytes, at, Math.min(bytes.length, at + MAX_HEADER));
      if (!h) throw new GitError(`pack ${pack.name}: truncated entry at offset ${off}`);
      // Stored bytes before this entry not pushed yet still come first.
      const outAt = out.position + (big ? 0 : at - copyFrom);
      written[p] = outAt;
      sent++;
      opts.budget?.spend(1 + ((end - off) >> 14));
      let header: Uint8Array | null = null; // null: the entry goes as stored
      let whole = false;
      if (h.typeCode === OBJ_OFS_DELTA || h.typeCode === OBJ_REF_DELTA) {
        let base: number;
        let sameCopy = false;
        if (h.typeCode === OBJ_OFS_DELTA) {
          const bi = idx.indexAtOffset(off - h.baseDistance!);
          if (bi < 0) throw new GitError(`pack ${pack.name}: no object at delta base offset ${off - h.baseDistance!}`);
          const v = row[bi]!;
          sameCopy = v >= 0;
          base = v >= 0 ? v : -v - 1;
        } else {
          base = midx.find(bytes, at + h.headerLength - 20);
          sameCopy = base >= 0 && midx.packOf[base] === k;
        }
        const baseSent = base >= 0 && (flags[base]! & SEND) !== 0;
        if (baseSent && written[base]! >= 0) {
          // The base is already out: point at it by distance (or by id without ofs-delta).
          if (opts.ofsDelta) {
            if (!(h.typeCode === OBJ_OFS_DELTA && outAt - written[base]! === h.baseDistance)) header = ofsHeader(h.size, outAt - written[base]!);
          } else header = refHeader(h.size, midx, base);
        } else if (baseSent && (sameCopy || (await isStoredWhole(midx, base)))) {
          // Sent later: from this pack (a stored REF_DELTA to a later entry, valid as it is) or a
          // stored whole object elsewhere, which cannot close a cycle.
          if (h.typeCode !== OBJ_REF_DELTA) header = refHeader(h.size, midx, base);
        } else if (!baseSent && opts.thin && base >= 0 && (flags[base]! & HAVE) !== 0) {
          if (h.typeCode !== OBJ_REF_DELTA) header = refHeader(h.size, midx, base);
        } else {
          whole = true;
        }
      }
      // A thin pack: an object about to go whole may go as a new delta against the receiver's copy.
      let fresh: { header: Uint8Array; z: Uint8Array } | null = null;
      const theirs = opts.thin && deltaLeft > 0 ? opts.bases?.get(p) : undefined;
      if (
        theirs !== undefined &&
        (whole || (header === null && h.typeCode !== OBJ_OFS_DELTA && h.typeCode !== OBJ_REF_DELTA)) &&
        (flags[theirs]! & HAVE) !== 0
      ) {
        const storedBytes = whole ? Number.POSITIVE_INFINITY : end - off - h.headerLength;
        fresh = await thinDelta(midx, pack, off, theirs, storedBytes, (n) => {
          deltaLeft -= n;
          opts.budget?.spend(n >> 7);
        });
        if (fresh) {
          header = fresh.header;
          whole = false;
        }
      }
      if (header === null && !whole) {
        if (opts.record) {
          const crc = idx.crcAt(ip);
          if (!big && Bun.hash.crc32(bytes.subarray(at, end - from)) !== crc)
            throw new GitError(`pack ${pack.name}: entry at offset ${off} does not match its checksum`);
          opts.record(p, outAt, crc);
        }
        if (big) {
          out.push(bytes.subarray(0, h.headerLength));
          yield* streamData(out, pack, off + h.headerLength, end);
        }
        continue;
      }
      // Rewritten: flush the stored bytes before this entry, then its new form.
      if (!big && copyFrom < at) out.push(bytes.subarray(copyFrom, at));
      copyFrom = end - from;
      if (fresh) {
        out.push(fresh.header);
        out.push(fresh.z);
        opts.record?.(p, outAt, Bun.hash.crc32(fresh.z, Bun.hash.crc32(fresh.header)));
      } else if (whole) {
        pacer.tick();
        // Charged before the object is rebuilt (inflating its chain, deflating it whole).
        if (opts.budget) opts.budget.spend((await pack.headerAt(off)).size >> 7);
        const obj = await pack.readAt(off);
        const head = encodeTypeSize(typeCode(obj.type), obj.data.length);
        const z = deflate(obj.data);
        out.push(head);
        out.push(z);
        opts.record?.(p, outAt, Bun.hash.crc32(z, Bun.hash.crc32(head)));
      } else {
        out.push(header!);
        if (big) {
          const crc = yield* streamData(out, pack, off + h.headerLength, end, Bun.hash.crc32(header!));
          opts.record?.(p, outAt, crc);
        } else {
          const data = bytes.subarray(at + h.headerLength, end - from);
          out.push(data);
          opts.record?.(p, outAt, Bun.hash.crc32(data, Bun.hash.crc32(header!)));
        }
      }
      yield* out.drain();
    }
    if (!big && copyFrom < bytes.length) out.push(bytes.subarray(copyFrom));
    yield* out.drain();
    pacer.tick();
  }
  if (sent !== count) throw new GitError(`pack writer: ${count - sent} of ${count} objects were not found in the packs`);
  yield* out.finish();
}

/** What writePack needs to know of one pack: its entries in stored order and which are sent. */
interface PackLayout {
  idx: PackIndex;
  /** Multi-pack-index position of each idx entry (negative: another pack's copy is preferred). */
  row: Int32Array;
  offsets: Float64Array;
  index: Uint32Array;
  n: number;
  packEnd: number;
  selected(j: number): boolean;
}

function packLayout(midx: MultiPackIndex, k: number, flags: Uint8Array): PackLayout {
  const pack = midx.packs[k]!;
  const idx = pack.idx;
  const row = midx.positionsIn(k);
  const { offsets, index } = idx.sortedByOffset();
  return {
    idx,
    row,
    offsets,
    index,
    n: offsets.length,
    packEnd: pack.source.size - 20,
    selected(j: number): boolean {
      const v = row[index[j]!]!;
      return v >= 0 && (flags[v]! & SEND) !== 0;
    },
  };
}

/**
 * The windows of one pack: consecutive selected entries until one holds WINDOW bytes (so that
 * the read bypasses the block cache: a clone's stream must not evict what walks need); an entry
 * larger than WINDOW goes alone, streamed in pieces.
 */
function* windowsOf(layout: PackLayout): Generator<Window> {
  const { offsets, n, packEnd, selected } = layout;
  let j = 0;
  while (j < n) {
    if (!selected(j)) {
      j++;
      continue;
    }
    const first = j;
    const from = offsets[j]!;
    let to = j + 1 < n ? offsets[j + 1]! : packEnd;
    j++;
    while (j < n && to - from < WINDOW && selected(j)) {
      const end = j + 1 < n ? offsets[j + 1]! : packEnd;
      if (end - to > WINDOW) break;
      to = end;
      j++;
    }
    yield { first, last: j, from, to, big: j === first + 1 && to - from > WINDOW };
  }
}

/** Stream the stored bytes [from, to) of `pack` (in CHUNK pieces, or read ahead from object storage); returns their CRC32 continued from `crc`. */
async function* streamData(out: PackStream, pack: Pack, from: number, to: number, crc = 0): AsyncGenerator<Uint8Array, number> {
  for await (const piece of streamBytes(pack.source, from, to, CHUNK)) {
    crc = Bun.hash.crc32(piece, crc);
    out.push(piece);
    yield* out.drain();
  }
  return crc;
}

/**
 * The object stored at `off` in `pack` as a REF_DELTA against position `theirs` (held by the
 * receiver), deflated; null when that is not smaller than `storedBytes` (the entry as stored) or
 * than three quarters of the object, or either side is too large. `spend` is told the bytes compared.
 */
async function thinDelta(
  midx: MultiPackIndex,
  pack: Pack,
  off: number,
  theirs: number,
  storedBytes: number,
  spend: (bytes: number) => void,
): Promise<{ header: Uint8Array; z: Uint8Array } | null> {
  const basePack = midx.packs[midx.packOf[theirs]!]!;
  const baseOffset = midx.offsetOf(theirs);
  const [targetHead, baseHead] = await Promise.all([pack.headerAt(off), basePack.headerAt(baseOffset)]);
  if (targetHead.type !== baseHead.type || targetHead.size > THIN_DELTA_MAX_OBJECT || baseHead.size > THIN_DELTA_MAX_OBJECT) return null;
  if (targetHead.size < 64) return null;
  spend(targetHead.size + baseHead.size);
  const [target, base] = await Promise.all([pack.readAt(off), basePack.readAt(baseOffset)]);
  const delta = encodeDelta(base.data, target.data, (target.data.length * 3) >> 2);
  if (!delta) return null;
  const z = deflate(delta);
  if (z.length >= storedBytes) return null;
  const a = encodeTypeSize(OBJ_REF_DELTA, delta.length);
  const header = new Uint8Array(a.length + 20);
  header.set(a);
  header.set(midx.oids.subarray(20 * theirs, 20 * theirs + 20), a.length);
  return { header, z };
}

/** True when position `p`'s preferred copy is stored whole (not a delta). */
async function isStoredWhole(midx: MultiPackIndex, p: number): Promise<boolean> {
  const pack = midx.packs[midx.packOf[p]!]!;
  const first = await pack.source.read(pack.idx.offsetAt(midx.idxPos[p]!), 1);
  const code = (first[0]! >> 4) & 7;
  return code !== OBJ_OFS_DELTA && code !== OBJ_REF_DELTA;
}

function ofsHeader(size: number, distance: number): Uint8Array {
  const a = encodeTypeSize(OBJ_OFS_DELTA, size);
  const b = encodeOfsDistance(distance);
  const h = new Uint8Array(a.length + b.length);
  h.set(a);
  h.set(b, a.length);
  return h;
}

function refHeader(size: number, midx: MultiPackIndex, base: number): Uint8Array {
  const a = encodeTypeSize(OBJ_REF_DELTA, size);
  const h = new Uint8Array(a.length + 20);
  h.set(a);
  h.set(midx.oids.subarray(20 * base, 20 * base + 20), a.length);
  return h;
}

/** A complete pack built in memory (small packs made by the commit API). */
export function buildPack(objects: RawObject[]): { pack: Uint8Array; checksum: Oid; entries: PackIndexEntry[] } {
  const seen = new Set<Oid>();
  const parts: Uint8Array[] = [];
  const entries: PackIndexEntry[] = [];
  let pos = 12;
  for (const obj of objects) {
    const oid = hashObject(obj.type, obj.data);
    if (seen.has(oid)) continue;
    seen.add(oid);
    const head = encodeTypeSize(typeCode(obj.type), obj.data.length);
    const z = deflate(obj.data);
    const raw = new Uint8Array(head.length + z.length);
    raw.set(head);
    raw.set(z, head.length);
    entries.push({ oid, offset: pos, crc: Bun.hash.crc32(raw) });
    parts.push(raw);
    pos += raw.length;
  }
  const pack = new Uint8Array(pos + 20);
  pack.set(packHeader(entries.length));
  let p = 12;
  for (const part of parts) {
    pack.set(part, p);
    p += part.length;
  }
  const sum = new Bun.CryptoHasher("sha1").update(pack.subarray(0, pos)).digest();
  pack.set(sum, pos);
  return { pack, checksum: sum.toString("hex"), entries };
}

/** The 12-byte pack header. */
export function packHeader(count: number): Uint8Array {
  const h = new Uint8Array(12);
  h.set([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2]);
  new DataView(h.buffer).setUint32(8, count);
  return h;
}

/** Output side: counts bytes, hashes them, batches small pieces. */
class PackStream {
  position = 0;
  private readonly hash = new Bun.CryptoHasher("sha1");
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;

  constructor(count: number) {
    this.push(packHeader(count));
  }

  push(bytes: Uint8Array): void {
    this.hash.update(bytes);
    this.position += bytes.length;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
  }

  /**
   * Pieces ready to send (only once enough have accumulated): large pieces as they are (no copy;
   * the stored runs), runs of small ones (rewritten headers) joined.
   */
  *drain(force = false): Iterable<Uint8Array> {
    if (this.pendingBytes === 0 || (!force && this.pendingBytes < FLUSH)) return;
    const parts = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    let from = 0;
    for (let i = 0; i <= parts.length; i++) {
      if (i < parts.length && parts[i]!.length < FLUSH) continue;
      if (i - from === 1) yield parts[from]!;
      else if (i > from) yield Buffer.concat(parts.slice(from, i));
      if (i < parts.length) yield parts[i]!;
      from = i + 1;
    }
  }

  /** The rest, then the trailer. */
  *finish(): Iterable<Uint8Array> {
    this.pending.push(new Uint8Array(this.hash.digest()));
    this.pendingBytes += 20;
    yield* this.drain(true);
  }
}
