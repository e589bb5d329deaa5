// Mirror syncs on request (DECISIONS §3: POST …/sync → 202).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { SyncAccepted } from "../../../services/mirrors/schemas.ts";
import { syncRequested } from "../../../services/mirrors/sync.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** Mirror routes. */
export function mirrorRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.mirrors" }).post(
    "/v1/orgs/:org/repos/:repo/sync",
    async ({ request, params, set }) => {
      const out = await syncRequested(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo));
      set.status = 202;
      return out;
    },
    {
      response: { 202: SyncAccepted, ...errors(401, 402, 403, 404, 422) },
      detail: { summary: "Sync a mirror from its origin in the background (write access)" },
    },
  );
}
