// Per-repo grants and the access listing (SPEC §4.5; DECISIONS §2–§3).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createGrants, deleteGrant, listGrants, repoAccess } from "../../../services/orgs/grants.ts";
import { callerOf } from "../../principal.ts";

const GrantBody = t.Object({
  user_ids: t.Optional(t.Array(t.String(), { description: "user ids (or handles) of org members" })),
  team_id: t.Optional(t.String({ description: "a team id (or name)" })),
  role: t.String({ description: "viewer, member or admin" }),
});

/** Grant and access routes. */
export function grantRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.grants" })
    .post(
      "/v1/orgs/:org/repos/:repo/grants",
      ({ request, params, body }) => createGrants(ctx, callerOf(request), params.org, params.repo, body),
      { body: GrantBody, detail: { summary: "Grant people or a team a role on the repository (all-or-nothing)" } },
    )
    .get("/v1/orgs/:org/repos/:repo/grants", ({ request, params }) => listGrants(ctx, callerOf(request), params.org, params.repo), {
      detail: { summary: "List the repository's grants" },
    })
    .delete(
      "/v1/orgs/:org/repos/:repo/grants/users/:user",
      async ({ request, params, set }) => {
        await deleteGrant(ctx, callerOf(request), params.org, params.repo, "user", params.user);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Remove a person's grant" } },
    )
    .delete(
      "/v1/orgs/:org/repos/:repo/grants/teams/:team",
      async ({ request, params, set }) => {
        await deleteGrant(ctx, callerOf(request), params.org, params.repo, "team", params.team);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Remove a team's grant" } },
    )
    .get("/v1/orgs/:org/repos/:repo/access", ({ request, params }) => repoAccess(ctx, callerOf(request), params.org, params.repo), {
      detail: { summary: "Everyone who can reach the repository, their role and its source" },
    });
}
