// The org page: its profile and the repositories the viewer can see (and one repository in a list, which people's pages use too).
import type { OrgProfile } from "../../../services/discovery/schemas.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { repoHref } from "./tree-page.ts";

/** One repository in a list. */
export function repoItem(repo: RepoBody): Html {
  return html`<li><a href="${repoHref(repo)}"><strong>${repo.org}/${repo.name}</strong></a> <span class="badge">${repo.public ? "public" : "private"}</span>${repo.kind === "mirror" ? html` <span class="badge">mirror</span>` : ""}
${repo.description ? html`<div class="muted">${repo.description}</div>` : ""}</li>`;
}

/** The org page. */
export function orgPage(profile: OrgProfile, repos: RepoBody[], next: string | null, signedIn = false, newRepo: Html | null = null): Html {
  const title = profile.display_name ?? profile.org;
  return html`<h1>${title} <span class="muted">${profile.display_name ? profile.org : ""}</span></h1>
${signedIn ? html`<p><a href="/settings/orgs/${seg(profile.org)}">Settings</a></p>` : ""}
${profile.description ? html`<p>${profile.description}</p>` : ""}
<p class="muted">${[profile.location, profile.website].filter(Boolean).join(" · ")}</p>
${newRepo ? html`<details class="newrepo"><summary class="button">New repository</summary>${newRepo}</details>` : ""}
<section class="box" aria-labelledby="repos-h"><header><h2 id="repos-h" class="inh">Repositories</h2></header>
${repos.length ? html`<ul class="list">${repos.map(repoItem)}</ul>` : html`<p class="pad muted">No repositories you can see.</p>`}
</section>
${next ? html`<nav class="pager"><a href="/${seg(profile.org)}?cursor=${seg(next)}">More repositories</a></nav>` : ""}`;
}
