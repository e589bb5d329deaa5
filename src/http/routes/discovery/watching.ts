// Watching a repository (DECISIONS §3).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { deleteSubscription, putSubscription } from "../../../services/discovery/watching.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { Subscription, SubscriptionPut } from "../../../services/discovery/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** Watching routes. */
export function watchingRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.watching" })
    .put(
      "/v1/orgs/:org/repos/:repo/subscription",
      async ({ request, params, body }) => putSubscription(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), body),
      {
        body: SubscriptionPut,
        response: { 200: Subscription, ...errors(400, 401, 403, 404, 422) },
        detail: { summary: "Watch a repository at level all, participating or ignore (watcher_count counts all only)" },
      },
    )
    .delete(
      "/v1/orgs/:org/repos/:repo/subscription",
      async ({ request, params, set }) => {
        await deleteSubscription(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo));
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Stop watching a repository (not watching is no error)" } },
    );
}
