// The lines of a version of a file, as blame compares them (blame.ts): where each line starts and
// a key per line, so that a line diff compares numbers. Keys are found without hashing every
// line again where a nearby version already has them: through its bytes (linesOf with `near`:
// runs of equal bytes found natively) or through a pack delta's copy instructions
// (linesFromDelta: the bytes a delta copies from its base are the base's, so are their lines).
/**
 * A version of the file as lines: where each line starts (one more entry: the end) and a key per
 * line (equal lines, equal keys; two 32-bit hashes of the line's bytes, its "\n" included, folded
 * into one exact double, so a collision needs both to agree).
 */
export interface Lines {
  starts: Int32Array;
  keys: Float64Array;
}

/** Lines with the bytes they were read from. */
export interface TextLines extends Lines {
  data: Buffer;
}

/** The key of bytes [from, to) of `d`. */
export function lineKey(d: Uint8Array, from: number, to: number): number {
  let h1 = 0x811c9dc5 | 0;
  let h2 = (0x9747b28c ^ (to - from)) | 0;
  for (let i = from; i < to; i++) {
    const b = d[i]!;
    h1 = Math.imul(h1 ^ b, 0x01000193);
    h2 = Math.imul(h2 ^ b, 0x5bd1e995);
    h2 ^= h2 >>> 13;
  }
  return (h1 >>> 0) * 0x200000 + (h2 & 0x1fffff);
}

/**
 * Spare arrays for line starts and keys. A walk makes one Lines per version of its file; taking
 * arrays given back by versions it no longer holds spares fresh memory for each (thousands of
 * copies of the file's line table: page faults and collections cost more than filling them).
 */
export class LinePool {
  private readonly spare: { starts: Int32Array; keys: Float64Array }[] = [];
  private bytes = 0;

  /** Arrays with room for `capacity` lines (and the end). */
  take(capacity: number): { starts: Int32Array; keys: Float64Array } {
    for (let i = this.spare.length - 1; i >= Math.max(0, this.spare.length - 8); i--) {
      const s = this.spare[i]!;
      if (s.keys.length >= capacity) {
        this.spare.splice(i, 1);
        this.bytes -= s.starts.byteLength + s.keys.byteLength;
        return s;
      }
    }
    // Room to spare: the versions of a file differ in length by a few lines, and a table a little
    // short of the next version's would be no use to it.
    const room = Math.ceil((capacity * 1.125 + 64) / 256) * 256;
    return { starts: new Int32Array(room + 1), keys: new Float64Array(room) };
  }

  /** Gives back the arrays under `lines` (nothing may read those lines any more). */
  give(lines: Lines): void {
    const s = { starts: new Int32Array(lines.starts.buffer), keys: new Float64Array(lines.keys.buffer) };
    this.spare.push(s);
    this.bytes += s.starts.byteLength + s.keys.byteLength;
    while (this.spare.length > POOL_MAX || this.bytes > POOL_BYTES) {
      const old = this.spare.shift()!;
      this.bytes -= old.starts.byteLength + old.keys.byteLength;
    }
  }
}

/**
 * Spare tables kept at most, and their bytes: a version read may make a whole delta chain of
 * versions at once (git's chains are up to 50 deep), but a file of a million short lines has
 * tables of 12 MB each.
 */
const POOL_MAX = 64;
const POOL_BYTES = 16 * 1024 * 1024;

