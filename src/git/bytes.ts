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

/** 2147483648 → "2 GiB", 1536 → "1.5 KiB", 1000 → "1000 bytes". */
export function formatSize(bytes: number): string {
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = "bytes";
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return unit === "bytes" ? `${bytes} bytes` : `${Math.round(value * 10) / 10} ${unit}`;
}

/** The refusal of an object over the largest size a write may hold (SVC_GIT_MAX_OBJECT). */
export function objectTooLarge(size: number, max: number): string {
  return `object of ${formatSize(size)} exceeds the maximum object size of ${formatSize(max)}`;
}
