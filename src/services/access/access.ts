// The one authority function. Every route and both git transports ask `authorize` (or the pure
// `decide` with facts loaded by `loadFacts`); nothing else derives allow / 401 / 402 / 403 / 404.
// SPEC §5.2–§5.5 and §2.13.
import { and, eq, inArray, type SQL } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import { grants, memberships, repos, teamMembers, teams, type Role } from "../../db/schema/index.ts";
import type { Ctx } from "../context.ts";
import type { Principal } from "./principal.ts";

export type Scope = "repo:read" | "repo:write" | "org:read" | "org:admin";
export const SCOPES: readonly Scope[] = ["repo:read", "repo:write", "org:read", "org:admin"];

/** What the caller wants to do. */
export type Action =
  | "repo:read" // clone, fetch, read endpoints
  | "repo:write" // push, commits, refs
  | "repo:admin" // patch, delete, protections, webhooks
  | "org:member" // any role in the org, no scope needed (own tokens, own keys)
  | "org:read" // listings, metrics, usage, audit
  | "org:admin" // people, credentials, billing
  | "org:create-repo"; // create repositories

/** Roles in rank order; a grant role never includes owner. */
const RANK: Record<Role, number> = { viewer: 1, member: 2, admin: 3, owner: 4 };

/** Highest of several roles (null when none). */
export function highestRole(roles: (Role | null | undefined)[]): Role | null {
  let best: Role | null = null;
  for (const r of roles) if (r && (!best || RANK[r] > RANK[best])) best = r;
  return best;
}

/** Whether `role` is at least `min`. */
export function roleAtLeast(role: Role | null, min: Role): boolean {
  return role !== null && RANK[role] >= RANK[min];
}

/** Whether a scope set covers the needed scope (org:admin covers all; repo:write covers repo:read). */
export function scopeCovers(scopes: readonly string[] | "all", need: Scope): boolean {
  if (scopes === "all" || scopes.includes("org:admin")) return true;
  if (need === "repo:read") return scopes.includes("repo:read") || scopes.includes("repo:write");
  return scopes.includes(need);
}

/** Everything `decide` needs to know, loaded from the database by `loadFacts`. */
export interface Facts {
  caller:
    | { kind: "anonymous" }
    /** A person; scopes "all" for a session. tokenOrgId/tokenRepoId set for a personal token. */
    | { kind: "person"; confirmed: boolean; scopes: readonly string[] | "all"; tokenOrgId: string | null; tokenRepoId: string | null }
    /** An org service token (or job token): authority from scopes alone. */
    | { kind: "service"; scopes: readonly string[]; tokenOrgId: string; tokenRepoId: string | null };
  org: { id: string; name: string };
  /** The person's org role (null: not a member). */
  orgRole: Role | null;
  repo?: {
    id: string;
    fullName: string;
    public: boolean;
    writeBlocked: string | null;
    /** A grant naming the person on this repo. */
    userGrant: Role | null;
    /** Grants of teams the person is in, on this repo. */
    teamGrants: Role[];
  };
}

/** The verdict: allowed with an effective role, or refused with a status and message. */
export type Decision = { allow: true; role: Role | null } | { allow: false; status: 401 | 402 | 403 | 404; message: string };

const deny = (status: 401 | 402 | 403 | 404, message: string): Decision => ({ allow: false, status, message });

/** A service token's role-equivalent: what its scopes let it do in its own org. */
function serviceRole(scopes: readonly string[]): Role | null {
  if (scopes.includes("org:admin")) return "admin";
  if (scopes.includes("repo:write")) return "member";
  if (scopes.includes("repo:read") || scopes.includes("org:read")) return "viewer";
  return null;
}

