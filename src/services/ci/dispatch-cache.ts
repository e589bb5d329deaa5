// The workflows a writer may run by hand (the runs list's "Run workflow" form), remembered by
// repository, ref and the ref's commit. Why: the form parses every workflow file of the default
// branch on a worker thread, and the runs list drew it on every view (a 400 KiB generated file is
// a quarter of a second of a thread). The answer is a function of the commit's files (and the
// repository's id, in the key, so nothing is answered across repositories); a new commit is a new
// key, so a hit answers exactly what parsing again would. Answers with a file that could not be
// read (a thread's time limit, a busy pool, storage) are never remembered. One per process, owned
// by the context (ctx.caches.dispatchable).
import { ByteLru } from "../../storage/lru.ts";
import type { DispatchableWorkflow } from "./dispatch.ts";

/** Bytes the cache holds at most (a workflow with 25 inputs is a few KiB). */
const DISPATCH_CACHE_BYTES = 2 * 1024 * 1024;

export class DispatchCache {
  private readonly lru = new ByteLru<string, readonly DispatchableWorkflow[]>(DISPATCH_CACHE_BYTES, (v, k) => 64 + 2 * k.length + 2 * JSON.stringify(v).length);
  /** Answers found, and looked for in vain (tests and metrics read them). */
  hits = 0;
  misses = 0;

  /** The key of `repoId`'s `ref` at `commit`. */
  static key(repoId: string, ref: string, commit: string): string {
    return `${repoId}\n${ref}\n${commit}`;
  }

  get(key: string): readonly DispatchableWorkflow[] | undefined {
    const v = this.lru.get(key);
    if (v) this.hits++;
    else this.misses++;
    return v;
  }

  set(key: string, workflows: readonly DispatchableWorkflow[]): void {
    this.lru.set(key, workflows);
  }
}
