// The agent's call for `uses: {org}/{repo}[/path]@{ref}` (issue 30, DECISIONS §5 "Actions"): which
// repository, commit and path of this server it names, for the running job's token. The agent
// then fetches that commit over git with the same token (docs/api.md "Actions").
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { ACTION_RESOLVE_LIMITS, resolveAction } from "../../../services/ci/actions.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

const ActionResolve = t.Object({
  uses: t.String({ maxLength: ACTION_RESOLVE_LIMITS.usesChars, description: "`org/repo[/path]@ref`; ref is a branch, a tag, a full commit sha or HEAD" }),
});

const ActionResolved = t.Object(
  {
    repo: t.String({ description: "`org/repo` as stored" }),
    commit: t.String({ description: "the commit the ref names (fetch it with the job token)" }),
    clone_url: t.String({ description: "where to fetch it over git (HTTP; the job token as a bearer header)" }),
    path: t.String({ description: 'the action\'s directory in the repository ("" for its root)' }),
    ref: t.Union([t.String(), t.Null()], { description: "the full ref the name matched (`refs/heads/v1`, `refs/tags/v1`); null for a commit sha" }),
    tree: t.String({
      description:
        "the commit's root tree oid: the agent recomputes it over its cached checkout (without .git) before each use and fetches afresh on a mismatch",
    }),
  },
  {
    examples: [
      {
        repo: "mirrors/setup-tool",
        commit: "3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        clone_url: "https://svc.example.com/mirrors/setup-tool.git",
        path: "",
        ref: "refs/tags/v1",
        tree: "9b1e5c0d2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c",
      },
    ],
  },
);

/** POST /v1/runner/jobs/{job_id}/actions. */
export function runnerActionRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.ci.runner-actions" }).post(
    "/v1/runner/jobs/:job_id/actions",
    ({ request, params, body }) => resolveAction(ctx, callerOf(request), params.job_id, body),
    {
      body: ActionResolve,
      response: { 200: ActionResolved, ...errors(400, 401, 404, 422) },
      detail: {
        summary:
          "Resolve a `uses:` reference to a repository on this server (bearer = the per-job token): its read rights plus public repositories; anything else is a masked 404",
      },
    },
  );
}
