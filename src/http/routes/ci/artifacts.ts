// A run's artifacts through the API (issue 30): the list, the zip (S3: a redirect to a short-lived
// presigned URL of the bucket; fs: streamed), and deleting one. Repository read (write to delete)
// through the one resolution; a private repository the caller may not see is a 404 like a missing one.
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { deleteArtifact, downloadArtifact, listRunArtifacts } from "../../../services/ci/artifacts.ts";
import { ArtifactList } from "../../../services/ci/artifacts-schemas.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";
import { zipAnswer } from "../../artifact-file.ts";

/** Artifact routes under /v1/orgs/{org}/repos/{repo}. */
export function artifactRoutes(ctx: Ctx) {
  const base = "/v1/orgs/:org/repos/:repo";
  return new Elysia({ name: "routes.ci.artifacts" })
    .get(
      `${base}/runs/:id/artifacts`,
      async ({ request, params }) => listRunArtifacts(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id),
      {
        response: { 200: ArtifactList, ...errors(401, 404) },
        detail: { summary: "A run's artifacts (every attempt's, by name; expired ones until the sweep deletes them)" },
      },
    )
    .get(
      `${base}/artifacts/:artifact_id/zip`,
      async ({ request, params }) => {
        const out = await downloadArtifact(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.artifact_id);
        if (out.kind === "redirect") return new Response(null, { status: 302, headers: { location: out.url, "cache-control": "no-store" } });
        return zipAnswer(request, out, true);
      },
      {
        response: {
          200: t.String({ description: "the zip (application/zip, fs storage); 206 for a Range" }),
          302: t.Null({ description: "S3 storage: Location is a presigned URL of the bucket, valid five minutes" }),
          ...errors(401, 404, 410),
        },
        detail: { summary: "Download an artifact as a zip (410 once expired)" },
      },
    )
    .delete(
      `${base}/artifacts/:artifact_id`,
      async ({ request, params, set }) => {
        const target = await openRepo(ctx, callerOf(request), params.org, params.repo);
        await deleteArtifact(ctx, target, params.artifact_id);
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 403, 404) },
        detail: { summary: "Delete an artifact (repository write): its zip, then its record" },
      },
    );
}
