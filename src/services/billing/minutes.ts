// Hosted CI minutes: the CI domain records them (ci_minutes); billing decides at trigger time
// whether an org may start more hosted jobs this month (SPEC §2.12, DECISIONS §3 workflows).
import type { Queryable, Tx } from "../../db/database.ts";
import { recordAudit } from "../audit/record.ts";
import { now, type Ctx } from "../context.ts";
import { minutesExhausted, minutesLimit, monthOf } from "./plan.ts";
import { hostedMinutesUsed, orgById, setCiSuspension } from "./store.ts";

/**
 * Inside the CI trigger's transaction: the reason hosted jobs of `orgId` are refused now (the
 * org's `ci_suspended_reason`, recorded with its time when it starts), or null. A suspension is
 * lifted, and recorded as lifted, the first time a trigger finds minutes left again.
 */
export async function hostedCiRefusal(ctx: Ctx, tx: Tx, orgId: string): Promise<string | null> {
  const org = await orgById(tx, orgId);
  if (!org) return null;
  const { limit } = minutesLimit(ctx.config.billing, org);
  const t = now();
  let reason: string | null = null;
  if (limit !== null) {
    const month = monthOf(t);
    const used = await hostedMinutesUsed(tx, orgId, month.from, month.to, t);
    if (used >= limit) reason = minutesExhausted(org, limit, ctx.baseUrl);
  }
  const actor = { kind: "system" as const, id: null, name: "billing" };
  if (reason && org.ciSuspendedReason === null) {
    await setCiSuspension(tx, orgId, reason, t);
    await recordAudit(tx, { orgId, action: "billing.ci_suspended", actor, target: org.name, data: { reason, limit } });
  } else if (!reason && org.ciSuspendedReason !== null) {
    await setCiSuspension(tx, orgId, null, null);
    await recordAudit(tx, { orgId, action: "billing.ci_resumed", actor, target: org.name, data: { limit } });
  }
  return reason;
}

/** Minutes of the org's hosted CI jobs that started in [from, to) (a running job counts from its start to `t`). */
export async function hostedMinutesIn(q: Queryable, orgId: string, from: number, to: number, t: number): Promise<number> {
  return hostedMinutesUsed(q, orgId, from, to, t);
}
