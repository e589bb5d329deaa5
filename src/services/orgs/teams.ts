// Teams: named groups of org members that repo grants can name (SPEC §2.13, §4.5; DECISIONS §3).
import { and, eq, sql } from "drizzle-orm";
import { Conflict, Invalid, NotFound, Unprocessable } from "../../errors.ts";
import { memberships, teamMembers, teams, users, type Org } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { newId } from "../../util/ids.ts";
import { authorize } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findUserId, requireOrg } from "../access/lookup.ts";
import type { Principal } from "../access/principal.ts";

type Team = typeof teams.$inferSelect;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Validates a team name: 1–100 characters, no control characters, trimmed. */
function checkTeamName(value: unknown): string {
  const name = typeof value === "string" ? value.trim() : "";
  if (!name || name.length > 100 || CONTROL.test(name)) throw Invalid("invalid team name: 1-100 characters, no control characters");
  return name;
}

/** Validates an optional description (at most 500 characters). */
function checkDescription(value: unknown): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string" || value.length > 500 || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) {
    throw Invalid("invalid description: at most 500 characters, no control characters");
  }
  return value;
}

/** The team `{team}` of an org: its id or its name (case-insensitive), or null. */
export function findTeam(db: DbOrTx, orgId: string, ref: string): Team | null {
  return db.select().from(teams).where(and(eq(teams.orgId, orgId), sql`(${teams.id} = ${ref} OR lower(${teams.name}) = lower(${ref}))`)).get() ?? null;
}

function requireTeam(db: DbOrTx, org: Org, ref: string): Team {
  const team = findTeam(db, org.id, ref);
  if (!team) throw NotFound("team not found");
  return team;
}

function memberCount(db: DbOrTx, teamId: string): number {
  return db.select({ n: sql<number>`count(*)` }).from(teamMembers).where(eq(teamMembers.teamId, teamId)).get()!.n;
}

function teamBody(db: DbOrTx, t: Team) {
  return { id: t.id, name: t.name, description: t.description, member_count: memberCount(db, t.id), created_at: t.createdAt };
}

/** POST /v1/orgs/{org}/teams: an admin creates a team; the name is unique per org, case-folded. */
export function createTeam(ctx: Ctx, actor: Principal, orgName: string, input: { name?: unknown; description?: unknown }) {
  const org = requireOrg(ctx, orgName);
  authorize(ctx, actor, org, "org:admin");
  const name = checkTeamName(input.name);
  const description = checkDescription(input.description);
  return ctx.db.transaction((tx) => {
    if (tx.select({ id: teams.id }).from(teams).where(and(eq(teams.orgId, org.id), sql`lower(${teams.name}) = lower(${name})`)).get()) {
      throw Conflict(`a team named ${name} already exists in ${org.name}`);
    }
    const team: Team = { id: newId(), orgId: org.id, name, description, createdAt: now() };
    tx.insert(teams).values(team).run();
    return teamBody(tx, team);
  }, { behavior: "immediate" });
}

/** GET /v1/orgs/{org}/teams: every team of the org, by name. */
export function listTeams(ctx: Ctx, actor: Principal, orgName: string) {
  const org = requireOrg(ctx, orgName);
  authorize(ctx, actor, org, "org:read");
  const rows = ctx.db.select().from(teams).where(eq(teams.orgId, org.id)).orderBy(sql`lower(${teams.name})`).all();
  return { teams: rows.map((t) => teamBody(ctx.db, t)) };
}

/** DELETE /v1/orgs/{org}/teams/{team}: its memberships and grants go with it (FK cascade). */
export function deleteTeam(ctx: Ctx, actor: Principal, orgName: string, teamRef: string): void {
  const org = requireOrg(ctx, orgName);
  authorize(ctx, actor, org, "org:admin");
  ctx.db.transaction((tx) => {
    const team = requireTeam(tx, org, teamRef);
    tx.delete(teams).where(eq(teams.id, team.id)).run();
  }, { behavior: "immediate" });
}

/** GET /v1/orgs/{org}/teams/{team}/members. */
export function listTeamMembers(ctx: Ctx, actor: Principal, orgName: string, teamRef: string) {
  const org = requireOrg(ctx, orgName);
  authorize(ctx, actor, org, "org:read");
  const team = requireTeam(ctx.db, org, teamRef);
  const rows = ctx.db
    .select({ user_id: users.id, handle: users.handle, name: users.name })
    .from(teamMembers)
    .innerJoin(users, eq(users.id, teamMembers.userId))
    .where(eq(teamMembers.teamId, team.id))
    .orderBy(sql`lower(${users.handle})`)
    .all();
  return { members: rows };
}

/** PUT /v1/orgs/{org}/teams/{team}/members/{user}: adds an org member to the team (idempotent). */
export function addTeamMember(ctx: Ctx, actor: Principal, orgName: string, teamRef: string, userRef: string): void {
  const org = requireOrg(ctx, orgName);
  authorize(ctx, actor, org, "org:admin");
  ctx.db.transaction((tx) => {
    const team = requireTeam(tx, org, teamRef);
    const userId = findUserId(tx, userRef);
    if (!userId) throw NotFound("user not found");
    // Why: team membership requires org membership (SPEC §5.2), so a team never carries outsiders.
    const member = tx.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).get();
    if (!member) throw Unprocessable(`${userRef} is not a member of ${org.name}`);
    tx.insert(teamMembers).values({ teamId: team.id, userId, createdAt: now() }).onConflictDoNothing().run();
  }, { behavior: "immediate" });
}

/** DELETE /v1/orgs/{org}/teams/{team}/members/{user}. */
export function removeTeamMember(ctx: Ctx, actor: Principal, orgName: string, teamRef: string, userRef: string): void {
  const org = requireOrg(ctx, orgName);
  authorize(ctx, actor, org, "org:admin");
  ctx.db.transaction((tx) => {
    const team = requireTeam(tx, org, teamRef);
    const userId = findUserId(tx, userRef);
    const gone = userId ? tx.delete(teamMembers).where(and(eq(teamMembers.teamId, team.id), eq(teamMembers.userId, userId))).returning().all() : [];
    if (!gone.length) throw NotFound("not a member of this team");
  }, { behavior: "immediate" });
}
