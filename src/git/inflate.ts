// zlib helpers for pack entries (node:zlib; every entry's data is one zlib stream).
import zlib from "node:zlib";
import { GitError } from "./types.ts";

/**
 * Output chunk for an object of `size` bytes: one chunk that fits it (one more byte lets zlib
 * report the end of the stream without asking for another chunk), instead of 16 KiB chunks
 * concatenated at the end, which allocated every large object about twice. Capped, since
 * `size` comes from the (untrusted) entry header.
 */
function chunkSizeFor(size: number): number {
  return Math.min(Math.max(size + 1, 64), MAX_CHUNK);
}

const MAX_CHUNK = 8 * 1024 * 1024;

/** Inflate a complete zlib stream that must produce exactly `size` bytes. */
export function inflateExact(compressed: Uint8Array, size: number): Uint8Array {
  let out: Uint8Array;
  try {
    out = zlib.inflateSync(compressed, { maxOutputLength: Math.max(size, 1), chunkSize: chunkSizeFor(size) });
  } catch (e) {
    throw new GitError(`corrupt pack: bad zlib data (${(e as Error).message})`);
  }
  if (out.length !== size) throw new GitError(`corrupt pack: inflated ${out.length} bytes, expected ${size}`);
  return out;
}

/**
 * Inflate the zlib stream at the start of `buf` (which may hold more bytes after it) and report
 * how many input bytes it used. Returns null when `buf` ends before the stream does.
 */
export function inflateWithLength(buf: Uint8Array, size: number): { data: Uint8Array; consumed: number } | null {
  let r: { buffer: Uint8Array; engine: { bytesWritten: number } };
  try {
    r = zlib.inflateSync(buf, { info: true, maxOutputLength: Math.max(size, 1), chunkSize: chunkSizeFor(size) } as zlib.ZlibOptions) as unknown as typeof r;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "Z_BUF_ERROR") return null;
    throw new GitError(`corrupt pack: bad zlib data (${(e as Error).message})`);
  }
  if (r.buffer.length !== size) throw new GitError(`corrupt pack: inflated ${r.buffer.length} bytes, expected ${size}`);
  return { data: r.buffer, consumed: r.engine.bytesWritten };
}

/** Inflate as much as possible of a (possibly cut) zlib stream, e.g. to read a delta header. */
export function inflatePrefix(buf: Uint8Array): Uint8Array {
  try {
    return zlib.inflateSync(buf, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  } catch (e) {
    throw new GitError(`corrupt pack: bad zlib data (${(e as Error).message})`);
  }
}

/** Deflate (zlib format) at git's default level. */
export function deflate(data: Uint8Array): Uint8Array {
  return zlib.deflateSync(data);
}
