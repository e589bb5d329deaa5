// The small part of gitrevisions(7) the content routes accept: a name followed by ancestry
// suffixes (`main~2`, `v1.0^`, `HEAD^2~3`), and unique abbreviated object ids (at least 4 hex
// digits), found by binary search in each pack's sorted index.
import type { PackSet } from "./pack-set.ts";
import type { Oid } from "./types.ts";

/** One ancestry step: take parent number `parent` (1-based; 0 = the commit itself). */
export interface RevStep {
  parent: number;
}

/** Steps a revision may take at most (a bound on the work one request can ask for). */
export const MAX_REV_STEPS = 100_000;

/**
 * Splits `rev` into its base name and ancestry steps; null when the suffix is malformed or asks
 * for more than MAX_REV_STEPS. Ref names cannot contain `~` or `^` (git-check-ref-format), so the
 * first of them starts the suffix.
 */
export function parseRevision(rev: string): { base: string; steps: RevStep[] } | null {
  const at = rev.search(/[~^]/);
  if (at < 0) return { base: rev, steps: [] };
  const base = rev.slice(0, at);
  const suffix = rev.slice(at);
  if (!base || !/^([~^]\d*)+$/.test(suffix)) return null;
  const steps: RevStep[] = [];
  for (const m of suffix.matchAll(/([~^])(\d*)/g)) {
    const n = m[2] === "" ? 1 : Number(m[2]);
    if (!Number.isSafeInteger(n)) return null;
    if (m[1] === "^") {
      if (n > 64) return null;
      steps.push({ parent: n });
    } else {
      if (steps.length + n > MAX_REV_STEPS) return null;
      for (let i = 0; i < n; i++) steps.push({ parent: 1 });
    }
    if (steps.length > MAX_REV_STEPS) return null;
  }
  return { base, steps };
}

/** Whether `s` looks like an abbreviated object id (4 to 40 hex digits). */
export function isAbbreviatedOid(s: string): boolean {
  return /^[0-9a-fA-F]{4,40}$/.test(s);
}

/**
 * The object ids in `objects` starting with `prefix` (lowercased), at most `limit` of them
 * (2 tells "unique" from "ambiguous").
 */
export function findByPrefix(objects: PackSet, prefix: string, limit = 2): Oid[] {
  const p = prefix.toLowerCase();
  const found = new Set<Oid>();
  for (const pack of objects.packs) {
    const idx = pack.idx;
    let lo = 0;
    let hi = idx.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (idx.oidAt(mid) < p) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < idx.count && found.size < limit; i++) {
      const oid = idx.oidAt(i);
      if (!oid.startsWith(p)) break;
      found.add(oid);
    }
    if (found.size >= limit) break;
  }
  return [...found];
}
