// The repository layout's buttons (issue 33): Fork (and the page choosing where the fork goes),
// Watch/Unwatch and a mirror's Sync now. Each is a form of one POST with the CSRF token, so it
// works without JavaScript; the page it was pressed on is shown again afterwards (post/redirect/get).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { forkChoicesView, forkFromForm, syncFromForm, watchFromForm } from "../../../services/web/repo-actions.ts";
import { HIDE, orgParam, pageDrawer, repoParam } from "../kit/draw.ts";
import { field, postForm } from "../kit/forms.ts";
import { seg } from "../kit/html.ts";
import { layout, page } from "../kit/layout.ts";
import { safeNext } from "../kit/sign-in.ts";
import { forkPage } from "./fork-page.ts";

/** `/org/repo` */
function repoUrl(org: string, repo: string): string {
  return `/${seg(org)}/${seg(repo)}`;
}

/** The page of this repository the form was posted from (its same-site Referer), else the repository's page. */
function backTo(ctx: Ctx, request: Request, base: string): string {
  const referer = request.headers.get("referer");
  if (!referer?.startsWith(`${ctx.baseUrl}/`)) return base;
  const path = safeNext(referer.slice(ctx.baseUrl.length));
  return path === base || path.startsWith(`${base}/`) || path.startsWith(`${base}?`) ? path : base;
}

/** The Fork, Watch and Sync now routes. */
export function repoActionRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return new Elysia({ name: "routes.web.repo-actions" })
    .get(
      "/:org/:repo/fork",
      ({ request, params }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return draw(request, async (actor, frame) => {
          const v = await forkChoicesView(ctx, actor, org, repo);
          return page(layout(frame, `Fork · ${v.chrome.repo.org}/${v.chrome.repo.name}`, forkPage(frame, v.chrome, v.namespaces)));
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/fork",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          read: (form) => ({ org: field(form, "org"), name: field(form, "name"), asked: form.has("org") || form.has("name") }),
          act: async ({ actor, frame }, values) => {
            // The layout's button sends no namespace: someone who may fork into several is asked where.
            if (!values.asked) {
              const v = await forkChoicesView(ctx, actor, org, repo);
              if (v.namespaces.length > 1)
                return page(layout(frame, `Fork · ${v.chrome.repo.org}/${v.chrome.repo.name}`, forkPage(frame, v.chrome, v.namespaces)));
            }
            const fork = await forkFromForm(ctx, actor, org, repo, values);
            return repoUrl(fork.org, fork.name);
          },
          again: async ({ actor, frame }, error, values) => {
            const v = await forkChoicesView(ctx, actor, org, repo);
            return page(
              layout(frame, `Fork · ${v.chrome.repo.org}/${v.chrome.repo.name}`, forkPage(frame, v.chrome, v.namespaces, values, error.message)),
              error.status,
            );
          },
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/watch",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            await watchFromForm(ctx, actor, org, repo, form.get("watch") !== "0");
            return backTo(ctx, request, repoUrl(org, repo));
          },
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/sync",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await syncFromForm(ctx, actor, org, repo);
            return backTo(ctx, request, repoUrl(org, repo));
          },
        });
      },
      HIDE,
    );
}
