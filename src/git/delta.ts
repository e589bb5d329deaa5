// Git delta encoding (gitformat-pack, "Deltified representation"):
//
//   delta = base-size:varint result-size:varint instruction*
//   copy   = 1xxxxxxx [offset1..4] [size1..3]  bits 0-3 say which offset bytes follow,
//            bits 4-6 which size bytes follow (little-endian); size 0 means 0x10000
//   insert = 0xxxxxxx <that many literal bytes>  (1..127; 0 is reserved)
import { copyBytes, objectTooLarge } from "./bytes.ts";
import { GitError } from "./types.ts";

/** The base and result sizes from a delta's header, plus where the instructions start. */
export function readDeltaHeader(delta: Uint8Array): { baseSize: number; resultSize: number; pos: number } {
  let pos = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    let c: number;
    do {
      if (pos >= delta.length) throw new GitError("corrupt delta: truncated header");
      c = delta[pos++]!;
      v += (c & 0x7f) * 2 ** shift;
      shift += 7;
    } while (c & 0x80 && shift < 64);
    return v;
  };
  const baseSize = varint();
  const resultSize = varint();
  return { baseSize, resultSize, pos };
}

/** The copy instructions of one applyDelta call, as (result offset, length, base offset) triples in result order. */
export class CopyLog {
  ops = new Int32Array(3 * 64);
  count = 0;

  add(at: number, size: number, from: number): void {
    if (3 * (this.count + 1) > this.ops.length) {
      const next = new Int32Array(this.ops.length * 2);
      next.set(this.ops);
      this.ops = next;
    }
    const i = 3 * this.count++;
    this.ops[i] = at;
    this.ops[i + 1] = size;
    this.ops[i + 2] = from;
  }
}

/**
 * Apply a git delta to its base; throws GitError when the delta does not fit the base or is corrupt.
 * `alloc` supplies the result's buffer (exactly `size` bytes long, not overlapping `base`). With
 * `log`, the copy instructions are recorded in it (it is reset first). A result larger than
 * `maxResult` is refused from the delta's header, before anything is allocated or copied.
 */
export function applyDelta(
  base: Uint8Array,
  delta: Uint8Array,
  alloc: (size: number) => Uint8Array = (size) => new Uint8Array(size),
  log?: CopyLog,
  maxResult = Number.POSITIVE_INFINITY,
): Uint8Array {
  if (log) log.count = 0;
  const h = readDeltaHeader(delta);
  if (h.resultSize > maxResult) throw new GitError(objectTooLarge(h.resultSize, maxResult), "too-large");
  if (h.baseSize !== base.length) {
    throw new GitError(`corrupt delta: base size ${h.baseSize} does not match base of ${base.length} bytes`);
  }
  // Why a first pass: the header's result size is the sender's word; the buffer is allocated only
  // once the instructions are known to produce exactly that many bytes from this base.
  const produced = producedSize(delta, h.pos, base.length);
  if (produced !== h.resultSize) throw new GitError(`corrupt delta: instructions produce ${produced} bytes, header says ${h.resultSize}`);
  const out = alloc(h.resultSize);
  let pos = h.pos;
  let o = 0;
  const n = delta.length;
  while (pos < n) {
    const op = delta[pos++]!;
    if (op & 0x80) {
      pos = readCopy(delta, pos, op);
      const off = copyOff;
      const size = copySize;
      if (pos > n || off + size > base.length || o + size > out.length) {
        throw new GitError("corrupt delta: copy out of range");
      }
      log?.add(o, size, off);
      copyBytes(base, off, off + size, out, o);
      o += size;
    } else if (op !== 0) {
      if (pos + op > n || o + op > out.length) throw new GitError("corrupt delta: insert out of range");
      copyBytes(delta, pos, pos + op, out, o);
      pos += op;
      o += op;
    } else {
      throw new GitError("corrupt delta: reserved opcode 0");
    }
  }
  if (o !== out.length) throw new GitError(`corrupt delta: produced ${o} bytes, header says ${out.length}`);
  return out;
}

/**
 * A delta's instructions as triples (result offset, length, source) in result order: a copy's
 * source is its offset in the base; an insert's is -1 - its offset in the delta (its literal
 * bytes stay there). Checked as applyDelta checks them (against a base of `baseLength` bytes,
 * the result exactly the header's size, at most `maxResult`), without producing the result: a
 * reader that needs only some of the result's bytes reads them through the triples.
 */
export function parseDelta(delta: Uint8Array, baseLength: number, maxResult = Number.POSITIVE_INFINITY): { resultSize: number; ops: Int32Array } {
  const h = readDeltaHeader(delta);
  if (h.resultSize > maxResult) throw new GitError(objectTooLarge(h.resultSize, maxResult), "too-large");
  if (h.baseSize !== baseLength) throw new GitError(`corrupt delta: base size ${h.baseSize} does not match base of ${baseLength} bytes`);
  let ops = new Int32Array(3 * 16);
  let count = 0;
  let pos = h.pos;
  let o = 0;
  const n = delta.length;
  while (pos < n) {
    const op = delta[pos++]!;
    let size: number;
    let source: number;
    if (op & 0x80) {
      pos = readCopy(delta, pos, op);
      size = copySize;
      source = copyOff;
      if (pos > n || source + size > baseLength) throw new GitError("corrupt delta: copy out of range");
    } else if (op !== 0) {
      if (pos + op > n) throw new GitError("corrupt delta: insert out of range");
      size = op;
      source = -1 - pos;
      pos += op;
    } else {
      throw new GitError("corrupt delta: reserved opcode 0");
    }
    if (o + size > h.resultSize) throw new GitError(`corrupt delta: instructions produce more than the ${h.resultSize} bytes the header says`);
    if (3 * (count + 1) > ops.length) {
      const next = new Int32Array(2 * ops.length);
      next.set(ops);
      ops = next;
    }
    ops[3 * count] = o;
    ops[3 * count + 1] = size;
    ops[3 * count + 2] = source;
    count++;
    o += size;
  }
  if (o !== h.resultSize) throw new GitError(`corrupt delta: instructions produce ${o} bytes, header says ${h.resultSize}`);
  return { resultSize: h.resultSize, ops: ops.subarray(0, 3 * count) };
}

