// Finding orgs, repositories and people by name (case-insensitive), through the fact cache.
import type { Org, Repo } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import { NotFound } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import type { MaybePromise } from "./fact-cache.ts";
import * as store from "./facts-store.ts";
import { ANONYMOUS } from "./principal.ts";
import { buildFacts, decide, type Facts } from "./access.ts";

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

/**
 * The facts of N people on one repository, for work done on their behalf later (notification
 * fan-out and mail): the batched form of `deferredFacts` (roles loaded in a few `IN` queries, each
 * person's facts made by the same `buildFacts`), with the account's own confirmation flag. A
 * disabled or missing account gets no facts (it is told nothing).
 */
export async function factsForPeople(ctx: Ctx, org: Org, repo: Repo, userIds: readonly string[]): Promise<Map<string, Facts>> {
  const people = await store.readPeopleInOrg(ctx.db.read, userIds, org.id);
  const target = { ...repo, writeBlocked: ctx.resolvers.quota.writeBlocked(ctx, org, repo) };
  const out = new Map<string, Facts>();
  for (const [userId, person] of people) {
    if (person.disabled) continue;
    const facts = buildFacts(ANONYMOUS, org, person, target);
    facts.caller = { kind: "person", userId, confirmed: person.confirmed, scopes: "all", tokenOrgId: null, tokenRepoId: null };
    out.set(userId, facts);
  }
  return out;
}

/** Of `userIds`, the people who may read `repo` now (`decide(…, "repo:read")` per person). */
export async function readersAmong(ctx: Ctx, org: Org, repo: Repo, userIds: readonly string[]): Promise<Set<string>> {
  const facts = await factsForPeople(ctx, org, repo, userIds);
  const out = new Set<string>();
  for (const [userId, f] of facts) if (decide(f, "repo:read").allow) out.add(userId);
  return out;
}
