// Blame for the services (repos' API and pages): the engine (src/git/blame.ts) run on a worker
// thread ("git.blame", blame-thread.ts), its answers remembered per node. An answer is a function
// of the commit id and the path (objects are immutable), so a cached one is exactly what computing
// again would give; the key carries the repository id all the same, so nothing computed for one
// repository answers a request about another. Concurrent requests for one key share one run.
import type { BlameLimits, BlameOutcome } from "../../git/blame.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import type { Oid } from "../../git/types.ts";
import { AppError } from "../../errors.ts";
import { ByteLru } from "../../storage/lru.ts";
import { ThreadTaskError } from "../../util/thread-pool.ts";
import type { Ctx } from "../context.ts";
import { packRows, threadStoreConfig } from "./upload.ts";

/**
 * What one blame may cost. Why these: the file is at most what a page shows inline (1 MiB); the
 * walk stops after 20,000 commits or 1 GiB of versions read (the lines still pending are then
 * blamed on the commit they reached, and the answer says `truncated`); the thread gives up
 * after BLAME_TIME_LIMIT_MS (503).
 */
export const BLAME_LIMITS: BlameLimits = Object.freeze({
  maxBytes: 1024 * 1024,
  maxCommits: 20_000,
  maxReadBytes: 1024 * 1024 * 1024,
  maxEdits: 2000,
});
/** How long one blame may run on its thread. */
export const BLAME_TIME_LIMIT_MS = 20_000;
/** Bytes the node's blame cache holds at most (a 5,000-line file's answer is about 300 KiB at worst). */
export const BLAME_CACHE_BYTES = 32 * 1024 * 1024;

/** Remembered outcomes by `repo:commit:path` (`ctx.caches.blames`); failures are never kept. */
export class BlameCache {
  private lru = newLru();
  private readonly pending = new Map<string, Promise<BlameOutcome>>();
  hits = 0;
  misses = 0;

  /** The outcome of `key`: remembered, being computed by another caller, or computed now by `make`. */
  async get(key: string, make: () => Promise<BlameOutcome>): Promise<BlameOutcome> {
    const hit = this.lru.get(key);
    if (hit) {
      this.hits++;
      return hit;
    }
    this.misses++;
    let p = this.pending.get(key);
    if (!p) {
      p = make().finally(() => this.pending.delete(key));
      p.then(
        (v) => this.lru.set(key, v),
        () => {},
      );
      this.pending.set(key, p);
    }
    return p;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.lru.bytes;
  }

  /** Forgets everything (tests). */
  clear(): void {
    this.lru = newLru();
  }
}

const newLru = () => new ByteLru<string, BlameOutcome>(BLAME_CACHE_BYTES, (v, k) => 64 + 2 * k.length + sizeOf(v));

/** The estimated bytes an outcome holds. */
function sizeOf(o: BlameOutcome): number {
  if (o.kind !== "ok") return 64;
  let n = 128 + 48 * o.ranges.length;
  for (const c of Object.values(o.commits)) n += 160 + 2 * (c.author.name.length + c.author.email.length + c.summary.length);
  return n;
}

/**
 * The blame of `path` at `commit` in the snapshot's repository `repoId`: from the node's cache, or
 * computed on a thread. 503 when every thread is taken or the time limit passes.
 */
export async function blameOf(ctx: Ctx, repoId: string, snapshot: RepoSnapshot, commit: Oid, path: string[]): Promise<BlameOutcome> {
  const key = `${repoId}:${commit}:${path.join("/")}`;
  return ctx.caches.blames.get(key, async () => {
    try {
      return await ctx.threads.run(
        "git.blame",
        { store: threadStoreConfig(ctx), repoId, packs: packRows(snapshot), commit, path, limits: BLAME_LIMITS },
        { timeLimitMs: BLAME_TIME_LIMIT_MS },
      );
    } catch (e) {
      if (e instanceof ThreadTaskError && e.kind === "busy")
        throw new AppError("unavailable", "the server is busy with other large work; try the blame again shortly");
      if (e instanceof ThreadTaskError && e.kind === "time_limit") throw new AppError("unavailable", "this blame took too long; try `git blame` on a clone");
      throw e;
    }
  });
}
