// The agent's artifact calls (issue 30), with the per-job token: reserve a name and size, upload
// (fs: here; S3: to the presigned bucket address), confirm, and list the run's artifacts with
// their download addresses (fs: the content route here; S3: presigned).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { commitArtifact, jobArtifactFile, jobRunArtifacts, putArtifactContent, reserveArtifact } from "../../../services/ci/artifacts.ts";
import { Artifact, ArtifactReserve, ArtifactReserved, RunnerArtifactList } from "../../../services/ci/artifacts-schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { policy } from "../../policy.ts";
import { noContent } from "../../responses.ts";
import { zipAnswer } from "../../artifact-file.ts";

/** The agent's artifact routes under /v1/runner/jobs/{job_id}/artifacts. */
export function runnerArtifactRoutes(ctx: Ctx) {
  const base = "/v1/runner/jobs/:job_id/artifacts";
  return new Elysia({ name: "routes.ci.runner-artifacts" })
    .post(
      base,
      async ({ request, params, body, set }) => {
        const out = await reserveArtifact(ctx, callerOf(request), params.job_id, body);
        set.status = 201;
        return out;
      },
      {
        body: ArtifactReserve,
        response: { 201: ArtifactReserved, ...errors(400, 401, 404, 409, 413) },
        detail: {
          summary: "Reserve an artifact of the job's run: answers where to PUT its zip",
          description:
            "A name of an earlier attempt is replaced; the same attempt's is 409 unless `overwrite`. On S3 the upload URL is presigned for the bucket (send no credential); on fs it is this server's content route.",
        },
      },
    )
    .get(base, ({ request, params }) => jobRunArtifacts(ctx, callerOf(request), params.job_id), {
      response: { 200: RunnerArtifactList, ...errors(401, 404) },
      detail: { summary: "The job's run's ready artifacts, each with a download address" },
    })
    .put(
      `${base}/:artifact_id/content`,
      async ({ request, params, set }) => {
        const length = request.headers.get("content-length");
        await putArtifactContent(ctx, callerOf(request), params.job_id, params.artifact_id, request.body, length === null ? null : Number(length));
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(400, 401, 404, 409, 413) },
        detail: {
          summary: "Upload a reserved artifact's zip (fs storage): exactly the reserved size, matching the reserved sha256",
          ...policy({ body: "stream" }),
        },
      },
    )
    .get(
      `${base}/:artifact_id/content`,
      async ({ request, params }) => zipAnswer(request, await jobArtifactFile(ctx, callerOf(request), params.job_id, params.artifact_id), false),
      {
        response: { 200: t.String({ description: "the zip (application/zip); 206 for a Range" }), ...errors(401, 404, 410) },
        detail: { summary: "Download an artifact of the job's run (fs storage; Range supported)" },
      },
    )
    .post(`${base}/:artifact_id/commit`, ({ request, params }) => commitArtifact(ctx, callerOf(request), params.job_id, params.artifact_id), {
      response: { 200: Artifact, ...errors(401, 404, 409) },
      detail: { summary: "Confirm an upload: the object must be stored with the reserved size; the artifact is then listed" },
    });
}
