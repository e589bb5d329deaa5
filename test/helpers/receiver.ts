// A local webhook receiver (Bun.serve on port 0) that records every delivery, checks its
// signature against the secret of the hook it was sent to (one path per hook), and can be told
// to answer with a status, redirect, hold a request until released, or stream an endless body.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Server } from "bun";

/** One request the receiver got. */
export interface Received {
  path: string;
  event: string | null;
  delivery: string | null;
  /** X-Svc-Redelivery-Of: the delivery this one sends again (null on a first delivery). */
  redeliveryOf: string | null;
  signature: string | null;
  /** Whether the signature matched the secret registered for this path (null: no secret known). */
  signed: boolean | null;
  raw: string;
  body: any;
  at: number;
}

/** How a path answers. */
export type Behaviour = { status: number } | { redirect: string } | { hold: Promise<void> } | { endless: true };

/** The receiver: its base URL, what it got, and the knobs. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Registers the secret of the hook at `path` (signatures are checked from then on). */
  secret(path: string, secret: string): void;
  /** Sets how `path` answers (default 200). */
  behave(path: string, b: Behaviour | null): void;
  /** Resolves once `pred(received)` holds (checked on every arrival); rejects after `ms`. */
  until(pred: (r: Received[]) => boolean, ms?: number): Promise<void>;
  of(path: string): Received[];
  stop(): void;
  [Symbol.dispose](): void;
}

function valid(secret: string, raw: string, header: string | null): boolean {
  if (!header?.startsWith("sha256=")) return false;
  const want = createHmac("sha256", secret).update(raw).digest();
  const got = Buffer.from(header.slice(7), "hex");
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Starts a receiver on 127.0.0.1, port 0. */
export function startReceiver(): Receiver {
  const received: Received[] = [];
  const secrets = new Map<string, string>();
  const behaviours = new Map<string, Behaviour>();
  const waiters = new Set<() => void>();
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const raw = await req.text();
      let body: any = null;
      try {
        body = JSON.parse(raw);
      } catch {}
      const secret = secrets.get(path);
      const signature = req.headers.get("x-svc-signature-256");
      received.push({
        path,
        event: req.headers.get("x-svc-event"),
        delivery: req.headers.get("x-svc-delivery"),
        redeliveryOf: req.headers.get("x-svc-redelivery-of"),
        signature,
        signed: secret === undefined ? null : valid(secret, raw, signature),
        raw,
        body,
        at: Date.now(),
      });
      for (const w of waiters) w();
      const b = behaviours.get(path);
      if (b && "hold" in b) await b.hold;
      if (b && "status" in b) return new Response("no", { status: b.status });
      if (b && "redirect" in b) return new Response(null, { status: 302, headers: { location: b.redirect } });
      if (b && "endless" in b) {
        const chunk = new Uint8Array(64 * 1024).fill(0x61);
        return new Response(new ReadableStream({ pull: (c) => c.enqueue(chunk) }), { status: 200 });
      }
      return new Response("ok");
    },
  });
  const stop = () => void server.stop(true);
  return {
    url: `http://127.0.0.1:${server.port}`,
    received,
    secret: (path, s) => void secrets.set(path, s),
    behave: (path, b) => void (b ? behaviours.set(path, b) : behaviours.delete(path)),
    until(pred, ms = 30_000) {
      if (pred(received)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!pred(received)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `receiver: condition not met within ${ms} ms; got ${received.length} requests: ${JSON.stringify(received.map((r) => [r.path, r.body?.event, r.body?.payload]))}`,
            ),
          );
        }, ms);
        waiters.add(check);
      });
    },
    of: (path) => received.filter((r) => r.path === path),
    stop,
    [Symbol.dispose]: stop,
  };
}

/** Polls `check` until it returns a truthy value (an observable condition with no event to wait on); rejects after `ms`. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, ms = 30_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${ms} ms`);
    await Bun.sleep(50);
  }
}
