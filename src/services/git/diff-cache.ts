// A node's cache of computed tree diffs (plan 28 §5): least recently used first out, bounded in
// bytes, keyed by (repository, from tree, to tree). Trees are content-addressed, so an entry
// never goes stale; the repository id in the key keeps one repository's entries from answering a
// request about another (a caller that can read repo A learns nothing about B from timing or
// content). Concurrent requests for one key share a single computation.
import type { FileDiffs } from "./diff.ts";

/** Bytes the cache holds at most (estimated from the patch text and the file count). */
export const DIFF_CACHE_BYTES = 64 * 1024 * 1024;

/** The estimated bytes an entry holds: its patch text (UTF-16) and a fixed share per file. */
function sizeOf(d: FileDiffs): number {
  let n = 256;
  for (const f of d.files) n += 256 + 2 * (f.path.length + (f.patch?.length ?? 0));
  return n;
}

/** A copy the caller may change without changing the cached entry. */
function copy(d: FileDiffs): FileDiffs {
  return { ...d, files: d.files.map((f) => ({ ...f })) };
}

/** The cache of one context (`ctx.caches.diffs`). */
export class DiffCache {
  private readonly entries = new Map<string, { diff: FileDiffs; bytes: number }>();
  private readonly pending = new Map<string, Promise<FileDiffs>>();
  private held = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly limit = DIFF_CACHE_BYTES) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /** The diff of `key`: remembered, being computed by another caller, or computed now by `make`. */
  async get(key: string, make: () => Promise<FileDiffs>): Promise<FileDiffs> {
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used goes to the end of the Map's order.
      this.entries.delete(key);
      this.entries.set(key, hit);
      this.hits++;
      return copy(hit.diff);
    }
    this.misses++;
    let p = this.pending.get(key);
    if (!p) {
      p = make().then(
        (diff) => {
          this.pending.delete(key);
          this.put(key, diff);
          return diff;
        },
        (e) => {
          this.pending.delete(key);
          throw e;
        },
      );
      this.pending.set(key, p);
    }
    return copy(await p);
  }

  private put(key: string, diff: FileDiffs): void {
    const bytes = sizeOf(diff);
    if (bytes > this.limit / 4) return;
    this.entries.set(key, { diff, bytes });
    this.held += bytes;
    for (const [k, e] of this.entries) {
      if (this.held <= this.limit) break;
      this.entries.delete(k);
      this.held -= e.bytes;
    }
  }

  /** Forgets everything (tests). */
  clear(): void {
    this.entries.clear();
    this.held = 0;
  }
}

/** The cache key of a diff of repository `repoId` from tree `from` (null: the empty tree) to `to`. */
export const diffKey = (repoId: string, from: string | null, to: string) => `${repoId}:${from ?? "-"}:${to}`;
