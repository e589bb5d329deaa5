// The small part of gitrevisions(7) the content routes accept: a name followed by ancestry
// suffixes (`main~2`, `v1.0^`, `HEAD^2~3`), and unique abbreviated object ids, found by a
// binary search in each pack's sorted index and unique only among the ids the caller may read
// (the service decides which, and how many digits it needs: docs/architecture.md).
import { hexToBytes } from "./oid.ts";
import type { PackIndex } from "./pack-index.ts";
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

/** Fewest hex digits an abbreviation may have at all (git's own minimum, core.abbrev). */
export const MIN_ABBREV = 4;

/**
 * Ids one abbreviation examines at most: with more candidates than this it is ambiguous, so no
 * lookup scans more than this many entries whatever the prefix.
 */
export const MAX_PREFIX_CANDIDATES = 64;

/** Whether `s` looks like an abbreviated object id (`min` to 40 hex digits). */
export function isAbbreviatedOid(s: string, min = MIN_ABBREV): boolean {
  return s.length >= min && s.length <= 40 && /^[0-9a-fA-F]+$/.test(s);
}

/** What an abbreviation named among the ids `accept` admits. */
export interface PrefixMatch {
  /** Admitted ids starting with the prefix, at most `limit` (2 tells "unique" from "ambiguous"). */
  found: Oid[];
  /** More than MAX_PREFIX_CANDIDATES ids start with it: treat as ambiguous. */
  tooMany: boolean;
}

/**
 * The ids in `packs` starting with `prefix` (hex, any case) that `accept` admits. One binary
 * search in each pack's sorted index, at most MAX_PREFIX_CANDIDATES + 1 ids taken from each, and
 * at most MAX_PREFIX_CANDIDATES distinct ids examined in all; ids `accept` refuses (objects the
 * caller may not read) count for nothing, ambiguity included.
 */
export async function findByPrefix(
  packs: readonly { idx: PackIndex }[],
  prefix: string,
  accept: (oid: Oid) => boolean | Promise<boolean>,
  limit = 2,
): Promise<PrefixMatch> {
  const p = prefix.toLowerCase();
  if (!/^[0-9a-f]{1,40}$/.test(p)) return { found: [], tooMany: false };
  const low = hexToBytes(p.padEnd(40, "0"));
  const candidates = new Set<Oid>();
  for (const { idx } of packs) {
    const oids = idx.oidTable;
    let lo = 0;
    let hi = idx.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareAt(oids, 20 * mid, low) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo, n = 0; i < idx.count && n <= MAX_PREFIX_CANDIDATES && startsWith(oids, 20 * i, low, p.length); i++, n++) candidates.add(idx.oidAt(i));
  }
  if (candidates.size > MAX_PREFIX_CANDIDATES) return { found: [], tooMany: true };
  const found: Oid[] = [];
  for (const oid of [...candidates].sort()) {
    if (await accept(oid)) found.push(oid);
    if (found.length >= limit) break;
  }
  return { found, tooMany: false };
}

function compareAt(a: Uint8Array, at: number, key: Uint8Array): number {
  for (let j = 0; j < 20; j++) {
    const c = a[at + j]! - key[j]!;
    if (c !== 0) return c;
  }
  return 0;
}

/** Whether the id at `a[at..]` starts with the first `digits` hex digits of `key`. */
function startsWith(a: Uint8Array, at: number, key: Uint8Array, digits: number): boolean {
  const whole = digits >> 1;
  for (let j = 0; j < whole; j++) if (a[at + j] !== key[j]) return false;
  return digits % 2 === 0 || a[at + whole]! >> 4 === key[whole]! >> 4;
}
