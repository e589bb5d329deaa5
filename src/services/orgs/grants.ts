// Per-repo grants to people and teams, and the access listing (SPEC §2.13, §4.5, §5.2; DECISIONS §2–§3).
import { Invalid, NotFound, Unprocessable } from "../../errors.ts";
import type { Org, Repo, Role } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { requireOrgFor, roleAtLeast } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findRepo, findUserId } from "../access/lookup.ts";
import type { Principal } from "../access/principal.ts";
import { membershipRole, teamByRef } from "./store.ts";
import * as store from "./store-grants.ts";
import type { GrantRoleName } from "./store-grants.ts";
import { GRANT_ROLES, type GrantCreate, type GrantList, type RepoAccess } from "./schemas.ts";
import { auditActor, recordAudit } from "../audit/record.ts";

/** The org and repo of a grants route, after the org:admin check (non-members see 404). */
async function adminTarget(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<{ org: Org; repo: Repo }> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  const repo = await findRepo(ctx, org.id, repoName);
  if (!repo) throw NotFound("repository not found");
  return { org, repo };
}

/** POST …/grants: `{ user_ids, role }` or `{ team_id, role }`; all-or-nothing, re-granting replaces the role. */
export async function createGrants(ctx: Ctx, actor: Principal, orgName: string, repoName: string, input: GrantCreate): Promise<GrantList> {
  const { org, repo } = await adminTarget(ctx, actor, orgName, repoName);
  const userRefs = input.user_ids;
  const teamRef = input.team_id;
  if ((userRefs === undefined) === (teamRef === undefined)) throw Invalid("give either user_ids or team_id");
  if (!(GRANT_ROLES as readonly string[]).includes(input.role)) throw Unprocessable(`role must be one of ${GRANT_ROLES.join(", ")}`);
  const role = input.role as GrantRoleName;
  return ctx.db.transaction(async (tx) => {
    const t = now();
    if (teamRef !== undefined) {
      const team = await teamByRef(tx, org.id, teamRef);
      if (!team) throw Unprocessable(`no team ${teamRef} in ${org.name}`);
      await store.upsertTeamGrant(tx, { id: newId(), repoId: repo.id, teamId: team.id, role, createdAt: t });
      await recordAudit(tx, { orgId: org.id, action: "grant.created", actor: auditActor(actor), target: repo.name, data: { team_id: team.id, role } });
      return { grants: await store.listGrants(tx, repo.id) };
    }
    // Why: the batch is all-or-nothing (SPEC §4.5), so every id is checked before anything is written.
    const ids = new Set<string>();
    for (const ref of userRefs!) {
      const userId = await findUserId(tx, ref);
      if (!userId || !(await membershipRole(tx, org.id, userId))) throw Unprocessable(`${ref} is not a member of ${org.name}; nothing was granted`);
      ids.add(userId);
    }
    for (const userId of ids) await store.upsertUserGrant(tx, { id: newId(), repoId: repo.id, userId, role, createdAt: t });
    await recordAudit(tx, { orgId: org.id, action: "grant.created", actor: auditActor(actor), target: repo.name, data: { user_ids: [...ids], role } });
    return { grants: await store.listGrants(tx, repo.id) };
  });
}

/** GET …/grants. */
export async function listGrants(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<GrantList> {
  const { repo } = await adminTarget(ctx, actor, orgName, repoName);
  return { grants: await store.listGrants(ctx.db.read, repo.id) };
}

/** DELETE …/grants/users/{user} and …/grants/teams/{team}. */
export async function deleteGrant(ctx: Ctx, actor: Principal, orgName: string, repoName: string, kind: "user" | "team", ref: string): Promise<void> {
  const { org, repo } = await adminTarget(ctx, actor, orgName, repoName);
  await ctx.db.transaction(async (tx) => {
    const id = kind === "user" ? await findUserId(tx, ref) : ((await teamByRef(tx, org.id, ref))?.id ?? null);
    const gone = id !== null && (await store.deleteGrant(tx, repo.id, kind === "user" ? { userId: id } : { teamId: id }));
    if (!gone) throw NotFound("grant not found");
    await recordAudit(tx, {
      orgId: org.id,
      action: "grant.deleted",
      actor: auditActor(actor),
      target: repo.name,
      data: kind === "user" ? { user_id: id } : { team_id: id },
    });
  });
}

/**
 * GET …/access: every org member with their effective role on the repo and where it comes from
 * (SPEC §5.2: a personal grant wins outright; else the highest of org role and team grants).
 */
export async function repoAccess(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<RepoAccess> {
  const { org, repo } = await adminTarget(ctx, actor, orgName, repoName);
  const facts = await store.accessFacts(ctx.db.read, org.id, repo.id);
  // The teams each person is in among those holding a grant here, in team-name order.
  const teamsOf = new Map<string, { name: string; role: GrantRoleName }[]>();
  const counts = new Map<string, number>();
  const seatsOf = new Map<string, string[]>();
  for (const s of facts.seats) {
    const list = seatsOf.get(s.teamId);
    if (list) list.push(s.userId);
    else seatsOf.set(s.teamId, [s.userId]);
  }
  for (const g of facts.teamGrants) {
    const seated = seatsOf.get(g.teamId) ?? [];
    counts.set(g.teamId, seated.length);
    for (const userId of seated) {
      const list = teamsOf.get(userId);
      if (list) list.push({ name: g.name, role: g.role });
      else teamsOf.set(userId, [{ name: g.name, role: g.role }]);
    }
  }
  const people = facts.members.map((m) => {
    const direct = facts.userGrants.get(m.userId);
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
    teams: facts.teamGrants.map((g) => ({ team_id: g.teamId, team_name: g.name, role: g.role, member_count: counts.get(g.teamId) ?? 0 })),
  };
}
