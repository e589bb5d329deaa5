// Copying bytes between arrays without making a view per copy. `dst.set(src.subarray(a, b))`
// allocates a typed-array object for every call; the hot loops (delta application, object ids
// of every pushed object) call it millions of times, and the collector lets that garbage grow
// in proportion to what the process already holds (hundreds of MB on a busy server) before it
// runs. Buffer.prototype.copy takes offsets and allocates nothing.

const nativeCopy = Buffer.prototype.copy as (this: Uint8Array, target: Uint8Array, targetStart: number, sourceStart: number, sourceEnd: number) => number;

/** Copies `src[from, to)` to `dst` at `at` (the ranges must fit; the arrays must not overlap). */
export function copyBytes(src: Uint8Array, from: number, to: number, dst: Uint8Array, at: number): void {
  // Short copies byte by byte: cheaper than the native call's overhead.
  if (to - from <= 32) {
    for (let k = from; k < to; k++) dst[at++] = src[k]!;
    return;
  }
  nativeCopy.call(src, dst, at, from, to);
}
