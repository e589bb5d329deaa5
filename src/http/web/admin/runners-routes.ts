// Org administration: runner groups, registration commands and machines.
import { Elysia } from "elysia";
import type { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { createGroup, deleteGroup } from "../../../services/ci/groups.ts";
import { createRegistrationToken, removeRunner } from "../../../services/ci/runners.ts";
import type { RegistrationToken } from "../../../services/ci/schemas.ts";
import { runnersView } from "../../../services/web/admin.ts";
import { field, listField, postForm, type FormInput } from "../kit/forms.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { orgHref, type Notice } from "./frame.ts";
import { runnersPage } from "./runners-page.ts";

/** Runner pages and forms. */
export function adminRunnerRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);

  const runners = async (
    actor: Principal,
    frame: Frame,
    org: string,
    o: { notice?: Notice; status?: number; made?: RegistrationToken; values?: URLSearchParams } = {},
  ) => {
    const v = await runnersView(ctx, actor, org);
    // Why no-store: the page right after creation holds the registration token, shown once.
    const headers: Record<string, string> = o.made ? { "cache-control": "no-store" } : {};
    return page(
      layout(frame, `Runners · ${v.frame.org} settings`, runnersPage(v.frame, v.groups, v.runners, frame.csrf, o.notice ?? {}, o.made, o.values)),
      o.status ?? 200,
      headers,
    );
  };
  const refused =
    (org: string) =>
    ({ actor, frame, form }: FormInput, e: AppError) =>
      runners(actor, frame, org, { notice: { error: e.message }, status: e.status, values: form });
  const done = (org: string, what: string) => `${orgHref(org, "runners")}?done=${what}`;

  return new Elysia({ name: "routes.web.admin.runners" })
    .get(
      "/settings/orgs/:org/runners",
      ({ request, params, query }) => draw(request, (actor, frame) => runners(actor, frame, params.org, { notice: { done: queryParam(query, "done") } })),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/runners/groups",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            const access = field(form, "repo_access") || "all";
            await createGroup(ctx, actor, params.org, {
              name: form.get("name") ?? "",
              repo_access: access,
              allow_public: form.get("allow_public") === "1",
              repos: access === "selected" ? listField(form, "repos") : [],
            });
            return done(params.org, "created");
          },
          again: refused(params.org),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/runners/groups/:id/delete",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await deleteGroup(ctx, actor, params.org, params.id);
            return done(params.org, "deleted");
          },
          again: refused(params.org),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/runners/registration-token",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, form, frame }) => {
            const made = await createRegistrationToken(ctx, actor, params.org, { group: field(form, "group") || "default" });
            return runners(actor, frame, params.org, { made, status: 201 });
          },
          again: refused(params.org),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/runners/:id/remove",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await removeRunner(ctx, actor, params.org, params.id);
            return done(params.org, "removed");
          },
          again: refused(params.org),
        }),
      HIDE,
    );
}
