// Org administration pages under /settings/orgs/{org}/… ("settings" is a reserved namespace, so
// no org or repository can shadow them) and repository settings under /{org}/{repo}/settings/….
// This file: the plugin that gathers them, the profile, members and invitations.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { patchOrgProfile } from "../../../services/discovery/profiles.ts";
import { removeMember, setMemberRole } from "../../../services/orgs/orgs.ts";
import { createInvite, revokeInvite } from "../../../services/orgs/invites.ts";
import { invitesView, membersView, orgAdminFrame, profileView } from "../../../services/web/admin.ts";
import { field, postForm, seeOther } from "../kit/forms.ts";
import { adminBillingRoutes } from "./billing-routes.ts";
import { adminRepoRoutes } from "./repo-routes.ts";
import { adminRunnerRoutes } from "./runners-routes.ts";
import { adminSecretRoutes } from "./secrets-routes.ts";
import { adminTeamRoutes } from "./teams-routes.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { orgHref, type Notice } from "./frame.ts";
import { invitesPage, membersPage, profilePage } from "./orgs-page.ts";
import type { InviteCreated } from "../../../services/orgs/schemas.ts";

/** Every administration page. */
export function adminWebRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.web.admin" })
    .use(adminPeopleRoutes(ctx))
    .use(adminTeamRoutes(ctx))
    .use(adminRunnerRoutes(ctx))
    .use(adminSecretRoutes(ctx))
    .use(adminBillingRoutes(ctx))
    .use(adminRepoRoutes(ctx));
}

/** Profile, members, invitations. */
function adminPeopleRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);

  const profile = async (actor: Principal, frame: Frame, org: string, notice: Notice, status = 200, values?: URLSearchParams) => {
    const v = await profileView(ctx, actor, org);
    return page(layout(frame, `Profile · ${v.frame.org} settings`, profilePage(v.frame, v.profile, frame.csrf, notice, values)), status);
  };
  const members = async (actor: Principal, frame: Frame, org: string, cursor: string | undefined, notice: Notice, status = 200) => {
    const v = await membersView(ctx, actor, org, cursor);
    return page(layout(frame, `Members · ${v.frame.org} settings`, membersPage(v.frame, v.members, frame.viewer, frame.csrf, notice)), status);
  };
  const invites = async (
    actor: Principal,
    frame: Frame,
    org: string,
    o: { cursor?: string; notice?: Notice; status?: number; made?: InviteCreated; values?: URLSearchParams },
  ) => {
    const v = await invitesView(ctx, actor, org, o.cursor);
    // Why no-store: the page right after creation holds the invitation link, shown once.
    const headers: Record<string, string> = o.made ? { "cache-control": "no-store" } : {};
    return page(
      layout(frame, `Invitations · ${v.frame.org} settings`, invitesPage(v.frame, v.invites, frame.csrf, o.notice ?? {}, o.made, o.values)),
      o.status ?? 200,
      headers,
    );
  };

  return new Elysia({ name: "routes.web.admin.people" })
    .get(
      "/settings/orgs/:org",
      ({ request, params }) =>
        draw(request, async (actor) => {
          const f = await orgAdminFrame(ctx, actor, params.org);
          return seeOther(orgHref(f.org, f.admin ? "profile" : "members"));
        }),
      HIDE,
    )
    .get(
      "/settings/orgs/:org/profile",
      ({ request, params, query }) => draw(request, (actor, frame) => profile(actor, frame, params.org, { done: queryParam(query, "done") })),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/profile",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            const f = await patchOrgProfile(ctx, actor, params.org, {
              display_name: field(form, "display_name"),
              description: form.get("description") ?? "",
              location: field(form, "location"),
              website: field(form, "website"),
              contact_email: field(form, "contact_email"),
            });
            return `${orgHref(f.org, "profile")}?done=saved`;
          },
          again: async ({ actor, frame, form }, e) => profile(actor, frame, params.org, { error: e.message }, e.status, form),
        }),
      HIDE,
    )
    .get(
      "/settings/orgs/:org/members",
      ({ request, params, query }) =>
        draw(request, (actor, frame) => members(actor, frame, params.org, queryParam(query, "cursor"), { done: queryParam(query, "done") })),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/members/:user/role",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            await setMemberRole(ctx, actor, params.org, params.user, { role: field(form, "role") });
            return `${orgHref(params.org, "members")}?done=saved`;
          },
          again: async ({ actor, frame }, e) => members(actor, frame, params.org, undefined, { error: e.message }, e.status),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/members/:user/remove",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, frame }) => {
            await removeMember(ctx, actor, params.org, params.user);
            return frame.viewer?.id === params.user ? "/" : `${orgHref(params.org, "members")}?done=removed`;
          },
          again: async ({ actor, frame }, e) => members(actor, frame, params.org, undefined, { error: e.message }, e.status),
        }),
      HIDE,
    )
    .get(
      "/settings/orgs/:org/invitations",
      ({ request, params, query }) =>
        draw(request, (actor, frame) =>
          invites(actor, frame, params.org, { cursor: queryParam(query, "cursor"), notice: { done: queryParam(query, "done") } }),
        ),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/invitations",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, form, frame }) => {
            const made = await createInvite(ctx, actor, params.org, { email: field(form, "email"), role: field(form, "role") });
            return invites(actor, frame, params.org, { made, status: 201 });
          },
          again: async ({ actor, frame, form }, e) => invites(actor, frame, params.org, { notice: { error: e.message }, status: e.status, values: form }),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/invitations/:id/revoke",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await revokeInvite(ctx, actor, params.org, params.id);
            return `${orgHref(params.org, "invitations")}?done=revoked`;
          },
          again: async ({ actor, frame }, e) => invites(actor, frame, params.org, { notice: { error: e.message }, status: e.status }),
        }),
      HIDE,
    );
}
