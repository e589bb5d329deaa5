// Moving whole objects between stores in bounded memory: read in ranges, hash while reading,
// spool to a temp file, upload the file. Shared by backup, restore and fsck.
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import type { ObjectStore } from "../../storage/object-store.ts";
import { newId } from "../../util/ids.ts";

/** Bytes read per range request. */
const CHUNK = 8 * 1024 * 1024;

/** Calls `fn` with consecutive chunks of the object (its size known), in order. */
export async function readChunks(store: ObjectStore, key: string, size: number, fn: (chunk: Uint8Array) => void | Promise<void>): Promise<void> {
  for (let at = 0; at < size; at += CHUNK) await fn(await store.getRange(key, at, Math.min(CHUNK, size - at)));
}

/**
 * Copies `src:srcKey` (of `size` bytes) to `dst:dstKey` through a temp file in `tmpDir`, and
 * answers the SHA-256 of what was copied. `expect`, when given, must match or nothing is written.
 */
export async function copyObject(
  src: ObjectStore,
  srcKey: string,
  size: number,
  dst: ObjectStore,
  dstKey: string,
  opts: { tmpDir: string; expectSha256?: string; onBytes?: (n: number) => void },
): Promise<string> {
  const tmp = join(opts.tmpDir, `copy-${newId()}`);
  const h = new Bun.CryptoHasher("sha256");
  const file = await open(tmp, "wx");
  try {
    try {
      await readChunks(src, srcKey, size, async (chunk) => {
        h.update(chunk);
        await file.write(chunk);
        opts.onBytes?.(chunk.byteLength);
      });
    } finally {
      await file.close();
    }
    const digest = h.digest("hex");
    if (opts.expectSha256 !== undefined && digest !== opts.expectSha256) {
      throw new ChecksumMismatch(srcKey, opts.expectSha256, digest);
    }
    await dst.putFile(dstKey, tmp);
    return digest;
  } finally {
    await rm(tmp, { force: true });
  }
}

/** An object whose bytes do not hash to what a manifest recorded. */
export class ChecksumMismatch extends Error {
  constructor(
    readonly key: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`${key}: checksum mismatch (sha256 ${actual}, recorded ${expected})`);
    this.name = "ChecksumMismatch";
  }
}

/** Runs `fn` over `items` with at most `limit` at once; the first failure rejects (others finish). */
export async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown = null;
  const lane = async () => {
    while (failure === null && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== null) throw failure;
}
