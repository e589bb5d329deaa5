// Resolving many objects of a pack set in one walk (the trees and commits of a clone), with
// every resolved object kept in a private LRU whose evicted buffers are reused for the next
// ones. A walk resolves gigabytes of tree data over a large history; fresh buffers for each
// (what Pack.readAt does, since its cache is shared between requests) leave all of it to the
// collector, which lets the process grow by hundreds of megabytes before it catches up.
import { BufferPool } from "./buffer-pool.ts";
import { applyDelta, CopyLog } from "./delta.ts";
import { inflateExact } from "./inflate.ts";
import { OBJ_OFS_DELTA, OBJ_REF_DELTA, OBJ_TREE } from "./pack-entry.ts";
import type { Pack } from "./pack-reader.ts";
import { GitError } from "./types.ts";

/** A resolved object: type code (1 commit, 2 tree, 3 blob, 4 tag) and data. */
export interface ChainObject {
  code: number;
  data: Uint8Array;
  /** For a tree whose entries the walk has handled: where each entry starts (set by the walk). */
  starts?: Uint32Array;
}

const OFFSET_LIMIT = 2 ** 40;

/**
 * Reads objects of `packs` by (pack number, offset). The data returned is only valid until the
 * next call: the walk parses each object before reading the next one.
 */
export class ChainReader {
  private readonly lru = new Map<number, ChainObject>();
  private held = 0;
  private pool: BufferPool;
  private deltaScratch = new Uint8Array(64 * 1024);
  private wholeScratch = new Uint8Array(64 * 1024);
  /**
   * After read(): when the object was a delta against a tree whose entries the walk handled,
   * that base and the delta's copy instructions (valid until the next read).
   */
  lastBase: ChainObject | null = null;
  readonly lastCopies = new CopyLog();

  constructor(
    private readonly packs: Pack[],
    private readonly budget = 32 * 1024 * 1024,
  ) {
    this.pool = new BufferPool(budget / 2);
  }

  /** The object stored at `offset` in pack number `k`. */
  async read(k: number, offset: number): Promise<ChainObject> {
    const pack = this.packs[k]!;
    const keyBase = k * OFFSET_LIMIT;
    const chain: { offset: number; compressed: Uint8Array; size: number }[] = [];
    let cur = offset;
    let base: ChainObject | undefined;
    for (;;) {
      base = this.get(keyBase + cur);
      if (base) break;
      const { entry, bytes } = await pack.rawEntryAt(cur);
      const compressed = bytes.subarray(entry.headerLength);
      if (entry.typeCode !== OBJ_OFS_DELTA && entry.typeCode !== OBJ_REF_DELTA) {
        if (chain.length === 0 && entry.typeCode !== OBJ_TREE) {
          // A whole commit or tag asked for itself: nothing deltas against it in a walk.
          this.lastBase = null;
          if (this.wholeScratch.length < entry.size + 1) this.wholeScratch = new Uint8Array(Math.max(entry.size + 1, 2 * this.wholeScratch.length));
          return { code: entry.typeCode, data: inflateExact(compressed, entry.size, this.wholeScratch) };
        }
        const data = inflateExact(compressed, entry.size, this.pool.alloc(entry.size + 1)).subarray(0, entry.size);
        base = { code: entry.typeCode, data };
        this.put(keyBase + cur, base);
        break;
      }
      chain.push({ offset: cur, compressed, size: entry.size });
      if (chain.length > pack.idx.count) throw new GitError(`delta cycle in pack ${pack.name}`);
      cur = pack.baseOffsetOf(entry);
    }
    this.lastBase = null;
    for (let i = chain.length - 1; i >= 0; i--) {
      const d = chain[i]!;
      if (this.deltaScratch.length < d.size + 1) this.deltaScratch = new Uint8Array(Math.max(d.size + 1, 2 * this.deltaScratch.length));
      const delta = inflateExact(d.compressed, d.size, this.deltaScratch);
      const log: CopyLog | undefined = i === 0 && base.starts ? this.lastCopies : undefined;
      if (log) this.lastBase = base;
      base = { code: base.code, data: applyDelta(base.data, delta, this.pool.alloc, log) };
      this.put(keyBase + d.offset, base);
    }
    return base;
  }

  /** Drop every cached object and idle buffer (the reader stays usable). */
  clear(): void {
    this.lru.clear();
    this.held = 0;
    this.pool = new BufferPool(this.budget / 2);
  }

  private get(key: number): ChainObject | undefined {
    const v = this.lru.get(key);
    if (v) {
      this.lru.delete(key);
      this.lru.set(key, v);
    }
    return v;
  }

  /**
   * Record where the entries of `obj` (the object just read) start, for reads that delta
   * against it: the first `n` values of `scratch`, copied into a pooled buffer.
   */
  setStarts(obj: ChainObject, scratch: Uint32Array, n: number): void {
    // A tree read again from the cache has its starts already (the same tree, the same starts):
    // replacing them would leave the old buffer outside the pool and counted in `held` forever.
    if (obj.starts || obj.data.length > this.budget / 4) return;
    const bytes = this.pool.alloc(4 * n + 4);
    const starts = new Uint32Array(bytes.buffer, bytes.byteOffset, n);
    starts.set(scratch.subarray(0, n));
    obj.starts = starts;
    this.held += starts.byteLength;
  }

  private put(key: number, obj: ChainObject): void {
    // Objects above a quarter of the budget are not kept (nor pooled: the pool refuses them).
    if (obj.data.length > this.budget / 4) return;
    this.lru.set(key, obj);
    this.held += obj.data.length;
    // The newest entry is never evicted here: the caller is about to use it.
    for (const [k, v] of this.lru) {
      if (this.held <= this.budget || v === obj) break;
      this.lru.delete(k);
      this.held -= v.data.length + (v.starts?.byteLength ?? 0);
      this.pool.release(v.data);
      if (v.starts) this.pool.release(new Uint8Array(v.starts.buffer, v.starts.byteOffset, v.starts.byteLength));
    }
  }
}
