// The orgs domain's queries: organizations, memberships, teams and invitations. Async, so
// another database changes this file, not the services.
import { and, count, eq, sql } from "drizzle-orm";
import type { teams, Membership, Org, Role } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { statementCache } from "../../db/statements.ts";
import { tables } from "../../db/tables.ts";

const { query } = statementCache("orgs");

export type Team = typeof teams.$inferSelect;

// ---- organizations and memberships ----------------------------------------------------------

/** Creates an organization row. */
export async function insertOrg(tx: Tx, org: Org): Promise<void> {
  const { orgs } = tables(tx);
  await tx.insert(orgs).values(org);
}

/** Adds a membership (the caller checked there is none). */
export async function insertMembership(tx: Tx, m: Membership): Promise<void> {
  const { memberships } = tables(tx);
  await tx.insert(memberships).values(m);
}

/** Changes a member's role. */
export async function setMembershipRole(tx: Tx, orgId: string, userId: string, role: Role): Promise<void> {
  const { memberships } = tables(tx);
  await tx
    .update(memberships)
    .set({ role })
    .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));
}

/** Ends a membership and, with it, the person's seats in the org's teams (SPEC §5.2). */
export async function deleteMembership(tx: Tx, orgId: string, userId: string): Promise<void> {
  const { memberships, teamMembers } = tables(tx);
  await tx.delete(memberships).where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));
  await tx.delete(teamMembers).where(and(eq(teamMembers.userId, userId), sql`${teamMembers.teamId} IN (SELECT id FROM teams WHERE org_id = ${orgId})`));
}

/** How many people hold a seat (every membership counts). */
export async function seatCount(q: Queryable, orgId: string): Promise<number> {
  const { memberships } = tables(q);
  return one(await q.select({ n: count() }).from(memberships).where(eq(memberships.orgId, orgId)).limit(1))!.n;
}

/** How many owners the org has. */
export async function ownerCount(q: Queryable, orgId: string): Promise<number> {
  const { memberships } = tables(q);
  return one(
    await q
      .select({ n: count() })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.role, "owner")))
      .limit(1),
  )!.n;
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
  // Prepared once per connection (the org page asks on every view, issue 33).
  const build = (paged: boolean) => (q: Queryable) => {
    const { users, memberships } = tables(q);
    const inOrg = eq(memberships.orgId, sql.placeholder("orgId"));
    return q
      .select({ user_id: users.id, handle: users.handle, name: users.name, role: memberships.role, email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(paged ? and(inOrg, sql`lower(${users.handle}) > ${sql.placeholder("after")}`) : inOrg)
      .orderBy(sql`lower(${users.handle})`)
      .limit(sql.placeholder("limit"));
  };
  if (page.after === null) return await query(q, "listMembers", build(false)).all({ orgId, limit: page.limit });
  return await query(q, "listMembersAfter", build(true)).all({ orgId, after: page.after, limit: page.limit });
}

/** One member of the org, or null when the person is not one. */
export async function member(q: Queryable, orgId: string, userId: string): Promise<MemberRow | null> {
  const { users, memberships } = tables(q);
  return (
    one(
      await q
        .select({ user_id: users.id, handle: users.handle, name: users.name, role: memberships.role, email: users.email })
        .from(memberships)
        .innerJoin(users, eq(users.id, memberships.userId))
        .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
        .limit(1),
    ) ?? null
  );
}

// ---- teams ----------------------------------------------------------------------------------

/** The team `ref` of an org: its id or its name (case-insensitive), or null. */
export async function teamByRef(q: Queryable, orgId: string, ref: string): Promise<Team | null> {
  const { teams } = tables(q);
  return (
    one(
      await q
        .select()
        .from(teams)
        .where(and(eq(teams.orgId, orgId), sql`(${teams.id} = ${ref} OR lower(${teams.name}) = lower(${ref}))`))
        .limit(1),
    ) ?? null
  );
}

/** Whether the org has a team named `name` (case-insensitive). */
export async function teamNameTaken(q: Queryable, orgId: string, name: string): Promise<boolean> {
  const { teams } = tables(q);
  return !!one(
    await q
      .select({ id: teams.id })
      .from(teams)
      .where(and(eq(teams.orgId, orgId), sql`lower(${teams.name}) = lower(${name})`))
      .limit(1),
  );
}

/** A page of the org's teams by folded name, after the folded name `after`, with member counts. */
export async function listTeams(q: Queryable, orgId: string, page: { after: string | null; limit: number }): Promise<(Team & { memberCount: number })[]> {
  const { teams } = tables(q);
  return await q
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
    .limit(page.limit);
}

/** Creates a team. */
export async function insertTeam(tx: Tx, team: Team): Promise<void> {
  const { teams } = tables(tx);
  await tx.insert(teams).values(team);
}

/** Deletes a team; its memberships and grants go with it (foreign keys cascade). */
export async function deleteTeam(tx: Tx, teamId: string): Promise<void> {
  const { teams } = tables(tx);
  await tx.delete(teams).where(eq(teams.id, teamId));
}

/** A page of a team's members by folded handle, after the folded handle `after`. */
export async function listTeamMembers(
  q: Queryable,
  teamId: string,
  page: { after: string | null; limit: number },
): Promise<{ user_id: string; handle: string; name: string }[]> {
  const { users, teamMembers } = tables(q);
  return await q
    .select({ user_id: users.id, handle: users.handle, name: users.name })
    .from(teamMembers)
    .innerJoin(users, eq(users.id, teamMembers.userId))
    .where(page.after === null ? eq(teamMembers.teamId, teamId) : and(eq(teamMembers.teamId, teamId), sql`lower(${users.handle}) > ${page.after}`))
    .orderBy(sql`lower(${users.handle})`)
    .limit(page.limit);
}

/** Adds a person to a team (no-op when already in it). */
export async function addTeamMember(tx: Tx, teamId: string, userId: string, createdAt: number): Promise<void> {
  const { teamMembers } = tables(tx);
  await tx.insert(teamMembers).values({ teamId, userId, createdAt }).onConflictDoNothing();
}

/** Removes a person from a team; false when they were not in it. */
export async function removeTeamMember(tx: Tx, teamId: string, userId: string): Promise<boolean> {
  const { teamMembers } = tables(tx);
  return (
    (
      await tx
        .delete(teamMembers)
        .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId)))
        .returning()
    ).length > 0
  );
}

/** The person's role in the org, or null when not a member. */
export async function membershipRole(q: Queryable, orgId: string, userId: string): Promise<Role | null> {
  const { memberships } = tables(q);
  return (
    one(
      await q
        .select({ role: memberships.role })
        .from(memberships)
        .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
        .limit(1),
    )?.role ?? null
  );
}
