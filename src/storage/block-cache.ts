// Random access to stored immutable files through fixed-size cached blocks. The pack reader
// makes many small reads (object headers, delta chains); fetching whole blocks turns them into
// few ranged requests, and sharing in-flight fetches keeps concurrent readers from doubling up.
//
// Against a bucket every request costs tens of milliseconds before its first byte, so the cache
// also hides latency: a miss right after the previous block (a sequential scan) fetches a whole
// span of following blocks in one request; `prefetch` lets a walk ask for what it will read
// next (fetched in the background, a bounded number at a time); and `stream` reads a long range
// with a window of ranged reads ahead of the consumer, outside the cache (read-ahead.ts).

import { ByteLru } from "./lru.ts";
import { StorageError, type ObjectStore } from "./object-store.ts";
import { assertRange } from "./range.ts";
import { ByteBudget, readAhead, type ReadAheadOptions } from "./read-ahead.ts";

/** Random access to a stored file; the git engine's ByteSource has the same shape. */
export interface RangeReader {
  readonly size: number;
  /** Exactly `length` bytes from `offset` (throws past the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
  /** The bytes `[offset, offset + length)` in order, with reads issued ahead of the consumer. */
  stream?(offset: number, length: number): AsyncIterable<Uint8Array>;
  /** A hint: these bytes will be read soon (fetched in the background; failures are ignored). True when some were not cached yet. */
  prefetch?(offset: number, length: number): boolean;
}

/** Tuning for a BlockCache; the defaults suit pack files. */
export interface BlockCacheOptions {
  /** Bytes per cached block (default 64 KiB). */
  blockSize?: number;
  /** Budget for all cached blocks together (default 64 MiB). */
  maxBytes?: number;
  /**
   * Reads at least this long go straight to the store so they do not flush the cache (default
   * 1 MiB; 4 blocks for the fs store, where a whole pack streamed to a clone is read in 256 KiB
   * pieces that would otherwise each pass through the cache and be copied out of it).
   */
  bypassBytes?: number;
  /** Bytes one request fetches on a sequential miss (default 1 MiB, at most an eighth of maxBytes). */
  spanBytes?: number;
  /** Background prefetch requests in flight at once (default 16). */
  prefetchConcurrency?: number;
  /** Prefetch requests queued at most; older hints are dropped first (default 1024). */
  prefetchQueue?: number;
  /** Streaming: ranged reads per request and window (read-ahead.ts defaults). */
  readAhead?: ReadAheadOptions;
  /** Bytes all streams together may hold fetched or in flight (default 64 MiB). */
  readAheadBytes?: number;
  /** Whether sources take prefetch hints (default: not for the fs store, whose reads are cheap). */
  prefetch?: boolean;
  /**
   * Whether several missing blocks are fetched with one ranged read, then sliced (default: not
   * for the fs store, whose reads cost no round trip: a span read allocates every byte twice).
   */
  spanReads?: boolean;
  /**
   * Files at most this long are fetched whole on their first miss (default: the span, or 0 for
   * the fs store): a recent push's pack in one request rather than one per block a walk reaches.
   */
  wholeFileBytes?: number;
}

/** Shared block cache over an ObjectStore; blocks never go stale because stored files are immutable. */
export class BlockCache {
  readonly blockSize: number;
  private readonly bypassBytes: number;
  private readonly spanBlocks: number;
  private readonly blocks: ByteLru<string, Uint8Array>;
  private readonly inflight = new Map<string, Promise<Uint8Array>>();
  /** Per key, the block read last: a miss right after it is a sequential scan. */
  private readonly lastRead = new Map<string, number>();
  private readonly prefetchConcurrency: number;
  private readonly prefetchQueueMax: number;
  private readonly prefetchQueue: { key: string; size: number; first: number; last: number }[] = [];
  private prefetching = 0;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly readAheadOptions: ReadAheadOptions;
  private readonly prefetchEnabled: boolean;
  private readonly spanReads: boolean;
  private readonly wholeFileBytes: number;
  /** Bytes held by read-ahead streams, shared by all of them. */
  readonly readAheadBudget: ByteBudget;

