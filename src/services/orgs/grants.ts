// Per-repo grants to people and teams, and the access listing (SPEC §2.13, §4.5, §5.2; DECISIONS §2–§3).
import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { Invalid, NotFound, Unprocessable } from "../../errors.ts";
import { grants, memberships, teamMembers, teams, users, type Org, type Repo, type Role } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { newId } from "../../util/ids.ts";
import { requireOrgFor, roleAtLeast } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findRepo, findUserId } from "../access/lookup.ts";
import type { Principal } from "../access/principal.ts";
import { teamByRef } from "./store.ts";

type GrantRole = "viewer" | "member" | "admin";
const GRANT_ROLES: readonly GrantRole[] = ["viewer", "member", "admin"];

/** The org and repo of a grants route, after the org:admin check (non-members see 404). */
async function adminTarget(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<{ org: Org; repo: Repo }> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  const repo = await findRepo(ctx, org.id, repoName);
  if (!repo) throw NotFound("repository not found");
  return { org, repo };
}

/** Every grant on the repo: people first (by handle), then teams (by name). */
function grantList(db: DbOrTx, repoId: string) {
  const people = db
    .select({ user_id: users.id, handle: users.handle, role: grants.role })
    .from(grants)
    .innerJoin(users, eq(users.id, grants.userId))
    .where(eq(grants.repoId, repoId))
    .orderBy(sql`lower(${users.handle})`)
    .all();
  const byTeam = db
    .select({ team_id: teams.id, team_name: teams.name, role: grants.role })
    .from(grants)
    .innerJoin(teams, eq(teams.id, grants.teamId))
    .where(eq(grants.repoId, repoId))
    .orderBy(sql`lower(${teams.name})`)
    .all();
  return { grants: [...people, ...byTeam] };
}

/** POST …/grants: `{ user_ids, role }` or `{ team_id, role }`; all-or-nothing, re-granting replaces the role. */
export async function createGrants(ctx: Ctx, actor: Principal, orgName: string, repoName: string, input: { user_ids?: unknown; team_id?: unknown; role?: unknown }) {
  const { org, repo } = await adminTarget(ctx, actor, orgName, repoName);
  const hasUsers = input.user_ids !== undefined;
  const hasTeam = input.team_id !== undefined;
  if (hasUsers === hasTeam) throw Invalid("give either user_ids or team_id");
  if (!GRANT_ROLES.includes(input.role as GrantRole)) throw Unprocessable(`role must be one of ${GRANT_ROLES.join(", ")}`);
  const role = input.role as GrantRole;
  if (hasUsers && (!Array.isArray(input.user_ids) || input.user_ids.length === 0 || input.user_ids.length > 1000 || !input.user_ids.every((u) => typeof u === "string"))) {
    throw Invalid("user_ids must be a non-empty array of user ids");
  }
  if (hasTeam && typeof input.team_id !== "string") throw Invalid("team_id must be a team id");
  return ctx.db.transaction(async (tx) => {
    const t = now();
    if (hasTeam) {
      const team = await teamByRef(tx, org.id, input.team_id as string);
      if (!team) throw Unprocessable(`no team ${input.team_id} in ${org.name}`);
      tx.insert(grants).values({ id: newId(), repoId: repo.id, teamId: team.id, role, createdAt: t })
        .onConflictDoUpdate({ target: [grants.repoId, grants.teamId], set: { role } }).run();
      return grantList(tx, repo.id);
    }
    // Why: the batch is all-or-nothing (SPEC §4.5), so every id is checked before anything is written.
    const ids: string[] = [];
    for (const ref of input.user_ids as string[]) {
      const userId = await findUserId(tx, ref);
      const member = userId && tx.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).get();
      if (!userId || !member) throw Unprocessable(`${ref} is not a member of ${org.name}; nothing was granted`);
      ids.push(userId);
    }
    for (const userId of new Set(ids)) {
      tx.insert(grants).values({ id: newId(), repoId: repo.id, userId, role, createdAt: t })
        .onConflictDoUpdate({ target: [grants.repoId, grants.userId], set: { role } }).run();
    }
    return grantList(tx, repo.id);
  });
}

