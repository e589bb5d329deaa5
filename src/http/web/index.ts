// The web interface: server-rendered pages over the same services as the API (issue 19). Every
// page resolves its caller like the API does and reads through the services' own access checks,
// so a page shows exactly what the API would; refusals render as HTML with the API's status.
import { Elysia } from "elysia";
import type { Ctx } from "../../services/context.ts";
import { orgView } from "../../services/web/views.ts";
import { orgMembersView } from "../../services/web/people.ts";
import { SCRIPT, STYLE, type Asset } from "./kit/assets.ts";
import { HIDE, orgParam, pageDrawer, queryParam } from "./kit/draw.ts";
import { layout, page } from "./kit/layout.ts";
import { homeResponse, userResponse } from "./account/home.ts";
import { accountWebRoutes } from "./account/routes.ts";
import { orgPage } from "./repos/org-page.ts";
import { repoWebRoutes } from "./repos/routes.ts";
import { refsWebRoutes } from "./repos/refs-routes.ts";
import { compareWebRoutes } from "./repos/compare-routes.ts";
import { blameWebRoutes } from "./repos/blame-routes.ts";
import { repoActionRoutes } from "./repos/actions-routes.ts";
import { adminWebRoutes } from "./admin/orgs-routes.ts";
import { ciWebRoutes } from "./ci/routes.ts";
import { changesWebRoutes } from "./changes/routes.ts";
import { issuesWebRoutes } from "./issues/routes.ts";
import { newRepoForm } from "./repos/new-page.ts";
import { notifyWebRoutes } from "./notify/routes.ts";
import { discoveryWebRoutes } from "./discovery/routes.ts";

function asset(a: Asset): Response {
  return new Response(a.body, {
    headers: { "content-type": a.type, "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" },
  });
}

/** The web pages. */
export function webRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return (
    new Elysia({ name: "routes.web" })
      .get(STYLE.url, () => asset(STYLE), HIDE)
      .get(SCRIPT.url, () => asset(SCRIPT), HIDE)
      .get("/", ({ request }) => draw(request, (actor, frame) => homeResponse(ctx, actor, frame)), HIDE)
      // Before /:org: `notifications` is a reserved name (services/names.ts).
      .use(notifyWebRoutes(ctx))
      // Before /:org too: `explore` and `search` are reserved names.
      .use(discoveryWebRoutes(ctx))
      .get(
        "/:org",
        ({ request, params, query }) => {
          const org = orgParam(params.org);
          return draw(request, async (actor, frame) => {
            const person = await userResponse(ctx, actor, frame, org, query);
            if (person) return person;
            const view = await orgView(ctx, actor, org, queryParam(query, "cursor"));
            const people = await orgMembersView(ctx, actor, view.profile.org);
            return page(
              layout(
                frame,
                view.profile.display_name ?? view.profile.org,
                orgPage(
                  view.profile,
                  view.repos,
                  view.next,
                  frame.viewer !== null,
                  view.canCreateRepo ? newRepoForm(view.profile.org, frame.csrf) : null,
                  people,
                ),
              ),
            );
          });
        },
        HIDE,
      )
      .use(repoWebRoutes(ctx))
      .use(refsWebRoutes(ctx))
      .use(compareWebRoutes(ctx))
      .use(blameWebRoutes(ctx))
      .use(repoActionRoutes(ctx))
      .use(accountWebRoutes(ctx))
      .use(adminWebRoutes(ctx))
      .use(ciWebRoutes(ctx))
      .use(changesWebRoutes(ctx))
      .use(issuesWebRoutes(ctx))
  );
}
