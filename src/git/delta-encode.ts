// Encoding a git delta fast enough to run while serving a fetch (thin packs against what the
// client has, pack-writer.ts). The format is gitformat-pack's "Deltified representation":
//
//   delta = base-size:varint result-size:varint instruction*
//   copy   = 1xxxxxxx [offset1..4] [size1..3]  (size 0 means 0x10000)
//   insert = 0xxxxxxx <that many literal bytes>  (1..127)
//
// Like git's diff-delta.c: the base is indexed by the hash of every 16-byte block at a 16-byte
// boundary (an open-addressing table of typed arrays, up to 8 candidates per hash, newest
// first), the target is scanned with a rolling hash of the 16 bytes at each position, and a hit
// is verified, extended forwards and back into the pending literal run, and taken when it is the
// longest of the candidates. Linear in the sizes; no allocation per byte.

const WINDOW = 16;
/** Candidates kept per hash value (git keeps at most 64 per bucket; most are useless). */
const MAX_CHAIN = 8;
const MAX_COPY = 0x10000;
/** Rolling hash multiplier and its 16th power (mod 2^32), to drop the byte leaving the window. */
const P = 0x01000193;
const P_OUT = powMod(P, WINDOW - 1);

function powMod(b: number, e: number): number {
  let r = 1;
  for (let i = 0; i < e; i++) r = Math.imul(r, b);
  return r;
}

function blockHash(b: Uint8Array, p: number): number {
  let h = 0;
  for (let i = 0; i < WINDOW; i++) h = (Math.imul(h, P) + b[p + i]!) | 0;
  return h;
}

/** Mix a window hash into a table slot of 2^bits. */
function slotOf(h: number, bits: number): number {
  return Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> (32 - bits);
}

/**
 * A delta turning `base` into `target`, or null when it would not be smaller than `limit` bytes
 * (the caller's alternative: the object whole). Correct for any input; compact for similar ones.
 */
export function encodeDelta(base: Uint8Array, target: Uint8Array, limit = Number.POSITIVE_INFINITY): Uint8Array | null {
  const out = new DeltaWriter(Math.min(limit === Number.POSITIVE_INFINITY ? target.length : limit, target.length) + 64);
  out.varint(base.length);
  out.varint(target.length);
  const blocks = Math.floor(base.length / WINDOW);
  if (blocks === 0 || target.length < WINDOW) {
    out.literal(target, 0, target.length);
    return out.length < limit ? out.bytes() : null;
  }
  // Hash table: slot -> first block index + 1 (0: empty); chain: block -> older block with the same slot.
  let bits = 1;
  while (1 << bits < blocks * 2) bits++;
  const size = 1 << bits;
  const head = new Int32Array(size);
  const chain = new Int32Array(blocks);
  const hashes = new Int32Array(blocks);
  const depth = new Uint8Array(size);
  for (let k = 0; k < blocks; k++) {
    const h = blockHash(base, k * WINDOW);
    const s = slotOf(h, bits);
    hashes[k] = h;
    // The first MAX_CHAIN blocks of a slot are kept (newest first): a repeated block adds nothing.
    if (depth[s]! >= MAX_CHAIN) continue;
    depth[s]!++;
    chain[k] = head[s]! - 1;
    head[s] = k + 1;
  }

  let literalStart = 0;
  let t = 0;
  let h = blockHash(target, 0);
  const tlen = target.length;
  const blen = base.length;
  while (t + WINDOW <= tlen) {
    let bestLen = 0;
    let bestFrom = 0;
    let bestBack = 0;
    for (let k = head[slotOf(h, bits)]! - 1; k >= 0; k = chain[k]!) {
      if (hashes[k] !== h) continue;
      const b = k * WINDOW;
      let len = 0;
      while (b + len < blen && t + len < tlen && base[b + len] === target[t + len]) len++;
      if (len < WINDOW) continue;
      let back = 0;
      while (b - back > 0 && t - back > literalStart && base[b - back - 1] === target[t - back - 1]) back++;
      if (len + back > bestLen + bestBack) {
        bestLen = len;
        bestFrom = b;
        bestBack = back;
      }
    }
    if (bestLen === 0) {
      if (t + WINDOW < tlen) h = (Math.imul(h - Math.imul(target[t]!, P_OUT), P) + target[t + WINDOW]!) | 0;
      t++;
      continue;
    }
    const ts = t - bestBack;
    const bs = bestFrom - bestBack;
    const len = bestLen + bestBack;
    out.literal(target, literalStart, ts);
    for (let done = 0; done < len; done += MAX_COPY) out.copy(bs + done, Math.min(MAX_COPY, len - done));
    if (out.length >= limit) return null;
    t = ts + len;
    literalStart = t;
    if (t + WINDOW <= tlen) h = blockHash(target, t);
  }
  out.literal(target, literalStart, tlen);
  return out.length < limit ? out.bytes() : null;
}

class DeltaWriter {
  private buf: Uint8Array;
  length = 0;

  constructor(initial: number) {
    this.buf = new Uint8Array(Math.max(64, initial));
  }

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  varint(v: number): void {
    this.ensure(10);
    do {
      let c = v % 128;
      v = Math.floor(v / 128);
      if (v > 0) c |= 0x80;
      this.buf[this.length++] = c;
    } while (v > 0);
  }

  literal(src: Uint8Array, from: number, to: number): void {
    for (let p = from; p < to; p += 127) {
      const n = Math.min(127, to - p);
      this.ensure(n + 1);
      this.buf[this.length++] = n;
      this.buf.set(src.subarray(p, p + n), this.length);
      this.length += n;
    }
  }

  copy(offset: number, size: number): void {
    this.ensure(8);
    const at = this.length++;
    let op = 0x80;
    for (let i = 0; i < 4; i++) {
      const byte = Math.floor(offset / 2 ** (8 * i)) & 0xff;
      if (byte) {
        op |= 1 << i;
        this.buf[this.length++] = byte;
      }
    }
    const s = size === MAX_COPY ? 0 : size;
    for (let i = 0; i < 3; i++) {
      const byte = (s >> (8 * i)) & 0xff;
      if (byte) {
        op |= 0x10 << i;
        this.buf[this.length++] = byte;
      }
    }
    this.buf[at] = op;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}
