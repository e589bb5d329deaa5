// The Stripe adapter: the official SDK pointed at SVC_STRIPE_API_BASE (host, port and protocol, so
// tests talk to a local stand-in), 10 s timeouts, and Stripe's event and signature formats.
import Stripe from "stripe";
import type { BillingConfig } from "../../config.ts";
import { now } from "../../util/clock.ts";
import type { Plan } from "./plan.ts";
import { ProviderUnreachable, type BillingProvider, type ProviderEvent, type ProviderSubscription } from "./provider.ts";

/** Every provider call gives up after this long (then answers 502). */
const TIMEOUT_MS = 10_000;
/** Signed deliveries older (or newer) than this are refused: a captured delivery cannot be replayed later. */
const TOLERANCE_S = 300;
/** How long a fetched seat price is trusted, and how long a failed fetch is not retried. */
const PRICE_TTL_MS = 10 * 60_000;
const PRICE_RETRY_MS = 60_000;

/** What each Stripe subscription status means for the plan. */
const PLAN_OF_STATUS: Readonly<Record<string, Plan>> = {
  active: "paid",
  trialing: "paid",
  past_due: "past_due",
  unpaid: "past_due",
  canceled: "free",
  incomplete: "free",
  incomplete_expired: "free",
  paused: "free",
};

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 && v.length <= 255 ? v : null);
const int = (v: unknown): number | null => (typeof v === "number" && Number.isSafeInteger(v) ? v : null);
/** An expandable reference: Stripe sends either the id or the object carrying it. */
const ref = (v: unknown): string | null => str(v) ?? str(obj(v).id);
const firstItem = (sub: Obj): Obj => obj((obj(sub.items).data as unknown[] | undefined)?.[0]);

/** A Stripe subscription object mapped onto our shape. */
export function subscriptionOf(raw: unknown): ProviderSubscription | null {
  const s = obj(raw);
  const id = str(s.id);
  const customerId = ref(s.customer);
  const status = str(s.status);
  if (!id || !customerId || !status) return null;
  const item = firstItem(s);
  // Why both places: newer API versions moved the period end from the subscription to its items.
  const periodEnd = int(s.current_period_end) ?? int(item.current_period_end);
  return {
    id,
    customerId,
    status,
    plan: PLAN_OF_STATUS[status] ?? "free",
    currentPeriodEnd: periodEnd === null ? null : periodEnd * 1000,
    quantity: Math.max(0, int(item.quantity) ?? int(s.quantity) ?? 0),
    orgId: str(obj(s.metadata).org_id),
  };
}

/** A verified Stripe event mapped onto our event kinds (null when its envelope is malformed). */
export function eventOf(raw: unknown): ProviderEvent | null {
  const e = obj(raw);
  const id = str(e.id);
  const type = str(e.type);
  const created = int(e.created);
  if (!id || !type || created === null) return null;
  const at = created * 1000;
  const o = obj(obj(e.data).object);
  switch (type) {
    case "checkout.session.completed":
      return {
        kind: "checkout.completed",
        id,
        at,
        customerId: ref(o.customer),
        subscriptionId: ref(o.subscription),
        orgId: str(o.client_reference_id) ?? str(obj(o.metadata).org_id),
      };
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted": {
      const subscription = subscriptionOf(o);
      if (!subscription) return null;
      return { kind: type === "customer.subscription.deleted" ? "subscription.deleted" : "subscription.updated", id, at, subscription };
    }
    case "invoice.paid":
    case "invoice.payment_succeeded":
    case "invoice.payment_failed": {
      // Why both places: newer API versions moved the subscription under `parent`.
      const subscriptionId = ref(o.subscription) ?? ref(obj(obj(o.parent).subscription_details).subscription);
      const line = obj((obj(o.lines).data as unknown[] | undefined)?.[0]);
      const end = int(obj(line.period).end);
      return {
        kind: type === "invoice.payment_failed" ? "invoice.failed" : "invoice.paid",
        id,
        at,
        customerId: ref(o.customer),
        subscriptionId,
        periodEnd: end === null ? null : end * 1000,
      };
    }
    default:
      return { kind: "ignored", id, at, type };
  }
}

/** Why a call failed, in words safe to show (never the key or the request). */
function failure(error: unknown): Error {
  if (error instanceof Stripe.errors.StripeConnectionError) return ProviderUnreachable("no answer from the payment provider");
  if (error instanceof Stripe.errors.StripeError) return ProviderUnreachable(`the payment provider answered ${error.statusCode ?? "an error"}`);
  return ProviderUnreachable("the call to the payment provider failed");
}

/** Stripe, through its official SDK. */
export class StripeProvider implements BillingProvider {
  readonly name = "stripe";
  private readonly stripe: Stripe;
  private price: { cents: number | null; until: number } | null = null;

