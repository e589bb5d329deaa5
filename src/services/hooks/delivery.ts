// Sending repository events to their webhooks (SPEC §6.1).
//
// The "webhooks" event subscriber queues one delivery per hook per event, inside the event's
// transaction, numbered in the hook's own sequence, with one `webhook.deliver` job whose key is
// the hook and whose seq is the delivery's: the event commits with its deliveries or not at all,
// and a restart finds them. The engine (services/jobs) runs one job per key at a time, in seq
// order, so a hook receives events in the order they happened and different hooks proceed side
// by side (16 at once). A failed attempt is retried three times, after 10 s, 60 s and 5 min
// (SPEC §8: 3 retries); while a delivery waits for its retry, the hook's later deliveries wait
// behind it. Each attempt is recorded (status, error, duration) with the job's new state in one
// transaction, and measured as `webhook.delivery`.
//
// The request: POST of `{ event, repo_id, payload }` with `X-Svc-Signature-256:
// sha256=<hex HMAC-SHA256 of the body with the hook's secret>`, `X-Svc-Event`, `X-Svc-Delivery`
// (the delivery's id, which is also its job's: the same on every attempt, so a receiver can drop
// a repeat), and on a redelivery `X-Svc-Redelivery-Of` (the original's id; the body is the
// original's, unchanged). The receiver is untrusted: its address is checked on every attempt (egress.ts),
// redirects are not followed, at most 64 KiB of its answer is read, and the whole attempt has 10
// seconds.
import { createHmac } from "node:crypto";
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import type { RepoEvent } from "../events/types.ts";
import { Failure, Released, type Attempt } from "../jobs/engine.ts";
import { jobKind } from "../jobs/kind.ts";
import { recordMetricIn } from "../metrics/record.ts";
import { EgressError, egressFetch, parseEgressUrl } from "../../util/egress.ts";
import * as store from "./store.ts";

/** Waits before the three retries of a failed delivery. */
export const RETRY_DELAYS_MS = [10_000, 60_000, 300_000] as const;
/** Time for one attempt, from connecting to the last byte read. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Bytes of the receiver's answer read at most. */
export const RESPONSE_CAP_BYTES = 64 * 1024;
/** Finished deliveries and their attempts are kept this long. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600 * 1000;
const USER_AGENT = "svc-webhooks/0.1";
const SHUTDOWN = "server stopping";

/** The payload of a `webhook.deliver` job (its id is the delivery's). */
export interface DeliverPayload {
  deliveryId: string;
  webhookId: string;
}

/** The job key of a hook's deliveries: one at a time, in the hook's order. */
export const deliveryKey = (webhookId: string) => `webhook:${webhookId}`;

/** One attempt of one delivery; a hook's deliveries one at a time, in its order. */
export const WEBHOOK_DELIVER = jobKind<DeliverPayload>("webhook.deliver", {
  key: (p) => deliveryKey(p.webhookId),
  concurrency: 16,
  // The lease outlives an attempt (10 s), so a crashed node's delivery is retried by another.
  leaseMs: ATTEMPT_TIMEOUT_MS + 20_000,
  retry: { delaysMs: RETRY_DELAYS_MS },
  timeoutMs: ATTEMPT_TIMEOUT_MS,
});

/** Deleting finished deliveries past the retention period, once an hour across the cluster. */
export const WEBHOOK_PRUNE = jobKind<unknown>("webhook.prune", { every: { ms: 3600 * 1000, scope: "cluster" } });

/** The signature header value for `body` under `secret`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** The event subscriber: one queued delivery (and its job) per hook of the repository that takes the event's kind, in the event's transaction. */
export async function queueDeliveries(ctx: Ctx, tx: Tx, event: RepoEvent): Promise<void> {
  const hooks = await store.hooksForEvent(tx, event.repoId, event.kind);
  if (hooks.length === 0) return;
  const body = JSON.stringify({ event: event.kind, repo_id: event.repoId, payload: event.payload });
  const t = now();
  for (const h of hooks) {
    const id = newId();
    const seq = h.lastSeq + 1;
    await store.queueDelivery(tx, {
      id,
      webhookId: h.id,
      orgId: event.orgId,
      repoId: event.repoId,
      eventId: event.id,
      event: event.kind,
      seq,
      body,
      nextAttemptAt: t,
      createdAt: t,
    });
    await ctx.work.enqueue(tx, WEBHOOK_DELIVER, { deliveryId: id, webhookId: h.id }, { id, seq });
  }
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

/** One POST to the receiver; `signal` aborts at the time limit (a TimeoutError) or when the server stops. */
async function attempt(ctx: Ctx, d: store.DeliveryToSend, signal: AbortSignal, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
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
        ...(d.redeliveryOf ? { "x-svc-redelivery-of": d.redeliveryOf } : {}),
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
    if (signal.aborted) error = (signal.reason as Error | undefined)?.name === "TimeoutError" ? `timed out after ${timeoutMs / 1000} s` : SHUTDOWN;
    else if (e instanceof EgressError) error = e.message;
    else error = `connection failed: ${(e as { code?: string }).code ?? (e instanceof Error ? e.message : String(e))}`;
    return { statusCode: null, error, durationMs: took() };
  }
}

/** The `webhook.deliver` handler: one POST, recorded with the job's new state (a stop gives the job back unrecorded). */
export async function deliver(ctx: Ctx, p: DeliverPayload, at: Attempt): Promise<void> {
  // Gone with its hook (cascade): nothing to send.
  const d = await store.deliveryToSend(ctx.db.read, p.deliveryId);
  if (!d || d.state !== "pending") return;
  const o = await attempt(ctx, d, at.signal, at.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
  if (o.error === SHUTDOWN) throw new Released();
  const record = async (tx: Tx, state: "delivered" | "failed" | "pending") => {
    if (!(await store.deliveryExists(tx, d.id))) return;
    const t = now();
    await store.insertAttempt(tx, {
      deliveryId: d.id,
      webhookId: d.webhookId,
      event: d.event,
      attempt: at.n,
      statusCode: o.statusCode,
      error: o.error,
      durationMs: o.durationMs,
      deliveredAt: t,
    });
    if (state === "pending") await store.retryDelivery(tx, d.id, at.n);
    else await store.finishDelivery(tx, d.id, state, at.n, t);
    await recordMetricIn(ctx, tx, { orgId: d.orgId, repoId: d.repoId, kind: "webhook.delivery", bytes: Buffer.byteLength(d.body), durationMs: o.durationMs });
  };
  if (o.error === null) return at.complete((tx) => record(tx, "delivered"));
  // The engine retries after the next delay (the hook's later deliveries wait), or gives up after the last.
  throw new Failure(o.error, (tx) => record(tx, at.final ? "failed" : "pending"));
}

/**
 * One pass without the server's loop (tests, the CLI): sends every delivery due now, each hook's
 * head only; answers how many were attempted.
 */
export function deliverDue(ctx: Ctx, opts: { limit?: number; timeoutMs?: number } = {}): Promise<number> {
  return ctx.work.runDue({ kinds: [WEBHOOK_DELIVER], limit: opts.limit, timeoutMs: opts.timeoutMs });
}

/** The `webhook.prune` job: deletes finished deliveries older than the retention period. */
export async function pruneDeliveries(ctx: Ctx): Promise<number> {
  return ctx.db.transaction((tx) => store.pruneFinished(tx, now() - DELIVERY_RETENTION_MS));
}
