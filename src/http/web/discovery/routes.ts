// The explore and search pages (issue 33): GET /explore?cursor= and
// GET /search?q=&type=repos|issues|code&repo=org/name&cursor=. Both are plain GET pages (the
// header's search box is a GET form), read through the API's services.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { exploreView, searchQueryOf, searchView } from "../../../services/web/explore.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page } from "../kit/layout.ts";
import { explorePage, searchPage } from "./pages.ts";

/** The explore and search pages. */
export function discoveryWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return new Elysia({ name: "routes.web.discovery" })
    .get(
      "/explore",
      ({ request, query }) =>
        draw(request, async (actor, frame) => {
          const cursor = queryParam(query, "cursor");
          const list = await exploreView(ctx, actor, cursor);
          return page(layout(frame, "Explore", explorePage(list, Boolean(cursor))));
        }),
      HIDE,
    )
    .get(
      "/search",
      ({ request, query }) =>
        draw(request, async (actor, frame) => {
          const v = await searchView(
            ctx,
            actor,
            searchQueryOf((name) => queryParam(query, name)),
          );
          const scoped = v.scope ? { ...frame, searchScope: `${v.scope.org}/${v.scope.name}` } : frame;
          const title = v.query.q ? `${v.query.q} · Search` : "Search";
          return page(layout(scoped, title, searchPage(v)), v.problem?.status ?? 200);
        }),
      HIDE,
    );
}
