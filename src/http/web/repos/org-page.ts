// The org page: its profile, the repositories the viewer can see and, for those the members API
// answers, its people with their pictures (and one repository in a list, which people's pages use too).
import type { OrgProfile } from "../../../services/discovery/schemas.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import type { OrgPageMember } from "../../../services/web/people.ts";
import { avatar } from "../kit/avatar.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { repoHref } from "./tree-page.ts";

/** One repository in a list. */
export function repoItem(repo: RepoBody): Html {
  return html`<li><a href="${repoHref(repo)}"><strong>${repo.org}/${repo.name}</strong></a> <span class="badge">${repo.public ? "public" : "private"}</span>${repo.kind === "mirror" ? html` <span class="badge">mirror</span>` : ""}
${repo.description ? html`<div class="muted">${repo.description}</div>` : ""}</li>`;
}

/** The people column: each member's picture, name and role; a link to all of them when there are more. */
function membersBox(org: string, people: { members: OrgPageMember[]; more: boolean }): Html {
  return html`<section class="box" aria-labelledby="people-h"><header><h2 id="people-h" class="inh">People</h2></header>
${
  people.members.length
    ? html`<ul class="list people">${people.members.map(
        (m) =>
          html`<li><a href="/${seg(m.handle)}">${avatar(m.handle, 32, { alt: "" })}<span><strong>${m.name || m.handle}</strong> <span class="muted">${m.handle}</span></span></a> <span class="badge">${m.role}</span></li>`,
      )}</ul>`
    : html`<p class="pad muted">No members.</p>`
}
${people.more ? html`<p class="pad"><a href="/settings/orgs/${seg(org)}/members">All members</a></p>` : ""}</section>`;
}

/** The org page. */
export function orgPage(
  profile: OrgProfile,
  repos: RepoBody[],
  next: string | null,
  signedIn = false,
  newRepo: Html | null = null,
  people: { members: OrgPageMember[]; more: boolean } | null = null,
): Html {
  const title = profile.display_name ?? profile.org;
  const details: Html[] = [];
  if (profile.location) details.push(html`${profile.location}`);
  // Why the rel: the address is the org's own text; it earns no ranking and gets no opener.
  if (profile.website) details.push(html`<a href="${profile.website}" rel="nofollow ugc noopener">${profile.website}</a>`);
  return html`<div class="org-head">${avatar(profile.org, 64, { alt: "" })}<div><h1>${title} <span class="muted">${profile.display_name ? profile.org : ""}</span></h1>
${profile.description ? html`<p>${profile.description}</p>` : ""}
${details.length ? html`<p class="muted">${details.map((d, i) => html`${i ? " · " : ""}${d}`)}</p>` : ""}
${signedIn ? html`<p><a href="/settings/orgs/${seg(profile.org)}">Settings</a></p>` : ""}</div></div>
${newRepo ? html`<details class="newrepo"><summary class="button">New repository</summary>${newRepo}</details>` : ""}
<div class="org-grid${people ? "" : " solo"}"><section class="box" aria-labelledby="repos-h"><header><h2 id="repos-h" class="inh">Repositories</h2></header>
${repos.length ? html`<ul class="list">${repos.map(repoItem)}</ul>` : html`<p class="pad muted">No repositories you can see.</p>`}
${next ? html`<nav class="pager"><a href="/${seg(profile.org)}?cursor=${seg(next)}">More repositories</a></nav>` : ""}
</section>
${people ? membersBox(profile.org, people) : ""}</div>`;
}
