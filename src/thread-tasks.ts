// The tasks the thread pool runs (src/util/thread-pool.ts), by name. Each is a pure function of
// its input (plus what the thread builds for itself); add a task here and it runs on every thread.
import { uploadPackTask } from "./services/git/upload-thread.ts";
import type { TaskIo } from "./util/thread-pool.ts";

/** Every task a thread can run. */
export const TASKS = {
  /** Echoes its input (the pool's own tests and the startup check). */
  "pool.echo": (input: unknown) => input,
  /** Emits `count` numbers then returns them summed (the pool's tests of streaming and backpressure). */
  "pool.count": async (input: { count: number }, io: TaskIo) => {
    let sum = 0;
    for (let i = 0; i < input.count; i++) {
      await io.emit(i);
      sum += i;
    }
    return sum;
  },
  /** Spins for `ms` of CPU (the pool's tests of time limits and of the event loop staying free). */
  "pool.spin": (input: { ms: number }) => {
    const end = performance.now() + input.ms;
    let n = 0;
    while (performance.now() < end) n++;
    return n;
  },
  /** Lists and writes the pack of a large fetch, emitting the response bytes (services/git/upload-thread.ts). */
  "git.uploadPack": uploadPackTask,
  /** Throws an error carrying a `code` (the pool's tests of error passing). */
  "pool.fail": (input: { message: string; code?: string }) => {
    throw Object.assign(new Error(input.message), { code: input.code });
  },
} as const;

export type Tasks = typeof TASKS;
