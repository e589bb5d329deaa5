// The branches and tags pages (issue 33): each branch with its last commit, how far it is from
// the default branch, a compare link, archive downloads and (writers) a delete button; each tag
// with its commit, date and archive downloads.
import type { BranchOverview, TagList } from "../../../services/repos/branches.ts";
import type { RepoChrome } from "../../../services/web/views.ts";
import { html, seg, segs, type Html } from "../kit/html.ts";
import type { Frame } from "../kit/layout.ts";
import { csrfInput } from "../kit/widgets.ts";
import { repoBase, repoTop } from "./repo-layout.ts";

/** How long ago `ms` was, in words (a page is drawn once; the exact time is in the title). */
export function ago(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  const units: [number, string][] = [
    [365 * 86400, "year"],
    [30 * 86400, "month"],
    [7 * 86400, "week"],
    [86400, "day"],
    [3600, "hour"],
    [60, "minute"],
  ];
  for (const [size, name] of units) {
    const n = Math.floor(s / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? "" : "s"} ago`;
  }
  return "just now";
}

function age(ms: number): Html {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}" title="${iso.slice(0, 16).replace("T", " ")} UTC">${ago(ms)}</time>`;
}

/** The two archive links of a ref. */
export function archiveLinks(c: RepoChrome, ref: string): Html {
  const base = repoBase(c);
  return html`<span class="downloads"><a href="${base}/archive/${segs(ref)}.zip" download aria-label="Download ${ref} as .zip">.zip</a> <a href="${base}/archive/${segs(ref)}.tar.gz" download aria-label="Download ${ref} as .tar.gz">.tar.gz</a></span>`;
}

/** "3 ahead, 1 behind" of the default branch; "many" past the walk's cap. */
function distance(b: BranchOverview, defaultBranch: string): Html {
  if (b.default) return html`<span class="badge default-badge">default</span>`;
  if (b.commit === null) return html``;
  const n = (v: number | null) => (v === null ? "many" : String(v));
  return html`<span class="ahead-behind" title="compared with ${defaultBranch}"><span>${n(b.ahead)} ahead</span> · <span>${n(b.behind)} behind</span></span>`;
}

/** The branches page; `error` (a refused delete) is shown above the list. */
export function branchesPage(
  frame: Frame,
  c: RepoChrome,
  view: { branches: BranchOverview[]; next_cursor: string | null; defaultBranch: string },
  error: string | null = null,
): Html {
  const base = repoBase(c);
  const canDelete = c.repo.viewer_write && frame.viewer !== null;
  const rows = view.branches.map((b) => {
    const commit = b.commit
      ? html`<div class="muted branch-commit"><a href="${base}/commit/${b.commit.sha}">${b.commit.summary}</a> · ${b.commit.author} · ${age(b.commit.committed_at)}</div>`
      : html`<div class="muted">its commit cannot be read</div>`;
    const compare = b.default
      ? ""
      : html`<a href="${base}/compare/${segs(view.defaultBranch)}...${segs(b.name)}" aria-label="Compare ${b.name} with ${view.defaultBranch}">Compare</a>`;
    const del =
      canDelete && !b.default
        ? html`<form class="inline" method="post" action="${base}/branches/delete">${csrfInput(frame.csrf)}<input type="hidden" name="branch" value="${b.name}"><input type="hidden" name="expected" value="${b.target}"><button type="submit" class="danger" aria-label="Delete branch ${b.name}">Delete</button></form>`
        : "";
    return html`<li class="branch-row"><div class="branch-main"><a class="branch-name" href="${base}/tree/${segs(b.name)}">${b.name}</a> ${distance(b, view.defaultBranch)}</div>${commit}<div class="branch-actions">${compare} ${archiveLinks(c, b.name)} ${del}</div></li>`;
  });
  return html`<div class="refs-page">${repoTop(frame, c, "code")}
<nav class="ref-tabs" aria-label="Branches and tags"><a href="${base}/branches" aria-current="page">Branches</a><a href="${base}/tags">Tags</a></nav>
<h2 id="branches-h">Branches</h2>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<section class="box" aria-labelledby="branches-h">${rows.length ? html`<ul class="list">${rows}</ul>` : html`<p class="pad muted">No branches yet.</p>`}</section>
${view.next_cursor ? html`<nav class="pager" aria-label="Pages"><a href="${base}/branches?cursor=${seg(view.next_cursor)}">More branches</a></nav>` : ""}</div>`;
}

/** The tags page. */
export function tagsPage(frame: Frame, c: RepoChrome, list: TagList): Html {
  const base = repoBase(c);
  const rows = list.tags.map(
    (t) =>
      html`<li class="tag-row"><div class="branch-main"><a class="branch-name" href="${base}/tree/${segs(t.name)}">${t.name}</a></div><div class="muted">${t.commit ? html`<a class="sha" href="${base}/commit/${t.commit}" aria-label="Commit ${t.commit.slice(0, 10)}">${t.commit.slice(0, 10)}</a>` : "not a commit"}${t.committed_at !== null ? html` · ${age(t.committed_at)}` : ""}</div><div class="branch-actions">${t.commit ? archiveLinks(c, t.name) : ""}</div></li>`,
  );
  return html`<div class="refs-page">${repoTop(frame, c, "code")}
<nav class="ref-tabs" aria-label="Branches and tags"><a href="${base}/branches">Branches</a><a href="${base}/tags" aria-current="page">Tags</a></nav>
<h2 id="tags-h">Tags</h2>
<section class="box" aria-labelledby="tags-h">${rows.length ? html`<ul class="list">${rows}</ul>` : html`<p class="pad muted">No tags yet.</p>`}</section>
${list.next_cursor ? html`<nav class="pager" aria-label="Pages"><a href="${base}/tags?cursor=${seg(list.next_cursor)}">More tags</a></nav>` : ""}</div>`;
}