// module-state: scratch (synchronous, reused by every call; see below)
// The arguments of the copy instruction readCopy last decoded (module scratch: no allocation per
// instruction on the hot path).
let copyOff = 0;
let copySize = 0;

/** Decodes the offset and size bytes of copy instruction `op` (its byte already read) into copyOff/copySize; answers the position after them. */
function readCopy(delta: Uint8Array, pos: number, op: number): number {
  let off = 0;
  let size = 0;
  if (op & 0x01) off = delta[pos++]!;
  if (op & 0x02) off |= delta[pos++]! << 8;
  if (op & 0x04) off |= delta[pos++]! << 16;
  if (op & 0x08) off += delta[pos++]! * 0x1000000;
  if (op & 0x10) size = delta[pos++]!;
  if (op & 0x20) size |= delta[pos++]! << 8;
  if (op & 0x40) size |= delta[pos++]! << 16;
  copyOff = off;
  copySize = size === 0 ? 0x10000 : size;
  return pos;
}

/** The bytes a delta's instructions (from `pos`) produce; throws GitError on a malformed or out-of-range instruction. */
function producedSize(delta: Uint8Array, pos: number, baseLength: number): number {
  const n = delta.length;
  let total = 0;
  while (pos < n) {
    const op = delta[pos++]!;
    if (op & 0x80) {
      pos = readCopy(delta, pos, op);
      const off = copyOff;
      const size = copySize;
      if (pos > n || off + size > baseLength) throw new GitError("corrupt delta: copy out of range");
      total += size;
    } else if (op !== 0) {
      if (pos + op > n) throw new GitError("corrupt delta: insert out of range");
      pos += op;
      total += op;
    } else {
      throw new GitError("corrupt delta: reserved opcode 0");
    }
  }
  return total;
}

const BLOCK = 16;
const MAX_COPY = 0x10000;

/** Encode `target` as a delta against `base` (block-hash matching; correct, not optimal). */
export function createDelta(base: Uint8Array, target: Uint8Array): Uint8Array {
  const out = new ByteWriter(64 + (target.length >> 2));
  out.varint(base.length);
  out.varint(target.length);

  // Index the hash of every aligned block of the base (first occurrence wins).
  const index = new Map<number, number>();
  for (let p = 0; p + BLOCK <= base.length; p += BLOCK) {
    const h = blockHash(base, p);
    if (!index.has(h)) index.set(h, p);
  }

  let literalStart = 0;
  let t = 0;
  while (t + BLOCK <= target.length) {
    const cand = index.get(blockHash(target, t));
    if (cand === undefined || !sameBlock(base, cand, target, t)) {
      t++;
      continue;
    }
    // Extend the match backwards into pending literals and forwards as far as it goes.
    let bs = cand;
    let ts = t;
    while (bs > 0 && ts > literalStart && base[bs - 1] === target[ts - 1]) {
      bs--;
      ts--;
    }
    let len = t - ts + BLOCK;
    while (bs + len < base.length && ts + len < target.length && base[bs + len] === target[ts + len]) len++;
    out.literal(target, literalStart, ts);
    for (let done = 0; done < len; done += MAX_COPY) out.copy(bs + done, Math.min(MAX_COPY, len - done));
    t = ts + len;
    literalStart = t;
  }
  out.literal(target, literalStart, target.length);
  return out.bytes();
}

function blockHash(b: Uint8Array, p: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < BLOCK; i++) h = Math.imul(h ^ b[p + i]!, 0x01000193);
  return h >>> 0;
}

function sameBlock(a: Uint8Array, ap: number, b: Uint8Array, bp: number): boolean {
  for (let i = 0; i < BLOCK; i++) if (a[ap + i] !== b[bp + i]) return false;
  return true;
}

class ByteWriter {
  private buf: Uint8Array;
  private len = 0;
  constructor(initial: number) {
    this.buf = new Uint8Array(initial);
  }
  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  varint(v: number): void {
    this.ensure(10);
    do {
      let c = v % 128;
      v = Math.floor(v / 128);
      if (v > 0) c |= 0x80;
      this.buf[this.len++] = c;
    } while (v > 0);
  }
  literal(src: Uint8Array, from: number, to: number): void {
    for (let p = from; p < to; p += 127) {
      const n = Math.min(127, to - p);
      this.ensure(n + 1);
      this.buf[this.len++] = n;
      copyBytes(src, p, p + n, this.buf, this.len);
      this.len += n;
    }
  }
  copy(offset: number, size: number): void {
    this.ensure(8);
    const at = this.len++;
    let op = 0x80;
    for (let i = 0; i < 4; i++) {
      const byte = Math.floor(offset / 2 ** (8 * i)) & 0xff;
      if (byte) {
        op |= 1 << i;
        this.buf[this.len++] = byte;
      }
    }
    const s = size === 0x10000 ? 0 : size;
    for (let i = 0; i < 3; i++) {
      const byte = (s >> (8 * i)) & 0xff;
      if (byte) {
        op |= 0x10 << i;
        this.buf[this.len++] = byte;
      }
    }
    this.buf[at] = op;
  }
  bytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}
