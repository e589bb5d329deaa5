// API tokens `svc_<id>_<secret>` (SPEC §4.6, §5.1, §5.3; DECISIONS §2).
import { and, eq, ne } from "drizzle-orm";
import { Invalid, NotFound, Unauthorized, Unprocessable } from "../../errors.ts";
import { repos, tokens, type Token } from "../../db/schema/index.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import { SCOPES, allows, decide, enforce, orgFacts, type Scope } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findRepo } from "../access/lookup.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { flushTokenUse } from "./token-use.ts";

/** The public view of a token (never the secret). */
function tokenBody(ctx: Ctx, t: Token) {
  const repo = t.repoId ? ctx.db.read.select({ name: repos.name }).from(repos).where(eq(repos.id, t.repoId)).get() : null;
  return { id: t.id, kind: t.kind as "personal" | "service", scopes: t.scopes, label: t.label, repo: repo?.name ?? null, created_at: t.createdAt, last_used_at: t.lastUsedAt };
}

/** POST /v1/orgs/{org}/tokens: mint a personal or service token; the secret is returned once. */
export async function mintToken(ctx: Ctx, actor: Principal, orgName: string, input: { scopes: unknown; label: unknown; repo?: unknown; kind?: unknown }) {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  if (actor.kind === "anonymous") throw Unauthorized();
  const person = personOf(actor);
  const kind = input.kind ?? (person ? "personal" : "service");
  if (kind !== "personal" && kind !== "service") throw Unprocessable("kind must be personal or service");
  if (!Array.isArray(input.scopes) || input.scopes.length === 0) throw Invalid("scopes must be a non-empty array");
  for (const s of input.scopes) if (!SCOPES.includes(s)) throw Unprocessable(`unknown scope ${JSON.stringify(s)}; expected one of ${SCOPES.join(", ")}`);
  const scopes = [...new Set(input.scopes as Scope[])];
  if (typeof input.label !== "string" || !input.label.trim() || input.label.length > 100) throw Invalid("label must be a string of 1-100 characters");

  enforce(decide(facts, { kind: "token:mint", tokenKind: kind, scopes }));

  let repoId: string | null = null;
  if (input.repo !== undefined && input.repo !== null) {
    if (typeof input.repo !== "string") throw Invalid("repo must be a repository name");
    const repo = await findRepo(ctx, org.id, input.repo);
    if (!repo) throw Unprocessable(`no repository named ${input.repo} in ${org.name}`);
    repoId = repo.id;
  }

  const id = newId();
  const secret = newSecret();
  const row: Token = {
    id, orgId: org.id, userId: kind === "personal" ? person!.id : null, kind, scopes, label: input.label.trim(), repoId,
    secretHash: hashSecret(secret), lastUsedAt: null, createdAt: now(),
  };
  await ctx.db.transaction((tx) => void tx.insert(tokens).values(row).run());
  return { ...tokenBody(ctx, row), token: `svc_${id}_${secret}` };
}

/** GET /v1/orgs/{org}/tokens: all org tokens for an admin, one's own for a member. */
export async function listTokens(ctx: Ctx, actor: Principal, orgName: string) {
  await flushTokenUse(ctx);
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, { kind: "credential:list" }));
  const admin = allows(facts, "org:admin");
  const person = personOf(actor);
  const where = admin
    ? and(eq(tokens.orgId, org.id), ne(tokens.kind, "job"))
    : and(eq(tokens.orgId, org.id), eq(tokens.userId, person!.id), ne(tokens.kind, "job"));
  const rows = ctx.db.read.select().from(tokens).where(where).orderBy(tokens.createdAt).all();
  return { tokens: rows.map((t) => tokenBody(ctx, t)) };
}

/** DELETE /v1/orgs/{org}/tokens/{id}: an admin revokes any, a person their own; others see 404. */
export async function revokeToken(ctx: Ctx, actor: Principal, orgName: string, tokenId: string): Promise<void> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, { kind: "credential:list" }));
  const row = ctx.db.read.select().from(tokens).where(and(eq(tokens.id, tokenId), eq(tokens.orgId, org.id), ne(tokens.kind, "job"))).get();
  if (!row) throw NotFound("token not found");
  enforce(decide(facts, { kind: "credential:revoke", ownerUserId: row.userId, what: "token" }));
  await ctx.db.transaction((tx) => void tx.delete(tokens).where(eq(tokens.id, row.id)).run());
}
