// Reading blobs for the web pages without the event loop doing unbounded work (issue 25 row 4,
// the web half). A page asks for the size first (an entry header, or a delta's header: no
// inflation) and decides from it; the bytes it then reads are resolved here: small objects with
// short delta chains on the event loop (through the delta-base cache, as any read), anything
// else from its stored pieces on a worker thread (`git.resolveChain`), with a time limit.
import { AppError, TooLarge } from "../../errors.ts";
import { chainDepth, readStoredChain, type StoredChain } from "../../git/object-chain.ts";
import type { PackSet } from "../../git/pack-set.ts";
import type { Oid, RawObject } from "../../git/types.ts";
import { ThreadTaskError } from "../../util/thread-pool.ts";
import type { Ctx } from "../context.ts";

/** What a read may cost before it leaves the event loop, and what any read may cost at all. */
export const BLOB_READ_LIMITS = {
  /** Resolved on the event loop when at most this big… */
  inlineBytes: 1024 * 1024,
  /** …and at most this many deltas from a base. */
  inlineDepth: 16,
  /** The largest object a page or a raw download serves (larger: fetch it with git), or SVC_GIT_MAX_OBJECT when that is larger. */
  maxBytes: 128 * 1024 * 1024,
  /** Stored bytes and deltas of one object's chain at most. */
  maxStoredBytes: 256 * 1024 * 1024,
  maxDepth: 100_000,
  /** How long resolving one object may take on its thread. */
  timeLimitMs: 30_000,
} as const;

/** Type and size of `oid` without its bytes (null when absent). */
export async function blobHeader(objects: PackSet, oid: Oid): Promise<{ type: RawObject["type"]; size: number } | null> {
  return objects.readHeader(oid);
}

/**
 * The object `oid` (null when absent), resolved on the event loop only when it is small and
 * near its base. 413 above BLOB_READ_LIMITS.maxBytes; 503 when every thread is taken.
 */
export async function readBlobOffloaded(ctx: Ctx, objects: PackSet, oid: Oid): Promise<RawObject | null> {
  const at = objects.locate(oid);
  if (!at) return null;
  const head = await at.pack.headerAt(at.offset);
  // What a push may bring (SVC_GIT_MAX_OBJECT) can always be read back; 128 MiB at least.
  const maxBytes = Math.max(BLOB_READ_LIMITS.maxBytes, ctx.config.gitMaxObject);
  if (head.size > maxBytes)
    throw TooLarge(`this file is ${head.size} bytes, more than the ${Math.round(maxBytes / 1024 / 1024)} MiB served here; fetch it with git`);
  if (head.size <= BLOB_READ_LIMITS.inlineBytes && (await chainDepth(at.pack, at.offset, BLOB_READ_LIMITS.inlineDepth + 1)) <= BLOB_READ_LIMITS.inlineDepth) {
    return at.pack.readAt(at.offset);
  }
  const chain = detached(await readStoredChain(at.pack, at.offset, { maxDepth: BLOB_READ_LIMITS.maxDepth, maxBytes: BLOB_READ_LIMITS.maxStoredBytes }));
  let data: Uint8Array | null = null;
  try {
    await ctx.threads.run(
      "git.resolveChain",
      { chain, maxSize: maxBytes },
      {
        timeLimitMs: BLOB_READ_LIMITS.timeLimitMs,
        transfer: transferables(chain),
        onEmit: (value) => {
          data = value as Uint8Array;
        },
      },
    );
  } catch (e) {
    if (e instanceof ThreadTaskError && e.kind === "busy") throw new AppError("unavailable", "the server is busy reading other large files; try again shortly");
    if (e instanceof ThreadTaskError && e.kind === "time_limit") throw new AppError("unavailable", "this file took too long to read; fetch it with git");
    throw e;
  }
  if (!data) throw new Error(`git.resolveChain sent nothing for ${oid}`);
  return { type: head.type, data };
}

/**
 * The chain with each piece in a buffer of its own. Why: the pieces are views of the block
 * cache's buffers; sent as they are, the whole block would be copied (or, transferred, taken
 * from the cache).
 */
function detached(chain: StoredChain): StoredChain {
  return {
    type: chain.type,
    base: "data" in chain.base ? { data: chain.base.data.slice() } : { compressed: chain.base.compressed.slice(), size: chain.base.size },
    deltas: chain.deltas.map((d) => ({ compressed: d.compressed.slice(), size: d.size })),
  };
}

function transferables(chain: StoredChain): ArrayBuffer[] {
  const out: ArrayBuffer[] = [("data" in chain.base ? chain.base.data : chain.base.compressed).buffer as ArrayBuffer];
  for (const d of chain.deltas) out.push(d.compressed.buffer as ArrayBuffer);
  return out;
}
