// Finding orgs, repositories and people by name (case-insensitive), through the fact cache.
import type { Org, Repo } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import { NotFound } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import type { MaybePromise } from "./fact-cache.ts";
import * as store from "./facts-store.ts";

/** The org named `name`, or null. */
export function findOrg(ctx: Ctx, name: string): MaybePromise<Org | null> {
  return ctx.facts.get("org", name.toLowerCase(), () => store.orgByName(ctx.db.read, name));
}

/** The org named `name`, or 404 (for routes whose org is public, such as profiles). */
export async function requireOrg(ctx: Ctx, name: string): Promise<Org> {
  const org = await findOrg(ctx, name);
  if (!org) throw NotFound("organization not found");
  return org;
}

/** The repo `name` in `orgId`, or null. */
export function findRepo(ctx: Ctx, orgId: string, name: string): MaybePromise<Repo | null> {
  return ctx.facts.getPair("repo", orgId, name.toLowerCase(), () => store.repoByName(ctx.db.read, orgId, name));
}

/** Resolves `{user}` path parts and id lists: a user id or a handle (case-insensitive). */
export function findUserId(q: Queryable, ref: string): Promise<string | null> {
  return store.userIdByRef(q, ref);
}
