import { describe, expect, test } from "bun:test";
import { StorageError } from "../../../src/storage/object-store.ts";
import { classify, DEFAULT_RETRY, TransientError, withRetry, type FailureClass, type RetryPolicy } from "../../../src/storage/retry.ts";

const policy: RetryPolicy = { attempts: 5, baseDelayMs: 10, maxDelayMs: 40, deadlineMs: 60_000, attemptTimeoutMs: 0 };

/** withRetry with a recorded, instant sleep and a fixed "random" draw. */
function harness(draw = 1) {
  const sleeps: number[] = [];
  const run = <T>(attempt: (n: number) => Promise<T>, p: RetryPolicy = policy, observer = {}) =>
    withRetry(
      "GET k",
      p,
      attempt,
      observer,
      () => draw,
      async (ms) => void sleeps.push(ms),
    );
  return { sleeps, run };
}

const s3Error = (code: string) => Object.assign(new Error(code), { code });

describe("classify", () => {
  test("throttling, server errors and dropped connections are transient; the rest is fatal", () => {
    const cases: [unknown, FailureClass][] = [
      [s3Error("SlowDown"), "throttled"],
      [s3Error("TooManyRequests"), "throttled"],
      [new Error("Request failed after 0 retries: Error: Retryable HTTP status: 503"), "throttled"],
      [new Error("Request failed after 0 retries: Error: Retryable HTTP status: 500"), "server"],
      [s3Error("InternalError"), "server"],
      [s3Error("ServiceUnavailable"), "server"],
      [s3Error("ECONNRESET"), "network"],
      [s3Error("EPIPE"), "network"],
      [new Error("socket hang up"), "network"],
      [new TransientError("short body"), "network"],
      [new TransientError("slow", true), "throttled"],
      [s3Error("NoSuchKey"), "fatal"],
      [s3Error("AccessDenied"), "fatal"],
      [s3Error("InvalidRange"), "fatal"],
      [new StorageError("nope", "not_found"), "fatal"],
      [new TypeError("bug"), "fatal"],
    ];
    expect(cases.map(([e]) => classify(e))).toEqual(cases.map(([, c]) => c));
  });
});

describe("withRetry", () => {
  test("retries transient failures until one attempt succeeds; backoff doubles up to the cap", async () => {
    const { sleeps, run } = harness();
    const seen: number[] = [];
    const retries: string[] = [];
    const got = await run(
      async (n) => {
        seen.push(n);
        if (n < 4) throw n % 2 ? s3Error("SlowDown") : s3Error("ECONNRESET");
        return "bytes";
      },
      policy,
      { onRetry: (cls: string) => retries.push(cls) },
    );
    expect({ got, seen, sleeps, retries }).toEqual({
      got: "bytes",
      seen: [0, 1, 2, 3, 4],
      sleeps: [10, 20, 40, 40],
      retries: ["network", "throttled", "network", "throttled"],
    });
  });

  test("the delay is a uniform draw below the cap (full jitter)", async () => {
    const { sleeps, run } = harness(0.25);
    await run(async (n) => {
      if (n < 3) throw s3Error("SlowDown");
      return 1;
    });
    expect(sleeps).toEqual([2.5, 5, 10]);
  });

  test("gives up after the last attempt with StorageError unavailable naming the operation and the cause", async () => {
    const { run } = harness();
    let attempts = 0;
    let gaveUp = 0;
    const err = await run(
      async () => {
        attempts++;
        throw s3Error("SlowDown");
      },
      policy,
      { onGiveUp: () => gaveUp++ },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect({ code: (err as StorageError).code, attempts, gaveUp }).toEqual({ code: "unavailable", attempts: 5, gaveUp: 1 });
    expect((err as Error).message).toContain("GET k failed after 5 attempts (SlowDown)");
    expect((err as Error).cause).toMatchObject({ code: "SlowDown" });
  });

  test("a fatal error is thrown at once, unchanged", async () => {
    const { sleeps, run } = harness();
    let attempts = 0;
    const missing = s3Error("NoSuchKey");
    await expect(
      run(async () => {
        attempts++;
        throw missing;
      }),
    ).rejects.toBe(missing);
    expect({ attempts, sleeps }).toEqual({ attempts: 1, sleeps: [] });
  });

  test("the deadline stops retrying before the attempts run out", async () => {
    const { run } = harness();
    let attempts = 0;
    const err = await run(
      async () => {
        attempts++;
        throw s3Error("InternalError");
      },
      { ...policy, attempts: 100, deadlineMs: 0 },
    ).catch((e: unknown) => e);
    expect({ code: (err as StorageError).code, attempts }).toEqual({ code: "unavailable", attempts: 1 });
  });

  test("an attempt that never answers counts as a dropped connection and is retried", async () => {
    const { run } = harness();
    let attempts = 0;
    const got = await run(
      (n) => {
        attempts++;
        return n === 0 ? new Promise<string>(() => {}) : Promise.resolve("late but fine");
      },
      { ...policy, attemptTimeoutMs: 5 },
    );
    expect({ got, attempts }).toEqual({ got: "late but fine", attempts: 2 });
  });

  test("the defaults allow ten attempts within a minute", () => {
    expect(DEFAULT_RETRY).toMatchObject({ attempts: 10, deadlineMs: 60_000 });
  });
});
