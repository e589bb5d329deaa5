// What runner machines call (SPEC §4.1; DECISIONS §3 runner per-job calls): registration with an
// `svcg_` token, the long-poll claim with the `svcr_` credential, and the five per-job calls with
// the per-job token. The credential is checked before the body is looked at (transform hook), so
// a bad credential is the same 401 whatever was sent with it.
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { claimJob } from "../../../services/ci/claim.ts";
import { appendLog, completeJob, describeJob, heartbeat, RUNNER_FORMAT_HEADER, setStepState } from "../../../services/ci/job-calls.ts";
import { registerRunner, requireRunnerCaller } from "../../../services/ci/runners.ts";
import {
  Claim,
  HeartbeatAnswer,
  JobComplete,
  JobDescription,
  LogAck,
  LogAppend,
  RunnerRegister,
  RunnerRegistered,
  StepUpdate,
} from "../../../services/ci/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { policy } from "../../policy.ts";
import { noContent } from "../../responses.ts";

/** Runner-facing routes. */
export function runnerAgentRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.ci.runner-agent" })
    .post(
      "/v1/runners/register",
      async ({ request, body, set }) => {
        const out = await registerRunner(ctx, callerOf(request), body ?? {});
        set.status = 201;
        return out;
      },
      {
        transform: ({ request }) => requireRunnerCaller(callerOf(request), "runner:register"),
        body: t.Optional(RunnerRegister),
        response: { 201: RunnerRegistered, ...errors(400, 401, 422) },
        detail: { summary: "Register a machine with a registration token (bearer svcg_…)", ...policy({ caller: "runner" }) },
      },
    )
    .post(
      "/v1/runners/claim",
      async ({ request, set }) => {
        const out = await claimJob(ctx, callerOf(request), request.signal);
        // Tells the agent how long the server waits, so its own timeout can exceed it (SPEC §8).
        set.headers["x-svc-claim-wait-ms"] = String(ctx.config.runnerClaimWaitMs);
        if (!out) return noContent(set);
        return out;
      },
      {
        transform: ({ request }) => requireRunnerCaller(callerOf(request), "runner:claim"),
        response: { 200: Claim, 204: noContent.schema, ...errors(401, 409) },
        detail: { summary: "Claim a job (bearer svcr_…); held open up to SVC_RUNNER_CLAIM_WAIT_MS, 204 when nothing came", ...policy({ caller: "runner" }) },
      },
    )
    .get(
      "/v1/runner/jobs/:job_id",
      ({ request, params }) => describeJob(ctx, callerOf(request), params.job_id, { format: Number(request.headers.get(RUNNER_FORMAT_HEADER)) || 1 }),
      {
        response: { 200: JobDescription, ...errors(401, 404, 409) },
        detail: { summary: "The claimed job's description (bearer = the per-job token; `x-svc-runner-format: 2` for templates and contexts)" },
      },
    )
    .post("/v1/runner/jobs/:job_id/logs", ({ request, params, body }) => appendLog(ctx, callerOf(request), params.job_id, body), {
      body: LogAppend,
      response: { 200: LogAck, ...errors(400, 401, 404, 409, 413) },
      detail: { summary: "Append log text at a byte offset (idempotent); answers the next offset" },
    })
    .post(
      "/v1/runner/jobs/:job_id/steps/:index",
      async ({ request, params, body, set }) => {
        await setStepState(ctx, callerOf(request), params.job_id, Number(params.index), body);
        return noContent(set);
      },
      { body: StepUpdate, response: { 204: noContent.schema, ...errors(400, 401, 404, 422) }, detail: { summary: "Report a step's state" } },
    )
    .post("/v1/runner/jobs/:job_id/heartbeat", ({ request, params }) => heartbeat(ctx, callerOf(request), params.job_id), {
      response: { 200: HeartbeatAnswer, ...errors(401, 404) },
      detail: { summary: "The runner is alive; answers whether to cancel" },
    })
    .post(
      "/v1/runner/jobs/:job_id/complete",
      async ({ request, params, body, set }) => {
        await completeJob(ctx, callerOf(request), params.job_id, body);
        return noContent(set);
      },
      {
        body: JobComplete,
        response: { 204: noContent.schema, ...errors(400, 401, 404, 422) },
        detail: { summary: "Report the verdict; the job token is revoked" },
      },
    );
}
