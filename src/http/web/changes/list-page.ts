// The changes list of a repository (filtered by state), with the "open a change" form for writers.
import type { Change, ChangeList } from "../../../services/changes/schemas.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import { CHANGE_FILTERS, type ChangeFilter } from "../../../services/web/changes.ts";
import { CSRF_FIELD } from "../kit/csrf.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { repoHref } from "../repos/tree-page.ts";
import { repoTop } from "../repos/repo-layout.ts";
import type { Frame } from "../kit/layout.ts";
import type { RepoChrome } from "../../../services/web/views.ts";
import { when } from "../repos/history-page.ts";

/** The top of the change pages: the repository layout on its Changes tab. */
export function changesHeader(frame: Frame, chrome: RepoChrome): Html {
  return repoTop(frame, chrome, "changes");
}

/** A change's state as a badge. */
export function stateBadge(c: Change): Html {
  return html`<span class="badge state-${c.state}">${c.state}</span>`;
}

/** One change in a list. */
export function changeItem(repo: RepoBody, c: Change): Html {
  return html`<li><a href="${repoHref(repo)}/changes/${c.number}"><strong>${c.title}</strong></a> <span class="muted">#${c.number}</span> ${stateBadge(c)}
<div class="muted"><span class="path">${c.source ? `${c.source.org}/${c.source.repo}:` : ""}${c.branch}</span> → <span class="path">${c.target}</span> · patchset ${c.patchset}${c.author ? ` · ${c.author.handle}` : ""} · <time datetime="${new Date(c.updated_at).toISOString()}">${when(c.updated_at)}</time></div></li>`;
}

const LABELS: Readonly<Record<ChangeFilter, string>> = { open: "Open", queued: "Queued", landed: "Landed", ejected: "Ejected", closed: "Closed", all: "All" };

/** The list page. */
export function changesListPage(frame: Frame, chrome: RepoChrome, filter: ChangeFilter, list: ChangeList, form: Html | null): Html {
  const repo = chrome.repo;
  const base = `${repoHref(repo)}/changes`;
  return html`${changesHeader(frame, chrome)}
<nav class="tabs" aria-label="Filter changes">${CHANGE_FILTERS.map((f) => html`<a href="${base}?state=${f}"${f === filter ? html` aria-current="page"` : ""}>${LABELS[f]}</a>`)}</nav>
${form ? html`<details class="newrepo"><summary class="button">Open a change</summary>${form}</details>` : ""}
<section class="box" aria-label="${LABELS[filter]} changes">${list.changes.length ? html`<ul class="list">${list.changes.map((c) => changeItem(repo, c))}</ul>` : html`<p class="pad muted">No ${filter === "all" ? "" : `${filter} `}changes.</p>`}</section>
${list.next_cursor ? html`<nav class="pager" aria-label="Pages"><a href="${base}?state=${filter}&amp;cursor=${seg(list.next_cursor)}">Older changes</a></nav>` : ""}`;
}

/** What the open-a-change form had when it was refused. */
export interface OpenChangeValues {
  title?: string;
  branch?: string;
  target?: string;
  description?: string;
}

/** The form that opens a change from a branch of this repository. */
export function openChangeForm(repo: RepoBody, branches: string[], csrf: string | null, v: OpenChangeValues = {}, error?: string): Html {
  const options = (selected: string) => branches.map((b) => html`<option${b === selected ? html` selected` : ""}>${b}</option>`);
  const firstOther = branches.find((b) => b !== repo.default_branch) ?? "";
  return html`${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form class="stack" method="post" action="${repoHref(repo)}/changes">
${csrf ? html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">` : ""}
<label>Title <input type="text" name="title" required maxlength="200" value="${v.title ?? ""}"></label>
<label>Branch with the commits <select name="branch">${options(v.branch ?? firstOther)}</select></label>
<label>Land on <select name="target">${options(v.target ?? repo.default_branch)}</select></label>
<label>Description <span class="muted">(optional, Markdown)</span><textarea name="description" rows="4">${v.description ?? ""}</textarea></label>
<div><button class="primary" type="submit">Open change</button></div>
</form>`;
}

/** The form alone on a page, after a refused submission. */
export function openChangePage(frame: Frame, chrome: RepoChrome, form: Html): Html {
  return html`${changesHeader(frame, chrome)}<h2>Open a change</h2>${form}`;
}