/** Growable line starts and keys. */
export class LineBuilder {
  starts: Int32Array;
  keys: Float64Array;
  n = 0;
  constructor(
    capacity: number,
    private readonly pool?: LinePool,
  ) {
    const a = pool ? pool.take(capacity) : { starts: new Int32Array(capacity + 1), keys: new Float64Array(capacity) };
    this.starts = a.starts;
    this.keys = a.keys;
  }
  private room(extra: number): void {
    if (this.n + extra < this.keys.length) return;
    const size = Math.max(2 * this.keys.length, this.n + extra + 16);
    const starts = new Int32Array(size + 1);
    starts.set(this.starts.subarray(0, this.n));
    const keys = new Float64Array(size);
    keys.set(this.keys.subarray(0, this.n));
    this.starts = starts;
    this.keys = keys;
  }
  /** Lines of `d` from byte `from` to `to` (at line starts), hashed one by one. */
  hash(d: Uint8Array, from: number, to: number): void {
    while (from < to) {
      const nl = d.indexOf(10, from);
      const end = nl < 0 || nl >= to ? to : nl + 1;
      this.room(1);
      this.starts[this.n] = from;
      this.keys[this.n++] = lineKey(d, from, end);
      from = end;
    }
  }
  /** One line starting at byte `start`, with its key. */
  add(start: number, key: number): void {
    this.room(1);
    this.starts[this.n] = start;
    this.keys[this.n++] = key;
  }
  /** Lines `from`..`to`-1 of `c`, found `shift` bytes further on in this version. */
  copy(c: Lines, from: number, to: number, shift: number): void {
    this.room(to - from);
    this.keys.set(c.keys.subarray(from, to), this.n);
    const s = this.starts;
    for (let i = from, j = this.n; i < to; i++, j++) s[j] = c.starts[i]! + shift;
    this.n += to - from;
  }
  done(end: number): Lines {
    this.starts[this.n] = end;
    return { starts: this.starts.subarray(0, this.n + 1), keys: this.keys.subarray(0, this.n) };
  }
}

/** Bytes `a[ai..]` and `b[bi..]` have in common from the start (compared natively, galloping). */
function commonLength(a: Buffer, ai: number, b: Buffer, bi: number): number {
  const max = Math.min(a.length - ai, b.length - bi);
  let good = 0;
  let step = 256;
  while (good < max) {
    const len = Math.min(step, max - good);
    if (a.compare(b, bi + good, bi + good + len, ai + good, ai + good + len) === 0) {
      good += len;
      step *= 4;
      continue;
    }
    // The first difference is in [good, good + len): halve until it is found.
    let lo = 0;
    let hi = len;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (a.compare(b, bi + good + lo, bi + good + mid, ai + good + lo, ai + good + mid) === 0) lo = mid;
      else hi = mid;
    }
    return a[ai + good + lo] === b[bi + good + lo] ? good + lo + 1 : good + lo;
  }
  return good;
}

