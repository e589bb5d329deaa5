// API tokens `svc_<id>_<secret>` (SPEC §4.6, §5.1, §5.3; DECISIONS §1 paging, §2).
import { Invalid, NotFound, Unauthorized, Unprocessable } from "../../errors.ts";
import type { Token as TokenRow } from "../../db/schema/index.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import { SCOPES, allows, decide, enforce, orgFacts, type Scope } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findRepo } from "../access/lookup.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { pageOf, parsePage } from "../paging.ts";
import { flushTokenUse } from "./token-use.ts";
import type { MintedToken, Token, TokenList, TokenMint } from "./schemas.ts";
import * as store from "./store-credentials.ts";
import { isCreatedKey } from "./store-credentials.ts";
import { auditActor, recordAudit } from "../audit/record.ts";

/** The public view of a token (never the secret). */
function tokenBody(t: TokenRow, repoName: string | null): Token {
  return {
    id: t.id,
    kind: t.kind as "personal" | "service",
    scopes: t.scopes,
    label: t.label,
    repo: repoName,
    created_at: t.createdAt,
    last_used_at: t.lastUsedAt,
  };
}

/** POST /v1/orgs/{org}/tokens: mint a personal or service token; the secret is returned once. */
export async function mintToken(ctx: Ctx, actor: Principal, orgName: string, input: TokenMint): Promise<MintedToken> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  if (actor.kind === "anonymous") throw Unauthorized();
  const person = personOf(actor);
  const kind = input.kind ?? (person ? "personal" : "service");
  if (kind !== "personal" && kind !== "service") throw Unprocessable("kind must be personal or service");
  if (input.scopes.length === 0) throw Invalid("scopes must be a non-empty array");
  for (const s of input.scopes)
    if (!SCOPES.includes(s as Scope)) throw Unprocessable(`unknown scope ${JSON.stringify(s)}; expected one of ${SCOPES.join(", ")}`);
  const scopes = [...new Set(input.scopes as Scope[])];
  const label = input.label.trim();
  if (!label || input.label.length > 100) throw Invalid("label must be a string of 1-100 characters");

  enforce(decide(facts, { kind: "token:mint", tokenKind: kind, scopes }));

  let repo: { id: string; name: string } | null = null;
  if (input.repo !== undefined && input.repo !== null) {
    repo = await findRepo(ctx, org.id, input.repo);
    if (!repo) throw Unprocessable(`no repository named ${input.repo} in ${org.name}`);
  }

  const id = newId();
  const secret = newSecret();
  const row: TokenRow = {
    id,
    orgId: org.id,
    userId: kind === "personal" ? person!.id : null,
    kind,
    scopes,
    label,
    repoId: repo?.id ?? null,
    secretHash: hashSecret(secret),
    lastUsedAt: null,
    createdAt: now(),
  };
  await ctx.db.transaction(async (tx) => {
    await store.insertToken(tx, row);
    await recordAudit(tx, {
      orgId: org.id,
      action: "token.created",
      actor: auditActor(actor),
      target: label,
      data: { token_id: id, kind, scopes, repo: repo?.name ?? null },
    });
  });
  return { ...tokenBody(row, repo?.name ?? null), token: `svc_${id}_${secret}` };
}

/**
 * GET /v1/orgs/{org}/tokens: all org tokens for an admin, one's own for a member; by creation, a
 * page at a time. `own` narrows an admin's list to their own personal tokens too (account settings).
 */
export async function listTokens(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  q: { limit?: unknown; cursor?: unknown },
  opts: { own?: boolean } = {},
): Promise<TokenList> {
  await flushTokenUse(ctx);
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, { kind: "credential:list" }));
  const page = parsePage(q, isCreatedKey);
  const person = personOf(actor);
  if (opts.own && !person) return { tokens: [], next_cursor: null };
  const owner = allows(facts, "org:admin") && !opts.own ? null : person!.id;
  const rows = await store.listTokens(ctx.db.read, org.id, owner, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor } = pageOf(rows, page, (t) => [t.createdAt, t.id]);
  return { tokens: items.map((t) => tokenBody(t, t.repoName)), next_cursor };
}

/** DELETE /v1/orgs/{org}/tokens/{id}: an admin revokes any, a person their own; others see 404. */
export async function revokeToken(ctx: Ctx, actor: Principal, orgName: string, tokenId: string): Promise<void> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, { kind: "credential:list" }));
  const row = await store.managedToken(ctx.db.read, org.id, tokenId);
  if (!row) throw NotFound("token not found");
  enforce(decide(facts, { kind: "credential:revoke", ownerUserId: row.userId, what: "token" }));
  await ctx.db.transaction(async (tx) => {
    await store.deleteToken(tx, row.id);
    await recordAudit(tx, { orgId: org.id, action: "token.revoked", actor: auditActor(actor), target: row.label, data: { token_id: row.id } });
  });
}
