// Retries for object-store requests as a real bucket needs them: throttling (503 SlowDown, 429),
// server errors (5xx) and dropped connections are retried with jittered exponential backoff
// ("full jitter": a uniform delay up to base * 2^attempt, capped) within a deadline per
// operation; anything else (missing key, bad credentials) fails at once.

import { StorageError } from "./object-store.ts";

/** How hard one operation tries before it gives up. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Cap of the first backoff; doubles per retry. */
  baseDelayMs: number;
  /** Largest backoff between two attempts. */
  maxDelayMs: number;
  /** The operation gives up once this much time has passed since its first attempt. */
  deadlineMs: number;
  /** One attempt that has not finished after this long counts as a dropped connection. */
  attemptTimeoutMs: number;
}

/** Defaults: 10 attempts, 20 ms doubling to at most 2 s, 60 s in all, 30 s per attempt. */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = { attempts: 10, baseDelayMs: 20, maxDelayMs: 2000, deadlineMs: 60_000, attemptTimeoutMs: 30_000 };

// S3 error codes worth another try (AWS documents these as transient).
const RETRY_CODES: ReadonlySet<string> = new Set([
  "SlowDown",
  "Throttling",
  "ThrottlingException",
  "TooManyRequests",
  "RequestLimitExceeded",
  "InternalError",
  "ServiceUnavailable",
  "RequestTimeout",
]);
// Connection-level failures: the request may or may not have reached the server; every
// operation we retry is idempotent (PUT of the same bytes, GET, HEAD, DELETE, part upload).
const NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "ERR_STREAM_PREMATURE_CLOSE",
  "UND_ERR_SOCKET",
  "ConnectionRefused",
  "ConnectionClosed",
]);
const NETWORK_MESSAGES = /socket hang up|aborted|premature close|other side closed|connection (reset|closed|refused)|ECONNRESET|EPIPE/i;
// minio-js reports a retryable HTTP status (408, 429, 5xx) with this message and no code.
const STATUS_MESSAGE = /Retryable HTTP status: (\d{3})/;

/** A transient failure of one attempt, raised by the backends themselves (e.g. a short body). */
export class TransientError extends Error {
  constructor(
    message: string,
    readonly throttled = false,
  ) {
    super(message);
    this.name = "TransientError";
  }
}

/** How a failed attempt should be treated. */
export type FailureClass = "throttled" | "server" | "network" | "fatal";

/** Classify an error thrown by one attempt. */
export function classify(err: unknown): FailureClass {
  if (err instanceof TransientError) return err.throttled ? "throttled" : "network";
  if (err instanceof StorageError) return "fatal";
  const e = err as { code?: unknown; message?: unknown; statusCode?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  const message = typeof e?.message === "string" ? e.message : "";
  if (code === "SlowDown" || code === "Throttling" || code === "ThrottlingException" || code === "TooManyRequests" || code === "RequestLimitExceeded")
    return "throttled";
  if (RETRY_CODES.has(code)) return "server";
  const status = typeof e?.statusCode === "number" ? e.statusCode : Number(STATUS_MESSAGE.exec(message)?.[1] ?? 0);
  if (status === 503 || status === 429) return "throttled";
  if (status >= 500 || status === 408) return "server";
  if (NETWORK_CODES.has(code) || NETWORK_MESSAGES.test(message)) return "network";
  return "fatal";
}

/** What withRetry reports as it goes (counters). */
export interface RetryObserver {
  onRetry?(cls: FailureClass, attempt: number): void;
  onGiveUp?(): void;
}

/**
 * Run `attempt` until it succeeds, fails fatally, or the policy is exhausted; then throw
 * StorageError("unavailable") naming `what` and the last failure. `attempt` receives the
 * attempt number (0-based). `random` and `sleep` are injectable for tests.
 */
export async function withRetry<T>(
  what: string,
  policy: RetryPolicy,
  attempt: (n: number) => Promise<T>,
  observer: RetryObserver = {},
  random: () => number = Math.random,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  const started = performance.now();
  for (let n = 0; ; n++) {
    let cls: FailureClass;
    let failure: unknown;
    try {
      return await withTimeout(attempt(n), policy.attemptTimeoutMs, what);
    } catch (err) {
      cls = classify(err);
      failure = err;
      if (cls === "fatal") throw err;
    }
    const delay = random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** n);
    const elapsed = performance.now() - started;
    if (n + 1 >= policy.attempts || elapsed + delay >= policy.deadlineMs) {
      observer.onGiveUp?.();
      const reason = failure instanceof Error ? failure.message : String(failure);
      throw new StorageError(`object storage unavailable: ${what} failed after ${n + 1} attempts (${reason})`, "unavailable", { cause: failure });
    }
    observer.onRetry?.(cls, n + 1);
    await sleep(delay);
  }
}

// A hung attempt becomes a transient failure; whatever it later produces is dropped.
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  if (!Number.isFinite(ms) || ms <= 0) return p;
  p.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TransientError(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
