// A fixed, log-linear histogram of operation durations (whole milliseconds), small enough to keep
// one per metric bucket and merge by adding counts. Durations 0–31 ms have a slot each; above
// that every power of two is split into 16 slots, so a reported percentile is within about 3% of
// the true value (each slot answers its midpoint). Durations above 2^32 ms share the last slot.

/** Slots below this value hold exactly one duration each. */
const LINEAR = 32;
/** Slots per power of two above LINEAR. */
const SUB = 16;
/** log2(LINEAR). */
const LINEAR_BITS = 5;
const MAX_BITS = 32;
/** How many slots there are. */
export const SLOTS = LINEAR + (MAX_BITS - LINEAR_BITS) * SUB;

/** Counts per slot; sparse (most buckets see a handful of distinct slots). */
export type Histogram = Map<number, number>;

/** The slot of a duration in milliseconds (negative or non-finite durations count as 0). */
export function slotOf(ms: number): number {
  const v = Number.isFinite(ms) && ms > 0 ? Math.floor(ms) : 0;
  if (v < LINEAR) return v;
  if (v >= 2 ** MAX_BITS) return SLOTS - 1;
  let bits = Math.floor(Math.log2(v));
  // Guards against rounding in log2 near powers of two.
  if (2 ** bits > v) bits--;
  else if (2 ** (bits + 1) <= v) bits++;
  const base = 2 ** bits;
  const sub = Math.min(SUB - 1, Math.floor(((v - base) * SUB) / base));
  return LINEAR + (bits - LINEAR_BITS) * SUB + sub;
}

/** The duration a slot answers: the duration itself below LINEAR, else the slot's midpoint. */
export function slotValue(slot: number): number {
  if (slot < LINEAR) return slot;
  const bits = LINEAR_BITS + Math.floor((slot - LINEAR) / SUB);
  const sub = (slot - LINEAR) % SUB;
  const base = 2 ** bits;
  const width = base / SUB;
  return Math.floor(base + sub * width + width / 2);
}

/** Adds `n` observations of `ms` to `h`. */
export function observe(h: Histogram, ms: number, n = 1): void {
  const s = slotOf(ms);
  h.set(s, (h.get(s) ?? 0) + n);
}

/** Adds every count of `from` into `into`. */
export function mergeInto(into: Histogram, from: Histogram): void {
  for (const [s, n] of from) into.set(s, (into.get(s) ?? 0) + n);
}

/** A dense accumulator: one count per slot, for summing many stored histograms without a Map. */
export type Dense = Float64Array;

/** An empty dense accumulator. */
export function dense(): Dense {
  return new Float64Array(SLOTS);
}

/**
 * The stored form: `slot, count` pairs by slot, each an unsigned LEB128 varint (a bucket with a
 * handful of slots is a dozen bytes). Binary rather than text so a year's summary decodes its
 * ~1,000 buckets per kind with byte arithmetic instead of string parsing (bench/README.md).
 */
export function encode(h: Histogram): Uint8Array {
  const out: number[] = [];
  const put = (v: number) => {
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
  };
  for (const [slot, n] of [...h].sort((a, b) => a[0] - b[0])) {
    if (n <= 0) continue;
    put(slot);
    put(n);
  }
  return Uint8Array.from(out);
}

/** Calls `add(slot, count)` for every well-formed pair of a stored histogram; stops at anything malformed. */
function eachPair(bytes: Uint8Array, add: (slot: number, n: number) => void): void {
  let i = 0;
  const next = (): number => {
    let v = 0;
    let scale = 1;
    // At most 8 bytes (56 bits): past that the value is not one this module wrote.
    for (let k = 0; k < 8 && i < bytes.length; k++) {
      const b = bytes[i++]!;
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
    }
    return -1;
  };
  while (i < bytes.length) {
    const slot = next();
    const n = next();
    if (slot < 0 || n < 0 || slot >= SLOTS) return;
    if (n > 0) add(slot, n);
  }
}

/** Adds a stored histogram into `into`; ignores anything malformed. */
export function decodeInto(into: Histogram, bytes: Uint8Array): void {
  eachPair(bytes, (s, n) => into.set(s, (into.get(s) ?? 0) + n));
}

/** Adds a stored histogram into a dense accumulator; ignores anything malformed. */
export function addInto(into: Dense, bytes: Uint8Array): void {
  eachPair(bytes, (s, n) => {
    into[s]! += n;
  });
}

/** The nearest-rank percentile `p` of a dense accumulator as whole milliseconds, or null when it is empty. */
export function densePercentile(h: Dense, p: number): number | null {
  let total = 0;
  for (let s = 0; s < h.length; s++) total += h[s]!;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let s = 0; s < h.length; s++) {
    seen += h[s]!;
    if (seen >= rank) return slotValue(s);
  }
  return null;
}

/**
 * The nearest-rank percentile `p` (0 < p ≤ 100) of the histogram as whole milliseconds, or null
 * when it is empty.
 */
export function percentile(h: Histogram, p: number): number | null {
  let total = 0;
  for (const n of h.values()) total += n;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const s of [...h.keys()].sort((a, b) => a - b)) {
    seen += h.get(s)!;
    if (seen >= rank) return slotValue(s);
  }
  return null;
}
