// Provider events at POST /webhooks/billing: verified by the provider's signature, applied once
// per event id, and ordered by the provider's own timestamps so a late delivery never undoes a
// newer state. They move plan, status, current_period_end and paid_seats (SPEC §3.2, DECISIONS §3).
import type { Org } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { AppError, Invalid } from "../../errors.ts";
import { recordAudit } from "../audit/record.ts";
import { now, type Ctx } from "../context.ts";
import { BILLING_SEATS } from "./seats.ts";
import { providerOf } from "./configured.ts";
import type { ProviderEvent, ProviderSubscription } from "./provider.ts";
import * as store from "./store.ts";

/** Largest event body read (the provider's events are far smaller). */
export const EVENT_BODY_LIMIT = 1024 * 1024;

/**
 * What can be refused from the headers alone, before the body is read (issue 25 row 7): 503
 * without a provider, 400 when the signature header is missing or not in the provider's shape.
 */
export function checkEventHeaders(ctx: Ctx, headers: Headers): void {
  const provider = providerOf(ctx);
  if (!provider) throw new AppError("unavailable", "billing is not configured on this deployment");
  if (!provider.signatureShapeOk(headers)) throw Invalid("the billing event's signature is missing, wrong or too old");
}

/** What a delivery did: applied, a repeat of one already recorded, stale, for nobody we know, or not a kind we act on. */
export type EventOutcome = "applied" | "duplicate" | "stale" | "unmatched" | "ignored";

/** The answer to the provider. */
export interface EventReceipt {
  received: true;
  outcome: EventOutcome;
}

/** The org an event is about: by the provider customer recorded for it, else by the org id it carried back. */
async function orgOf(q: Tx, customerId: string | null, orgId: string | null): Promise<Org | null> {
  const byCustomer = customerId ? await store.orgByCustomer(q, customerId) : null;
  if (byCustomer) return byCustomer;
  const byId = orgId ? await store.orgById(q, orgId) : null;
  // Why: an org id in metadata only counts when the customer is unknown or is this org's own.
  if (byId && byId.kind === "org" && (byId.providerCustomerId === null || byId.providerCustomerId === customerId)) return byId;
  return null;
}

/**
 * Whether an event at `at` about `subscriptionId` is older than the org's state. Equal
 * timestamps apply, except after the same subscription ended (an ended subscription stays ended).
 */
function stale(org: Org, at: number, subscriptionId: string | null): boolean {
  if (org.billingEventAt === null) return false;
  if (at < org.billingEventAt) return true;
  return at === org.billingEventAt && org.plan === "free" && org.providerSubscriptionId === subscriptionId && org.billingStatus === "canceled";
}

/** Applies a subscription's state to an org (inside the event's transaction); answers the outcome. */
async function applySubscription(ctx: Ctx, tx: Tx, org: Org, sub: ProviderSubscription, at: number, ended: boolean): Promise<EventOutcome> {
  // Why: the end of a subscription the org already replaced says nothing about the new one.
  if (org.providerSubscriptionId !== null && org.providerSubscriptionId !== sub.id && (ended || sub.plan === "free")) return "stale";
  if (stale(org, at, sub.id)) return "stale";
  await store.setBillingState(tx, org.id, {
    plan: ended ? "free" : sub.plan,
    billingStatus: ended ? "canceled" : sub.status,
    currentPeriodEnd: sub.currentPeriodEnd,
    paidSeats: ended ? 0 : sub.quantity,
    providerSubscriptionId: sub.id,
    billingEventAt: at,
  });
  if (org.providerCustomerId === null) await store.claimCustomer(tx, org.id, sub.customerId);
  // Seats that changed before the subscription arrived (or while it was paused) reach the provider now.
  if (!ended && sub.plan !== "free" && (await store.seatCount(tx, org.id)) !== sub.quantity) await ctx.work.enqueue(tx, BILLING_SEATS, { orgId: org.id });
  return "applied";
}

/** The audit action of an applied event. */
const AUDIT_ACTION: Readonly<Record<Exclude<ProviderEvent["kind"], "ignored">, string>> = {
  "checkout.completed": "billing.subscribed",
  "subscription.updated": "billing.subscription_updated",
  "subscription.deleted": "billing.subscription_ended",
  "invoice.paid": "billing.payment_succeeded",
  "invoice.failed": "billing.payment_failed",
};

