// The billing domain's queries: the org's billing columns, provider events, seats and invitations held.
import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
import type { billingEvents, Org } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import type { Plan } from "./plan.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";
import { x } from "../../db/dialect.ts";

/** The org with id `id`, or null. */
export async function orgById(q: Queryable, id: string): Promise<Org | null> {
  const { orgs } = tables(q);
  return one(await q.select().from(orgs).where(eq(orgs.id, id)).limit(1)) ?? null;
}

/** The org billed as provider customer `customerId`, or null. */
export async function orgByCustomer(q: Queryable, customerId: string): Promise<Org | null> {
  const { orgs } = tables(q);
  return one(await q.select().from(orgs).where(eq(orgs.providerCustomerId, customerId)).limit(1)) ?? null;
}

/** How many private repositories the org holds. */
export async function privateRepoCount(q: Queryable, orgId: string): Promise<number> {
  const { repos } = tables(q);
  return one(
    await q
      .select({ n: count() })
      .from(repos)
      // `IS FALSE`: an equality on `public` would let SQLite read explore's (public, active_at) index instead of the org's.
      .where(and(eq(repos.orgId, orgId), sql`${repos.public} IS FALSE`))
      .limit(1),
  )!.n;
}

/** Minutes (the ci_minutes meter CI writes) used by the org's hosted jobs that started in [from, to); a running job counts from its start. */
export async function hostedMinutesUsed(q: Queryable, orgId: string, from: number, to: number, t: number): Promise<number> {
  const { ciMinutes } = tables(q);
  const row = one(
    await q
      .select({
        n: sql<number>`CAST(coalesce(sum(coalesce(${ciMinutes.minutes}, ${x(q).greatest(sql`1`, sql`(${t} - ${ciMinutes.startedAt} + 59999) / 60000`)})), 0) AS BIGINT)`,
      })
      .from(ciMinutes)
      .where(and(eq(ciMinutes.orgId, orgId), eq(ciMinutes.hosted, true), sql`${ciMinutes.startedAt} >= ${from}`, sql`${ciMinutes.startedAt} < ${to}`))
      .limit(1),
  );
  return row?.n ?? 0;
}

/** How many people hold a seat: every membership, viewers included. */
export async function seatCount(q: Queryable, orgId: string): Promise<number> {
  const { memberships } = tables(q);
  return one(await q.select({ n: count() }).from(memberships).where(eq(memberships.orgId, orgId)).limit(1))!.n;
}

/** Seats held or promised: memberships plus pending, unexpired invitations. */
export async function seatsHeld(q: Queryable, orgId: string, t: number): Promise<number> {
  const { invites } = tables(q);
  const members = await seatCount(q, orgId);
  const pending = one(
    await q
      .select({ n: count() })
      .from(invites)
      .where(and(eq(invites.orgId, orgId), isNull(invites.acceptedAt), gt(invites.expiresAt, t)))
      .limit(1),
  )!.n;
  return members + pending;
}

/** Records the provider customer of an org unless one is already recorded; answers the one in force. */
export async function claimCustomer(tx: Tx, orgId: string, customerId: string): Promise<string | null> {
  const { orgs } = tables(tx);
  await tx
    .update(orgs)
    .set({ providerCustomerId: customerId })
    .where(and(eq(orgs.id, orgId), isNull(orgs.providerCustomerId)));
  return one(await tx.select({ id: orgs.providerCustomerId }).from(orgs).where(eq(orgs.id, orgId)).limit(1))?.id ?? null;
}

/** Whether the provider event `id` was already recorded. */
export async function eventSeen(q: Queryable, id: string): Promise<boolean> {
  const { billingEvents } = tables(q);
  return !!one(await q.select({ id: billingEvents.id }).from(billingEvents).where(eq(billingEvents.id, id)).limit(1));
}

/** Records a provider event and what it did. */
export async function insertEvent(tx: Tx, row: typeof billingEvents.$inferInsert): Promise<void> {
  const { billingEvents } = tables(tx);
  await tx.insert(billingEvents).values(row);
}

/** The subscription state an event moves an org to. */
export interface BillingState {
  plan: Plan;
  billingStatus: string | null;
  currentPeriodEnd: number | null;
  paidSeats: number;
  providerSubscriptionId: string | null;
  billingEventAt: number;
}

/** Writes an org's subscription state. */
export async function setBillingState(tx: Tx, orgId: string, s: BillingState): Promise<void> {
  const { orgs } = tables(tx);
  await tx.update(orgs).set(s).where(eq(orgs.id, orgId));
}

/** Records the seats the provider now bills, if the subscription is still the org's. */
export async function setPaidSeats(tx: Tx, orgId: string, subscriptionId: string, seats: number): Promise<void> {
  const { orgs } = tables(tx);
  await tx
    .update(orgs)
    .set({ paidSeats: seats })
    .where(and(eq(orgs.id, orgId), eq(orgs.providerSubscriptionId, subscriptionId)));
}

/** Sets (or clears, with nulls) why hosted CI jobs are refused. */
export async function setCiSuspension(tx: Tx, orgId: string, reason: string | null, at: number | null): Promise<void> {
  const { orgs } = tables(tx);
  await tx.update(orgs).set({ ciSuspendedReason: reason, ciSuspendedAt: at }).where(eq(orgs.id, orgId));
}
