// zlib helpers for pack entries (node:zlib; every entry's data is one zlib stream).
//
// A pack holds one zlib stream per object, hundreds of thousands of them. `zlib.inflateSync`
// creates and frees a zlib stream (plus its 32 KiB window and a JS stream object) per call,
// ~10-25 µs, which was most of the cost of indexing a push and of walking a clone. `ZStream`
// keeps one native stream and resets it between objects (node:zlib's handle API: `writeSync`,
// `reset`, `_writeState`), inflating straight into the caller's buffer: ~1 µs per small object.
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
const Z_SYNC_FLUSH = 2;
const Z_FINISH = 4;

/** The native zlib handle behind a node:zlib stream object (Bun and Node expose the same one). */
interface ZHandle {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
  reset(): void;
  onerror: (message: string, errno: number) => void;
}

/** One reusable native zlib stream (inflate or deflate), reset after every object. */
class ZStream {
  private readonly handle: ZHandle;
  private readonly state: Uint32Array;
  private error: string | null = null;

  private constructor(stream: unknown) {
    const s = stream as { _handle: ZHandle; _writeState: Uint32Array };
    this.handle = s._handle;
    this.state = s._writeState;
    this.handle.onerror = (message) => {
      this.error = message;
    };
  }

  /** A stream, or null when this runtime's node:zlib has no reusable handle (callers fall back). */
  static create(kind: "inflate" | "deflate"): ZStream | null {
    try {
      const s = kind === "inflate" ? new zlib.Inflate() : new zlib.Deflate();
      const h = (s as unknown as { _handle?: ZHandle })._handle;
      if (!h || typeof h.writeSync !== "function" || typeof h.reset !== "function") return null;
      return new ZStream(s);
    } catch {
      return null;
    }
  }

  /**
   * Run the stream over `input[inOff, inOff+inLen)` into `out[outOff, outOff+outLen)`; returns
   * bytes written and input consumed. Throws GitError on corrupt data. Does not reset.
   */
  step(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): { written: number; consumed: number } {
    this.error = null;
    this.handle.writeSync(flush, input, inOff, inLen, out, outOff, outLen);
    if (this.error !== null) {
      const message = this.error;
      this.reset();
      throw new GitError(`corrupt pack: bad zlib data (${message})`);
    }
    return { written: outLen - this.state[0]!, consumed: inLen - this.state[1]! };
  }

  reset(): void {
    this.error = null;
    this.handle.reset();
  }
}

/**
 * One zlib stream inflated piece by piece as its bytes arrive (the indexer's pass 1): `step`
 * keeps the stream's state between calls, so every input byte is inflated once however the
 * input is cut; `reset` starts the next stream. Its own native stream: never shared.
 */
export class PackInflater {
  private readonly z: ZStream;

  constructor() {
    const z = ZStream.create("inflate");
    if (!z) throw new GitError("this runtime's zlib has no reusable stream handle");
    this.z = z;
  }

  /**
   * Inflates `input[inOff, inOff+inLen)` into `out[outOff, outOff+outLen)`: bytes written and
   * input consumed. The stream has ended when it stops short of the input with output room
   * left. Throws GitError on corrupt data.
   */
  step(input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): { written: number; consumed: number } {
    return this.z.step(Z_SYNC_FLUSH, input, inOff, inLen, out, outOff, outLen);
  }

  reset(): void {
    this.z.reset();
  }
}

let sharedInflate: ZStream | null | undefined;
function inflater(): ZStream | null {
  if (sharedInflate === undefined) sharedInflate = ZStream.create("inflate");
  return sharedInflate;
}

/**
 * The most bytes `n` bytes of zlib data can inflate to: deflate's ratio tops out at 1032:1, plus
 * room for the stream's header and trailer. Why: a pack entry's declared size is the sender's
 * word, so buffers are sized by what the input can really produce, never by that word alone (a
 * header claiming terabytes would otherwise be an allocation of terabytes).
 */
export function maxInflated(n: number): number {
  return n * 1032 + 64;
}

/**
 * Inflate a complete zlib stream that must produce exactly `size` bytes, into `out` when given
 * (at least `size` bytes long; the result is a view of it) or a new buffer.
 */