/**
 * POST /webhooks/billing. 503 without a provider, 400 for a missing or wrong signature (or one
 * outside the 5-minute tolerance), 502 when a checkout's subscription cannot be fetched (the
 * provider redelivers); otherwise 200 with what the event did, a repeat included.
 */
export async function receiveEvent(ctx: Ctx, rawBody: Uint8Array, headers: Headers): Promise<EventReceipt> {
  const provider = providerOf(ctx);
  if (!provider) throw new AppError("unavailable", "billing is not configured on this deployment");
  const event = await provider.verifyEvent(new TextDecoder().decode(rawBody), headers, now());
  if (!event) throw Invalid("the billing event's signature is missing, wrong or too old");
  if (await store.eventSeen(ctx.db.read, event.id)) return { received: true, outcome: "duplicate" };

  // A completed checkout names its subscription; its state is fetched before the transaction.
  let checkoutSub: ProviderSubscription | null = null;
  if (event.kind === "checkout.completed" && event.subscriptionId) checkoutSub = await provider.subscription(event.subscriptionId);

  const outcome = await ctx.db.transaction(async (tx): Promise<EventOutcome> => {
    if (await store.eventSeen(tx, event.id)) return "duplicate";
    const org = await targetOf(tx, event, checkoutSub);
    let result: EventOutcome;
    if (event.kind === "ignored") result = "ignored";
    else if (!org) result = "unmatched";
    else result = await apply(ctx, tx, org, event, checkoutSub);
    await store.insertEvent(tx, {
      id: event.id,
      orgId: org?.id ?? null,
      type: event.kind === "ignored" ? event.type : event.kind,
      providerAt: event.at,
      outcome: result,
      receivedAt: now(),
    });
    if (result === "applied" && org && event.kind !== "ignored") {
      const after = (await store.orgById(tx, org.id))!;
      await recordAudit(tx, {
        orgId: org.id,
        action: AUDIT_ACTION[event.kind],
        actor: { kind: "system", id: null, name: provider.name },
        target: org.name,
        data: { event: event.id, plan: after.plan, status: after.billingStatus, paid_seats: after.paidSeats, current_period_end: after.currentPeriodEnd },
      });
    }
    return result;
  });
  return { received: true, outcome };
}

/** The org an event is about, or null. */
async function targetOf(tx: Tx, event: ProviderEvent, checkoutSub: ProviderSubscription | null): Promise<Org | null> {
  switch (event.kind) {
    case "checkout.completed":
      return orgOf(tx, event.customerId ?? checkoutSub?.customerId ?? null, event.orgId ?? checkoutSub?.orgId ?? null);
    case "subscription.updated":
    case "subscription.deleted":
      return orgOf(tx, event.subscription.customerId, event.subscription.orgId);
    case "invoice.paid":
    case "invoice.failed":
      return orgOf(tx, event.customerId, null);
    case "ignored":
      return null;
  }
}

/** Applies one event to its org; answers the outcome. */
async function apply(
  ctx: Ctx,
  tx: Tx,
  org: Org,
  event: Exclude<ProviderEvent, { kind: "ignored" }>,
  checkoutSub: ProviderSubscription | null,
): Promise<EventOutcome> {
  switch (event.kind) {
    case "checkout.completed":
      if (!checkoutSub) return "unmatched";
      return applySubscription(ctx, tx, org, checkoutSub, event.at, false);
    case "subscription.updated":
      return applySubscription(ctx, tx, org, event.subscription, event.at, false);
    case "subscription.deleted":
      return applySubscription(ctx, tx, org, event.subscription, event.at, true);
    case "invoice.paid":
    case "invoice.failed": {
      // An invoice moves only the subscription in force, and never revives an ended one.
      if (!event.subscriptionId || event.subscriptionId !== org.providerSubscriptionId || org.billingStatus === "canceled") return "stale";
      if (stale(org, event.at, event.subscriptionId)) return "stale";
      const paid = event.kind === "invoice.paid";
      await store.setBillingState(tx, org.id, {
        plan: paid ? "paid" : "past_due",
        billingStatus: paid ? "active" : "past_due",
        currentPeriodEnd: paid && event.periodEnd !== null ? Math.max(event.periodEnd, org.currentPeriodEnd ?? 0) : org.currentPeriodEnd,
        paidSeats: org.paidSeats,
        providerSubscriptionId: org.providerSubscriptionId,
        billingEventAt: event.at,
      });
      return "applied";
    }
  }
}
