// The explore page (public repositories, most recently active first) and the search page
// (repositories, one repository's issues; code is said not to be searched), issue 33. Everything
// the viewer typed reaches the page only through `html`, which escapes it.
import type { ExploreList, ExploreRepo } from "../../../services/discovery/explore.ts";
import type { RepoHit } from "../../../services/discovery/schemas.ts";
import type { Issue } from "../../../services/issues/schemas.ts";
import type { Count, SearchQuery, SearchType, SearchView } from "../../../services/web/explore.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { issueBadge } from "../issues/list-page.ts";
import { when } from "../repos/history-page.ts";

function repoUrl(r: { org: string; name: string }): string {
  return `/${seg(r.org)}/${seg(r.name)}`;
}

function badges(r: RepoHit): Html {
  return html`${r.public ? "" : html` <span class="badge">private</span>`}${r.kind === "mirror" ? html` <span class="badge">mirror</span>` : ""}`;
}

/** One repository on the explore page. */
function exploreItem(r: ExploreRepo): Html {
  return html`<li><a href="${repoUrl(r)}"><strong>${r.org}/${r.name}</strong></a>${badges(r)}
${r.description ? html`<div class="desc">${r.description}</div>` : ""}<div class="muted hit-meta">Active <time datetime="${new Date(r.active_at).toISOString()}">${when(r.active_at)}</time></div></li>`;
}

/** The explore page. */
export function explorePage(list: ExploreList, paged: boolean): Html {
  return html`<h1>Explore</h1>
<p class="muted">Public repositories, the most recently active first (a push, a landing or a mirror sync makes a repository active).</p>
<section class="box" aria-labelledby="explore-h"><header><h2 id="explore-h" class="inh">Repositories</h2></header>
${list.repos.length ? html`<ul class="list hits">${list.repos.map(exploreItem)}</ul>` : html`<p class="pad muted">${paged ? "No more repositories." : "No public repositories yet."}</p>`}
</section>
${paged || list.next_cursor ? html`<nav class="pager" aria-label="Pages">${paged ? html`<a href="/explore">Most recent</a>` : ""}${list.next_cursor ? html`<a href="/explore?cursor=${seg(list.next_cursor)}">More repositories</a>` : ""}</nav>` : ""}`;
}

/** The search page's address for `query` with `change` applied (the cursor dropped unless given). */
export function searchHref(query: SearchQuery, change: Partial<SearchQuery>): string {
  const v = { ...query, cursor: undefined, ...change };
  const p = new URLSearchParams();
  if (v.q) p.set("q", v.q);
  p.set("type", v.type);
  if (v.repo) p.set("repo", v.repo);
  if (v.cursor) p.set("cursor", v.cursor);
  return `/search?${p}`;
}

function countText(c: Count): string {
  return c.more ? `${c.n.toLocaleString("en")}+` : c.n.toLocaleString("en");
}

const TYPE_WORDS: Readonly<Record<SearchType, string>> = { repos: "Repositories", issues: "Issues", code: "Code" };

/** One repository found. */
function repoHit(r: RepoHit): Html {
  return html`<li><a href="${repoUrl(r)}"><strong>${r.org}/${r.name}</strong></a>${badges(r)}${r.description ? html`<div class="desc">${r.description}</div>` : ""}</li>`;
}

/** One issue found in the scoped repository. */
function issueHit(scope: { org: string; name: string }, i: Issue): Html {
  return html`<li><a href="${repoUrl(scope)}/issues/${i.number}"><strong>${i.title}</strong></a> <span class="muted">${scope.org}/${scope.name}#${i.number}</span> ${issueBadge(i)}
<div class="muted hit-meta">${i.author ? html`opened by ${i.author.handle} ` : "opened "}<time datetime="${new Date(i.created_at).toISOString()}">${when(i.created_at)}</time></div></li>`;
}

/** The search page. */
export function searchPage(v: SearchView): Html {
  const q = v.query;
  const scopeName = v.scope ? `${v.scope.org}/${v.scope.name}` : null;
  const tab = (t: SearchType) => {
    const c = t === "repos" ? v.counts.repos : t === "issues" ? v.counts.issues : null;
    return html`<a href="${searchHref(q, { type: t })}"${t === q.type ? html` aria-current="page"` : ""}>${TYPE_WORDS[t]}${c ? html` <span class="tab-count">${countText(c)}</span>` : ""}</a>`;
  };
  const form = html`<form class="search-page" method="get" action="/search" role="search" aria-label="Search page">
<label>Search for <input type="search" name="q" value="${q.q}" maxlength="200" required></label>
<label class="scope">Repository <span class="muted">(issues; org/name)</span><input type="text" name="repo" value="${q.repo}" maxlength="141" placeholder="org/name"></label>
<input type="hidden" name="type" value="${q.type}"><button type="submit">Search</button></form>`;
  const scopeNote = scopeName
    ? html`<p>Issues of <a href="${repoUrl(v.scope!)}">${scopeName}</a>. <a href="${searchHref(q, { repo: "", type: "repos" })}">Search all repositories instead</a>.</p>`
    : "";
  const problem = v.problem ? html`<p class="error" role="alert">${v.problem.message}</p>` : "";
  let body: Html;
  const r = v.results;
  if (v.problem || !q.q) {
    body = v.problem
      ? html``
      : html`<p class="muted">Type words to search repositories by name and description${scopeName ? ", and this repository's issues by title and description" : ""}.</p>`;
  } else if (r.kind === "repos") {
    const c = v.counts.repos!;
    body = html`<p class="result-count" role="status">${countText(c)} ${c.n === 1 && !c.more ? "repository" : "repositories"}</p>
<section class="box" aria-label="Repositories found">${r.hits.length ? html`<ul class="list hits">${r.hits.map(repoHit)}</ul>` : html`<p class="pad muted">${q.cursor ? "No more repositories match." : "No repositories match."}</p>`}</section>
${r.next ? html`<nav class="pager" aria-label="Pages"><a href="${searchHref(q, { cursor: r.next })}">More repositories</a></nav>` : ""}`;
  } else if (r.kind === "issues") {
    const c = v.counts.issues!;
    body = html`<p class="result-count" role="status">${countText(c)} ${c.n === 1 ? "issue" : "issues"}, open and closed</p>
<section class="box" aria-label="Issues found">${r.issues.length ? html`<ul class="list hits">${r.issues.map((i) => issueHit(v.scope!, i))}</ul>` : html`<p class="pad muted">${q.cursor ? "No more issues match." : "No issues match."}</p>`}</section>
${r.next ? html`<nav class="pager" aria-label="Pages"><a href="${searchHref(q, { cursor: r.next })}">More issues</a></nav>` : ""}`;
  } else if (q.type === "issues") {
    body = html`<p class="muted">Issues are searched one repository at a time: type its name (org/name) in the Repository box, or use the search box on the repository's pages.</p>`;
  } else {
    body = html`<p class="muted">Code is not searched: svc keeps no index of file contents. Open a repository to browse its files, or clone it and use <code>git grep</code>.</p>`;
  }
  return html`<h1>Search</h1>
${form}${scopeNote}${problem}
<nav class="tabs" aria-label="Result types">${tab("repos")}${tab("issues")}${tab("code")}</nav>
${body}`;
}
