// Organizations, their members and their billing view (SPEC §4.4, §2.12, §2.13; DECISIONS §3).
import { and, eq, sql } from "drizzle-orm";
import { Conflict, Forbidden, NotFound, Unauthorized, Unprocessable } from "../../errors.ts";
import { memberships, orgs, repos, teamMembers, teams, users, type Org, type Role } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { newId } from "../../util/ids.ts";
import { ROLES, emptyOrg, namespaceFree } from "../people/accounts.ts";
import { authorize } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findUserId, requireOrg } from "../access/lookup.ts";
import { checkNamespaceName } from "./names.ts";
import { personOf, type Principal } from "../access/principal.ts";

/** Count of people holding a seat (every membership). */
function seatCount(db: DbOrTx, orgId: string): number {
  return db.select({ n: sql<number>`count(*)` }).from(memberships).where(eq(memberships.orgId, orgId)).get()!.n;
}

/** POST /v1/orgs: a confirmed person creates an org and becomes its owner. */
export function createOrg(ctx: Ctx, actor: Principal, input: { name: unknown }) {
  if (actor.kind === "anonymous") throw Unauthorized();
  const person = personOf(actor);
  // Why: an org needs an owner, and a service token belongs to nobody (SPEC §4.4).
  if (!person) throw Forbidden("service tokens cannot create organizations");
  if (actor.kind === "token" && !actor.token.scopes.includes("org:admin")) throw Forbidden("creating an organization with a token needs the org:admin scope");
  if (person.emailVerifiedAt === null) throw Forbidden("confirm your email address before creating an organization");
  const name = checkNamespaceName(input.name);
  return ctx.db.transaction((tx) => {
    if (!namespaceFree(tx, name)) throw Conflict(`the name ${name} is taken or reserved`);
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
  }, { behavior: "immediate" });
}

/** GET /v1/orgs/{org}/members: every member; addresses only for admins. */
export function listMembers(ctx: Ctx, actor: Principal, orgName: string) {
  const org = requireOrg(ctx, orgName);
  authorize(ctx, actor, org, "org:read");
  let showEmail = true;
  try {
    authorize(ctx, actor, org, "org:admin");
  } catch {
    showEmail = false;
  }
  const rows = ctx.db
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
export function setMemberRole(ctx: Ctx, actor: Principal, orgName: string, userRef: string, input: { role: unknown }) {
  const org = requireOrg(ctx, orgName);
  const actorRole = authorize(ctx, actor, org, "org:admin");
  if (!ROLES.includes(input.role as Role)) throw Unprocessable(`role must be one of ${ROLES.join(", ")}`);
  const role = input.role as Role;
  return ctx.db.transaction((tx) => {
    const userId = findUserId(tx, userRef);
    const current = userId && tx.select().from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).get();
    if (!userId || !current) throw NotFound("member not found");
    // Why: only an owner may make or unmake owners; otherwise an admin could seize the org.
    if ((role === "owner" || current.role === "owner") && actorRole !== "owner" && personOf(actor) !== null) {
      throw Forbidden("only an owner can grant or remove the owner role");
    }
    if (current.role === "owner" && role !== "owner" && ownerCount(tx, org.id) <= 1) {
      throw Conflict("an organization must keep at least one owner");
    }
    tx.update(memberships).set({ role }).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).run();
    const u = tx.select({ handle: users.handle, name: users.name }).from(users).where(eq(users.id, userId)).get()!;
    return { user_id: userId, handle: u.handle, name: u.name, role };
  }, { behavior: "immediate" });
}

/** DELETE /v1/orgs/{org}/members/{user}: an admin removes someone, or a member leaves. */
export function removeMember(ctx: Ctx, actor: Principal, orgName: string, userRef: string): void {
  const org = requireOrg(ctx, orgName);
  const me = personOf(actor);
  const self = me !== null && (me.id === userRef || me.handle.toLowerCase() === userRef.toLowerCase());
  const actorRole = authorize(ctx, actor, org, self ? "org:member" : "org:admin");
  ctx.db.transaction((tx) => {
    const userId = findUserId(tx, userRef);
    const current = userId && tx.select().from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).get();
    if (!userId || !current) throw NotFound("member not found");
    if (current.role === "owner" && !self && actorRole !== "owner" && personOf(actor) !== null) {
      throw Forbidden("only an owner can remove an owner");
    }
    if (current.role === "owner" && ownerCount(tx, org.id) <= 1) throw Conflict("an organization must keep at least one owner");
    tx.delete(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).run();
    // Team membership requires org membership (SPEC §5.2).
    const orgTeams = tx.select({ id: teams.id }).from(teams).where(eq(teams.orgId, org.id)).all().map((t) => t.id);
    for (const teamId of orgTeams) tx.delete(teamMembers).where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId))).run();
  }, { behavior: "immediate" });
}

/** GET /v1/orgs/{org}/billing: the provider-less view until a payment provider is configured. */
export function getBilling(ctx: Ctx, actor: Principal, orgName: string) {
  const org = requireOrg(ctx, orgName);
  // SPEC §4.4: 404 for "no such org or not yours".
  authorize(ctx, actor, org, "org:admin", undefined, { maskForbidden: true });
  const privateRepos = ctx.db.select({ n: sql<number>`count(*)` }).from(repos).where(and(eq(repos.orgId, org.id), eq(repos.public, false))).get()!.n;
  return {
    org: org.name,
    plan: org.plan,
    billable_seats: org.kind === "personal" ? 1 : seatCount(ctx.db, org.id),
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

/**
 * Why a repository may not be written now (`quota: …`), or null. Billing fills this in; without a
 * payment provider nothing is ever blocked.
 */
export function writeBlockedReason(ctx: Ctx, _org: Org, _repo: { public: boolean }): string | null {
  if (!ctx.config.billing) return null;
  return null;
}
