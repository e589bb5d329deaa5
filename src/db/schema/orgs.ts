// Namespaces (organizations and personal namespaces), memberships, teams and invitations.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { users } from "./people.ts";

export const orgs = sqliteTable(
  "orgs",
  {
    id: id(),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["org", "personal"] }).notNull(),
    ownerUserId: text("owner_user_id").references(() => users.id, { onDelete: "cascade" }),
    displayName: text("display_name"),
    description: text("description"),
    location: text("location"),
    website: text("website"),
    contactEmail: text("contact_email"),
    plan: text("plan", { enum: ["free", "paid", "past_due"] })
      .notNull()
      .default("free"),
    billingStatus: text("billing_status"),
    currentPeriodEnd: integer("current_period_end"),
    paidSeats: integer("paid_seats").notNull().default(0),
    providerCustomerId: text("provider_customer_id"),
    providerSubscriptionId: text("provider_subscription_id"),
    /** The provider's timestamp of the last subscription state applied (out-of-order events lose to it). */
    billingEventAt: integer("billing_event_at"),
    ciSuspendedReason: text("ci_suspended_reason"),
    ciSuspendedAt: integer("ci_suspended_at"),
    runnerPolicy: text("runner_policy", { mode: "json" }).$type<{ hosted: string; self_hosted: string; self_hosted_repos: string[] }>(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("orgs_name_uq").on(sql`lower(${t.name})`), index("orgs_provider_customer_idx").on(t.providerCustomerId)],
);

export const memberships = sqliteTable(
  "memberships",
  {
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["viewer", "member", "admin", "owner"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] }), index("memberships_user_idx").on(t.userId)],
);

export const teams = sqliteTable(
  "teams",
  {
    id: id(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("teams_org_name_uq").on(t.orgId, sql`lower(${t.name})`)],
);

export const teamMembers = sqliteTable(
  "team_members",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.userId] }), index("team_members_user_idx").on(t.userId)],
);

export const invites = sqliteTable(
  "invites",
  {
    id: id(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: ["viewer", "member", "admin", "owner"] }).notNull(),
    secretHash: text("secret_hash").notNull(),
    expiresAt: integer("expires_at").notNull(),
    acceptedAt: integer("accepted_at"),
    createdBy: text("created_by"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("invites_hash_uq").on(t.secretHash), index("invites_org_idx").on(t.orgId)],
);
