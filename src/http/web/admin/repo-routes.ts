// Repository settings: grants (/{org}/{repo}/settings/access) and webhooks with their deliveries
// (/{org}/{repo}/settings/webhooks[/{id}]); General and Protections are repo-settings-routes.ts.
import { Elysia } from "elysia";
import { NotFound } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { createGrants, deleteGrant } from "../../../services/orgs/grants.ts";
import { createWebhook, deleteWebhook } from "../../../services/hooks/webhooks.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import type { WebhookCreated } from "../../../services/hooks/schemas.ts";
import { accessView, webhookView, webhooksView } from "../../../services/web/admin.ts";
import { field, listField, postForm } from "../kit/forms.ts";
import { HIDE, orgParam, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { repoSettingsHref, type Notice } from "./frame.ts";
import { accessPage, webhookPage, webhooksPage } from "./repo-page.ts";
import { repoSettingsRoutes } from "./repo-settings-routes.ts";

/** Repository settings pages and forms. */
export function adminRepoRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);

  const access = async (actor: Principal, frame: Frame, org: string, repo: string, notice: Notice, status = 200, values?: URLSearchParams) => {
    const v = await accessView(ctx, actor, org, repo);
    return page(layout(frame, `Access · ${v.frame.org}/${v.frame.repo}`, accessPage(v.frame, v, frame, notice, values)), status);
  };
  const hooks = async (
    actor: Principal,
    frame: Frame,
    org: string,
    repo: string,
    o: { notice?: Notice; status?: number; made?: WebhookCreated; values?: URLSearchParams } = {},
  ) => {
    const v = await webhooksView(ctx, actor, org, repo);
    // Why no-store: the page right after creation holds the signing secret, shown once.
    const headers: Record<string, string> = o.made ? { "cache-control": "no-store" } : {};
    return page(
      layout(frame, `Webhooks · ${v.frame.org}/${v.frame.repo}`, webhooksPage(v.frame, v.webhooks, frame, o.notice ?? {}, o.made, o.values)),
      o.status ?? 200,
      headers,
    );
  };
  const hook = async (actor: Principal, frame: Frame, org: string, repo: string, id: string, cursor: string | undefined, notice: Notice, status = 200) => {
    const v = await webhookView(ctx, actor, org, repo, id, cursor);
    return page(layout(frame, `Webhook · ${v.frame.org}/${v.frame.repo}`, webhookPage(v.frame, v.webhook, v.deliveries, frame, notice)), status);
  };
  const accessDone = (org: string, repo: string, what: string) => `${repoSettingsHref(org, repo, "access")}?done=${what}`;

  return new Elysia({ name: "routes.web.admin.repo" })
    .use(repoSettingsRoutes(ctx))
    .get(
      "/:org/:repo/settings/access",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, (actor, frame) => access(actor, frame, org, params.repo, { done: queryParam(query, "done") }));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/settings/access",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            const role = field(form, "role");
            const input = form.get("kind") === "team" ? { team_id: field(form, "team"), role } : { user_ids: listField(form, "users", 1000), role };
            await createGrants(ctx, actor, org, params.repo, input);
            return accessDone(org, params.repo, "granted");
          },
          again: async ({ actor, frame, form }, e) => access(actor, frame, org, params.repo, { error: e.message }, e.status, form),
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/settings/access/:kind/:ref/remove",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor }) => {
            const kind = params.kind === "users" ? "user" : params.kind === "teams" ? "team" : null;
            if (!kind) throw NotFound("grant not found");
            await deleteGrant(ctx, actor, org, params.repo, kind, params.ref);
            return accessDone(org, params.repo, "removed");
          },
          again: async ({ actor, frame }, e) => access(actor, frame, org, params.repo, { error: e.message }, e.status),
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/settings/webhooks",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, (actor, frame) => hooks(actor, frame, org, params.repo, { notice: { done: queryParam(query, "done") } }));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/settings/webhooks",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor, form, frame }) => {
            const made = await createWebhook(ctx, await openRepo(ctx, actor, org, params.repo), { url: field(form, "url") });
            return hooks(actor, frame, org, params.repo, { made, status: 201 });
          },
          again: async ({ actor, frame, form }, e) => hooks(actor, frame, org, params.repo, { notice: { error: e.message }, status: e.status, values: form }),
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/settings/webhooks/:id",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, (actor, frame) =>
          hook(actor, frame, org, params.repo, params.id, queryParam(query, "cursor"), { done: queryParam(query, "done") }),
        );
      },
      HIDE,
    )
    .post(
      "/:org/:repo/settings/webhooks/:id/delete",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await deleteWebhook(ctx, await openRepo(ctx, actor, org, params.repo), params.id);
            return `${repoSettingsHref(org, params.repo, "webhooks")}?done=deleted`;
          },
          again: async ({ actor, frame }, e) => hook(actor, frame, org, params.repo, params.id, undefined, { error: e.message }, e.status),
        });
      },
      HIDE,
    );
}
