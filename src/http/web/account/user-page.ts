// A person's page at /{handle}: their profile beside tabs for the overview (pins or repositories,
// and the contribution graph), their repositories, followers and following.
import type { PeopleList, PinList, UserProfile } from "../../../services/discovery/schemas.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import type { UserTab, UserView } from "../../../services/web/account.ts";
import type { WebViewer } from "../../../services/web/views.ts";
import { avatar, avatarVersion } from "../kit/avatar.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { csrfField } from "../kit/sign-in.ts";
import { graphSection } from "./graph.ts";
import { repoItem } from "../repos/org-page.ts";

/** The follow or unfollow button (a form), "Edit profile" on one's own page, a sign-in link for visitors. */
function followControl(p: UserProfile, v: UserView, viewer: WebViewer | null, csrf: string | null): Html {
  if (!viewer) return html`<p><a href="/login?next=/${seg(p.handle)}">Sign in to follow</a></p>`;
  if (viewer.handle.toLowerCase() === p.handle.toLowerCase()) return html`<p><a class="button" href="/settings/profile">Edit profile</a></p>`;
  const follow = !v.follow.you_follow;
  return html`<form method="post" action="/settings/following">${csrfField(csrf)}<input type="hidden" name="handle" value="${p.handle}"><input type="hidden" name="follow" value="${follow ? "1" : "0"}">
<button type="submit"${follow ? html` class="primary"` : ""}>${follow ? "Follow" : "Unfollow"}</button></form>`;
}

/** The profile column. */
function profileCard(p: UserProfile, v: UserView, viewer: WebViewer | null, csrf: string | null): Html {
  const base = `/${seg(p.handle)}`;
  const details = [p.company, p.location].filter((x): x is string => !!x);
  const own = viewer && viewer.handle.toLowerCase() === p.handle.toLowerCase();
  return html`<aside class="profile-card" aria-label="Profile">
${avatar(p.handle, 200, { alt: `${p.handle}'s picture`, version: own ? avatarVersion(viewer.avatar) : null })}
<h1><span class="p-name">${p.display_name ?? p.name}</span> <span class="p-handle muted">${p.handle}</span></h1>
${p.pronouns ? html`<p class="muted">${p.pronouns}</p>` : ""}${p.kind === "agent" ? html`<p><span class="badge">agent</span></p>` : ""}
${p.bio ? html`<p class="p-bio">${p.bio}</p>` : ""}
${followControl(p, v, viewer, csrf)}
<p><a href="${base}?tab=followers">${v.follow.followers} follower${v.follow.followers === 1 ? "" : "s"}</a> · <a href="${base}?tab=following">${v.follow.following} following</a></p>
${details.length ? html`<ul class="plain">${details.map((d) => html`<li>${d}</li>`)}</ul>` : ""}
${p.links.length ? html`<ul class="plain">${p.links.map((l) => html`<li><a href="${l.url}" rel="nofollow ugc noopener">${l.label || l.url}</a></li>`)}</ul>` : ""}
</aside>`;
}

/** The tab bar. */
function tabs(p: UserProfile, current: UserTab): Html {
  const base = `/${seg(p.handle)}`;
  const items: [UserTab, string, string][] = [
    ["overview", "Overview", base],
    ["repositories", `Repositories (${p.public_repos} public)`, `${base}?tab=repositories`],
    ["followers", "Followers", `${base}?tab=followers`],
    ["following", "Following", `${base}?tab=following`],
  ];
  return html`<nav class="tabs" aria-label="Profile sections"><ul>${items.map(([tab, label, href]) => html`<li><a href="${href}"${tab === current ? html` aria-current="page"` : ""}>${label}</a></li>`)}</ul></nav>`;
}

function pinsSection(pins: PinList["pins"]): Html {
  return html`<section aria-labelledby="pins-h"><h2 id="pins-h">Pinned</h2><ul class="pins">${pins.map(
    (pin) =>
      html`<li class="box pad"><a href="/${seg(pin.org)}/${seg(pin.name)}"><strong>${pin.org}/${pin.name}</strong></a>${pin.description ? html`<div class="muted">${pin.description}</div>` : ""}</li>`,
  )}</ul></section>`;
}

function reposSection(title: string, repos: RepoBody[], more: Html | ""): Html {
  return html`<section class="box" aria-labelledby="repos-h"><header><h2 id="repos-h" class="inh">${title}</h2></header>
${repos.length ? html`<ul class="list">${repos.map(repoItem)}</ul>` : html`<p class="pad muted">No repositories you can see.</p>`}${more}</section>`;
}

function peopleSection(title: string, list: PeopleList): Html {
  return html`<section class="box" aria-labelledby="people-h"><header><h2 id="people-h" class="inh">${title}</h2></header>
${list.people.length ? html`<ul class="list">${list.people.map((x) => html`<li>${avatar(x.handle, 20, { alt: "" })} <a href="/${seg(x.handle)}"><strong>${x.display_name ?? x.handle}</strong></a> <span class="muted">${x.handle}</span></li>`)}</ul>` : html`<p class="pad muted">Nobody yet.</p>`}</section>`;
}

/** The whole page. */
export function userPage(v: UserView, viewer: WebViewer | null, csrf: string | null): Html {
  const p = v.profile;
  const base = `/${seg(p.handle)}`;
  let main: Html;
  if (v.tab === "overview") {
    main = html`${v.pins?.pins.length ? pinsSection(v.pins.pins) : reposSection("Repositories", v.repos?.repos ?? [], v.repos?.next ? html`<p class="pad"><a href="${base}?tab=repositories">All repositories</a></p>` : "")}
${v.graph ? graphSection(v.graph) : ""}`;
  } else if (v.tab === "repositories") {
    main = reposSection(
      "Repositories",
      v.repos?.repos ?? [],
      v.repos?.next ? html`<p class="pad"><a href="${base}?tab=repositories&amp;cursor=${seg(v.repos.next)}">More repositories</a></p>` : "",
    );
  } else {
    main = peopleSection(v.tab === "followers" ? "Followers" : "Following", v.people ?? { people: [] });
  }
  return html`<div class="profile">${profileCard(p, v, viewer, csrf)}<div class="profile-main">${tabs(p, v.tab)}${main}</div></div>`;
}
