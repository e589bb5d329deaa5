// The two account pages that share an address with other pages: home at `/` (the front page for
// visitors) and a person's page at `/{handle}`, which is also their personal namespace: a name
// held by a live person shows their page (profile, pins, graph, followers, the namespace's
// repositories); any other name is an organization and keeps the org page.
import type { Ctx } from "../../../services/context.ts";
import { now } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { accountHomeView, userView, type UserTab } from "../../../services/web/account.ts";
import { queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { homePage, welcomePage } from "./home-page.ts";
import { userPage } from "./user-page.ts";

/** Home for a signed-in person; the front page for anyone else. */
export async function homeResponse(ctx: Ctx, actor: Principal, frame: Frame): Promise<Response> {
  if (!frame.viewer) return page(layout(frame, "Welcome", welcomePage()));
  const view = await accountHomeView(ctx, actor);
  return page(layout(frame, "Home", homePage(frame.viewer.name, view.handle, view.orgs, view.activity, now())));
}

const TABS: ReadonlySet<UserTab> = new Set<UserTab>(["overview", "repositories", "followers", "following"]);

/** The page of the person called `name`, or null when no live person is (then it is an org's page). */
export async function userResponse(ctx: Ctx, actor: Principal, frame: Frame, name: string, query: unknown): Promise<Response | null> {
  const asked = queryParam(query, "tab") as UserTab | undefined;
  const tab: UserTab = asked && TABS.has(asked) ? asked : "overview";
  const view = await userView(ctx, actor, name, tab, { from: queryParam(query, "from"), to: queryParam(query, "to"), cursor: queryParam(query, "cursor") });
  if (!view) return null;
  const p = view.profile;
  return page(layout(frame, p.display_name ? `${p.display_name} (${p.handle})` : p.handle, userPage(view, frame.viewer, frame.csrf)));
}
