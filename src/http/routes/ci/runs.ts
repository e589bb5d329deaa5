// CI runs and jobs of a repository (DECISIONS §3).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { cancelRun, getRun, jobLog, listRuns } from "../../../services/ci/runs.ts";
import { rerunRun } from "../../../services/ci/rerun.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { Run, RunList } from "../../../services/ci/schemas.ts";
import { PageQuery, errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** `?attempt=N` as a number (anything but a positive integer answers 404 as an unknown attempt); null when absent. */
function attemptParam(v: string | undefined): number | null {
  if (v === undefined) return null;
  return /^[1-9][0-9]{0,8}$/.test(v) ? Number(v) : 0;
}

/** Run routes under /v1/orgs/{org}/repos/{repo}. */
export function runRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.ci.runs" })
    .get(
      "/v1/orgs/:org/repos/:repo/runs",
      async ({ request, params, query }) => listRuns(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), query),
      {
        query: PageQuery,
        response: { 200: RunList, ...errors(400, 401, 404) },
        detail: { summary: "List CI runs, newest first" },
      },
    )
    .get(
      "/v1/orgs/:org/repos/:repo/runs/:id",
      async ({ request, params, query }) =>
        getRun(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id, attemptParam(query.attempt)),
      {
        query: t.Object({ attempt: t.Optional(t.String({ description: "an earlier attempt to show (1, 2, …); default the latest", examples: ["1"] })) }),
        response: { 200: Run, ...errors(401, 404) },
        detail: { summary: "A run with the jobs of its latest attempt (or of ?attempt=N)" },
      },
    )
    .get(
      "/v1/orgs/:org/repos/:repo/runs/:id/jobs/:job_id/logs",
      async ({ request, params }) => {
        const body = await jobLog(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id, params.job_id);
        return new Response(body, { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
      },
      {
        response: { 200: t.String({ description: "the job's log as text/plain" }), ...errors(401, 404) },
        detail: { summary: "A job's log (acknowledged text)" },
      },
    )
    .post(
      "/v1/orgs/:org/repos/:repo/runs/:id/cancel",
      async ({ request, params, set }) => {
        const out = await cancelRun(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id);
        set.status = 202;
        return out;
      },
      {
        response: { 202: Run, ...errors(401, 403, 404, 409) },
        detail: { summary: "Cancel a run: queued and pending jobs end, running ones are told to stop (cleanup jobs with if: always() still run)" },
      },
    )
    .post(
      "/v1/orgs/:org/repos/:repo/runs/:id/rerun",
      async ({ request, params, body, set }) => {
        const out = await rerunRun(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id, body ?? {});
        set.status = 201;
        return out;
      },
      {
        body: t.Optional(
          t.Object(
            {
              failed_only: t.Optional(
                t.Boolean({ description: "run again only the failed and cancelled jobs and what needs them; default false (every job)" }),
              ),
            },
            { examples: [{ failed_only: true }] },
          ),
        ),
        response: { 201: Run, ...errors(400, 401, 403, 404, 409, 422) },
        detail: { summary: "Re-run a finished run as a new attempt (all jobs, or only the failed ones and their dependents)" },
      },
    );
}
