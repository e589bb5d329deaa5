// What an organization may do on its plan: pure rules over the org row, the configuration and
// counts (docs/api.md "Billing"). Access asks these through its facts; GET billing shows them.
import type { BillingConfig } from "../../config.ts";

export type Plan = "free" | "paid" | "past_due";

/** The parts of an org row the rules read. */
export interface PlanOrg {
  name: string;
  kind: "org" | "personal";
  plan: Plan;
  paidSeats: number;
}

/** The billing screen of this deployment: the only address the provider's pages return to. */
export function billingScreen(baseUrl: string, orgName: string): string {
  return `${baseUrl}/settings/orgs/${encodeURIComponent(orgName)}/billing`;
}

/** Whether the rules apply at all: a provider is configured and the namespace is an organization. */
function billed(cfg: BillingConfig | null, org: PlanOrg): cfg is BillingConfig {
  return cfg !== null && org.kind === "org";
}

/**
 * Why writes to a private repository are refused now (a `quota:` sentence), or null. Only an
 * organization without a subscription in force (never subscribed, or cancelled: plan `free`) is
 * blocked; `past_due` keeps writing while the provider retries the card.
 */
export function writeBlocked(cfg: BillingConfig | null, baseUrl: string, org: PlanOrg, repo: { public: boolean }): string | null {
  if (!billed(cfg, org) || repo.public || org.plan !== "free") return null;
  return `quota: ${org.name} has no active subscription, so its private repositories are read-only; an administrator can subscribe at ${billingScreen(baseUrl, org.name)}`;
}

/** Why a private repository cannot be created (or a public one made private) now, or null. */
export function privateRepoRefusal(cfg: BillingConfig | null, baseUrl: string, org: PlanOrg): string | null {
  if (!billed(cfg, org) || org.plan === "paid") return null;
  return org.plan === "past_due"
    ? `quota: ${org.name}'s last payment failed; private repositories can be added again once it is settled at ${billingScreen(baseUrl, org.name)}`
    : `quota: private repositories need a subscription; an administrator can subscribe at ${billingScreen(baseUrl, org.name)}`;
}

/**
 * Why nobody more can be invited now, or null. `held` counts members plus pending invitations:
 * on the free plan (and while a payment fails) they may not exceed the free seats; a paid plan
 * takes everyone, and the subscription's quantity follows.
 */
export function addPeopleRefusal(cfg: BillingConfig | null, baseUrl: string, org: PlanOrg, held: number): string | null {
  if (!billed(cfg, org) || org.plan === "paid" || cfg.freeSeats === null || held < cfg.freeSeats) return null;
  return `quota: ${org.name} holds all ${cfg.freeSeats} seats of the free plan (members and pending invitations); an administrator can subscribe at ${billingScreen(baseUrl, org.name)}`;
}

/** The CI minutes of one month: limit (null = unlimited) and what paid seats add. */
export function minutesLimit(cfg: BillingConfig | null, org: PlanOrg): { free: number | null; perSeat: number | null; limit: number | null } {
  if (!cfg) return { free: null, perSeat: null, limit: null };
  const perSeat = org.kind === "org" ? cfg.minutesPerSeat : null;
  if (cfg.freeMinutes === null) return { free: null, perSeat, limit: null };
  if (org.kind === "org" && org.plan !== "free") {
    return { free: cfg.freeMinutes, perSeat, limit: perSeat === null ? null : cfg.freeMinutes + perSeat * org.paidSeats };
  }
  return { free: cfg.freeMinutes, perSeat, limit: cfg.freeMinutes };
}

/** The calendar month (UTC) containing `t`: the window CI minutes are counted in. */
export function monthOf(t: number): { from: number; to: number } {
  const d = new Date(t);
  return { from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), to: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

/** The `ci_suspended_reason` sentence of an org past its monthly hosted minutes. */
export function minutesExhausted(org: PlanOrg, limit: number, baseUrl: string): string {
  return `quota: ${org.name} has used its ${limit} hosted CI minutes for this month; hosted jobs resume next month, or when a subscription adds minutes at ${billingScreen(baseUrl, org.name)}`;
}