/** Effective role of the caller on the repo in `facts`, before scopes (SPEC §5.2, §5.3). */
export function effectiveRepoRole(f: Facts): Role | null {
  const c = f.caller;
  if (c.kind === "anonymous" || !f.repo) return null;
  // Why: a token works with authority only inside the org it was minted in, and a repo-bound
  // token only on its repo; elsewhere it is as good as anonymous (it may still read public repos).
  if (c.tokenOrgId !== null && c.tokenOrgId !== f.org.id) return null;
  if (c.tokenRepoId !== null && c.tokenRepoId !== f.repo.id) return null;
  if (c.kind === "service") return serviceRole(c.scopes);
  // No org membership: no access, whatever the grants say.
  if (!f.orgRole) return null;
  if (f.repo.userGrant) return f.repo.userGrant;
  return f.repo.teamGrants.length ? highestRole([f.orgRole, ...f.repo.teamGrants]) : f.orgRole;
}

/** Decides one action. Pure: the table-driven unit test exercises it directly. */
export function decide(f: Facts, action: Action, opts: { maskForbidden?: boolean } = {}): Decision {
  const c = f.caller;
  if (action.startsWith("repo:")) {
    if (!f.repo) throw new Error("repo action without repo facts");
    const role = effectiveRepoRole(f);
    const scopes = c.kind === "anonymous" ? [] : c.scopes;
    const canRead = (role !== null && scopeCovers(scopes, "repo:read")) || f.repo.public;
    // Why: 401 lets git retry with credentials; authenticated callers who may not see the repo
    // get 404 so its existence is not disclosed (SPEC §5.5).
    if (!canRead) return c.kind === "anonymous" ? deny(401, "authentication required") : deny(404, "repository not found");
    if (action === "repo:read") return { allow: true, role };
    if (c.kind === "anonymous") return deny(401, "authentication required");
    if (action === "repo:write") {
      if (!roleAtLeast(role, "member") || !scopeCovers(scopes, "repo:write")) {
        return deny(403, `You have read access to ${f.repo.fullName} but cannot write to it. Fork the repository, or ask an administrator for write access.`);
      }
      if (f.repo.writeBlocked) return deny(402, f.repo.writeBlocked);
      return { allow: true, role };
    }
    // repo:admin
    if (!roleAtLeast(role, "admin") || !(scopeCovers(scopes, "repo:write") || scopeCovers(scopes, "org:admin"))) {
      return deny(403, `administering ${f.repo.fullName} needs the admin role`);
    }
    return { allow: true, role };
  }

  // Organization-level actions.
  if (c.kind === "anonymous") return deny(401, "authentication required");
  if (c.tokenOrgId !== null && c.tokenOrgId !== f.org.id) return deny(404, "organization not found");
  if (c.tokenRepoId !== null) return deny(403, "this token is bound to one repository and cannot perform organization-level operations");
  const role = c.kind === "service" ? serviceRole(c.scopes) : f.orgRole;
  if (!role) return deny(404, "organization not found");
  const forbidden = (message: string) => (opts.maskForbidden ? deny(404, "organization not found") : deny(403, message));
  switch (action) {
    case "org:member":
      return c.kind === "person" ? { allow: true, role } : forbidden("this action needs a person, not a service token");
    case "org:read":
      return scopeCovers(c.scopes, "org:read") ? { allow: true, role } : forbidden("this token lacks the org:read scope");
    case "org:admin":
      return roleAtLeast(role, "admin") && scopeCovers(c.scopes, "org:admin") ? { allow: true, role } : forbidden("this action needs org:admin");
    case "org:create-repo":
      if (!roleAtLeast(role, "member") || !scopeCovers(c.scopes, "repo:write")) return forbidden("creating repositories needs the member role and repo:write");
      if (c.kind === "person" && !c.confirmed) return deny(403, "confirm your email address before creating repositories");
      return { allow: true, role };
  }
  throw new Error(`unknown action ${action}`);
}

/** The caller part of the facts, from the resolved principal. */
export function callerFacts(p: Principal): Facts["caller"] {
  if (p.kind === "anonymous") return { kind: "anonymous" };
  if (p.kind === "session") return { kind: "person", confirmed: p.user.emailVerifiedAt !== null, scopes: "all", tokenOrgId: null, tokenRepoId: null };
  if (p.user) {
    return { kind: "person", confirmed: p.user.emailVerifiedAt !== null, scopes: p.token.scopes, tokenOrgId: p.token.orgId, tokenRepoId: p.token.repoId };
  }
  return { kind: "service", scopes: p.token.scopes, tokenOrgId: p.token.orgId, tokenRepoId: p.token.repoId };
}

