// The orgs domain's queries: organizations, memberships, teams and invitations. Async, so
// another database changes this file, not the services.
import { and, eq, sql } from "drizzle-orm";
import { memberships, orgs, teamMembers, teams, users, type Membership, type Org, type Role } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";

export type Team = typeof teams.$inferSelect;

// ---- organizations and memberships ----------------------------------------------------------

/** Creates an organization row. */
export async function insertOrg(tx: Tx, org: Org): Promise<void> {
  tx.insert(orgs).values(org).run();
}

/** Adds a membership (the caller checked there is none). */
export async function insertMembership(tx: Tx, m: Membership): Promise<void> {
  tx.insert(memberships).values(m).run();
}

/** Changes a member's role. */
export async function setMembershipRole(tx: Tx, orgId: string, userId: string, role: Role): Promise<void> {
  tx.update(memberships)
    .set({ role })
    .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
    .run();
}

/** Ends a membership and, with it, the person's seats in the org's teams (SPEC §5.2). */
export async function deleteMembership(tx: Tx, orgId: string, userId: string): Promise<void> {
  tx.delete(memberships)
    .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
    .run();
  tx.delete(teamMembers)
    .where(and(eq(teamMembers.userId, userId), sql`${teamMembers.teamId} IN (SELECT id FROM teams WHERE org_id = ${orgId})`))
    .run();
}

/** How many people hold a seat (every membership counts). */
export async function seatCount(q: Queryable, orgId: string): Promise<number> {
  return q.select({ n: sql<number>`count(*)` }).from(memberships).where(eq(memberships.orgId, orgId)).get()!.n;
}

/** How many owners the org has. */
export async function ownerCount(q: Queryable, orgId: string): Promise<number> {
  return q
    .select({ n: sql<number>`count(*)` })
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), eq(memberships.role, "owner")))
    .get()!.n;
}

/** A member row as the members list shows it (email included; the service decides who sees it). */
export interface MemberRow {
  user_id: string;
  handle: string;
  name: string;
  role: Role;
  email: string;
}

/** A page of the org's members by folded handle, after the folded handle `after`. */
export async function listMembers(q: Queryable, orgId: string, page: { after: string | null; limit: number }): Promise<MemberRow[]> {
  return q
    .select({ user_id: users.id, handle: users.handle, name: users.name, role: memberships.role, email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(page.after === null ? eq(memberships.orgId, orgId) : and(eq(memberships.orgId, orgId), sql`lower(${users.handle}) > ${page.after}`))
    .orderBy(sql`lower(${users.handle})`)
    .limit(page.limit)
    .all();
}

/** One member of the org, or null when the person is not one. */
export async function member(q: Queryable, orgId: string, userId: string): Promise<MemberRow | null> {
  return (
    q
      .select({ user_id: users.id, handle: users.handle, name: users.name, role: memberships.role, email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
      .get() ?? null
  );
}

// ---- teams ----------------------------------------------------------------------------------

/** The team `ref` of an org: its id or its name (case-insensitive), or null. */
export async function teamByRef(q: Queryable, orgId: string, ref: string): Promise<Team | null> {
  return (
    q
      .select()
      .from(teams)
      .where(and(eq(teams.orgId, orgId), sql`(${teams.id} = ${ref} OR lower(${teams.name}) = lower(${ref}))`))
      .get() ?? null
  );
}

/** Whether the org has a team named `name` (case-insensitive). */
export async function teamNameTaken(q: Queryable, orgId: string, name: string): Promise<boolean> {
  return !!q
    .select({ id: teams.id })
    .from(teams)
    .where(and(eq(teams.orgId, orgId), sql`lower(${teams.name}) = lower(${name})`))
    .get();
}

/** A page of the org's teams by folded name, after the folded name `after`, with member counts. */
export async function listTeams(q: Queryable, orgId: string, page: { after: string | null; limit: number }): Promise<(Team & { memberCount: number })[]> {
  return q
    .select({
      id: teams.id,
      orgId: teams.orgId,
      name: teams.name,
      description: teams.description,
      createdAt: teams.createdAt,
      memberCount: sql<number>`(SELECT count(*) FROM team_members tm WHERE tm.team_id = teams.id)`,
    })
    .from(teams)
    .where(page.after === null ? eq(teams.orgId, orgId) : and(eq(teams.orgId, orgId), sql`lower(${teams.name}) > ${page.after}`))
    .orderBy(sql`lower(${teams.name})`)
    .limit(page.limit)
    .all();
}

/** Creates a team. */
export async function insertTeam(tx: Tx, team: Team): Promise<void> {
  tx.insert(teams).values(team).run();
}

/** Deletes a team; its memberships and grants go with it (foreign keys cascade). */
export async function deleteTeam(tx: Tx, teamId: string): Promise<void> {
  tx.delete(teams).where(eq(teams.id, teamId)).run();
}

/** A page of a team's members by folded handle, after the folded handle `after`. */
export async function listTeamMembers(
  q: Queryable,
  teamId: string,
  page: { after: string | null; limit: number },
): Promise<{ user_id: string; handle: string; name: string }[]> {
  return q
    .select({ user_id: users.id, handle: users.handle, name: users.name })
    .from(teamMembers)
    .innerJoin(users, eq(users.id, teamMembers.userId))
    .where(page.after === null ? eq(teamMembers.teamId, teamId) : and(eq(teamMembers.teamId, teamId), sql`lower(${users.handle}) > ${page.after}`))
    .orderBy(sql`lower(${users.handle})`)
    .limit(page.limit)
    .all();
}

/** Adds a person to a team (no-op when already in it). */
export async function addTeamMember(tx: Tx, teamId: string, userId: string, createdAt: number): Promise<void> {
  tx.insert(teamMembers).values({ teamId, userId, createdAt }).onConflictDoNothing().run();
}

/** Removes a person from a team; false when they were not in it. */
export async function removeTeamMember(tx: Tx, teamId: string, userId: string): Promise<boolean> {
  return (
    tx
      .delete(teamMembers)
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId)))
      .returning()
      .all().length > 0
  );
}

/** The person's role in the org, or null when not a member. */
export async function membershipRole(q: Queryable, orgId: string, userId: string): Promise<Role | null> {
  return (
    q
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
      .get()?.role ?? null
  );
}
