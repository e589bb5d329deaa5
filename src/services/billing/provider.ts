// The payment provider behind a small interface, so another provider can be added beside the
// first (SPEC §1 item 6). The adapter speaks the provider's API and its event format; the
// billing services see only these shapes.
import { AppError } from "../../errors.ts";
import type { Plan } from "./plan.ts";

/** A subscription as the provider reports it, already mapped onto our plans. */
export interface ProviderSubscription {
  id: string;
  customerId: string;
  /** The provider's own status word (`active`, `past_due`, `canceled`, …). */
  status: string;
  /** What the status means here: `paid` (in good standing), `past_due` (payment failing) or `free` (ended, or never paid). */
  plan: Plan;
  /** End of the current period, epoch milliseconds (null when the provider gave none). */
  currentPeriodEnd: number | null;
  /** Seats the provider bills (the quantity of the seat price). */
  quantity: number;
  /** Our org id when the provider carried it back (metadata), else null. */
  orgId: string | null;
}

/** A verified provider event, normalized. `at` is the provider's own timestamp (epoch ms). */
export type ProviderEvent =
  | { kind: "checkout.completed"; id: string; at: number; customerId: string | null; subscriptionId: string | null; orgId: string | null }
  | { kind: "subscription.updated" | "subscription.deleted"; id: string; at: number; subscription: ProviderSubscription }
  | { kind: "invoice.paid" | "invoice.failed"; id: string; at: number; customerId: string | null; subscriptionId: string | null; periodEnd: number | null }
  | { kind: "ignored"; id: string; at: number; type: string };

/** What a payment provider does for us. Every call answers within the timeout or throws `ProviderUnreachable`. */
export interface BillingProvider {
  /** The provider's name, as configured (`stripe`). */
  readonly name: string;
  /** Creates the customer record an org is billed as. */
  createCustomer(input: { orgId: string; orgName: string }): Promise<{ id: string }>;
  /** A hosted checkout page subscribing `customerId` to `seats` seats of the configured price. */
  checkout(input: { customerId: string; orgId: string; seats: number; successUrl: string; cancelUrl: string }): Promise<{ url: string }>;
  /** A hosted billing portal session for the customer, coming back to `returnUrl`. */
  portal(input: { customerId: string; returnUrl: string }): Promise<{ url: string }>;
  /** The subscription as it is now, or null when the provider does not know it. */
  subscription(id: string): Promise<ProviderSubscription | null>;
  /** Sets the billed seat quantity of a subscription; answers the subscription after the change. */
  setSeats(subscriptionId: string, seats: number): Promise<ProviderSubscription>;
  /** The price of one seat in cents, or null when the provider does not say (cached by the adapter). */
  seatPriceCents(): Promise<number | null>;
  /**
   * Verifies a delivery's signature over the raw body at time `at` (epoch ms) and parses it;
   * null when the signature is missing, wrong or outside the tolerance.
   */
  verifyEvent(rawBody: string, headers: Headers, at: number): Promise<ProviderEvent | null>;
  /** Whether the headers carry a signature in the provider's shape (checked before the body is read). */
  signatureShapeOk(headers: Headers): boolean;
}

/** 502: the provider could not be reached, timed out, or refused what we asked. */
export function ProviderUnreachable(detail: string): AppError {
  return new AppError("upstream", `payment provider unreachable: ${detail}`);
}
