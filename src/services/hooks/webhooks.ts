// Outbound webhook subscriptions of a repository (SPEC §4.6, §6.1; DECISIONS §2): create (the
// secret shown once), list, delete, and the record of delivery attempts. Repository admins only.
import { Invalid, NotFound, Unprocessable } from "../../errors.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import { pageOf, parsePage } from "../paging.ts";
import { EgressError, parseEgressUrl, resolveEgress } from "../../util/egress.ts";
import { WEBHOOK_DELIVER, deliveryKey } from "./delivery.ts";
import {
  WEBHOOK_EVENT_KINDS,
  type Delivery,
  type DeliveryList,
  type Redelivered,
  type Webhook,
  type WebhookCreate,
  type WebhookCreated,
  type WebhookList,
  type WebhookPatch,
} from "./schemas.ts";
import * as store from "./store.ts";

/** At most this many subscriptions per repository. */
export const MAX_WEBHOOKS = 20;
const MAX_URL = 2000;

function deliveryBody(a: store.AttemptRow): Delivery {
  return {
    id: a.deliveryId,
    event: a.event,
    attempt: a.attempt,
    status_code: a.statusCode,
    error: a.error,
    duration_ms: a.durationMs,
    delivered_at: a.deliveredAt,
  };
}

/** A receiver URL as given, refused (400) when malformed or when it resolves to a non-public address (SVC_WEBHOOK_ALLOW_PRIVATE aside). */
async function checkReceiver(ctx: Ctx, raw: string): Promise<string> {
  const url = raw.trim();
  if (url.length > MAX_URL) throw Invalid(`url is longer than ${MAX_URL} characters`);
  try {
    // Why: a receiver authenticates deliveries by their signature; credentials in the URL would be shown in every listing.
    await resolveEgress(parseEgressUrl(url, "url"), ctx.config.webhookAllowPrivate);
  } catch (e) {
    if (e instanceof EgressError) throw Invalid(e.message);
    throw e;
  }
  return url;
}

const KNOWN: ReadonlySet<string> = new Set<string>(WEBHOOK_EVENT_KINDS);

/** The `events` of a create or patch: null (every kind) or a non-empty list of known kinds, deduplicated in the order given. */
function checkEvents(events: string[] | null | undefined): string[] | null {
  if (events === null || events === undefined) return null;
  const unknown = events.filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) throw Unprocessable(`unknown event kind ${JSON.stringify(unknown[0])}; known: ${WEBHOOK_EVENT_KINDS.join(", ")}`);
  if (events.length === 0) throw Unprocessable("events must name at least one kind (null for every kind)");
  return [...new Set(events)];
}

function webhookBody(h: store.WebhookRow, last: store.AttemptRow | undefined): Webhook {
  return { id: h.id, url: h.url, events: h.events ?? null, created_at: h.createdAt, last_delivery: last ? deliveryBody(last) : null };
}

/** POST …/webhooks: subscribes `url` to the repository's events; the secret is in this answer only. */
export async function createWebhook(ctx: Ctx, t: RepoTarget, input: WebhookCreate): Promise<WebhookCreated> {
  need(t, "repo:admin");
  const { repo } = t;
  const events = checkEvents(input.events);
  const url = await checkReceiver(ctx, input.url);
  const row = { id: newId(), repoId: repo.id, url, secret: newSecret(), events, createdAt: now() };
  await ctx.db.transaction(async (tx) => {
    if ((await store.countWebhooks(tx, repo.id)) >= MAX_WEBHOOKS) throw Unprocessable(`a repository has at most ${MAX_WEBHOOKS} webhooks`);
    await store.insertWebhook(tx, row);
  });
  return { id: row.id, url: row.url, secret: row.secret, events, created_at: row.createdAt };
}

