// Billing routes' services: the billing view, the provider's portal and its checkout
// (SPEC §2.12, §4.4; DECISIONS §3 Billing). Provider calls happen outside any transaction.
import { AppError, Conflict, Invalid, PaymentRequired } from "../../errors.ts";
import type { Org } from "../../db/schema/index.ts";
import { allows, enforce, decide, orgFacts } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { auditActor, recordAudit } from "../audit/record.ts";
import { now, type Ctx } from "../context.ts";
import { providerOf } from "./configured.ts";
import { billingScreen, minutesLimit, monthOf } from "./plan.ts";
import type { BillingProvider } from "./provider.ts";
import type { Billing, BillingLink } from "./schemas.ts";
import { claimCustomer, hostedMinutesUsed, privateRepoCount, seatCount } from "./store.ts";

/** GET /v1/orgs/{org}/billing: the stored state, the plan's quotas through access, this month's minutes. */
export async function getBilling(ctx: Ctx, actor: Principal, orgName: string): Promise<Billing> {
  // SPEC §4.4: 404 for "no such org or not yours".
  const { org, facts } = await orgFacts(ctx, actor, orgName, { quota: true });
  enforce(decide(facts, "org:admin-masked"));
  const cfg = ctx.config.billing;
  const t = now();
  const month = monthOf(t);
  const [privateRepos, seats, used] = await Promise.all([
    privateRepoCount(ctx.db.read, org.id),
    org.kind === "personal" ? 1 : seatCount(ctx.db.read, org.id),
    hostedMinutesUsed(ctx.db.read, org.id, month.from, month.to, t),
  ]);
  const minutes = minutesLimit(cfg, org);
  const forSale = cfg !== null && org.kind === "org";
  const price = forSale ? await providerOf(ctx)!.seatPriceCents() : null;
  return {
    org: org.name,
    plan: org.plan,
    billable_seats: seats,
    paid_seats: org.paidSeats,
    status: org.billingStatus,
    current_period_end: org.currentPeriodEnd,
    may_create_public: true,
    may_create_private: allows(facts, { kind: "quota", what: "private-repo" }),
    may_add_people: allows(facts, { kind: "quota", what: "people" }),
    price_per_seat_cents: price,
    paid_minutes_per_seat: forSale ? minutes.perSeat : null,
    free_minutes: minutes.free,
    ci_minutes_limit: minutes.limit,
    ci_minutes_used: used,
    ci_minutes_remaining: minutes.limit === null ? null : Math.max(0, minutes.limit - used),
    ci_suspended_reason: org.ciSuspendedReason,
    ci_suspended_at: org.ciSuspendedAt,
    private_repos: privateRepos,
  };
}

/** The checks POST billing and subscribe share: admin (404 otherwise), a provider (503), an organization (400). */
async function billingTarget(ctx: Ctx, actor: Principal, orgName: string): Promise<{ org: Org; provider: BillingProvider }> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, "org:admin-masked"));
  const provider = providerOf(ctx);
  if (!provider) throw new AppError("unavailable", "billing is not configured on this deployment");
  if (org.kind !== "org") throw Invalid("a personal namespace has no subscription; billing applies to organizations");
  return { org, provider };
}

/** Whether the org has a subscription in force (paid or past due). */
function subscribed(org: Org): boolean {
  return org.providerSubscriptionId !== null && org.plan !== "free";
}

/**
 * POST /v1/orgs/{org}/billing: a portal session at the provider. Its return address is always
 * this deployment's billing screen; nothing the caller sends can change it.
 */
export async function openPortal(ctx: Ctx, actor: Principal, orgName: string): Promise<BillingLink> {
  const { org, provider } = await billingTarget(ctx, actor, orgName);
  if (!subscribed(org) || org.providerCustomerId === null) {
    throw PaymentRequired(`card: ${org.name} has no subscription yet; subscribe first at ${billingScreen(ctx.baseUrl, org.name)}`);
  }
  // Why fixed: a caller-chosen return address would make our portal link an open redirect.
  const { url } = await provider.portal({ customerId: org.providerCustomerId, returnUrl: billingScreen(ctx.baseUrl, org.name) });
  return { url, kind: "portal" };
}

/**
 * POST /v1/orgs/{org}/billing/subscribe: a checkout page for the seats in use. The provider
 * customer is created on first use and recorded (that is all this writes); the subscription
 * itself arrives later as a provider event. 409 when a subscription is already in force.
 */
export async function startCheckout(ctx: Ctx, actor: Principal, orgName: string): Promise<BillingLink> {
  const { org, provider } = await billingTarget(ctx, actor, orgName);
  if (subscribed(org)) throw Conflict(`${org.name} already has a subscription; manage it with POST /v1/orgs/${org.name}/billing`);
  let customerId = org.providerCustomerId;
  if (customerId === null) {
    const created = await provider.createCustomer({ orgId: org.id, orgName: org.name });
    // Two racing first checkouts: the first recorded customer wins; the other is left unused at the provider.
    customerId = await ctx.db.transaction(async (tx) => {
      const kept = await claimCustomer(tx, org.id, created.id);
      if (kept === created.id) {
        await recordAudit(tx, {
          orgId: org.id,
          action: "billing.customer_created",
          actor: auditActor(actor),
          target: org.name,
          data: { provider: provider.name, customer: created.id },
        });
      }
      return kept;
    });
    if (customerId === null) throw new Error("unreachable: the org vanished while subscribing");
  }
  const seats = Math.max(1, await seatCount(ctx.db.read, org.id));
  const screen = billingScreen(ctx.baseUrl, org.name);
  const { url } = await provider.checkout({
    customerId,
    orgId: org.id,
    seats,
    successUrl: `${screen}?checkout=done`,
    cancelUrl: `${screen}?checkout=cancelled`,
  });
  return { url, kind: "checkout" };
}
