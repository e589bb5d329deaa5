// Finding orgs and repositories by name (case-insensitive), the first step of most routes.
import { and, eq, sql } from "drizzle-orm";
import { Unauthorized, NotFound } from "../../errors.ts";
import { orgs, repos, users, type Org, type Repo } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import type { Ctx } from "../context.ts";
import type { Principal } from "./principal.ts";

/** The org named `name`, or null. */
export function findOrg(ctx: Ctx, name: string): Org | null {
  return ctx.facts.get("org", name.toLowerCase(), () => ctx.db.select().from(orgs).where(sql`lower(${orgs.name}) = lower(${name})`).get() ?? null);
}

/** The org named `name`, or 404. */
export function requireOrg(ctx: Ctx, name: string): Org {
  const org = findOrg(ctx, name);
  if (!org) throw NotFound("organization not found");
  return org;
}

/** The repo `name` in `orgId`, or null. */
export function findRepo(ctx: Ctx, orgId: string, name: string): Repo | null {
  return ctx.facts.getPair(
    "repo",
    orgId,
    name.toLowerCase(),
    () => ctx.db.select().from(repos).where(and(eq(repos.orgId, orgId), sql`lower(${repos.name}) = lower(${name})`)).get() ?? null,
  );
}

/**
 * The org and repo at `org/name`, or a refusal that does not disclose existence: an anonymous
 * caller gets 401 (so git retries with credentials), anyone else 404.
 */
export function requireRepo(ctx: Ctx, p: Principal, orgName: string, repoName: string): { org: Org; repo: Repo } {
  const org = findOrg(ctx, orgName);
  const repo = org ? findRepo(ctx, org.id, repoName) : null;
  if (!org || !repo) throw p.kind === "anonymous" ? Unauthorized("authentication required") : NotFound("repository not found");
  return { org, repo };
}

/** Resolves `{user}` path parts and id lists: a user id or a handle (case-insensitive). */
export function findUserId(db: DbOrTx, ref: string): string | null {
  const row = db.select({ id: users.id }).from(users).where(sql`${users.id} = ${ref} OR lower(${users.handle}) = lower(${ref})`).get();
  return row?.id ?? null;
}
