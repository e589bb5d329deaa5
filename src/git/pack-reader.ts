// Random access to one stored pack through its idx (gitformat-pack):
//
//   4-byte signature "PACK", 4-byte version (2 or 3), 4-byte number of objects,
//   then the entries (see pack-entry.ts), then a 20-byte SHA-1 trailer of all of the above.
//   "The delta data starts with the size of the base object and the size of the object to
//   be reconstructed"; ofs-delta bases are earlier in the same pack; ref-delta bases are
//   named by oid (in a stored pack, also in the same pack).
import { readDeltaHeader, applyDelta } from "./delta.ts";
import { inflateExact, inflatePrefix } from "./inflate.ts";
import { decodeEntryHeader, OBJ_OFS_DELTA, OBJ_REF_DELTA, typeCode, typeName } from "./pack-entry.ts";
import type { PackIndex } from "./pack-index.ts";
import { GitError, type ByteSource, type ObjectType, type Oid, type RawObject } from "./types.ts";

/** One entry as stored, located through the idx. */
export interface PackEntry {
  offset: number;
  /** 1..4 commit, tree, blob, tag; 6 OFS_DELTA; 7 REF_DELTA. */
  typeCode: number;
  /** Inflated size of the entry data (for a delta, of the delta itself). */
  size: number;
  headerLength: number;
  baseOffset?: number;
  baseOid?: Oid;
  /** Offset of the next entry, or of the trailer. */
  end: number;
}

const MAX_HEADER = 32;
/** Delta bases a prefetch follows at most (git's default --depth is 50). */
const MAX_PREFETCH_DEPTH = 64;
/**
 * Entries this close together are prefetched as one range: only object storage takes hints, and
 * there a request costs far more than the bytes between (20 ms or more before the first byte;
 * 1 MiB more at 100 MiB/s is 10 ms).
 */
const PREFETCH_MERGE_GAP = 1024 * 1024;
/** A merged range stops growing here, so that a long run is still fetched by several requests at once. */
const PREFETCH_MAX_RANGE = 4 * 1024 * 1024;
const DELTA_SCRATCH_MAX = 16 * 1024 * 1024;
// module-state: scratch (synchronous, reused by every call; see below)
let deltaScratch = new Uint8Array(64 * 1024);

/**
 * Bounded LRU (by bytes) of resolved objects keyed by pack + offset, shared across packs.
 * Keys are numbers (a small id per pack name, times 2^40, plus the offset): a string key per
 * lookup was a fresh string per entry of every delta chain walked.
 */
export class DeltaBaseCache {
  private readonly map = new Map<number, RawObject>();
  /** Ids of the pack names seen since the last reset (at most MAX_PACK_IDS). */
  private readonly ids = new Map<string, number>();
  private bytes = 0;
  constructor(readonly maxBytes = 32 * 1024 * 1024) {}

  /** The cached object, refreshed as most recently used. */
  get(pack: string, offset: number): RawObject | undefined {
    const key = this.key(pack, offset, false);
    if (key < 0) return undefined;
    const v = this.map.get(key);
    if (v) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  /** Remember an object; objects larger than a quarter of the budget are not kept. */
  set(pack: string, offset: number, obj: RawObject): void {
    if (obj.data.length > this.maxBytes / 4) return;
    const key = this.key(pack, offset, true);
    if (key < 0) return;
    const old = this.map.get(key);
    if (old) {
      this.bytes -= old.data.length;
      this.map.delete(key);
    }
    this.map.set(key, obj);
    this.bytes += obj.data.length;
    for (const [k, v] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      this.map.delete(k);
      this.bytes -= v.data.length;
    }
  }

  /** Bytes currently held. */
  get size(): number {
    return this.bytes;
  }

  /** The numeric key, or -1 (offset too large, or an unknown pack when `assign` is false). */
  private key(pack: string, offset: number, assign: boolean): number {
    if (offset >= OFFSET_LIMIT) return -1;
    let id = this.ids.get(pack);
    if (id === undefined) {
      if (!assign) return -1;
      // Ids are never reused while entries may carry them: start over once they run out.
      if (this.ids.size === MAX_PACK_IDS) {
        this.map.clear();
        this.ids.clear();
        this.bytes = 0;
      }
      id = this.ids.size;
      this.ids.set(pack, id);
    }
    return id * OFFSET_LIMIT + offset;
  }
}

const OFFSET_LIMIT = 2 ** 40;
/** id * OFFSET_LIMIT + offset stays an exact integer (< 2^53). */
const MAX_PACK_IDS = 2 ** 13;

/**
 * `[from, to)` of `source` in order: through the source's read-ahead stream when it is object
 * storage (a source that takes prefetch hints; several ranged reads are then kept in flight),
 * else in reads of `chunk` bytes (local files: cheap reads, less memory per stream).
 */
export async function* streamBytes(source: ByteSource, from: number, to: number, chunk: number): AsyncIterable<Uint8Array> {
  if (to <= from) return;
  if (source.stream && source.prefetch) {
    yield* source.stream(from, to - from);
    return;
  }
  for (let pos = from; pos < to; pos += chunk) yield await source.read(pos, Math.min(chunk, to - pos));
}

/** One immutable pack: its idx plus ranged reads of its bytes. */
export class Pack {
  /**
   * Reachability record: when set, the pack holds exactly the objects reachable from these ids
   * (a GC pack, or the first push into an empty repository). A clone may then count the whole
   * pack as sent and walk only what lies outside it (object-list.ts).
   */
  reachTips: Oid[] | null = null;

