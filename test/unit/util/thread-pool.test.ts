// The thread pool (src/util/thread-pool.ts) over the real thread entry (src/thread-main.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { createThreads } from "../../../src/threads.ts";
import { ThreadTaskError } from "../../../src/util/thread-pool.ts";

const pool = createThreads({ size: 2 });
afterAll(() => pool.close());

async function refusal(p: Promise<unknown>): Promise<ThreadTaskError> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(ThreadTaskError);
    return error as ThreadTaskError;
  }
  throw new Error("expected a refusal");
}

describe("thread pool", () => {
  test("runs a task and returns its result", async () => {
    expect(await pool.run("pool.echo", { a: [1, 2] })).toEqual({ a: [1, 2] });
  });

  test("streams emitted values in order, then the result", async () => {
    const got: number[] = [];
    const sum = await pool.run("pool.count", { count: 50 }, { onEmit: (v) => void got.push(v as number) });
    expect(got).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(sum).toBe(1225);
  });

  test("a consumer that awaits gets every value once, in order", async () => {
    const got: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const done = pool.run(
      "pool.count",
      { count: 20 },
      {
        onEmit: async (v) => {
          got.push(v as number);
          if (got.length === 1) await gate;
        },
      },
    );
    await Promise.resolve();
    release();
    expect(await done).toBe(190);
    expect(got.length).toBe(20);
  });

  test("a task past its time limit is refused and its thread replaced", async () => {
    const e = await refusal(pool.run("pool.spin", { ms: 5000 }, { timeLimitMs: 50 }));
    expect(e.kind).toBe("time_limit");
    expect(await pool.run("pool.echo", 7)).toBe(7);
  });

  test("a thrown error arrives with its code", async () => {
    const e = await refusal(pool.run("pool.fail", { message: "bad pack", code: "badPack" }));
    expect([e.kind, e.message, e.data.code]).toEqual(["failed", "bad pack", "badPack"]);
  });

  test("aborting a running task terminates it", async () => {
    const ac = new AbortController();
    const p = pool.run("pool.spin", { ms: 5000 }, { signal: ac.signal });
    ac.abort();
    expect((await refusal(p)).kind).toBe("aborted");
  });

  test("the event loop stays free while threads spin", async () => {
    const spinning = Promise.all([pool.run("pool.spin", { ms: 300 }), pool.run("pool.spin", { ms: 300 })]);
    const started = performance.now();
    await new Promise((r) => setTimeout(r, 10));
    expect(performance.now() - started).toBeLessThan(200);
    await spinning;
  });

  test("work beyond the queue bound is refused as busy", async () => {
    const small = createThreads({ size: 1, maxQueue: 1 });
    try {
      const running = small.run("pool.spin", { ms: 200 });
      const queued = small.run("pool.echo", 1);
      const e = await refusal(small.run("pool.echo", 2));
      expect(e.kind).toBe("busy");
      await Promise.all([running, queued]);
    } finally {
      small.close();
    }
  });
});
