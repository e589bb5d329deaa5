// Repositories (SPEC §2.1; DECISIONS §3).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createRepo, deleteRepo, getRepo, listRepos, openRepo, patchRepo } from "../../../services/repos/repos.ts";
import { Repo, RepoCreate, RepoList, RepoPatch } from "../../../services/repos/schemas.ts";
import { PageQuery, errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { jsonAnswer, noContent } from "../../responses.ts";

/** Repository routes. */
export function repoRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.repos" })
    .post(
      "/v1/orgs/:org/repos",
      async ({ request, params, body, set }) => {
        const out = await createRepo(ctx, callerOf(request), params.org, body);
        set.status = 201;
        return out;
      },
      {
        body: RepoCreate,
        response: { 201: Repo, ...errors(400, 401, 402, 403, 404, 409, 413, 422) },
        detail: { summary: "Create a repository (422 for a kind or origin_provider outside the enumeration)" },
      },
    )
    .get("/v1/orgs/:org/repos", ({ request, params, query }) => listRepos(ctx, callerOf(request), params.org, query), {
      query: PageQuery,
      response: { 200: RepoList, ...errors(400, 401, 404) },
      detail: { summary: "List the repositories the caller may see, by name" },
    })
    .get(
      "/v1/orgs/:org/repos/:repo",
      async ({ request, params }) => jsonAnswer(await getRepo(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo))),
      {
        response: { 200: Repo, ...errors(401, 404) },
        detail: { summary: "Get a repository (401 anonymous / 404 otherwise when it may not be seen)" },
      },
    )
    .patch(
      "/v1/orgs/:org/repos/:repo",
      async ({ request, params, body }) => patchRepo(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), body),
      {
        body: RepoPatch,
        response: { 200: Repo, ...errors(400, 401, 402, 403, 404, 409, 413) },
        detail: { summary: "Change name, visibility, default branch, description or homepage (repo admin)" },
      },
    )
    .delete(
      "/v1/orgs/:org/repos/:repo",
      async ({ request, params, set }) => {
        await deleteRepo(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo));
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 403, 404) },
        detail: { summary: "Delete a repository (storage purged in the background; repo admin)" },
      },
    );
}