/** GET …/grants. */
export async function listGrants(ctx: Ctx, actor: Principal, orgName: string, repoName: string) {
  const { repo } = await adminTarget(ctx, actor, orgName, repoName);
  return grantList(ctx.db.read, repo.id);
}

/** DELETE …/grants/users/{user} and …/grants/teams/{team}. */
export async function deleteGrant(ctx: Ctx, actor: Principal, orgName: string, repoName: string, kind: "user" | "team", ref: string): Promise<void> {
  const { org, repo } = await adminTarget(ctx, actor, orgName, repoName);
  await ctx.db.transaction(async (tx) => {
    const id = kind === "user" ? await findUserId(tx, ref) : ((await teamByRef(tx, org.id, ref))?.id ?? null);
    const column = kind === "user" ? grants.userId : grants.teamId;
    const gone = id ? tx.delete(grants).where(and(eq(grants.repoId, repo.id), eq(column, id))).returning().all() : [];
    if (!gone.length) throw NotFound("grant not found");
  });
}

/**
 * GET …/access: every org member with their effective role on the repo and where it comes from
 * (SPEC §5.2: a personal grant wins outright; else the highest of org role and team grants).
 */
export async function repoAccess(ctx: Ctx, actor: Principal, orgName: string, repoName: string) {
  const { org, repo } = await adminTarget(ctx, actor, orgName, repoName);
  const db = ctx.db.read;
  const members = db
    .select({ userId: users.id, handle: users.handle, email: users.email, orgRole: memberships.role })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.orgId, org.id))
    .orderBy(sql`lower(${users.handle})`)
    .all();
  const userGrants = new Map(
    db.select({ userId: grants.userId, role: grants.role }).from(grants).where(and(eq(grants.repoId, repo.id), isNotNull(grants.userId))).all().map((g) => [g.userId!, g.role]),
  );
  const teamGrants = db
    .select({ teamId: teams.id, name: teams.name, role: grants.role })
    .from(grants)
    .innerJoin(teams, eq(teams.id, grants.teamId))
    .where(eq(grants.repoId, repo.id))
    .orderBy(sql`lower(${teams.name})`)
    .all();
  // The teams each person is in, among those holding a grant here.
  const teamsOf = new Map<string, { name: string; role: GrantRole }[]>();
  const counts = new Map<string, number>();
  if (teamGrants.length) {
    const byId = new Map(teamGrants.map((g) => [g.teamId, g]));
    const rows = db.select({ teamId: teamMembers.teamId, userId: teamMembers.userId }).from(teamMembers).where(inArray(teamMembers.teamId, [...byId.keys()])).all();
    for (const r of rows) {
      const g = byId.get(r.teamId)!;
      const list = teamsOf.get(r.userId) ?? [];
      list.push({ name: g.name, role: g.role });
      teamsOf.set(r.userId, list);
      counts.set(r.teamId, (counts.get(r.teamId) ?? 0) + 1);
    }
  }
  const people = members.map((m) => {
    const direct = userGrants.get(m.userId);
    let role: Role = m.orgRole;
    let source: "org" | "grant" | "team" = "org";
    let teamName: string | null = null;
    if (direct) {
      role = direct;
      source = "grant";
    } else {
      // A team grant only ever raises access; the first team (by name) at the top role is named.
      for (const t of teamsOf.get(m.userId) ?? []) {
        if (!roleAtLeast(role, t.role)) {
          role = t.role;
          source = "team";
          teamName = t.name;
        }
      }
    }
    return { user_id: m.userId, handle: m.handle, email: m.email, role, source, team_name: teamName };
  });
  return {
    people,
    teams: teamGrants.map((g) => ({ team_id: g.teamId, team_name: g.name, role: g.role, member_count: counts.get(g.teamId) ?? 0 })),
  };
}
