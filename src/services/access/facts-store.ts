// The access domain's queries: orgs and repos by name, people by handle, and the grants that
// decide a person's role (SPEC §5.2). Async, so another database changes this file only.
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Org, Repo, Role } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import type { MaybePromise } from "./fact-cache.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

/** The org named `name` (case-insensitive), or null. */
export async function orgByName(q: Queryable, name: string): Promise<Org | null> {
  const { orgs } = tables(q);
  return one(await q.select().from(orgs).where(sql`lower(${orgs.name}) = lower(${name})`).limit(1)) ?? null;
}

/** The repo `name` (case-insensitive) in `orgId`, or null. */
export async function repoByName(q: Queryable, orgId: string, name: string): Promise<Repo | null> {
  const { repos } = tables(q);
  return (
    one(
      await q
        .select()
        .from(repos)
        .where(and(eq(repos.orgId, orgId), sql`lower(${repos.name}) = lower(${name})`))
        .limit(1),
    ) ?? null
  );
}

/** A user id from a user id or a handle (case-insensitive), or null. */
export async function userIdByRef(q: Queryable, ref: string): Promise<string | null> {
  const { users } = tables(q);
  return one(await q.select({ id: users.id }).from(users).where(sql`${users.id} = ${ref} OR lower(${users.handle}) = lower(${ref})`).limit(1))?.id ?? null;
}

/** Per-org facts about one person, reusable across many repos (listing). */
export interface PersonInOrg {
  orgRole: Role | null;
  userGrants: Map<string, Role>;
  teamGrants: Map<string, Role[]>;
}

const NO_PERSON: Readonly<PersonInOrg> = { orgRole: null, userGrants: new Map(), teamGrants: new Map() };

/** Loads the person's org role and every grant naming them or their teams in one org (cached). */
export function loadPersonInOrg(ctx: Ctx, userId: string | null, orgId: string): MaybePromise<PersonInOrg> {
  if (!userId) return NO_PERSON;
  return ctx.facts.getPair("person", userId, orgId, () => readPersonInOrg(ctx.db.read, userId, orgId));
}

/** Reads a person's org role and grants (uncached). */
export async function readPersonInOrg(q: Queryable, userId: string, orgId: string): Promise<PersonInOrg> {
  const { memberships, repos, grants, teamMembers, teams } = tables(q);
  const out: PersonInOrg = { orgRole: null, userGrants: new Map(), teamGrants: new Map() };
  const m = one(
    await q
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
      .limit(1),
  );
  if (!m) return out;
  out.orgRole = m.role;
  // Only this org's grants: a person in many orgs loads what this request can use.
  const inOrg = (cond: SQL | undefined) => and(cond, eq(repos.orgId, orgId));
  const grantRows = async (cond: SQL | undefined) =>
    await q.select({ repoId: grants.repoId, role: grants.role }).from(grants).innerJoin(repos, eq(repos.id, grants.repoId)).where(inOrg(cond));
  for (const g of await grantRows(eq(grants.userId, userId))) out.userGrants.set(g.repoId, g.role);
  const teamIds = (
    await q
      .select({ teamId: teamMembers.teamId })
      .from(teamMembers)
      .innerJoin(teams, eq(teams.id, teamMembers.teamId))
      .where(and(eq(teamMembers.userId, userId), eq(teams.orgId, orgId)))
  ).map((t) => t.teamId);
  if (teamIds.length) {
    for (const g of await grantRows(inArray(grants.teamId, teamIds))) {
      const list = out.teamGrants.get(g.repoId) ?? [];
      list.push(g.role);
      out.teamGrants.set(g.repoId, list);
    }
  }
  return out;
}

/** The account facts `decide` needs about a person besides their roles. */
export interface PersonAccount {
  confirmed: boolean;
  disabled: boolean;
}

/** How many ids one `IN` list carries (under SQLite's and PostgreSQL's parameter limits). */
const IN_CHUNK = 500;

function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += IN_CHUNK) out.push(list.slice(i, i + IN_CHUNK));
  return out;
}

/**
 * `readPersonInOrg` for N people at once (notification fan-out): users, memberships, direct grants,
 * team memberships and team grants, one `IN` query each per 500 people. People without an
 * account are absent from the answer; people without a membership get no roles.
 */
export async function readPeopleInOrg(q: Queryable, userIds: readonly string[], orgId: string): Promise<Map<string, PersonInOrg & PersonAccount>> {
  const { users, memberships, repos, grants, teamMembers, teams } = tables(q);
  const out = new Map<string, PersonInOrg & PersonAccount>();
  const ids = [...new Set(userIds)];
  for (const part of chunks(ids)) {
    const rows = await q.select({ id: users.id, verified: users.emailVerifiedAt, disabled: users.disabledAt }).from(users).where(inArray(users.id, part));
    for (const u of rows)
      out.set(u.id, { orgRole: null, userGrants: new Map(), teamGrants: new Map(), confirmed: u.verified !== null, disabled: u.disabled !== null });
  }
  const members = [...out.keys()];
  const inOrg: string[] = [];
  for (const part of chunks(members)) {
    const rows = await q
      .select({ userId: memberships.userId, role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), inArray(memberships.userId, part)));
    for (const m of rows) {
      const p = out.get(m.userId);
      if (p) {
        p.orgRole = m.role;
        inOrg.push(m.userId);
      }
    }
  }
  // Grants exist only for members (readPersonInOrg stops at a missing membership too).
  for (const part of chunks(inOrg)) {
    const rows = await q
      .select({ userId: grants.userId, repoId: grants.repoId, role: grants.role })
      .from(grants)
      .innerJoin(repos, eq(repos.id, grants.repoId))
      .where(and(inArray(grants.userId, part), eq(repos.orgId, orgId)));
    for (const g of rows) if (g.userId) out.get(g.userId)?.userGrants.set(g.repoId, g.role);
  }
  const teamsOf = new Map<string, string[]>();
  for (const part of chunks(inOrg)) {
    const rows = await q
      .select({ userId: teamMembers.userId, teamId: teamMembers.teamId })
      .from(teamMembers)
      .innerJoin(teams, eq(teams.id, teamMembers.teamId))
      .where(and(inArray(teamMembers.userId, part), eq(teams.orgId, orgId)));
    for (const r of rows) {
      const list = teamsOf.get(r.teamId) ?? [];
      list.push(r.userId);
      teamsOf.set(r.teamId, list);
    }
  }
  for (const part of chunks([...teamsOf.keys()])) {
    const rows = await q
      .select({ teamId: grants.teamId, repoId: grants.repoId, role: grants.role })
      .from(grants)
      .innerJoin(repos, eq(repos.id, grants.repoId))
      .where(and(inArray(grants.teamId, part), eq(repos.orgId, orgId)));
    for (const g of rows) {
      for (const userId of teamsOf.get(g.teamId ?? "") ?? []) {
        const p = out.get(userId);
        if (!p) continue;
        const list = p.teamGrants.get(g.repoId) ?? [];
        list.push(g.role);
        p.teamGrants.set(g.repoId, list);
      }
    }
  }
  return out;
}
