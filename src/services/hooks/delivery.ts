// Sending repository events to their webhooks (SPEC §6.1).
//
// The "webhooks" event subscriber queues one delivery per hook per event, inside the event's
// transaction, numbered in the hook's own sequence: the event commits with its deliveries or not
// at all, and a restart finds them in the table. The worker sends, for each hook, only the first
// pending delivery of its queue, so a hook receives events in the order they happened; different
// hooks proceed side by side. A failed attempt is retried three times, after 10 s, 60 s and
// 5 min (SPEC §8: 3 retries); while a delivery waits for its retry, the hook's later deliveries
// wait behind it. Each attempt is recorded (status, error, duration) and measured as
// `webhook.delivery`.
//
// The request: POST of `{ event, repo_id, payload }` with `X-Svc-Signature-256:
// sha256=<hex HMAC-SHA256 of the body with the hook's secret>`, `X-Svc-Event`, `X-Svc-Delivery`
// (the same on every attempt, so a receiver can drop a repeat). The receiver is untrusted: its
// address is checked on every attempt (egress.ts), redirects are not followed, at most 64 KiB
// of its answer is read, and the whole attempt has 10 seconds.
import { createHmac } from "node:crypto";
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { recordMetricIn } from "../metrics/record.ts";
import { EgressError, egressFetch, parseEgressUrl } from "./egress.ts";
import type { RepoEvent } from "../events/types.ts";
import * as store from "./store.ts";

/** Waits before the three retries of a failed delivery. */
export const RETRY_DELAYS_MS = [10_000, 60_000, 300_000] as const;
/** Time for one attempt, from connecting to the last byte read. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Bytes of the receiver's answer read at most. */
export const RESPONSE_CAP_BYTES = 64 * 1024;
/** How long a worker holds a delivery it is sending (longer than an attempt can take). */
const LEASE_MS = ATTEMPT_TIMEOUT_MS + 20_000;
/** Finished deliveries and their attempts are kept this long. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600 * 1000;
const USER_AGENT = "svc-webhooks/0.1";
const SHUTDOWN = "server stopping";

/** The signature header value for `body` under `secret`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** The event subscriber: one queued delivery per hook of the repository, in the event's transaction. */
export async function queueDeliveries(ctx: Ctx, tx: Tx, event: RepoEvent): Promise<void> {
  const hooks = await store.hooksForEvent(tx, event.repoId);
  if (hooks.length === 0) return;
  const body = JSON.stringify({ event: event.kind, repo_id: event.repoId, payload: event.payload });
  const t = now();
  for (const h of hooks) {
    await store.queueDelivery(tx, { id: newId(), webhookId: h.id, orgId: event.orgId, repoId: event.repoId, eventId: event.id, event: event.kind, seq: h.lastSeq + 1, body, nextAttemptAt: t, createdAt: t });
  }
  // The delivery worker is woken once this commits.
  ctx.signals.notify("work", "webhook.deliver", tx);
}

/** What one attempt came to. */
interface Outcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** Reads and drops up to `cap` bytes of a response body. */
async function drain(res: Response, cap: number): Promise<void> {
  if (!res.body) return;
  const reader = res.body.getReader();
  let read = 0;
  try {
    while (read < cap) {
      const { value, done } = await reader.read();
      if (done) return;
      read += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** One POST to the receiver. */
async function attempt(ctx: Ctx, d: store.ClaimedDelivery, stop: AbortSignal, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([timeout, stop]);
  const took = () => Math.round(performance.now() - started);
  try {
    const res = await egressFetch(parseEgressUrl(d.url, "webhook url"), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "x-svc-event": d.event,
        "x-svc-delivery": d.id,
        "x-svc-signature-256": signature(d.secret, d.body),
      },
      body: d.body,
      signal,
      allowPrivate: ctx.config.webhookAllowPrivate,
    });
    await drain(res, RESPONSE_CAP_BYTES);
    const s = res.status;
    if (s >= 200 && s < 300) return { statusCode: s, error: null, durationMs: took() };
    const error = s >= 300 && s < 400 ? `receiver redirected (HTTP ${s}); redirects are not followed` : `receiver answered HTTP ${s}`;
    return { statusCode: s, error, durationMs: took() };
  } catch (e) {
    let error: string;
    if (stop.aborted) error = SHUTDOWN;
    else if (timeout.aborted) error = `timed out after ${timeoutMs / 1000} s`;
    else if (e instanceof EgressError) error = e.message;
    else error = `connection failed: ${(e as { code?: string }).code ?? (e instanceof Error ? e.message : String(e))}`;
    return { statusCode: null, error, durationMs: took() };
  }
}

/** Records an attempt and moves the delivery on: delivered, retried later, or failed for good. */
async function record(ctx: Ctx, d: store.ClaimedDelivery, o: Outcome): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    if (!(await store.deliveryExists(tx, d.id))) return;
    const n = d.attempts + 1;
    const t = now();
    await store.insertAttempt(tx, { deliveryId: d.id, webhookId: d.webhookId, event: d.event, attempt: n, statusCode: o.statusCode, error: o.error, durationMs: o.durationMs, deliveredAt: t });
    if (o.error === null) await store.finishDelivery(tx, d.id, "delivered", n, t);
    else if (n > RETRY_DELAYS_MS.length) await store.finishDelivery(tx, d.id, "failed", n, t);
    else await store.retryDelivery(tx, d.id, n, t + RETRY_DELAYS_MS[n - 1]!);
    await recordMetricIn(tx, { orgId: d.orgId, repoId: d.repoId, kind: "webhook.delivery", bytes: Buffer.byteLength(d.body), durationMs: o.durationMs });
  });
}

