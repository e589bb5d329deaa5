// Per-repo grants and the access listing (SPEC §4.5; DECISIONS §2–§3).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createGrants, deleteGrant, listGrants, repoAccess } from "../../../services/orgs/grants.ts";
import { GrantCreate, GrantList, RepoAccess } from "../../../services/orgs/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** Grant and access routes. */
export function grantRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.grants" })
    .post("/v1/orgs/:org/repos/:repo/grants", ({ request, params, body }) => createGrants(ctx, callerOf(request), params.org, params.repo, body), {
      body: GrantCreate,
      response: { 200: GrantList, ...errors(400, 401, 403, 404, 422) },
      detail: { summary: "Grant people or a team a role on the repository (all-or-nothing; answers every grant on it)" },
    })
    .get("/v1/orgs/:org/repos/:repo/grants", ({ request, params }) => listGrants(ctx, callerOf(request), params.org, params.repo), {
      response: { 200: GrantList, ...errors(401, 403, 404) },
      detail: { summary: "List the repository's grants" },
    })
    .delete(
      "/v1/orgs/:org/repos/:repo/grants/users/:user",
      async ({ request, params, set }) => {
        await deleteGrant(ctx, callerOf(request), params.org, params.repo, "user", params.user);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Remove a person's grant" } },
    )
    .delete(
      "/v1/orgs/:org/repos/:repo/grants/teams/:team",
      async ({ request, params, set }) => {
        await deleteGrant(ctx, callerOf(request), params.org, params.repo, "team", params.team);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Remove a team's grant" } },
    )
    .get("/v1/orgs/:org/repos/:repo/access", ({ request, params }) => repoAccess(ctx, callerOf(request), params.org, params.repo), {
      response: { 200: RepoAccess, ...errors(401, 403, 404) },
      detail: { summary: "Everyone who can reach the repository, their role and its source" },
    });
}
