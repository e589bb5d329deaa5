// Follow edges between people (SPEC §4.2, §8).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { getFollow, listFollow, setFollow } from "../../../services/discovery/follows.ts";
import { FollowCounts, PeopleList } from "../../../services/discovery/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** Follow routes. */
export function followRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.follows" })
    .get("/v1/users/:handle/follow", ({ request, params }) => getFollow(ctx, callerOf(request), params.handle), {
      response: { 200: FollowCounts, ...errors(404) },
      detail: { summary: "Follower and following counts, and whether you follow (anonymous: you_follow false)" },
    })
    .put("/v1/users/:handle/follow", ({ request, params }) => setFollow(ctx, callerOf(request), params.handle, true), {
      response: { 200: FollowCounts, ...errors(400, 401, 403, 404) },
      detail: { summary: "Follow a person (idempotent; 400 yourself; 401 for service tokens)" },
    })
    .delete("/v1/users/:handle/follow", ({ request, params }) => setFollow(ctx, callerOf(request), params.handle, false), {
      response: { 200: FollowCounts, ...errors(401, 403, 404) },
      detail: { summary: "Unfollow a person (not following is no error)" },
    })
    .get("/v1/users/:handle/followers", ({ params }) => listFollow(ctx, params.handle, "followers"), {
      response: { 200: PeopleList, ...errors(404) },
      detail: { summary: "Who follows this person: newest first, at most 100, suspended accounts absent" },
    })
    .get("/v1/users/:handle/following", ({ params }) => listFollow(ctx, params.handle, "following"), {
      response: { 200: PeopleList, ...errors(404) },
      detail: { summary: "Whom this person follows: newest first, at most 100, suspended accounts absent" },
    });
}
