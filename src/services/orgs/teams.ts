// Teams: named groups of org members that repo grants can name (SPEC §2.13, §4.5; DECISIONS §3).
import { Conflict, Invalid, NotFound, Unprocessable } from "../../errors.ts";
import type { Queryable } from "../../db/database.ts";
import type { Org } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { requireOrgFor } from "../access/access.ts";
import { findUserId } from "../access/lookup.ts";
import type { Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { pageOf, parsePage } from "../paging.ts";
import * as store from "./store.ts";
import type { Team as TeamRow } from "./store.ts";
import type { Team, TeamCreate } from "./schemas.ts";
import { auditActor, recordAudit } from "../audit/record.ts";

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Validates a team name: 1–100 characters, no control characters, trimmed. */
function checkTeamName(value: string): string {
  const name = value.trim();
  if (!name || name.length > 100 || CONTROL.test(name)) throw Invalid("invalid team name: 1-100 characters, no control characters");
  return name;
}

/** Validates an optional description (at most 500 characters). */
function checkDescription(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (value.length > 500 || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) {
    throw Invalid("invalid description: at most 500 characters, no control characters");
  }
  return value;
}

/** The team `ref` (id or name) of the org, or 404. */
export async function requireTeam(q: Queryable, org: Org, ref: string): Promise<TeamRow> {
  const team = await store.teamByRef(q, org.id, ref);
  if (!team) throw NotFound("team not found");
  return team;
}

function teamBody(t: TeamRow, memberCount: number): Team {
  return { id: t.id, name: t.name, description: t.description, member_count: memberCount, created_at: t.createdAt };
}

/** POST /v1/orgs/{org}/teams: an admin creates a team; the name is unique per org, case-folded. */
export async function createTeam(ctx: Ctx, actor: Principal, orgName: string, input: TeamCreate): Promise<Team> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  const name = checkTeamName(input.name);
  const description = checkDescription(input.description);
  return ctx.db.transaction(async (tx) => {
    if (await store.teamNameTaken(tx, org.id, name)) throw Conflict(`a team named ${name} already exists in ${org.name}`);
    const team: TeamRow = { id: newId(), orgId: org.id, name, description, createdAt: now() };
    await store.insertTeam(tx, team);
    await recordAudit(tx, { orgId: org.id, action: "team.created", actor: auditActor(actor), target: name, data: { team_id: team.id } });
    return teamBody(team, 0);
  });
}

/** GET /v1/orgs/{org}/teams: the org's teams by name, a page at a time. */
export async function listTeams(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  q: { limit?: unknown; cursor?: unknown },
): Promise<{ teams: Team[]; next_cursor: string | null }> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  const page = parsePage(q);
  const rows = await store.listTeams(ctx.db.read, org.id, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor } = pageOf(rows, page, (t) => t.name.toLowerCase());
  return { teams: items.map((t) => teamBody(t, t.memberCount)), next_cursor };
}

/** DELETE /v1/orgs/{org}/teams/{team}: its memberships and grants go with it (FK cascade). */
export async function deleteTeam(ctx: Ctx, actor: Principal, orgName: string, teamRef: string): Promise<void> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  await ctx.db.transaction(async (tx) => {
    const team = await requireTeam(tx, org, teamRef);
    await store.deleteTeam(tx, team.id);
    await recordAudit(tx, { orgId: org.id, action: "team.deleted", actor: auditActor(actor), target: team.name, data: { team_id: team.id } });
  });
}

/** GET /v1/orgs/{org}/teams/{team}/members, by handle, a page at a time. */
export async function listTeamMembers(ctx: Ctx, actor: Principal, orgName: string, teamRef: string, q: { limit?: unknown; cursor?: unknown }) {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  const team = await requireTeam(ctx.db.read, org, teamRef);
  const page = parsePage(q);
  const rows = await store.listTeamMembers(ctx.db.read, team.id, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor } = pageOf(rows, page, (m) => m.handle.toLowerCase());
  return { members: items, next_cursor };
}

/** PUT /v1/orgs/{org}/teams/{team}/members/{user}: adds an org member to the team (idempotent). */
export async function addTeamMember(ctx: Ctx, actor: Principal, orgName: string, teamRef: string, userRef: string): Promise<void> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  await ctx.db.transaction(async (tx) => {
    const team = await requireTeam(tx, org, teamRef);
    const userId = await findUserId(tx, userRef);
    if (!userId) throw NotFound("user not found");
    // Why: team membership requires org membership (SPEC §5.2), so a team never carries outsiders.
    if (!(await store.membershipRole(tx, org.id, userId))) throw Unprocessable(`${userRef} is not a member of ${org.name}`);
    await store.addTeamMember(tx, team.id, userId, now());
    await recordAudit(tx, {
      orgId: org.id,
      action: "team.member_added",
      actor: auditActor(actor),
      target: team.name,
      data: { team_id: team.id, user_id: userId },
    });
  });
}

/** DELETE /v1/orgs/{org}/teams/{team}/members/{user}. */
export async function removeTeamMember(ctx: Ctx, actor: Principal, orgName: string, teamRef: string, userRef: string): Promise<void> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  await ctx.db.transaction(async (tx) => {
    const team = await requireTeam(tx, org, teamRef);
    const userId = await findUserId(tx, userRef);
    if (!userId || !(await store.removeTeamMember(tx, team.id, userId))) throw NotFound("not a member of this team");
    await recordAudit(tx, {
      orgId: org.id,
      action: "team.member_removed",
      actor: auditActor(actor),
      target: team.name,
      data: { team_id: team.id, user_id: userId },
    });
  });
}
