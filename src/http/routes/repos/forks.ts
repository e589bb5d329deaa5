// Forks (SPEC §2.1 fork fields; DECISIONS §3).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createFork } from "../../../services/repos/forks.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { ForkCreate, Repo } from "../../../services/repos/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** Fork routes. */
export function forkRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.forks" }).post(
    "/v1/orgs/:org/repos/:repo/forks",
    async ({ request, params, body, set }) => {
      const out = await createFork(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), body ?? {});
      set.status = 202;
      return out;
    },
    {
      body: ForkCreate,
      response: { 202: Repo, ...errors(400, 401, 402, 403, 404, 409, 413) },
      detail: {
        summary: "Fork a repository into a namespace (default: the caller's own); 202 with fork_state pending, then ready or failed. No object data is copied.",
      },
    },
  );
}
