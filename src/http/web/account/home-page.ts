// The front page and the home page of a signed-in person.
import type { Activity } from "../../../services/hooks/activity.ts";
import type { HomeOrg } from "../../../services/web/account.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { activityList } from "./activity-page.ts";
import { repoItem } from "../repos/org-page.ts";

/** The home page of a signed-in person: recent activity, their orgs and the repositories in each. */
export function homePage(name: string, handle: string, orgs: HomeOrg[], activity: Activity[], nowMs: number): Html {
  return html`<h1>Welcome, ${name}</h1>
<div class="home-grid">
<section class="box" aria-labelledby="activity-h"><header><h2 class="inh" id="activity-h">Recent activity</h2></header>
${activity.length ? activityList(activity, nowMs) : html`<p class="pad muted">Nothing yet: pushes and landed changes in your organizations show here.</p>`}
</section>
<nav class="box" aria-labelledby="you-h"><header><h2 class="inh" id="you-h">You</h2></header>
<ul class="list"><li><a href="/${seg(handle)}">Your profile</a></li><li><a href="/settings/profile">Settings</a></li>
${orgs.map((o) => html`<li><a href="/${seg(o.name)}">${o.name}</a> <span class="badge">${o.personal ? "personal" : o.role}</span></li>`)}</ul>
</nav>
</div>
<h2>Repositories</h2>
${orgs.map(
  (
    o,
  ) => html`<section class="box" aria-labelledby="org-${o.name}"><header><h3 class="inh" id="org-${o.name}"><a href="/${seg(o.name)}">${o.name}</a></h3><span class="badge">${o.personal ? "personal" : o.role}</span></header>
${o.repos.length ? html`<ul class="list">${o.repos.map(repoItem)}</ul>` : html`<p class="pad muted">No repositories yet.</p>`}
${o.more ? html`<p class="pad"><a href="/${seg(o.name)}">All repositories of ${o.name}</a></p>` : ""}</section>`,
)}`;
}

/** The front page for someone not signed in. */
export function welcomePage(): Html {
  return html`<h1>svc</h1><p>A self-hosted git host. <a href="/login">Sign in</a> to see your organizations and repositories, or <a href="/signup">create an account</a>; public repositories are open to everyone at <span class="sha">/org/repository</span>.</p>`;
}
