// Repositories (SPEC §2.1; DECISIONS §3).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createRepo, deleteRepo, getRepo, listRepos, patchRepo } from "../../../services/repos/repos.ts";
import { callerOf } from "../../principal.ts";

const CreateBody = t.Object({
  name: t.String(),
  public: t.Optional(t.Boolean()),
  description: t.Optional(t.Nullable(t.String())),
  homepage: t.Optional(t.Nullable(t.String())),
  default_branch: t.Optional(t.String()),
  kind: t.Optional(t.String({ description: "native (default) or mirror" })),
  origin_url: t.Optional(t.Nullable(t.String())),
  origin_provider: t.Optional(t.Nullable(t.String())),
  origin_installation: t.Optional(t.Nullable(t.String())),
});

const PatchBody = t.Object({
  name: t.Optional(t.String()),
  public: t.Optional(t.Boolean()),
  default_branch: t.Optional(t.String()),
  description: t.Optional(t.Nullable(t.String())),
  homepage: t.Optional(t.Nullable(t.String())),
});

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
      { body: CreateBody, detail: { summary: "Create a repository" } },
    )
    .get("/v1/orgs/:org/repos", ({ request, params, query }) => listRepos(ctx, callerOf(request), params.org, query), {
      query: t.Object({ limit: t.Optional(t.String()), cursor: t.Optional(t.String()) }),
      detail: { summary: "List the repositories the caller may see" },
    })
    .get("/v1/orgs/:org/repos/:repo", ({ request, params }) => getRepo(ctx, callerOf(request), params.org, params.repo), {
      detail: { summary: "Get a repository" },
    })
    .patch(
      "/v1/orgs/:org/repos/:repo",
      ({ request, params, body }) => patchRepo(ctx, callerOf(request), params.org, params.repo, body),
      { body: PatchBody, detail: { summary: "Change name, visibility, default branch, description or homepage" } },
    )
    .delete(
      "/v1/orgs/:org/repos/:repo",
      async ({ request, params, set }) => {
        await deleteRepo(ctx, callerOf(request), params.org, params.repo);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Delete a repository (storage purged in the background)" } },
    );
}
