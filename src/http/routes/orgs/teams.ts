// Teams and their members (SPEC §4.5; DECISIONS §3).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { addTeamMember, createTeam, deleteTeam, listTeamMembers, listTeams, removeTeamMember } from "../../../services/orgs/teams.ts";
import { Team, TeamCreate, TeamList, TeamMemberList } from "../../../services/orgs/schemas.ts";
import { PageQuery, errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** Team routes. */
export function teamRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.teams" })
    .post(
      "/v1/orgs/:org/teams",
      async ({ request, params, body, set }) => {
        const out = await createTeam(ctx, callerOf(request), params.org, body);
        set.status = 201;
        return out;
      },
      { body: TeamCreate, response: { 201: Team, ...errors(400, 401, 403, 404, 409) }, detail: { summary: "Create a team (org admin)" } },
    )
    .get("/v1/orgs/:org/teams", ({ request, params, query }) => listTeams(ctx, callerOf(request), params.org, query), {
      query: PageQuery,
      response: { 200: TeamList, ...errors(400, 401, 403, 404) },
      detail: { summary: "List teams, by name" },
    })
    .delete(
      "/v1/orgs/:org/teams/:team",
      async ({ request, params, set }) => {
        await deleteTeam(ctx, callerOf(request), params.org, params.team);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Delete a team with its memberships and grants (org admin)" } },
    )
    .get("/v1/orgs/:org/teams/:team/members", ({ request, params, query }) => listTeamMembers(ctx, callerOf(request), params.org, params.team, query), {
      query: PageQuery,
      response: { 200: TeamMemberList, ...errors(400, 401, 403, 404) },
      detail: { summary: "List a team's members, by handle" },
    })
    .put(
      "/v1/orgs/:org/teams/:team/members/:user",
      async ({ request, params, set }) => {
        await addTeamMember(ctx, callerOf(request), params.org, params.team, params.user);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404, 422) }, detail: { summary: "Add an org member to a team (org admin)" } },
    )
    .delete(
      "/v1/orgs/:org/teams/:team/members/:user",
      async ({ request, params, set }) => {
        await removeTeamMember(ctx, callerOf(request), params.org, params.team, params.user);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Remove someone from a team (org admin)" } },
    );
}
