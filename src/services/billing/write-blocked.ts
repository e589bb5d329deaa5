// The billing facts access decides with (SPEC §2.1 write_blocked, §2.12 may_*): a `quota:`
// sentence when the plan refuses, or null. Without a payment provider nothing is ever refused.
// Access asks through `ctx.resolvers.quota` (access/quota.ts), installed from BILLING_QUOTA.
import type { Org } from "../../db/schema/index.ts";
import type { QuotaFacts, QuotaSource } from "../access/quota.ts";
import { now, type Ctx } from "../context.ts";
import { addPeopleRefusal, privateRepoRefusal, writeBlocked } from "./plan.ts";
import { seatsHeld } from "./store.ts";

/** The `quota: …` reason writes to `repo` are refused, or null when writes are allowed. */
export function writeBlockedReason(ctx: Ctx, org: Org, repo: { public: boolean }): string | null {
  return writeBlocked(ctx.config.billing, ctx.baseUrl, org, repo);
}

export type { QuotaFacts };

/** The org's quota facts; counts seats only when the plan could refuse. */
export async function quotaFacts(ctx: Ctx, org: Org): Promise<QuotaFacts> {
  const cfg = ctx.config.billing;
  const needsCount = cfg !== null && org.kind === "org" && org.plan !== "paid" && cfg.freeSeats !== null;
  const held = needsCount ? await seatsHeld(ctx.db.read, org.id, now()) : 0;
  return { privateRepo: privateRepoRefusal(cfg, ctx.baseUrl, org), people: addPeopleRefusal(cfg, ctx.baseUrl, org, held) };
}

/** Billing's answers to access (registered as `ctx.resolvers.quota`). */
export const BILLING_QUOTA: QuotaSource = Object.freeze({ writeBlocked: writeBlockedReason, facts: quotaFacts });
