// Follow edges between people (SPEC §4.2, §8): anonymous counts and lists, a signed-in person
// follows and unfollows (idempotent); lists are newest first, at most 100, suspended accounts absent.
import { Invalid } from "../../errors.ts";
import { authorizeAccount } from "../access/access.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { requireLiveUser } from "./profiles.ts";
import type { FollowCounts, PeopleList } from "./schemas.ts";
import * as store from "./store.ts";

/** SPEC §8: followers / following lists hold at most this many entries. */
export const FOLLOW_LIST_MAX = 100;

async function countsOf(ctx: Ctx, userId: string, viewerId: string | null): Promise<FollowCounts> {
  const c = await store.followCounts(ctx.db.read, userId, viewerId);
  return { followers: c.followers, following: c.following, you_follow: c.youFollow };
}

/** GET /v1/users/{handle}/follow: counts, and whether the caller follows (false for anonymous callers). */
export async function getFollow(ctx: Ctx, actor: Principal, handle: string): Promise<FollowCounts> {
  const user = await requireLiveUser(ctx, handle);
  return countsOf(ctx, user.id, personOf(actor)?.id ?? null);
}

/** PUT or DELETE /v1/users/{handle}/follow: a signed-in person follows or unfollows; both idempotent. */
export async function setFollow(ctx: Ctx, actor: Principal, handle: string, follow: boolean): Promise<FollowCounts> {
  authorizeAccount(actor, { kind: "account:person" });
  const me = personOf(actor)!;
  const user = await requireLiveUser(ctx, handle);
  if (follow && user.id === me.id) throw Invalid("you cannot follow yourself");
  await ctx.db.transaction(async (tx) => {
    if (follow) await store.insertFollow(tx, me.id, user.id, now());
    else await store.deleteFollow(tx, me.id, user.id);
  });
  return countsOf(ctx, user.id, me.id);
}

/** GET /v1/users/{handle}/followers or …/following. */
export async function listFollow(ctx: Ctx, handle: string, side: "followers" | "following"): Promise<PeopleList> {
  const user = await requireLiveUser(ctx, handle);
  return { people: await store.followPeople(ctx.db.read, user.id, side, FOLLOW_LIST_MAX) };
}
