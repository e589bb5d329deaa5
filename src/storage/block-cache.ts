// Random access to stored immutable files through fixed-size cached blocks. The pack reader
// makes many small reads (object headers, delta chains); fetching whole blocks turns them into
// few ranged requests, and sharing in-flight fetches keeps concurrent readers from doubling up.

import { ByteLru } from "./lru.ts";
import { StorageError, type ObjectStore } from "./object-store.ts";
import { assertRange } from "./range.ts";

/** Random access to a stored file; the git engine's ByteSource has the same shape. */
export interface RangeReader {
  readonly size: number;
  /** Exactly `length` bytes from `offset` (throws past the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** Tuning for a BlockCache; the defaults suit pack files. */
export interface BlockCacheOptions {
  /** Bytes per cached block (default 64 KiB). */
  blockSize?: number;
  /** Budget for all cached blocks together (default 64 MiB). */
  maxBytes?: number;
  /** Reads at least this long go straight to the store so they do not flush the cache (default 1 MiB). */
  bypassBytes?: number;
}

/** Shared block cache over an ObjectStore; blocks never go stale because stored files are immutable. */
export class BlockCache {
  readonly blockSize: number;
  private readonly bypassBytes: number;
  private readonly blocks: ByteLru<string, Uint8Array>;
  private readonly inflight = new Map<string, Promise<Uint8Array>>();

  constructor(
    private readonly store: ObjectStore,
    opts: BlockCacheOptions = {},
  ) {
    this.blockSize = opts.blockSize ?? 64 * 1024;
    this.bypassBytes = opts.bypassBytes ?? 1024 * 1024;
    if (!Number.isSafeInteger(this.blockSize) || this.blockSize <= 0) throw new Error("blockSize must be a positive integer");
    this.blocks = new ByteLru(opts.maxBytes ?? 64 * 1024 * 1024, (block) => block.byteLength);
  }

  /** Bytes of block data currently cached. */
  get cachedBytes(): number {
    return this.blocks.bytes;
  }

  /** A RangeReader over the stored file `key` of `size` bytes, read through the cache. */
  source(key: string, size: number): RangeReader {
    return { size, read: (offset, length) => this.read(key, size, offset, length) };
  }

  /** Drop every cached block of `key` (call after deleting the file). */
  evict(key: string): void {
    const mark = blockPrefix(key);
    this.blocks.deleteWhere((id) => id.startsWith(mark));
    for (const id of [...this.inflight.keys()]) {
      if (id.startsWith(mark)) this.inflight.delete(id);
    }
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
      return (await this.block(key, size, first)).slice(start, start + length);
    }
    const indexes = Array.from({ length: last - first + 1 }, (_, i) => first + i);
    const blocks = await Promise.all(indexes.map((index) => this.block(key, size, index)));
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

  private block(key: string, size: number, index: number): Promise<Uint8Array> {
    const id = blockPrefix(key) + index;
    const cached = this.blocks.get(id);
    if (cached) return Promise.resolve(cached);
    const pending = this.inflight.get(id);
    if (pending) return pending;

    const start = index * this.blockSize;
    const fetch: Promise<Uint8Array> = this.store.getRange(key, start, Math.min(this.blockSize, size - start)).then(
      (bytes) => {
        if (this.inflight.get(id) === fetch) {
          this.inflight.delete(id);
          this.blocks.set(id, bytes);
        }
        return bytes;
      },
      (err) => {
        if (this.inflight.get(id) === fetch) this.inflight.delete(id);
        throw err;
      },
    );
    this.inflight.set(id, fetch);
    return fetch;
  }
}

// "#" cannot occur in a key, so a block id names exactly one key.
function blockPrefix(key: string): string {
  return `${key}#`;
}
