// Organizations, their members and their billing view (SPEC §4.4, §2.12, §2.13; DECISIONS §3).
import { and, eq, sql } from "drizzle-orm";
import { Conflict, NotFound, Unprocessable } from "../../errors.ts";
import { memberships, orgs, repos, teamMembers, teams, users, type Org, type Role } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { newId } from "../../util/ids.ts";
import { ROLES, emptyOrg, namespaceAvailable } from "../people/accounts.ts";
import { allows, authorizeAccount, decide, enforce, orgFacts, requireOrgFor } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findUserId } from "../access/lookup.ts";
import { checkNamespaceName } from "./names.ts";
import { personOf, type Principal } from "../access/principal.ts";

/** Count of people holding a seat (every membership). */
function seatCount(db: DbOrTx, orgId: string): number {
  return db.select({ n: sql<number>`count(*)` }).from(memberships).where(eq(memberships.orgId, orgId)).get()!.n;
}

/** POST /v1/orgs: a confirmed person creates an org and becomes its owner. */
export function createOrg(ctx: Ctx, actor: Principal, input: { name: unknown }) {
  authorizeAccount(actor, { kind: "account:create-org" });
  const person = personOf(actor)!;
  const name = checkNamespaceName(input.name);
  return ctx.db.transaction(async (tx) => {
    if (!(await namespaceAvailable(tx, name))) throw Conflict(`the name ${name} is taken or reserved`);
    const org: Org = { ...emptyOrg(), id: newId(), name, kind: "org", createdAt: now() };
    tx.insert(orgs).values(org).run();
    tx.insert(memberships).values({ orgId: org.id, userId: person.id, role: "owner", createdAt: org.createdAt }).run();
    return {
      id: org.id,
      name: org.name,
      plan: "free" as const,
      billable_seats: 1,
      detail: ctx.config.billing
        ? "Created on the free plan; no card was requested. Subscribe from the billing page to add private repositories and people beyond the free allowance."
        : "Created on the free plan. This deployment sells nothing: every feature is available without a subscription.",
    };
  });
}

/** GET /v1/orgs/{org}/members: every member; addresses only for admins. */
export async function listMembers(ctx: Ctx, actor: Principal, orgName: string) {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, "org:read"));
  const showEmail = allows(facts, "org:admin");
  const rows = ctx.db.read
    .select({ user_id: users.id, handle: users.handle, name: users.name, role: memberships.role, email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.orgId, org.id))
    .orderBy(sql`lower(${users.handle})`)
    .all();
  return { members: rows.map(({ email, ...m }) => (showEmail ? { ...m, email } : m)) };
}

function ownerCount(db: DbOrTx, orgId: string): number {
  return db.select({ n: sql<number>`count(*)` }).from(memberships).where(and(eq(memberships.orgId, orgId), eq(memberships.role, "owner"))).get()!.n;
}

/** PUT /v1/orgs/{org}/members/{user}: change a member's role; 409 when no owner would remain. */
export async function setMemberRole(ctx: Ctx, actor: Principal, orgName: string, userRef: string, input: { role: unknown }) {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, "org:admin"));
  if (!ROLES.includes(input.role as Role)) throw Unprocessable(`role must be one of ${ROLES.join(", ")}`);
  const role = input.role as Role;
  return ctx.db.transaction(async (tx) => {
    const userId = await findUserId(tx, userRef);
    const current = userId && tx.select().from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).get();
    if (!userId || !current) throw NotFound("member not found");
    enforce(decide(facts, { kind: "member:set-role", from: current.role, to: role }));
    if (current.role === "owner" && role !== "owner" && ownerCount(tx, org.id) <= 1) {
      throw Conflict("an organization must keep at least one owner");
    }
    tx.update(memberships).set({ role }).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).run();
    const u = tx.select({ handle: users.handle, name: users.name }).from(users).where(eq(users.id, userId)).get()!;
    return { user_id: userId, handle: u.handle, name: u.name, role };
  });
}

/** DELETE /v1/orgs/{org}/members/{user}: an admin removes someone, or a member leaves. */
export async function removeMember(ctx: Ctx, actor: Principal, orgName: string, userRef: string): Promise<void> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  const me = personOf(actor);
  const self = me !== null && (me.id === userRef || me.handle.toLowerCase() === userRef.toLowerCase());
  enforce(decide(facts, self ? "org:member" : "org:admin"));
  await ctx.db.transaction(async (tx) => {
    const userId = await findUserId(tx, userRef);
    const current = userId && tx.select().from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).get();
    if (!userId || !current) throw NotFound("member not found");
    enforce(decide(facts, { kind: "member:remove", role: current.role, self }));
    if (current.role === "owner" && ownerCount(tx, org.id) <= 1) throw Conflict("an organization must keep at least one owner");
    tx.delete(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).run();
    // Team membership requires org membership (SPEC §5.2).
    const orgTeams = tx.select({ id: teams.id }).from(teams).where(eq(teams.orgId, org.id)).all().map((t) => t.id);
    for (const teamId of orgTeams) tx.delete(teamMembers).where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId))).run();
  });
}

/** GET /v1/orgs/{org}/billing: the provider-less view until a payment provider is configured. */
export async function getBilling(ctx: Ctx, actor: Principal, orgName: string) {
  // SPEC §4.4: 404 for "no such org or not yours".
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  const privateRepos = ctx.db.read.select({ n: sql<number>`count(*)` }).from(repos).where(and(eq(repos.orgId, org.id), eq(repos.public, false))).get()!.n;
  return {
    org: org.name,
    plan: org.plan,
    billable_seats: org.kind === "personal" ? 1 : seatCount(ctx.db.read, org.id),
    paid_seats: org.paidSeats,
    status: org.billingStatus,
    current_period_end: org.currentPeriodEnd,
    may_create_public: true,
    may_create_private: true,
    may_add_people: true,
    price_per_seat_cents: null,
    paid_minutes_per_seat: null,
    free_minutes: null,
    ci_minutes_limit: null,
    ci_minutes_used: 0,
    ci_minutes_remaining: null,
    ci_suspended_reason: org.ciSuspendedReason,
    ci_suspended_at: org.ciSuspendedAt,
    private_repos: privateRepos,
  };
}