/** Per-org facts about one person, reusable across many repos (listing). */
export interface PersonInOrg {
  orgRole: Role | null;
  userGrants: Map<string, Role>;
  teamGrants: Map<string, Role[]>;
}

/** Loads the person's org role and every grant naming them or their teams in one org. */
export function loadPersonInOrg(ctx: Ctx, userId: string | null, orgId: string): PersonInOrg {
  if (!userId) return { orgRole: null, userGrants: new Map(), teamGrants: new Map() };
  return ctx.facts.getPair("person", userId, orgId, () => readPersonInOrg(ctx, userId, orgId));
}

function readPersonInOrg(ctx: Ctx, userId: string, orgId: string): PersonInOrg {
  const out: PersonInOrg = { orgRole: null, userGrants: new Map(), teamGrants: new Map() };
  const m = ctx.db.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId))).get();
  if (!m) return out;
  out.orgRole = m.role;
  // Only this org's grants: a person in many orgs loads what this request can use.
  const inOrg = (cond: SQL | undefined) => and(cond, eq(repos.orgId, orgId));
  const grantRows = (cond: SQL | undefined) =>
    ctx.db.select({ repoId: grants.repoId, role: grants.role }).from(grants).innerJoin(repos, eq(repos.id, grants.repoId)).where(inOrg(cond)).all();
  for (const g of grantRows(eq(grants.userId, userId))) {
    out.userGrants.set(g.repoId, g.role);
  }
  const teamIds = ctx.db
    .select({ teamId: teamMembers.teamId })
    .from(teamMembers)
    .innerJoin(teams, eq(teams.id, teamMembers.teamId))
    .where(and(eq(teamMembers.userId, userId), eq(teams.orgId, orgId)))
    .all()
    .map((t) => t.teamId);
  if (teamIds.length) {
    for (const g of grantRows(inArray(grants.teamId, teamIds))) {
      const list = out.teamGrants.get(g.repoId) ?? [];
      list.push(g.role);
      out.teamGrants.set(g.repoId, list);
    }
  }
  return out;
}

/** Repo facts needed by `decide`, given the repo row and the person's org facts. */
export interface RepoTarget {
  id: string;
  name: string;
  public: boolean;
}

/** Builds the full facts for one org (and optionally one repo of it). */
export function buildFacts(p: Principal, org: { id: string; name: string }, person: PersonInOrg, repo?: RepoTarget, writeBlocked: string | null = null): Facts {
  return {
    caller: callerFacts(p),
    org,
    orgRole: person.orgRole,
    repo: repo && {
      id: repo.id,
      fullName: `${org.name}/${repo.name}`,
      public: repo.public,
      writeBlocked,
      userGrant: person.userGrants.get(repo.id) ?? null,
      teamGrants: person.teamGrants.get(repo.id) ?? [],
    },
  };
}

/** Whether the caller administers the org (a 403 is "no"; not being in the org still throws). */
export function isOrgAdmin(ctx: Ctx, actor: Principal, org: { id: string; name: string }): boolean {
  try {
    authorize(ctx, actor, org, "org:admin");
    return true;
  } catch (e) {
    if (e instanceof AppError && e.status === 403) return false;
    throw e;
  }
}

/** Loads facts from the database, decides, and throws the refusal as an AppError. */
export function authorize(
  ctx: Ctx,
  p: Principal,
  org: { id: string; name: string },
  action: Action,
  repo?: RepoTarget,
  opts: { maskForbidden?: boolean; writeBlocked?: string | null } = {},
): Role | null {
  const userId = p.kind === "session" ? p.user.id : p.kind === "token" ? (p.user?.id ?? null) : null;
  const facts = buildFacts(p, org, loadPersonInOrg(ctx, userId, org.id), repo, opts.writeBlocked ?? null);
  const d = decide(facts, action, opts);
  if (!d.allow) throw new AppError(d.status, d.message);
  return d.role;
}
