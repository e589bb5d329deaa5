// Running a workflow by hand (issue 29): POST /v1/orgs/{org}/repos/{repo}/runs.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { dispatchWorkflow, type DispatchInput } from "../../../services/ci/dispatch.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { Run, RunDispatch } from "../../../services/ci/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** The dispatch route under /v1/orgs/{org}/repos/{repo}. */
export function dispatchRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.ci.dispatch" }).post(
    "/v1/orgs/:org/repos/:repo/runs",
    async ({ request, params, body, set }) => {
      const out = await dispatchWorkflow(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), (body ?? {}) as DispatchInput);
      set.status = 201;
      return out;
    },
    {
      body: RunDispatch,
      response: { 201: Run, ...errors(400, 401, 403, 404, 422) },
      detail: {
        summary: "Run a workflow by hand (workflow_dispatch)",
        description:
          "repo:write. 404: the ref or the workflow file at it is unknown. 422: the workflow has no workflow_dispatch trigger or is malformed (its file:line:column error), or the inputs do not match — then the body's `inputs` maps each input name to its problem (unknown input, required, wrong type, not one of the options).",
      },
    },
  );
}