/** Index of the last line of `c` starting at or before byte `at` (binary search). */
function lineAt(c: Lines, at: number): number {
  let lo = 0;
  let hi = c.keys.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (c.starts[mid]! <= at) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Lines tried on each side to find where two versions agree again after a difference. */
const RESYNC = 8;

/**
 * The lines of `data`. With `near` (a nearby version, usually the child's), lines found
 * byte-for-byte in it at the same order take its keys without being hashed again: runs of equal
 * bytes are found natively, and only the lines around each difference are hashed. Keys do not
 * depend on the alignment chosen here (a copied line is byte-equal to the one it copies); only
 * the work does.
 */
export function linesOf(data: Uint8Array, near?: TextLines): TextLines {
  const d = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (!near || near.keys.length === 0) {
    const out = new LineBuilder(near?.keys.length ?? 64);
    out.hash(d, 0, d.length);
    return { ...out.done(d.length), data: d };
  }
  const c = near;
  const cn = c.keys.length;
  const out = new LineBuilder(cn + 16);
  let pi = 0;
  let cl = 0;
  while (pi < d.length) {
    if (cl < cn) {
      const co = c.starts[cl]!;
      const m = commonLength(d, pi, c.data, co);
      // Whole lines of c inside the common run (a last line without "\n" only when both end there).
      let cl2 = lineAt(c, co + m);
      if (c.starts[cl2]! > co + m || cl2 < cl) cl2 = cl;
      else if (cl2 < cn && c.starts[cl2 + 1]! <= co + m) cl2++;
      if (cl2 === cn && co + m === c.data.length && pi + m !== d.length && c.data[c.data.length - 1] !== 10) cl2--;
      if (cl2 > cl) {
        out.copy(c, cl, cl2, pi - co);
        pi += c.starts[cl2]! - co;
        cl = cl2;
        continue;
      }
    }
    if (cl >= cn) break;
    // Line starts of the next few lines here, then the nearest (a, b) where line +a here starts
    // what line cl + b of c starts, for at least one whole line of c.
    const mine: number[] = [pi];
    for (let k = 0; k < RESYNC && mine[k]! < d.length; k++) {
      const nl = d.indexOf(10, mine[k]!);
      mine.push(nl < 0 ? d.length : nl + 1);
    }
    let found: [number, number] | null = null;
    for (let sum = 1; sum <= 2 * RESYNC && !found; sum++) {
      for (let a = 0; a <= sum && !found; a++) {
        const b = sum - a;
        if (a >= mine.length - 1 || cl + b >= cn) continue;
        const at = mine[a]!;
        const cAt = c.starts[cl + b]!;
        const lineLen = c.starts[cl + b + 1]! - cAt;
        if (at + lineLen <= d.length && d.compare(c.data, cAt, cAt + lineLen, at, at + lineLen) === 0) found = [a, b];
      }
    }
    if (!found) break;
    const [a, b] = found;
    out.hash(d, pi, mine[a]!);
    pi = mine[a]!;
    cl += b;
  }
  out.hash(d, pi, d.length);
  return { ...out.done(d.length), data: d };
}

/** The bytes of a version, read a line at a time: a whole buffer, or a version read through its delta. */
export interface LineText {
  readonly length: number;
  /** Adds the line starting at byte `from` to `out` (hashed); answers where it ends (after its "\n", or the end). */
  line(from: number, out: LineBuilder): number;
  /** The byte at `at`. */
  byteAt(at: number): number;
}

/** A whole buffer as a LineText. */
export class BufferText implements LineText {
  constructor(private readonly d: Uint8Array) {}
  get length(): number {
    return this.d.length;
  }
  line(from: number, out: LineBuilder): number {
    const nl = this.d.indexOf(10, from);
    const end = nl < 0 ? this.d.length : nl + 1;
    out.add(from, lineKey(this.d, from, end));
    return end;
  }
  byteAt(at: number): number {
    return this.d[at]!;
  }
}

/**
 * The lines of `text`, the result of a delta whose base has lines `base` and whose instructions
 * are `ops` (parseDelta's triples: result offset, length, source; a copy's source is its base
 * offset, an insert's is negative). A line that starts where a copy puts the start of a base line
 * and lies whole inside that copy is that base line: its key is taken, not hashed. Every other
 * line (inserted bytes, lines a copy cuts) is hashed. Keys do not depend on what is copied and what
 * hashed (a copied line is byte-equal to the base line it copies); only the work does. A line
 * without "\n" is whole only at the end of both (elsewhere the result goes on where the base line
 * stopped).
 */
export function linesFromDelta(base: Lines, ops: Int32Array, text: LineText, pool?: LinePool): Lines {
  const n = ops.length / 3;
  const bn = base.keys.length;
  const length = text.length;
  const out = new LineBuilder(bn + 16, pool);
  let pi = 0;
  let j = 0;
  while (pi < length) {
    while (j < n && ops[3 * j]! + ops[3 * j + 1]! <= pi) j++;
    if (j < n && ops[3 * j + 2]! >= 0 && bn > 0) {
      // The run of copies from here that continue one another in both the result and the base.
      const at = ops[3 * j]!;
      const from = ops[3 * j + 2]!;
      let size = ops[3 * j + 1]!;
      for (let e = j + 1; e < n && ops[3 * e + 2]! === from + size && ops[3 * e]! === at + size; e++) size += ops[3 * e + 1]!;
      const bp = from + (pi - at);
      const l = lineAt(base, bp);
      if (base.starts[l] === bp) {
        // Base lines l..l2-1 end inside the run (the last line of the base only when the run reaches its end).
        let l2 = lineAt(base, from + size);
        if (l2 === bn - 1 && base.starts[bn]! <= from + size) l2 = bn;
        if (l2 > l) {
          const shift = pi - bp;
          const end = base.starts[l2]! + shift;
          // A last line without "\n" is the same line only where the result ends too.
          if (end !== length && text.byteAt(end - 1) !== 10) l2--;
          if (l2 > l) {
            out.copy(base, l, l2, shift);
            pi = base.starts[l2]! + shift;
            continue;
          }
        }
      }
    }
    pi = text.line(pi, out);
  }
  return out.done(length);
}
