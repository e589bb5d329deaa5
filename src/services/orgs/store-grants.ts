// The orgs domain's queries about per-repository grants and who can reach a repository.
import { and, eq, sql } from "drizzle-orm";
import type { Role } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { tables } from "../../db/tables.ts";
import { x } from "../../db/dialect.ts";

/** A role a grant can carry. */
export type GrantRoleName = "viewer" | "member" | "admin";

/** One grant as the grants list shows it: to a person or to a team. */
export type GrantRow = { user_id: string; handle: string; role: GrantRoleName } | { team_id: string; team_name: string; role: GrantRoleName };

/** Every grant on the repo, people first (by handle), then teams (by name); one statement. */
export async function listGrants(q: Queryable, repoId: string): Promise<GrantRow[]> {
  const { grants, users, teams } = tables(q);
  const rows = await q
    .select({ userId: grants.userId, handle: users.handle, teamId: grants.teamId, teamName: teams.name, role: grants.role })
    .from(grants)
    .leftJoin(users, eq(users.id, grants.userId))
    .leftJoin(teams, eq(teams.id, grants.teamId))
    .where(eq(grants.repoId, repoId))
    .orderBy(sql`${grants.userId} IS NULL`, sql`lower(coalesce(${users.handle}, ${teams.name}))`);
  return rows.map((r) =>
    r.userId !== null ? { user_id: r.userId, handle: r.handle!, role: r.role } : { team_id: r.teamId!, team_name: r.teamName!, role: r.role },
  );
}

/** Grants a person a role on the repo, replacing the role of an existing grant. */
export async function upsertUserGrant(tx: Tx, g: { id: string; repoId: string; userId: string; role: GrantRoleName; createdAt: number }): Promise<void> {
  const { grants } = tables(tx);
  await tx
    .insert(grants)
    .values(g)
    .onConflictDoUpdate({ target: [grants.repoId, grants.userId], set: { role: g.role } });
}

/** Grants a team a role on the repo, replacing the role of an existing grant. */
export async function upsertTeamGrant(tx: Tx, g: { id: string; repoId: string; teamId: string; role: GrantRoleName; createdAt: number }): Promise<void> {
  const { grants } = tables(tx);
  await tx
    .insert(grants)
    .values(g)
    .onConflictDoUpdate({ target: [grants.repoId, grants.teamId], set: { role: g.role } });
}

/** Removes the grant of a person or a team on the repo; false when there was none. */
export async function deleteGrant(tx: Tx, repoId: string, to: { userId: string } | { teamId: string }): Promise<boolean> {
  const { grants } = tables(tx);
  const who = "userId" in to ? eq(grants.userId, to.userId) : eq(grants.teamId, to.teamId);
  return (
    (
      await tx
        .delete(grants)
        .where(and(eq(grants.repoId, repoId), who))
        .returning({ id: grants.id })
    ).length > 0
  );
}

/** What the access listing is computed from, read in one statement so it is one committed state. */
export interface AccessFacts {
  /** Org members by folded handle, with their org role. */
  members: { userId: string; handle: string; email: string; orgRole: Role }[];
  /** Grants naming a person, by user id. */
  userGrants: Map<string, GrantRoleName>;
  /** Team grants on the repo, by folded team name. */
  teamGrants: { teamId: string; name: string; role: GrantRoleName }[];
  /** Members of the teams holding a grant here: team id and user id pairs. */
  seats: { teamId: string; userId: string }[];
}

/** The members, grants and team seats behind GET …/access (SPEC §5.2). */
export async function accessFacts(q: Queryable, orgId: string, repoId: string): Promise<AccessFacts> {
  const rows = await x(q).rows<{ kind: "member" | "grant" | "team" | "seat"; a: string; b: string | null; c: string | null; role: string | null }>(sql`
    SELECT * FROM (
      SELECT 'member' AS kind, u.id AS a, u.handle AS b, u.email AS c, m.role AS role, lower(u.handle) AS sort
        FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId}
      UNION ALL
      SELECT 'grant', g.user_id, NULL, NULL, g.role, '' FROM grants g WHERE g.repo_id = ${repoId} AND g.user_id IS NOT NULL
      UNION ALL
      SELECT 'team', t.id, t.name, NULL, g.role, lower(t.name) FROM grants g JOIN teams t ON t.id = g.team_id WHERE g.repo_id = ${repoId}
      UNION ALL
      SELECT 'seat', tm.team_id, tm.user_id, NULL, NULL, '' FROM grants g JOIN team_members tm ON tm.team_id = g.team_id WHERE g.repo_id = ${repoId}
    ) ORDER BY kind, sort`);
  const out: AccessFacts = { members: [], userGrants: new Map(), teamGrants: [], seats: [] };
  for (const r of rows) {
    if (r.kind === "member") out.members.push({ userId: r.a, handle: r.b!, email: r.c!, orgRole: r.role as Role });
    else if (r.kind === "grant") out.userGrants.set(r.a, r.role as GrantRoleName);
    else if (r.kind === "team") out.teamGrants.push({ teamId: r.a, name: r.b!, role: r.role as GrantRoleName });
    else out.seats.push({ teamId: r.a, userId: r.b! });
  }
  return out;
}
