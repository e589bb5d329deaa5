// An object's stored pieces, read without resolving them, so that the CPU work (inflating the
// base, applying every delta) can run somewhere else: a worker thread (src/thread-tasks.ts
// `git.resolveChain`). Why: a 337-byte delta bomb resolves to 1 GiB and a 50,000-deep chain to
// 50,000 applications; resolving either on the event loop stalled every request for seconds
// (issue 25 rows 4 and 5). Reading the pieces is I/O only: small ranged reads, no inflation.
//
// gitformat-pack: "The delta data starts with the size of the base object and the size of the
// object to be reconstructed"; ofs-delta bases are earlier in the same pack, ref-delta bases are
// named by oid (in a stored pack, also in the same pack).
import { applyDelta } from "./delta.ts";
import { inflateExact } from "./inflate.ts";
import { OBJ_OFS_DELTA, OBJ_REF_DELTA, typeName } from "./pack-entry.ts";
import type { Pack } from "./pack-reader.ts";
import { GitError, type ObjectType } from "./types.ts";

/** An object as stored: its base (resolved when it came from the cache) and its deltas, base first. */
export interface StoredChain {
  type: ObjectType;
  /** The base: zlib data and its inflated size, or already resolved bytes (a cached base). */
  base: { compressed: Uint8Array; size: number } | { data: Uint8Array };
  /** Each delta's zlib data and inflated size, in the order they apply. */
  deltas: { compressed: Uint8Array; size: number }[];
}

/** How many deltas lie between the entry at `offset` and its base (or a cached base), counting at most `stopAt`. */
export async function chainDepth(pack: Pack, offset: number, stopAt: number): Promise<number> {
  let depth = 0;
  let at = offset;
  for (;;) {
    if (pack.cache.get(pack.name, at)) return depth;
    const entry = await pack.entryAt(at);
    if (entry.typeCode !== OBJ_OFS_DELTA && entry.typeCode !== OBJ_REF_DELTA) return depth;
    if (++depth >= stopAt) return depth;
    at = pack.baseOffsetOf(entry);
  }
}

/**
 * The stored pieces of the object at `offset`: ranged reads only. At most `maxDepth` deltas and
 * `maxBytes` of stored data (refused beyond: a GitError), so a hostile chain costs bounded memory
 * before anything is resolved.
 */
export async function readStoredChain(pack: Pack, offset: number, limits: { maxDepth: number; maxBytes: number }): Promise<StoredChain> {
  const deltas: StoredChain["deltas"] = [];
  let stored = 0;
  let at = offset;
  for (;;) {
    const cached = pack.cache.get(pack.name, at);
    if (cached) return { type: cached.type, base: { data: cached.data }, deltas: deltas.reverse() };
    const { entry, bytes } = await pack.rawEntryAt(at);
    stored += bytes.byteLength;
    if (stored > limits.maxBytes) throw new GitError(`object at ${offset} in pack ${pack.name}: more than ${limits.maxBytes} stored bytes`);
    const compressed = bytes.subarray(entry.headerLength);
    if (entry.typeCode !== OBJ_OFS_DELTA && entry.typeCode !== OBJ_REF_DELTA) {
      return { type: typeName(entry.typeCode), base: { compressed, size: entry.size }, deltas: deltas.reverse() };
    }
    deltas.push({ compressed, size: entry.size });
    if (deltas.length > limits.maxDepth) throw new GitError(`object at ${offset} in pack ${pack.name}: a delta chain deeper than ${limits.maxDepth}`);
    at = pack.baseOffsetOf(entry);
  }
}

/** Resolves a stored chain into the object's bytes (pure: runs on a worker thread). */
export function resolveStoredChain(chain: StoredChain, maxSize: number): Uint8Array {
  const check = (size: number) => {
    if (size > maxSize) throw new GitError(`object larger than ${maxSize} bytes`);
  };
  let data: Uint8Array;
  if ("data" in chain.base) data = chain.base.data;
  else {
    check(chain.base.size);
    data = inflateExact(chain.base.compressed, chain.base.size);
  }
  for (const d of chain.deltas) {
    data = applyDelta(data, inflateExact(d.compressed, d.size), (size) => {
      check(size);
      return new Uint8Array(size);
    });
  }
  return data;
}
