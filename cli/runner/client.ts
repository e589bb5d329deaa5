// The runner agent's HTTP client: JSON calls with a timeout, and retries with backoff (and a
// progress line on stderr) while the server is unreachable or answering 5xx.

/** An answer the agent acts on. */
export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** Thrown when the agent is stopping: retries give up. */
export class Stopped extends Error {}

/** Where progress lines go (stderr), and the agent's stop signal. */
export interface CallOptions {
  token: string;
  method?: string;
  body?: unknown;
  /** Per-attempt timeout. */
  timeoutMs?: number;
  /** Retry network errors and 5xx until this signal aborts (default: retry forever). */
  stop?: AbortSignal;
  /** Give up after this many failed attempts (default: never). */
  attempts?: number;
  /** What the call is, for progress lines. */
  what: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

const MAX_BACKOFF_MS = 30_000;

/** Sleeps `ms`, or less when `stop` aborts. */
export function pause(ms: number, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stop?.addEventListener("abort", done);
  });
}

/** Prints one line on stderr, prefixed like every agent line. */
export function say(line: string): void {
  process.stderr.write(`svc runner: ${line}\n`);
}

/** One JSON call to `url`, retried with backoff on network errors and 5xx answers. */
export async function call(url: string, o: CallOptions): Promise<Answer> {
  let failures = 0;
  for (;;) {
    if (o.stop?.aborted) throw new Stopped("stopping");
    let problem: string;
    try {
      const headers: Record<string, string> = { ...o.headers, authorization: `Bearer ${o.token}`, "user-agent": "svc-runner" };
      if (o.body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(url, {
        method: o.method ?? "GET",
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
      });
      const text = await res.text();
      let body: any = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      if (res.status < 500) {
        if (failures) say(`server reachable again (${o.what})`);
        return { status: res.status, body, headers: res.headers };
      }
      problem = `server answered ${res.status}${body?.error ? `: ${body.error}` : ""}`;
    } catch (error) {
      const e = error as { name?: string; code?: string; message?: string };
      problem = e.name === "TimeoutError" ? "no answer in time" : `server unreachable (${e.code ?? e.message ?? String(error)})`;
    }
    failures++;
    if (o.attempts !== undefined && failures >= o.attempts) throw new Error(`${o.what}: ${problem}`);
    const wait = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(failures - 1, 6));
    say(`${o.what}: ${problem}; retrying in ${(wait / 1000).toFixed(1)}s (attempt ${failures})`);
    await pause(wait, o.stop);
  }
}
