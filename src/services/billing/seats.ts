// Seats: a membership change (the internal event `membership.changed`, which orgs and people emit
// and src/wiring.ts routes here) queues a `billing.seats` job in its own transaction; the job tells
// the provider the new quantity (retried with backoff by the job worker) and records what the
// provider now bills as paid_seats. The request that changed the membership never waits on it.
import type { Tx } from "../../db/database.ts";
import { recordAudit } from "../audit/record.ts";
import type { Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import { providerOf } from "./configured.ts";
import { orgById, seatCount, setPaidSeats } from "./store.ts";

/** The payload of a `billing.seats` job. */
export interface SeatsPayload {
  orgId: string;
}

/** Telling the provider an org's seat count; one pending per org (later changes fold into it). */
export const BILLING_SEATS = jobKind<SeatsPayload>("billing.seats", { key: (p) => `org:${p.orgId}`, unique: (p) => p.orgId });

/** Subscriber of `membership.changed`, in the transaction that added or removed a membership: queues the quantity update when the org pays. */
export async function seatsChanged(ctx: Ctx, tx: Tx, { orgId }: { orgId: string }): Promise<void> {
  const org = await orgById(tx, orgId);
  if (!org || org.kind !== "org" || org.providerSubscriptionId === null || org.plan === "free") return;
  await ctx.work.enqueue(tx, BILLING_SEATS, { orgId });
}

/** The `billing.seats` worker: sets the subscription's quantity to the seats in use (idempotent). */
export async function syncSeats(ctx: Ctx, p: SeatsPayload): Promise<void> {
  const provider = providerOf(ctx);
  const org = await orgById(ctx.db.read, p.orgId);
  if (!provider || !org || org.providerSubscriptionId === null || org.plan === "free") return;
  const seats = Math.max(1, await seatCount(ctx.db.read, org.id));
  if (seats === org.paidSeats) return;
  // Network first, outside any transaction; a failure throws and the worker retries later.
  const sub = await provider.setSeats(org.providerSubscriptionId, seats);
  await ctx.db.transaction(async (tx) => {
    const current = await orgById(tx, org.id);
    if (!current || current.providerSubscriptionId !== sub.id || current.paidSeats === sub.quantity) return;
    await setPaidSeats(tx, org.id, sub.id, sub.quantity);
    await recordAudit(tx, {
      orgId: org.id,
      action: "billing.seats_updated",
      actor: { kind: "system", id: null, name: provider.name },
      target: org.name,
      data: { from: current.paidSeats, to: sub.quantity, subscription: sub.id },
    });
  });
}
