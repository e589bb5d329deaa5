// The process's thread pool (src/util/thread-pool.ts) over the tasks of src/thread-tasks.ts.
import type { Tasks } from "./thread-tasks.ts";
import { type PoolOptions, ThreadPool } from "./util/thread-pool.ts";

/**
 * The thread's module: beside this file when run from source; in the compiled binary (where
 * scripts/build.ts adds it as an entry point) at the same path under the binary's root, which
 * is src/ there too.
 */
const ENTRY = new URL("./thread-main.ts", import.meta.url).href;

/** The pool every service uses (on the context as `ctx.threads`). */
export type Threads = ThreadPool<Tasks>;

/** A new pool of threads sized to the machine's cores. */
export function createThreads(options: PoolOptions = {}): Threads {
  return new ThreadPool<Tasks>(ENTRY, options);
}