/** Sends one claimed delivery and records the outcome (a stop releases it unrecorded). */
async function send(ctx: Ctx, d: store.ClaimedDelivery, stop: AbortSignal, timeoutMs = ATTEMPT_TIMEOUT_MS): Promise<void> {
  const o = await attempt(ctx, d, stop, timeoutMs);
  if (o.error === SHUTDOWN) {
    await ctx.db.transaction((tx) => store.releaseDeliveries(tx, [d.id]));
    return;
  }
  await record(ctx, d, o);
}

/** One pass: claims up to `limit` due deliveries (one per hook), sends them side by side, records them. */
export async function deliverDue(ctx: Ctx, opts: { limit?: number; timeoutMs?: number } = {}): Promise<number> {
  const claimed = await ctx.db.transaction((tx) => {
    const t = now();
    return store.claimDue(tx, t, opts.limit ?? 16, t + LEASE_MS);
  });
  const stop = new AbortController().signal;
  await Promise.all(claimed.map((d) => send(ctx, d, stop, opts.timeoutMs)));
  return claimed.length;
}

/** The delivery worker of `svc serve`: up to `concurrency` hooks at once, each in its own order. */
export function startDeliveryWorker(ctx: Ctx, opts: { concurrency?: number; pollMs?: number } = {}) {
  const concurrency = opts.concurrency ?? 16;
  const pollMs = opts.pollMs ?? 1000;
  const stopper = new AbortController();
  const inflight = new Set<Promise<void>>();
  let wake: (() => void) | null = null;
  let poked = false;
  const poke = () => {
    poked = true;
    wake?.();
  };
  const unsubscribe = ctx.signals.subscribe("work", (kind) => {
    if (kind === "webhook.deliver") poke();
  });
  const loop = async () => {
    while (!stopper.signal.aborted) {
      poked = false;
      const free = concurrency - inflight.size;
      let claimed: store.ClaimedDelivery[] = [];
      let due: number | null = null;
      try {
        if (free > 0) {
          claimed = await ctx.db.transaction((tx) => {
            const t = now();
            return store.claimDue(tx, t, free, t + LEASE_MS);
          });
        }
        if (claimed.length === 0 && !poked) due = await store.nextDueAt(ctx.db.read);
      } catch (error) {
        // Why: a busy or failing database must not end the loop for good (as the job loop); try again after a poll.
        ctx.log.error("webhook claim failed", { error: String(error) });
      }
      for (const d of claimed) {
        const p: Promise<void> = send(ctx, d, stopper.signal)
          .catch((error) => ctx.log.error("webhook delivery failed", { delivery_id: d.id, error: String(error) }))
          .finally(() => {
            inflight.delete(p);
            poke();
          });
        inflight.add(p);
      }
      if (claimed.length > 0 || poked) continue;
      const wait = due === null ? pollMs : Math.max(0, Math.min(pollMs, due - now()));
      if (wait === 0 && free > 0) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait > 0 ? wait : pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  };
  const done = loop().catch((error) => ctx.log.error("webhook worker stopped", { error: String(error) }));
  return {
    /** Stops claiming, aborts attempts in flight (released for the next start) and waits for them. */
    async stop() {
      unsubscribe();
      stopper.abort();
      wake?.();
      await done;
      await Promise.all(inflight);
    },
  };
}

/** Deletes finished deliveries older than the retention period. */
export async function pruneDeliveries(ctx: Ctx): Promise<number> {
  return ctx.db.transaction((tx) => store.pruneFinished(tx, now() - DELIVERY_RETENTION_MS));
}