/** GET …/webhooks: the subscriptions (never their secrets) with each one's latest attempt. */
export async function listWebhooks(ctx: Ctx, t: RepoTarget): Promise<WebhookList> {
  need(t, "repo:admin");
  const { repo } = t;
  const hooks = await store.webhooksOfRepo(ctx.db.read, repo.id);
  const last = await store.lastAttempts(
    ctx.db.read,
    hooks.map((h) => h.id),
  );
  return { webhooks: hooks.map((h) => webhookBody(h, last.get(h.id))) };
}

/** PATCH …/webhooks/{id}: changes which event kinds the hook receives (deliveries already queued still go). */
export async function updateWebhook(ctx: Ctx, t: RepoTarget, id: string, input: WebhookPatch): Promise<Webhook> {
  need(t, "repo:admin");
  const { repo } = t;
  const events = input.events === undefined ? undefined : checkEvents(input.events);
  const row = await ctx.db.transaction(async (tx) => {
    const h = await store.webhookOfRepo(tx, repo.id, id);
    if (!h) throw NotFound("webhook not found");
    if (events === undefined) return h;
    await store.setWebhookEvents(tx, id, events);
    return { ...h, events };
  });
  const last = await store.lastAttempts(ctx.db.read, [row.id]);
  return webhookBody(row, last.get(row.id));
}

/**
 * POST …/webhooks/{id}/deliveries/{delivery_id}/redeliver: queues a copy of a stored delivery
 * (same event and body, a new id, the hook's next place in order, `redelivery_of` the original)
 * with its job, in one transaction. 404 when the hook or the delivery is unknown or pruned.
 */
export async function redeliver(ctx: Ctx, t: RepoTarget, hookId: string, deliveryId: string): Promise<Redelivered> {
  need(t, "repo:admin");
  const { repo } = t;
  return await ctx.db.transaction(async (tx) => {
    const h = await store.webhookOfRepo(tx, repo.id, hookId);
    if (!h) throw NotFound("webhook not found");
    const d = await store.deliveryOfHook(tx, hookId, deliveryId);
    if (!d) throw NotFound("delivery not found");
    const id = newId();
    const seq = h.lastSeq + 1;
    const at = now();
    await store.queueDelivery(tx, {
      id,
      webhookId: h.id,
      orgId: d.orgId,
      repoId: d.repoId,
      eventId: d.eventId,
      event: d.event,
      seq,
      body: d.body,
      nextAttemptAt: at,
      redeliveryOf: d.id,
      createdAt: at,
    });
    await ctx.work.enqueue(tx, WEBHOOK_DELIVER, { deliveryId: id, webhookId: h.id }, { id, seq });
    return { id };
  });
}

/** DELETE …/webhooks/{id}: nothing more is delivered to it, queued deliveries included. */
export async function deleteWebhook(ctx: Ctx, t: RepoTarget, id: string): Promise<void> {
  need(t, "repo:admin");
  const { repo } = t;
  await ctx.db.transaction(async (tx) => {
    if (!(await store.webhookOfRepo(tx, repo.id, id))) throw NotFound("webhook not found");
    await store.deleteWebhook(tx, id);
    // Its queued deliveries went with it (cascade); their jobs go too.
    await ctx.work.drop(tx, deliveryKey(id));
  });
}

/** GET …/webhooks/{id}/deliveries: every attempt, newest first, a page at a time. */
export async function listDeliveries(ctx: Ctx, t: RepoTarget, id: string, q: { limit?: unknown; cursor?: unknown }): Promise<DeliveryList> {
  need(t, "repo:admin");
  const { repo } = t;
  const page = parsePage(q, (k): k is number => Number.isInteger(k));
  if (!(await store.webhookOfRepo(ctx.db.read, repo.id, id))) throw NotFound("webhook not found");
  const rows = await store.attemptsPage(ctx.db.read, id, page.after, page.limit + 1);
  const { items, next_cursor } = pageOf(rows, page, (a) => a.id);
  return { deliveries: items.map(deliveryBody), next_cursor };
}