  constructor(private readonly cfg: BillingConfig) {
    const base = new URL(cfg.apiBase);
    const protocol = base.protocol === "http:" ? "http" : "https";
    this.stripe = new Stripe(cfg.secretKey, {
      host: base.hostname.replace(/^\[|\]$/g, ""),
      port: base.port ? Number(base.port) : protocol === "http" ? 80 : 443,
      protocol,
      timeout: TIMEOUT_MS,
      // Why no SDK retries: a request answers 502 at once; durable jobs retry with backoff.
      maxNetworkRetries: 0,
      telemetry: false,
      appInfo: { name: "svc" },
    });
  }

  private async call<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (error) {
      throw failure(error);
    }
  }

  async createCustomer(input: { orgId: string; orgName: string }): Promise<{ id: string }> {
    const c = await this.call(() => this.stripe.customers.create({ name: input.orgName, metadata: { org_id: input.orgId } }));
    return { id: c.id };
  }

  async checkout(input: { customerId: string; orgId: string; seats: number; successUrl: string; cancelUrl: string }): Promise<{ url: string }> {
    const s = await this.call(() =>
      this.stripe.checkout.sessions.create({
        mode: "subscription",
        customer: input.customerId,
        client_reference_id: input.orgId,
        line_items: [{ price: this.cfg.priceId, quantity: Math.max(1, input.seats) }],
        allow_promotion_codes: true,
        subscription_data: { metadata: { org_id: input.orgId } },
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
      }),
    );
    if (!s.url) throw ProviderUnreachable("the checkout session came back without an address");
    return { url: s.url };
  }

  async portal(input: { customerId: string; returnUrl: string }): Promise<{ url: string }> {
    const s = await this.call(() => this.stripe.billingPortal.sessions.create({ customer: input.customerId, return_url: input.returnUrl }));
    return { url: s.url };
  }

  async subscription(id: string): Promise<ProviderSubscription | null> {
    try {
      return subscriptionOf(await this.stripe.subscriptions.retrieve(id));
    } catch (error) {
      if (error instanceof Stripe.errors.StripeError && error.statusCode === 404) return null;
      throw failure(error);
    }
  }

  async setSeats(subscriptionId: string, seats: number): Promise<ProviderSubscription> {
    const current = await this.call(() => this.stripe.subscriptions.retrieve(subscriptionId));
    const itemId = str(firstItem(current as unknown as Obj).id);
    if (!itemId) throw ProviderUnreachable("the subscription has no seat item");
    const updated = await this.call(() =>
      this.stripe.subscriptions.update(subscriptionId, { items: [{ id: itemId, quantity: Math.max(1, seats) }], proration_behavior: "create_prorations" }),
    );
    const out = subscriptionOf(updated);
    if (!out) throw ProviderUnreachable("the provider answered a malformed subscription");
    return out;
  }

  async seatPriceCents(): Promise<number | null> {
    const t = now();
    if (this.price && t < this.price.until) return this.price.cents;
    try {
      const p = await this.stripe.prices.retrieve(this.cfg.priceId);
      this.price = { cents: int(p.unit_amount), until: t + PRICE_TTL_MS };
    } catch {
      // Why cached as unknown for a while: the billing view must not wait on a provider that is down.
      this.price = { cents: this.price?.cents ?? null, until: t + PRICE_RETRY_MS };
    }
    return this.price.cents;
  }

  signatureShapeOk(headers: Headers): boolean {
    // `Stripe-Signature: t=<unix seconds>,v1=<64 hex>[,v1=…][,v0=…]`, as Stripe documents it.
    const header = headers.get("stripe-signature");
    return !!header && header.length <= 4096 && /(?:^|,)\s*t=\d{1,12}\s*(?:,|$)/.test(header) && /(?:^|,)\s*v1=[0-9a-fA-F]{64}\s*(?:,|$)/.test(header);
  }

  async verifyEvent(rawBody: string, headers: Headers, at: number): Promise<ProviderEvent | null> {
    const header = headers.get("stripe-signature");
    if (!header || header.length > 4096) return null;
    // The SDK refuses old timestamps; a timestamp from the future is refused here too.
    const t = Number(/(?:^|,)\s*t=(\d{1,12})(?:,|$)/.exec(header)?.[1] ?? NaN);
    if (!Number.isFinite(t) || t * 1000 > at + TOLERANCE_S * 1000) return null;
    let event: unknown;
    try {
      // Why the SDK: it compares every v1 signature in constant time over `timestamp.body`.
      event = await this.stripe.webhooks.constructEventAsync(rawBody, header, this.cfg.webhookSecret, TOLERANCE_S, undefined, at);
    } catch {
      return null;
    }
    return eventOf(event);
  }
}
