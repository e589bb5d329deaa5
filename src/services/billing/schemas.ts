// Request and response shapes of billing (SPEC §2.12, §4.4; DECISIONS §3 Billing).
import { Type, type Static } from "@sinclair/typebox";
import { NullableString } from "../schemas.ts";

const NullableInteger = (description?: string) => Type.Union([Type.Integer(), Type.Null()], description ? { description } : {});

/** GET /v1/orgs/{org}/billing (SPEC §2.12). */
export const Billing = Type.Object(
  {
    org: Type.String(),
    plan: Type.Union([Type.Literal("free"), Type.Literal("paid"), Type.Literal("past_due")]),
    billable_seats: Type.Integer({ description: "people holding a membership (viewers included): the seats that would be charged now" }),
    paid_seats: Type.Integer({ description: "seats the provider was told; catches up with billable_seats after a membership change" }),
    status: NullableString({ description: "the provider's subscription status (`active`, `past_due`, `canceled`, …); null before any subscription" }),
    current_period_end: NullableInteger("epoch milliseconds"),
    may_create_public: Type.Boolean(),
    may_create_private: Type.Boolean(),
    may_add_people: Type.Boolean(),
    price_per_seat_cents: NullableInteger("null where nothing is for sale"),
    paid_minutes_per_seat: NullableInteger("hosted CI minutes a month each paid seat adds; null where nothing is for sale"),
    free_minutes: NullableInteger("hosted CI minutes a month included; null means unlimited"),
    ci_minutes_limit: NullableInteger("this month's hosted CI minutes; null means unlimited"),
    ci_minutes_used: Type.Integer({ description: "hosted CI minutes used this calendar month (UTC); a running job counts from its start" }),
    ci_minutes_remaining: NullableInteger("null means unlimited"),
    ci_suspended_reason: NullableString({ description: "why hosted jobs are refused at trigger time (a `quota:` sentence), or null" }),
    ci_suspended_at: NullableInteger("epoch milliseconds"),
    private_repos: Type.Integer({ description: "active private repositories" }),
  },
  {
    examples: [
      {
        org: "acme",
        plan: "paid",
        billable_seats: 4,
        paid_seats: 4,
        status: "active",
        current_period_end: 1767225600000,
        may_create_public: true,
        may_create_private: true,
        may_add_people: true,
        price_per_seat_cents: 900,
        paid_minutes_per_seat: 1000,
        free_minutes: 2000,
        ci_minutes_limit: 6000,
        ci_minutes_used: 312,
        ci_minutes_remaining: 5688,
        ci_suspended_reason: null,
        ci_suspended_at: null,
        private_repos: 2,
      },
    ],
  },
);
export type Billing = Static<typeof Billing>;

/** POST …/billing (portal) and POST …/billing/subscribe with Accept: application/json (checkout). */
export const BillingLink = Type.Object(
  { url: Type.String({ description: "the provider's page; open it in the browser" }), kind: Type.Union([Type.Literal("portal"), Type.Literal("checkout")]) },
  { examples: [{ url: "https://billing.stripe.com/p/session/test_YWNtZQ", kind: "portal" }] },
);
export type BillingLink = Static<typeof BillingLink>;

/** The answer to a provider event delivery. */
export const EventReceipt = Type.Object(
  {
    received: Type.Literal(true),
    outcome: Type.Union([Type.Literal("applied"), Type.Literal("duplicate"), Type.Literal("stale"), Type.Literal("unmatched"), Type.Literal("ignored")], {
      description: "applied; duplicate (event id seen before); stale (older than the state in force); unmatched (no org); ignored (a kind we do not act on)",
    }),
  },
  { examples: [{ received: true, outcome: "applied" }] },
);
export type EventReceipt = Static<typeof EventReceipt>;