  /**
   * `name` is the pack checksum (hex) or any key unique among packs sharing `cache`.
   */
  constructor(
    readonly name: string,
    readonly idx: PackIndex,
    readonly source: ByteSource,
    readonly cache: DeltaBaseCache = new DeltaBaseCache(),
  ) {}

  /** The resolved object with this oid, or null when this pack does not hold it. */
  async read(oid: Oid): Promise<RawObject | null> {
    const offset = this.idx.find(oid);
    return offset < 0 ? null : this.readAt(offset);
  }

  /** Decode the entry header at `offset` (reads a few bytes only). */
  async entryAt(offset: number): Promise<PackEntry> {
    const end = this.entryEnd(offset);
    const head = await this.source.read(offset, Math.min(MAX_HEADER, end - offset));
    return this.parseEntry(offset, end, head);
  }

  /** The stored bytes of the entry at `offset` (header and compressed data). */
  async rawEntryAt(offset: number): Promise<{ entry: PackEntry; bytes: Uint8Array }> {
    const end = this.entryEnd(offset);
    const bytes = await this.source.read(offset, end - offset);
    return { entry: this.parseEntry(offset, end, bytes), bytes };
  }

  /** The resolved object stored at `offset`; delta chains are followed iteratively. Do not modify its data (it may be cached). */
  async readAt(offset: number): Promise<RawObject> {
    const deltas: { offset: number; compressed: Uint8Array; size: number }[] = [];
    let cur = offset;
    let base: RawObject | undefined;
    while (!base) {
      base = this.cache.get(this.name, cur);
      if (base) break;
      const { entry, bytes } = await this.rawEntryAt(cur);
      const compressed = bytes.subarray(entry.headerLength);
      if (entry.typeCode !== OBJ_OFS_DELTA && entry.typeCode !== OBJ_REF_DELTA) {
        base = { type: typeName(entry.typeCode), data: inflateExact(compressed, entry.size) };
        if (deltas.length > 0) this.cache.set(this.name, cur, base);
        break;
      }
      deltas.push({ offset: cur, compressed, size: entry.size });
      if (deltas.length > this.idx.count) throw new GitError(`delta cycle in pack ${this.name}`);
      cur = this.baseOffsetOf(entry);
    }
    for (let i = deltas.length - 1; i >= 0; i--) {
      const d = deltas[i]!;
      base = { type: base.type, data: applyDelta(base.data, inflateExact(d.compressed, d.size, this.deltaScratch(d.size))) };
      if (i > 0) this.cache.set(this.name, d.offset, base);
    }
    return base;
  }

  /**
   * Hint that the objects at `offsets` will be read soon: asks the source to fetch their entries
   * (neighbours merged into one range) and, with `bases`, once an entry's header is known, its
   * delta bases (until a cached base). No effect when the source takes no hints; failures are
   * left to the reads that follow.
   */
  prefetch(offsets: readonly number[], bases = true): void {
    const source = this.source;
    if (!source.prefetch) return;
    const ranges: [number, number][] = [];
    for (const offset of offsets) {
      if (this.cache.get(this.name, offset)) continue;
      const end = this.idx.nextOffset(offset);
      ranges.push([offset, end < 0 ? this.source.size - 20 : end]);
    }
    ranges.sort((a, b) => a[0] - b[0]);
    // Neighbours go as one range. Every entry's chain is followed, cached or not: an entry whose
    // block came in with a neighbour's says nothing about its bases.
    for (let i = 0; i < ranges.length; ) {
      let j = i;
      let end = ranges[i]![1];
      while (j + 1 < ranges.length && ranges[j + 1]![0] - end <= PREFETCH_MERGE_GAP && ranges[j + 1]![1] - ranges[i]![0] <= PREFETCH_MAX_RANGE)
        end = Math.max(end, ranges[++j]![1]);
      source.prefetch(ranges[i]![0], end - ranges[i]![0]);
      i = j + 1;
    }
    if (!bases) return;
    for (const [offset] of ranges) {
      void (async () => {
        let at = offset;
        for (let depth = 0; depth < MAX_PREFETCH_DEPTH; depth++) {
          const entry = await this.entryAt(at);
          if (entry.typeCode !== OBJ_OFS_DELTA && entry.typeCode !== OBJ_REF_DELTA) return;
          at = this.baseOffsetOf(entry);
          if (this.cache.get(this.name, at)) return;
          source.prefetch!(at, this.entryEnd(at) - at);
        }
      })().catch(() => {});
    }
  }