export function inflateExact(compressed: Uint8Array, size: number, out?: Uint8Array): Uint8Array {
  if (size > maxInflated(compressed.length)) throw new GitError(`corrupt pack: ${compressed.length} bytes of zlib data cannot inflate to ${size}`);
  const z = inflater();
  if (!z) return inflateExactSlow(compressed, size);
  const target = out && out.length >= size + 1 ? out.subarray(0, size + 1) : new Uint8Array(size + 1);
  const r = z.step(Z_SYNC_FLUSH, compressed, 0, compressed.length, target, 0, size + 1);
  z.reset();
  if (r.written !== size)
    throw new GitError(`corrupt pack: inflated ${r.written > size ? "more than " : ""}${Math.min(r.written, size)} bytes, expected ${size}`);
  return target.subarray(0, size);
}

function inflateExactSlow(compressed: Uint8Array, size: number): Uint8Array {
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
 * how many input bytes it used. Returns null when `buf` ends before the stream does (or when it
 * cannot tell: the stream must be followed by at least one more byte). The data goes into `out`
 * when it has room for `size + 1` bytes, else into a new buffer.
 */
export function inflateWithLength(buf: Uint8Array, size: number, out?: Uint8Array): { data: Uint8Array; consumed: number } | null {
  const z = inflater();
  if (!z) return inflateWithLengthSlow(buf, size);
  // What `buf` can produce bounds the buffer: either the stream ends within it (and the size is
  // checked) or all of it is consumed and the caller brings more input.
  const cap = Math.min(size + 1, maxInflated(buf.length));
  const target = out && out.length >= cap ? out : new Uint8Array(cap);
  const r = z.step(Z_SYNC_FLUSH, buf, 0, buf.length, target, 0, cap);
  z.reset();
  if (r.written > size) throw new GitError(`corrupt pack: inflated more than ${size} bytes, expected ${size}`);
  // zlib stops consuming at the end of the stream: input left over means the stream ended.
  if (r.consumed === buf.length) return null;
  if (r.written !== size) throw new GitError(`corrupt pack: inflated ${r.written} bytes, expected ${size}`);
  return { data: target.subarray(0, size), consumed: r.consumed };
}

function inflateWithLengthSlow(buf: Uint8Array, size: number): { data: Uint8Array; consumed: number } | null {
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

/**
 * Inflate as much as possible of a (possibly cut) zlib stream, at most `max` bytes, e.g. to read
 * a delta header. Through the shared stream when there is one: a zlib stream made per call cost
 * ~5 µs and a 32 KiB window each, for the 20 bytes a delta header takes.
 */
export function inflatePrefix(buf: Uint8Array, max = Number.POSITIVE_INFINITY): Uint8Array {
  const z = max <= MAX_HEAD ? inflater() : null;
  if (z) {
    const out = new Uint8Array(max);
    try {
      return out.subarray(0, z.step(Z_SYNC_FLUSH, buf, 0, buf.length, out, 0, max).written);
    } finally {
      z.reset();
    }
  }
  try {
    return zlib.inflateSync(buf, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  } catch (e) {
    throw new GitError(`corrupt pack: bad zlib data (${(e as Error).message})`);
  }
}

/** The most a prefix is inflated through the shared stream. */
const MAX_HEAD = 4096;

let sharedDeflate: ZStream | null | undefined;

/** Deflate (zlib format) at git's default level. */
export function deflate(data: Uint8Array): Uint8Array {
  if (sharedDeflate === undefined) sharedDeflate = ZStream.create("deflate");
  const z = sharedDeflate;
  if (!z) return zlib.deflateSync(data);
  // deflateBound for zlib's default settings, plus the zlib header and trailer.
  const bound = data.length + (data.length >> 12) + (data.length >> 14) + (data.length >> 25) + 13 + 6;
  const out = new Uint8Array(bound);
  const r = z.step(Z_FINISH, data, 0, data.length, out, 0, bound);
  z.reset();
  if (r.consumed !== data.length) return zlib.deflateSync(data);
  return out.slice(0, r.written);
}
