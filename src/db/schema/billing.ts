// Billing: the payment provider's events already applied (idempotency by event id). The billing
// state itself lives on the org row (plan, status, period end, seats, provider ids).
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One provider event, recorded when it was applied (or knowingly ignored); its id is the provider's. */
export const billingEvents = sqliteTable(
  "billing_events",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id"),
    type: text("type").notNull(),
    /** The provider's own timestamp of the event, epoch milliseconds. */
    providerAt: integer("provider_at").notNull(),
    /** What the event did: `applied`, `stale` (older than the state it would replace) or `unmatched`. */
    outcome: text("outcome").notNull(),
    receivedAt: integer("received_at").notNull(),
  },
  (t) => [index("billing_events_org_idx").on(t.orgId, t.receivedAt)],
);