  /** Type and size of the object at `offset` without inflating non-delta data. */
  async headerAt(offset: number): Promise<{ type: ObjectType; size: number }> {
    const top = await this.entryAt(offset);
    if (top.typeCode !== OBJ_OFS_DELTA && top.typeCode !== OBJ_REF_DELTA) {
      return { type: typeName(top.typeCode), size: top.size };
    }
    const size = (await this.deltaHeaderOf(top)).resultSize;
    return { type: await this.chainType(top), size };
  }

  /** Object type of a delta entry: the type at the bottom of its chain (remembered per entry). */
  private async chainType(top: PackEntry): Promise<ObjectType> {
    this.types ??= new Uint8Array(this.idx.count);
    const visited: number[] = [];
    let e = top;
    let code = 0;
    for (;;) {
      const at = this.idx.indexAtOffset(e.offset);
      if (at >= 0 && this.types[at]) {
        code = this.types[at]!;
        break;
      }
      if (at >= 0) visited.push(at);
      const cached = this.cache.get(this.name, e.offset);
      if (cached) {
        code = typeCode(cached.type);
        break;
      }
      if (e.typeCode !== OBJ_OFS_DELTA && e.typeCode !== OBJ_REF_DELTA) {
        code = e.typeCode;
        break;
      }
      if (visited.length > this.idx.count) throw new GitError(`delta cycle in pack ${this.name}`);
      e = await this.entryAt(this.baseOffsetOf(e));
    }
    for (const at of visited) this.types[at] = code;
    return typeName(code);
  }

  private types: Uint8Array | null = null;

  /** Inflated delta data only lives until applied: one buffer shared by all packs. */
  private deltaScratch(size: number): Uint8Array | undefined {
    if (size + 1 > DELTA_SCRATCH_MAX) return undefined;
    if (deltaScratch.length < size + 1) deltaScratch = new Uint8Array(Math.max(size + 1, 2 * deltaScratch.length));
    return deltaScratch;
  }

  /** Base and result sizes of a delta entry (inflates only the start of it). */
  async deltaHeaderOf(entry: PackEntry): Promise<{ baseSize: number; resultSize: number }> {
    const dataStart = entry.offset + entry.headerLength;
    for (let want = 256; ; want *= 8) {
      const len = Math.min(want, entry.end - dataStart);
      // Two varints of at most 10 bytes each.
      const head = inflatePrefix(await this.source.read(dataStart, len), 32);
      try {
        return readDeltaHeader(head);
      } catch (e) {
        if (len === entry.end - dataStart) throw e;
      }
    }
  }

  /** Offset of the base of a delta entry in this pack (throws when a ref-delta base is missing). */
  baseOffsetOf(entry: PackEntry): number {
    if (entry.baseOffset !== undefined) return entry.baseOffset;
    const off = this.idx.find(entry.baseOid!);
    if (off < 0) throw new GitError(`pack ${this.name}: delta base ${entry.baseOid} is missing`);
    return off;
  }

  private entryEnd(offset: number): number {
    const next = this.idx.nextOffset(offset);
    const end = next < 0 ? this.source.size - 20 : next;
    if (end <= offset) throw new GitError(`pack ${this.name}: no entry at offset ${offset}`);
    return end;
  }

  private parseEntry(offset: number, end: number, bytes: Uint8Array): PackEntry {
    const h = decodeEntryHeader(bytes, 0, Math.min(bytes.length, end - offset));
    if (!h) throw new GitError(`pack ${this.name}: truncated entry at offset ${offset}`);
    const entry: PackEntry = { offset, typeCode: h.typeCode, size: h.size, headerLength: h.headerLength, end };
    if (h.baseDistance !== undefined) {
      entry.baseOffset = offset - h.baseDistance;
      if (entry.baseOffset < 12) throw new GitError(`pack ${this.name}: bad delta base offset at ${offset}`);
    }
    if (h.baseOid !== undefined) entry.baseOid = h.baseOid;
    return entry;
  }
}
