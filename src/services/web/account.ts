// What the home page and a person's page show, gathered from the services the API answers with
// (their own access checks decide; a private repository reaches a page only where the API lists it).
import { AppError } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { accountBody } from "../people/auth.ts";
import { getUserProfile } from "../discovery/profiles.ts";
import { getContributions } from "../discovery/contributions.ts";
import { getFollow, listFollow } from "../discovery/follows.ts";
import { listPins } from "../discovery/pins.ts";
import type { ContributionGraph, FollowCounts, PeopleList, PinList, UserProfile } from "../discovery/schemas.ts";
import { recentActivity, type Activity } from "../hooks/activity.ts";
import { listRepos, type RepoBody } from "../repos/repos.ts";
import { PAGE_REPOS } from "./views.ts";

/** One org on the home page: the viewer's role and the repositories they may see in it. */
export interface HomeOrg {
  name: string;
  role: string;
  personal: boolean;
  repos: RepoBody[];
  more: boolean;
}

/** Home: the viewer's orgs (their personal namespace first) with repositories, and recent activity in them. */
export async function accountHomeView(ctx: Ctx, actor: Principal): Promise<{ handle: string; orgs: HomeOrg[]; activity: Activity[] }> {
  const user = personOf(actor);
  if (!user) return { handle: "", orgs: [], activity: [] };
  const account = await accountBody(ctx, user);
  const orgs: HomeOrg[] = [];
  for (const o of account.orgs) {
    const list = await listRepos(ctx, actor, o.name, { limit: PAGE_REPOS });
    orgs.push({ name: o.name, role: o.role, personal: o.name.toLowerCase() === user.handle.toLowerCase(), repos: list.repos, more: list.next_cursor !== null });
  }
  orgs.sort((a, b) => Number(b.personal) - Number(a.personal));
  const activity = await recentActivity(
    ctx,
    actor,
    account.orgs.map((o) => o.id),
  );
  return { handle: user.handle, orgs, activity };
}

/** The tabs of a person's page. */
export type UserTab = "overview" | "repositories" | "followers" | "following";

/** A person's page: always the profile and follow counts, then what the tab shows. */
export interface UserView {
  profile: UserProfile;
  follow: FollowCounts;
  tab: UserTab;
  pins?: PinList;
  graph?: ContributionGraph;
  repos?: { repos: RepoBody[]; next: string | null };
  people?: PeopleList;
}

/**
 * The page of the person whose handle is `name`, or null when no live account has that handle
 * (the name is an organization, or a disabled person's namespace: the org page shows it).
 */
export async function userView(
  ctx: Ctx,
  actor: Principal,
  name: string,
  tab: UserTab,
  q: { from?: string; to?: string; cursor?: string },
): Promise<UserView | null> {
  let profile: UserProfile;
  try {
    profile = await getUserProfile(ctx, name);
  } catch (error) {
    if (error instanceof AppError && error.code === "not_found") return null;
    throw error;
  }
  const view: UserView = { profile, follow: await getFollow(ctx, actor, profile.handle), tab };
  if (tab === "overview") {
    view.pins = await listPins(ctx, profile.handle);
    view.graph = await getContributions(ctx, profile.handle, { from: q.from, to: q.to });
    // Without pins the overview shows the first repositories the viewer may see instead.
    if (!view.pins.pins.length) {
      const list = await listRepos(ctx, actor, profile.handle, { limit: 6 });
      view.repos = { repos: list.repos, next: list.next_cursor };
    }
  } else if (tab === "repositories") {
    const list = await listRepos(ctx, actor, profile.handle, { limit: PAGE_REPOS, cursor: q.cursor });
    view.repos = { repos: list.repos, next: list.next_cursor };
  } else {
    view.people = await listFollow(ctx, profile.handle, tab);
  }
  return view;
}
