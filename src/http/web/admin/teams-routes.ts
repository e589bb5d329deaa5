// Org administration: teams, their members, and a team's grant on a repository.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { addTeamMember, createTeam, deleteTeam, removeTeamMember } from "../../../services/orgs/teams.ts";
import { createGrants } from "../../../services/orgs/grants.ts";
import { teamView, teamsView } from "../../../services/web/admin.ts";
import { field, postForm } from "../kit/forms.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { orgHref, repoSettingsHref, type Notice } from "./frame.ts";
import { teamHref, teamPage, teamsPage } from "./teams-page.ts";

/** Team pages and forms. */
export function adminTeamRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);

  const teams = async (actor: Principal, frame: Frame, org: string, cursor: string | undefined, notice: Notice, status = 200, values?: URLSearchParams) => {
    const v = await teamsView(ctx, actor, org, cursor);
    return page(layout(frame, `Teams · ${v.frame.org} settings`, teamsPage(v.frame, v.teams, v.next, frame.csrf, notice, values)), status);
  };
  const team = async (actor: Principal, frame: Frame, org: string, ref: string, cursor: string | undefined, notice: Notice, status = 200) => {
    const v = await teamView(ctx, actor, org, ref, cursor);
    return page(layout(frame, `${v.team.name} · ${v.frame.org} settings`, teamPage(v.frame, v, frame.csrf, notice)), status);
  };

  return new Elysia({ name: "routes.web.admin.teams" })
    .get(
      "/settings/orgs/:org/teams",
      ({ request, params, query }) =>
        draw(request, (actor, frame) => teams(actor, frame, params.org, queryParam(query, "cursor"), { done: queryParam(query, "done") })),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/teams",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            const t = await createTeam(ctx, actor, params.org, { name: form.get("name") ?? "", description: field(form, "description") || null });
            return `${teamHref(params.org, t.id)}?done=created`;
          },
          again: async ({ actor, frame, form }, e) => teams(actor, frame, params.org, undefined, { error: e.message }, e.status, form),
        }),
      HIDE,
    )
    .get(
      "/settings/orgs/:org/teams/:team",
      ({ request, params, query }) =>
        draw(request, (actor, frame) => team(actor, frame, params.org, params.team, queryParam(query, "cursor"), { done: queryParam(query, "done") })),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/teams/:team/members",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            await addTeamMember(ctx, actor, params.org, params.team, field(form, "user"));
            return `${teamHref(params.org, params.team)}?done=added`;
          },
          again: async ({ actor, frame }, e) => team(actor, frame, params.org, params.team, undefined, { error: e.message }, e.status),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/teams/:team/members/:user/remove",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await removeTeamMember(ctx, actor, params.org, params.team, params.user);
            return `${teamHref(params.org, params.team)}?done=removed`;
          },
          again: async ({ actor, frame }, e) => team(actor, frame, params.org, params.team, undefined, { error: e.message }, e.status),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/teams/:team/grants",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            const repo = field(form, "repo");
            await createGrants(ctx, actor, params.org, repo, { team_id: params.team, role: field(form, "role") });
            return `${repoSettingsHref(params.org, repo, "access")}?done=granted`;
          },
          again: async ({ actor, frame }, e) => team(actor, frame, params.org, params.team, undefined, { error: e.message }, e.status),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/teams/:team/delete",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await deleteTeam(ctx, actor, params.org, params.team);
            return `${orgHref(params.org, "teams")}?done=deleted`;
          },
          again: async ({ actor, frame }, e) => team(actor, frame, params.org, params.team, undefined, { error: e.message }, e.status),
        }),
      HIDE,
    );
}
