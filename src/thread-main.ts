// A worker thread's entry point: runs the tasks of src/thread-tasks.ts for src/util/thread-pool.ts.
// One task at a time per thread; emitted values wait for the pool's acknowledgements beyond the
// window it gives, so a slow consumer slows the producer instead of filling memory.
import { TASKS } from "./thread-tasks.ts";
import type { FromThread, TaskFn, ToThread } from "./util/thread-pool.ts";

declare const self: Worker;

let credit = 0;
let waiting: (() => void) | null = null;

function send(msg: FromThread, transfer: Transferable[] = []): void {
  self.postMessage(msg, transfer);
}

self.onmessage = async (event: MessageEvent<ToThread>) => {
  const msg = event.data;
  if (msg.type === "ack") {
    credit++;
    const w = waiting;
    waiting = null;
    w?.();
    return;
  }
  const { id, task, input, window } = msg;
  credit = window;
  const fn = (TASKS as Record<string, TaskFn>)[task];
  try {
    if (!fn) throw new Error(`unknown thread task ${task}`);
    const io = {
      async emit(value: unknown, transfer: Transferable[] = []) {
        while (credit <= 0) await new Promise<void>((resolve) => (waiting = resolve));
        credit--;
        send({ type: "emit", id, value }, transfer);
      },
    };
    const result = await fn(input, io);
    send({ type: "done", id, result });
  } catch (error) {
    const e = error as { message?: string; name?: string; code?: unknown; details?: unknown };
    send({
      type: "error",
      id,
      message: String(e?.message ?? error),
      name: e?.name,
      code: typeof e?.code === "string" ? e.code : undefined,
      details: e?.details,
    });
  }
};