  constructor(
    private readonly store: ObjectStore,
    opts: BlockCacheOptions = {},
  ) {
    this.blockSize = opts.blockSize ?? 64 * 1024;
    this.bypassBytes = opts.bypassBytes ?? (store.kind === "fs" ? 4 * this.blockSize : 1024 * 1024);
    if (!Number.isSafeInteger(this.blockSize) || this.blockSize <= 0) throw new Error("blockSize must be a positive integer");
    const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
    this.blocks = new ByteLru(maxBytes, (block) => block.byteLength);
    const span = Math.min(opts.spanBytes ?? 1024 * 1024, Math.floor(maxBytes / 8));
    this.spanBlocks = Math.max(1, Math.floor(span / this.blockSize));
    this.prefetchConcurrency = opts.prefetchConcurrency ?? 16;
    this.prefetchQueueMax = opts.prefetchQueue ?? 1024;
    this.readAheadOptions = opts.readAhead ?? {};
    this.readAheadBudget = new ByteBudget(opts.readAheadBytes ?? 64 * 1024 * 1024);
    this.prefetchEnabled = opts.prefetch ?? store.kind !== "fs";
    this.spanReads = opts.spanReads ?? store.kind !== "fs";
    this.wholeFileBytes = Math.min(opts.wholeFileBytes ?? (store.kind === "fs" ? 0 : span), Math.floor(maxBytes / 8));
  }

  /** Bytes of block data currently cached. */
  get cachedBytes(): number {
    return this.blocks.bytes;
  }

  /** A RangeReader over the stored file `key` of `size` bytes, read through the cache. */
  source(key: string, size: number): RangeReader {
    const reader: RangeReader = {
      size,
      read: (offset, length) => this.read(key, size, offset, length),
      stream: (offset, length) => this.stream(key, size, offset, length),
    };
    if (this.prefetchEnabled) reader.prefetch = (offset, length) => this.prefetch(key, size, offset, length);
    return reader;
  }

  /** Drop every cached block of `key` (call after deleting the file). */
  evict(key: string): void {
    const mark = blockPrefix(key);
    this.blocks.deleteWhere((id) => id.startsWith(mark));
    for (const id of [...this.inflight.keys()]) {
      if (id.startsWith(mark)) this.inflight.delete(id);
    }
  }

  /**
   * `[offset, offset + length)` of `key` in order, read ahead in large ranged reads that bypass
   * the cache (a clone streaming a whole pack would otherwise flush it).
   */
  stream(key: string, size: number, offset: number, length: number): AsyncIterable<Uint8Array> {
    assertRange(key, offset, length);
    if (offset + length > size) {
      throw new StorageError(`range ${offset}+${length} past the end of ${key} (${size} bytes)`, "out_of_range");
    }
    return readAhead((at, n) => this.store.getRange(key, at, n), offset, length, this.readAheadOptions, this.readAheadBudget);
  }

  /** Fetch the blocks of `[offset, offset + length)` not yet cached, in the background; true when some were missing. */
  prefetch(key: string, size: number, offset: number, length: number): boolean {
    if (length <= 0 || offset < 0 || offset >= size) return false;
    if (size <= this.wholeFileBytes) {
      offset = 0;
      length = size;
    }
    let missing = false;
    const bs = this.blockSize;
    const first = Math.floor(offset / bs);
    let last = Math.floor((Math.min(size, offset + length) - 1) / bs);
    // A hint for the block right after the one read last is a scan moving on (a commit walk
    // hinting a parent): it gets the span a sequential miss would, or the hint would take that
    // block alone and the scan's next miss would find it in flight and not look further.
    if (this.lastRead.get(key) === first - 1) last = Math.max(last, Math.min(Math.ceil(size / bs) - 1, first + this.spanBlocks - 1));
    for (let i = first; i <= last; i++) {
      if (this.blocks.has(blockPrefix(key) + i) || this.inflight.has(blockPrefix(key) + i)) continue;
      let j = i;
      while (j < last && j - i + 1 < this.spanBlocks && !this.blocks.has(blockPrefix(key) + (j + 1)) && !this.inflight.has(blockPrefix(key) + (j + 1))) j++;
      this.prefetchQueue.push({ key, size, first: i, last: j });
      missing = true;
      i = j;
    }
    while (this.prefetchQueue.length > this.prefetchQueueMax) this.prefetchQueue.shift();
    this.pumpPrefetch();
    return missing;
  }

