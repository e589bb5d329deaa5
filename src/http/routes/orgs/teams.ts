// Teams and their members (SPEC §4.5; DECISIONS §3).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { addTeamMember, createTeam, deleteTeam, listTeamMembers, listTeams, removeTeamMember } from "../../../services/orgs/teams.ts";
import { principalOf } from "../../principal.ts";

const TeamBody = t.Object({
  name: t.String({ description: "unique per org, case-folded; 1-100 characters" }),
  description: t.Optional(t.Nullable(t.String())),
});

/** Team routes. */
export function teamRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.teams" })
    .post(
      "/v1/orgs/:org/teams",
      ({ request, params, body, set }) => {
        const out = createTeam(ctx, principalOf(ctx, request), params.org, body);
        set.status = 201;
        return out;
      },
      { body: TeamBody, detail: { summary: "Create a team (org admin)" } },
    )
    .get("/v1/orgs/:org/teams", ({ request, params }) => listTeams(ctx, principalOf(ctx, request), params.org), {
      detail: { summary: "List teams" },
    })
    .delete(
      "/v1/orgs/:org/teams/:team",
      ({ request, params, set }) => {
        deleteTeam(ctx, principalOf(ctx, request), params.org, params.team);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Delete a team with its memberships and grants (org admin)" } },
    )
    .get("/v1/orgs/:org/teams/:team/members", ({ request, params }) => listTeamMembers(ctx, principalOf(ctx, request), params.org, params.team), {
      detail: { summary: "List a team's members" },
    })
    .put(
      "/v1/orgs/:org/teams/:team/members/:user",
      ({ request, params, set }) => {
        addTeamMember(ctx, principalOf(ctx, request), params.org, params.team, params.user);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Add an org member to a team (org admin)" } },
    )
    .delete(
      "/v1/orgs/:org/teams/:team/members/:user",
      ({ request, params, set }) => {
        removeTeamMember(ctx, principalOf(ctx, request), params.org, params.team, params.user);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Remove someone from a team (org admin)" } },
    );
}
