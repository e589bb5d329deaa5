// Binary search over sorted typed arrays (tree entry offsets, pack offsets).

/** First index of `a` whose value is >= `v` (`a.length` when none is). */
export function lowerBound(a: Uint32Array, v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