  /** Resolves once no prefetch is queued or running. */
  async prefetchIdle(): Promise<void> {
    while (this.prefetching > 0 || this.prefetchQueue.length > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pumpPrefetch(): void {
    while (this.prefetching < this.prefetchConcurrency && this.prefetchQueue.length > 0) {
      const job = this.prefetchQueue.shift()!;
      // Newest hints first would starve the order a walk reads in; oldest first it is.
      let first = job.first;
      while (first <= job.last && (this.blocks.has(blockPrefix(job.key) + first) || this.inflight.has(blockPrefix(job.key) + first))) first++;
      if (first > job.last) continue;
      let last = first;
      while (last < job.last && !this.blocks.has(blockPrefix(job.key) + (last + 1)) && !this.inflight.has(blockPrefix(job.key) + (last + 1))) last++;
      this.prefetching++;
      this.fetchSpan(job.key, job.size, first, last)
        .catch(() => {})
        .finally(() => {
          this.prefetching--;
          this.pumpPrefetch();
        });
    }
    if (this.prefetching === 0 && this.prefetchQueue.length === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private async read(key: string, size: number, offset: number, length: number): Promise<Uint8Array> {
    assertRange(key, offset, length);
    if (offset + length > size) {
      throw new StorageError(`range ${offset}+${length} past the end of ${key} (${size} bytes)`, "out_of_range");
    }
    if (length === 0) return new Uint8Array(0);
    if (length >= this.bypassBytes) return this.store.getRange(key, offset, length);

    const bs = this.blockSize;
    const first = Math.floor(offset / bs);
    const last = Math.floor((offset + length - 1) / bs);
    if (first === last) {
      const start = offset - first * bs;
      return (await this.block(key, size, first, first)).slice(start, start + length);
    }
    const indexes = Array.from({ length: last - first + 1 }, (_, i) => first + i);
    const blocks = await Promise.all(indexes.map((index) => this.block(key, size, index, last)));
    const out = new Uint8Array(length);
    let at = 0;
    blocks.forEach((block, i) => {
      const from = i === 0 ? offset - first * bs : 0;
      const to = Math.min(block.length, from + (length - at));
      out.set(block.subarray(from, to), at);
      at += to - from;
    });
    return out;
  }

  /** Block `index`; on a miss, the fetch covers the blocks through `needLast`, or a whole span when the read is sequential. */
  private block(key: string, size: number, index: number, needLast: number): Promise<Uint8Array> {
    const prefix = blockPrefix(key);
    const id = prefix + index;
    const previous = this.lastRead.get(key);
    this.noteRead(key, index);
    const cached = this.blocks.get(id);
    if (cached) return Promise.resolve(cached);
    const pending = this.inflight.get(id);
    if (pending) return pending;

    // Sequential: the last block read of this key was the one before (a scan, not a random hit).
    const sequential = index > 0 && previous === index - 1;
    const maxLast = Math.ceil(size / this.blockSize) - 1;
    // A small file (a recent push's pack) comes whole on its first miss: one request instead of
    // one per block as a walk reaches them.
    const small = size <= this.wholeFileBytes;
    const want = small ? maxLast : sequential ? index + this.spanBlocks - 1 : needLast;
    let first = index;
    if (small) while (first > 0 && !this.blocks.has(prefix + (first - 1)) && !this.inflight.has(prefix + (first - 1))) first--;
    let last = index;
    while (last < Math.min(want, maxLast) && !this.blocks.has(prefix + (last + 1)) && !this.inflight.has(prefix + (last + 1))) last++;
    void this.fetchSpan(key, size, first, last).catch(() => {});
    return this.inflight.get(id)!;
  }

  /** Remember the last block read of `key` (for the few hundred keys read most recently). */
  private noteRead(key: string, index: number): void {
    this.lastRead.delete(key);
    this.lastRead.set(key, index);
    if (this.lastRead.size > 512) this.lastRead.delete(this.lastRead.keys().next().value!);
  }

  /**
   * One ranged read of blocks `first..last` (none cached or in flight), each block cached as it
   * lands; or one read per block without spanReads.
   */
  private fetchSpan(key: string, size: number, first: number, last: number): Promise<void> {
    if (first < last && !this.spanReads) {
      const all: Promise<void>[] = [];
      for (let i = first; i <= last; i++) all.push(this.fetchSpan(key, size, i, i));
      return Promise.all(all).then(() => {});
    }
    const bs = this.blockSize;
    const prefix = blockPrefix(key);
    const start = first * bs;
    const end = Math.min(size, (last + 1) * bs);
    const span = this.store.getRange(key, start, end - start);
    const promises: Promise<Uint8Array>[] = [];
    for (let i = first; i <= last; i++) {
      const id = prefix + i;
      const from = (i - first) * bs;
      const fetch: Promise<Uint8Array> = span.then(
        (bytes) => {
          const block = first === last ? bytes : bytes.slice(from, Math.min(bytes.length, from + bs));
          if (this.inflight.get(id) === fetch) {
            this.inflight.delete(id);
            this.blocks.set(id, block);
          }
          return block;
        },
        (err) => {
          if (this.inflight.get(id) === fetch) this.inflight.delete(id);
          throw err;
        },
      );
      // Only the block a reader awaits reports a failure; the others are handled here.
      fetch.catch(() => {});
      this.inflight.set(id, fetch);
      promises.push(fetch);
    }
    return Promise.all(promises).then(() => {});
  }
}

// "#" cannot occur in a key, so a block id names exactly one key.
function blockPrefix(key: string): string {
  return `${key}#`;
}
