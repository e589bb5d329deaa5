// API tokens `svc_<id>_<secret>` (SPEC §4.6, §5.1, §5.3; DECISIONS §2).
import { and, eq, inArray, ne, or } from "drizzle-orm";
import { Forbidden, Invalid, NotFound, Unauthorized, Unprocessable } from "../../errors.ts";
import { grants, memberships, repos, teamMembers, tokens, type Org, type Role, type Token } from "../../db/schema/index.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import { SCOPES, authorize, isOrgAdmin, roleAtLeast, scopeCovers, type Scope } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findRepo, requireOrg } from "../access/lookup.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { flushTokenUse } from "./token-use.ts";

/** The public view of a token (never the secret). */
function tokenBody(ctx: Ctx, t: Token) {
  const repo = t.repoId ? ctx.db.select({ name: repos.name }).from(repos).where(eq(repos.id, t.repoId)).get() : null;
  return { id: t.id, kind: t.kind as "personal" | "service", scopes: t.scopes, label: t.label, repo: repo?.name ?? null, created_at: t.createdAt, last_used_at: t.lastUsedAt };
}

/** The least role that can exercise each scope. */
const SCOPE_ROLE: Record<Scope, Role> = { "repo:read": "viewer", "org:read": "viewer", "repo:write": "member", "org:admin": "admin" };

/** Whether the person can exercise `scope` somewhere in the org: by org role, a repo grant or a team grant (SPEC §5.3). */
function personCanExercise(ctx: Ctx, org: Org, userId: string, scope: Scope): boolean {
  const m = ctx.db.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, userId))).get();
  if (!m) return false;
  const min = SCOPE_ROLE[scope];
  if (roleAtLeast(m.role, min)) return true;
  const roles = GRANT_ROLES.filter((r) => roleAtLeast(r, min));
  const teamIds = ctx.db.select({ id: teamMembers.teamId }).from(teamMembers).where(eq(teamMembers.userId, userId)).all().map((r) => r.id);
  const grant = ctx.db
    .select({ id: grants.id })
    .from(grants)
    .innerJoin(repos, eq(repos.id, grants.repoId))
    .where(and(eq(repos.orgId, org.id), inArray(grants.role, roles), teamIds.length ? or(eq(grants.userId, userId), inArray(grants.teamId, teamIds)) : eq(grants.userId, userId)))
    .get();
  return !!grant;
}

const GRANT_ROLES = ["viewer", "member", "admin"] as const;

/** POST /v1/orgs/{org}/tokens: mint a personal or service token; the secret is returned once. */
export function mintToken(ctx: Ctx, actor: Principal, orgName: string, input: { scopes: unknown; label: unknown; repo?: unknown; kind?: unknown }) {
  const org = requireOrg(ctx, orgName);
  if (actor.kind === "anonymous") throw Unauthorized();
  const person = personOf(actor);
  const kind = input.kind ?? (person ? "personal" : "service");
  if (kind !== "personal" && kind !== "service") throw Unprocessable("kind must be personal or service");
  if (!Array.isArray(input.scopes) || input.scopes.length === 0) throw Invalid("scopes must be a non-empty array");
  for (const s of input.scopes) if (!SCOPES.includes(s)) throw Unprocessable(`unknown scope ${JSON.stringify(s)}; expected one of ${SCOPES.join(", ")}`);
  const scopes = [...new Set(input.scopes as Scope[])];
  if (typeof input.label !== "string" || !input.label.trim() || input.label.length > 100) throw Invalid("label must be a string of 1-100 characters");

  if (kind === "service") {
    // Why: a service token belongs to nobody and acts for the org; only its admins may create one (SPEC §5.3).
    authorize(ctx, actor, org, "org:admin");
  } else {
    if (!person) throw Forbidden("a personal token needs a person; service tokens may only mint service tokens");
    authorize(ctx, actor, org, "org:member");
    // Why: mint-time scope check, so a token never promises more than the person can do here (SPEC §5.3).
    for (const s of scopes) {
      if (!personCanExercise(ctx, org, person.id, s)) throw Forbidden(`you cannot exercise ${s} in ${org.name}`);
    }
  }
  // A token cannot mint a stronger one than itself.
  if (actor.kind === "token") {
    for (const s of scopes) if (!scopeCovers(actor.token.scopes, s)) throw Forbidden(`the calling token lacks ${s}`);
  }

  let repoId: string | null = null;
  if (input.repo !== undefined && input.repo !== null) {
    if (typeof input.repo !== "string") throw Invalid("repo must be a repository name");
    const repo = findRepo(ctx, org.id, input.repo);
    if (!repo) throw Unprocessable(`no repository named ${input.repo} in ${org.name}`);
    repoId = repo.id;
  }

  const id = newId();
  const secret = newSecret();
  const row: Token = {
    id, orgId: org.id, userId: kind === "personal" ? person!.id : null, kind, scopes, label: input.label.trim(), repoId,
    secretHash: hashSecret(secret), lastUsedAt: null, createdAt: now(),
  };
  ctx.db.insert(tokens).values(row).run();
  return { ...tokenBody(ctx, row), token: `svc_${id}_${secret}` };
}

/** GET /v1/orgs/{org}/tokens: all org tokens for an admin, one's own for a member. */
export function listTokens(ctx: Ctx, actor: Principal, orgName: string) {
  flushTokenUse(ctx);
  const org = requireOrg(ctx, orgName);
  const admin = isOrgAdmin(ctx, actor, org);
  const person = personOf(actor);
  if (!admin) authorize(ctx, actor, org, "org:member");
  const where = admin
    ? and(eq(tokens.orgId, org.id), ne(tokens.kind, "job"))
    : and(eq(tokens.orgId, org.id), eq(tokens.userId, person!.id), ne(tokens.kind, "job"));
  const rows = ctx.db.select().from(tokens).where(where).orderBy(tokens.createdAt).all();
  return { tokens: rows.map((t) => tokenBody(ctx, t)) };
}

/** DELETE /v1/orgs/{org}/tokens/{id}: an admin revokes any, a person their own; others see 404. */
export function revokeToken(ctx: Ctx, actor: Principal, orgName: string, tokenId: string): void {
  const org = requireOrg(ctx, orgName);
  const admin = isOrgAdmin(ctx, actor, org);
  const person = personOf(actor);
  if (!admin) authorize(ctx, actor, org, "org:member");
  const row = ctx.db.select().from(tokens).where(and(eq(tokens.id, tokenId), eq(tokens.orgId, org.id), ne(tokens.kind, "job"))).get();
  // Why: someone else's token id answers 404, not 403, so ids cannot be probed (SPEC §4.6).
  if (!row || (!admin && row.userId !== person?.id)) throw NotFound("token not found");
  ctx.db.delete(tokens).where(eq(tokens.id, row.id)).run();
}
