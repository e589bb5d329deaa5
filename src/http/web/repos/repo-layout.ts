// The one repository layout (issue 33): the heading (name, visibility, description, homepage,
// Watch and Fork), the fork or mirror banner and the nav every repository page draws above its
// content, with the tab it is on. Pages of a ref (tree, file, history, blame) add the branch
// switcher (`refSwitcher`), drawn in its own row under the nav.
import type { RefChoice, RepoChrome, RepoFrame } from "../../../services/web/views.ts";
import type { Frame } from "../kit/layout.ts";
import { html, seg, segs, type Html } from "../kit/html.ts";
import { icon } from "../kit/icons.ts";
import { csrfInput, timeOf } from "../kit/widgets.ts";

/** The nav's tabs. */
export type RepoTab = "code" | "issues" | "changes" | "runs" | "settings";

/** `/org/repo` */
export function repoBase(c: RepoChrome): string {
  return `/${seg(c.repo.org)}/${seg(c.repo.name)}`;
}

/** What a page may add to the layout. */
export interface RepoTopOptions {
  /** The branch switcher (pages of a ref: `refSwitcher`), drawn in a row under the nav. */
  switcher?: Html;
}

/** A count for people: `1.2k` beyond 999. */
function shortCount(n: number): string {
  return n > 999 ? `${(Math.floor(n / 100) / 10).toFixed(1).replace(/\.0$/, "")}k` : String(n);
}

/** A counter beside a button's word; `what` is said to screen readers ("3 watchers"). */
function counter(n: number, one: string, many: string): Html {
  return html`<span class="counter">${shortCount(n)}<span class="sr"> ${n === 1 ? one : many}</span></span>`;
}

/** Watch / Unwatch: a form for a signed-in viewer, a sign-in link for anyone else; the count either way. */
function watchControl(frame: Frame, c: RepoChrome, base: string): Html {
  const n = counter(c.repo.watcher_count, "watcher", "watchers");
  if (!frame.viewer || c.watching === undefined) return html`<a class="button" href="/login?next=${seg(base)}">${icon("eye")} Watch ${n}</a>`;
  const on = c.watching === "all" || c.watching === "participating";
  return html`<form class="inline" method="post" action="${base}/watch">${csrfInput(frame.csrf)}<input type="hidden" name="watch" value="${on ? "0" : "1"}"><button type="submit">${icon("eye")} ${on ? "Unwatch" : "Watch"} ${n}</button></form>`;
}

/** Fork: a form for a signed-in viewer (the fork goes to their namespace, or a page asks which), a sign-in link otherwise. */
function forkControl(frame: Frame, c: RepoChrome, base: string): Html {
  const n = counter(c.repo.fork_count, "fork", "forks");
  if (!frame.viewer) return html`<a class="button" href="/login?next=${seg(base)}">${icon("fork")} Fork ${n}</a>`;
  return html`<form class="inline" method="post" action="${base}/fork">${csrfInput(frame.csrf)}<button type="submit">${icon("fork")} Fork ${n}</button></form>`;
}

/** A fork's banner: where it came from (a link when the viewer may see it) and whether it is ready. */
function forkBanner(c: RepoChrome): Html {
  const r = c.repo;
  if (r.fork_state === undefined) return html``;
  const parent = r.fork_parent;
  const from = parent ? html`forked from <a href="/${segs(parent)}">${parent}</a>` : html`forked from a repository you cannot see (private or deleted)`;
  const state =
    r.fork_state === "pending"
      ? html` <span role="status">This fork is still being made: its branches appear in a moment.</span>`
      : r.fork_state === "failed"
        ? html` <span class="error" role="alert">Making this fork failed; delete it and fork again.</span>`
        : "";
  return html`<p class="banner fork-banner">${icon("fork")} <span>${from}.${state}</span></p>`;
}

/** A mirror's banner: its origin, the last sync, the sync error, and Sync now for writers. */
function mirrorBanner(frame: Frame, c: RepoChrome, base: string): Html {
  const r = c.repo;
  if (r.kind !== "mirror") return html``;
  const origin = r.origin_url ?? "";
  const originShown = /^https?:\/\//i.test(origin)
    ? html`<a class="path" href="${origin}" rel="nofollow noreferrer">${origin}</a>`
    : html`<span class="path">${origin}</span>`;
  const synced = r.last_sync_at === null ? html`not synced yet` : html`last synced ${timeOf(r.last_sync_at)}`;
  const error = r.sync_error ? html`<span class="error sync-error" role="alert">${icon("alert")} Last sync failed: ${r.sync_error}</span>` : "";
  const sync =
    c.canSync && frame.viewer
      ? html`<form class="inline" method="post" action="${base}/sync">${csrfInput(frame.csrf)}<button type="submit">${icon("sync")} Sync now</button></form>`
      : "";
  return html`<div class="banner mirror-banner"><p>${icon("mirror")} <span>Mirror of ${originShown} · ${synced}. Changes are not taken here: push to the origin.</span></p>${error}${sync}</div>`;
}

/** The heading, banner and nav of a repository page, `tab` marked as current. */
export function repoTop(frame: Frame, c: RepoChrome, tab: RepoTab, opts: RepoTopOptions = {}): Html {
  const r = c.repo;
  const base = repoBase(c);
  const cur = (t: RepoTab) => (t === tab ? html` aria-current="page"` : "");
  const count = typeof c.openIssues === "number" ? html` <span class="tab-count">${shortCount(c.openIssues)}</span><span class="sr"> open</span>` : "";
  const kindIcon = r.kind === "mirror" ? icon("mirror") : r.fork_state !== undefined ? icon("fork") : r.public ? icon("book") : icon("lock");
  const homepage = r.homepage
    ? html`<a class="homepage" href="${r.homepage}" rel="nofollow noreferrer ugc">${icon("link")} ${r.homepage.replace(/^https?:\/\//i, "").replace(/\/$/, "")}</a>`
    : "";
  return html`<div class="repo-head"><h1 class="repo-title">${kindIcon} <a href="/${seg(r.org)}">${r.org}</a> / <a href="${base}"><strong>${r.name}</strong></a> <span class="badge">${r.public ? "public" : "private"}</span>${r.kind === "mirror" ? html` <span class="badge">mirror</span>` : ""}</h1>
<div class="repo-actions">${watchControl(frame, c, base)}${forkControl(frame, c, base)}</div></div>
${r.description || homepage ? html`<p class="repo-about">${r.description ? html`<span>${r.description}</span>` : ""}${homepage}</p>` : ""}
${forkBanner(c)}${mirrorBanner(frame, c, base)}<nav class="tabs repo-tabs" aria-label="Repository"><a href="${base}"${cur("code")}>${icon("code")} Code</a><a href="${base}/issues"${cur("issues")}>${icon("issue")} Issues${count}</a>${r.kind === "mirror" ? "" : html`<a href="${base}/changes"${cur("changes")}>${icon("change")} Changes</a>`}<a href="${base}/runs"${cur("runs")}>${icon("run")} Runs</a>${r.viewer_admin ? html`<a href="${base}/settings"${cur("settings")}>${icon("settings")} Settings</a>` : ""}</nav>
${opts.switcher ? html`<div class="refbar">${opts.switcher}</div>` : ""}`;
}

/**
 * What of the layout can change while a page's content cannot (an immutable page's validator
 * includes it, so a 304 never shows a stale count, banner or button).
 */
export function chromeKey(c: RepoChrome): string {
  const r = c.repo;
  return JSON.stringify([
    r.name,
    r.public,
    r.description,
    r.homepage,
    r.watcher_count,
    r.fork_count,
    r.fork_parent,
    r.fork_state ?? null,
    r.last_sync_at,
    r.sync_error,
    r.viewer_admin,
    r.viewer_write,
    c.openIssues ?? null,
    c.watching ?? null,
    c.canSync ?? false,
  ]);
}

/** Which page a switcher switches: the same view at the other ref. */
export type SwitchView = "tree" | "blob" | "commits" | "blame";

/** Where the switcher sends `name` from `view` (a file's page goes to the other ref's root: the file may not be there). */
function switchHref(f: RepoFrame, view: SwitchView, name: string): string {
  const base = repoBase(f);
  const here = f.path ? `/${segs(f.path)}` : "";
  if (view === "commits") return `${base}/commits/${segs(name)}${here}`;
  if (view === "blame") return `${base}/blame/${segs(name)}${here}`;
  return `${base}/tree/${segs(name)}${view === "tree" ? here : ""}`;
}

/**
 * The branch switcher of a page of a ref: a menu of branches and tags (links to the same view at
 * each), the branch and tag lists, the ref's history and its archive downloads.
 */
export function refSwitcher(f: RepoFrame, view: SwitchView): Html {
  const base = repoBase(f);
  const branches = f.choices.filter((c) => c.kind === "branch");
  const tags = f.choices.filter((c) => c.kind === "tag");
  const item = (c: RefChoice) =>
    html`<li><a href="${switchHref(f, view, c.name)}"${c.name === f.ref.short ? html` aria-current="true"` : ""}>${c.name}</a></li>`;
  const short = f.ref.short;
  const shown = short.length > 40 ? short.slice(0, 12) : short;
  const isTag = tags.some((t) => t.name === short) && !branches.some((b) => b.name === short);
  const ref = segs(short);
  return html`<details class="menu switcher"><summary class="button" aria-label="Switch branch or tag, now ${short}">${icon(isTag ? "tag" : "branch")} <span class="ref-name">${shown}</span> ${icon("chevron")}</summary>
<ul>${branches.length ? html`<li class="muted group">Branches</li>${branches.map(item)}` : ""}${tags.length ? html`<li class="muted group">Tags</li>${tags.map(item)}` : ""}<li class="sep"><a href="${base}/branches">All branches</a></li><li><a href="${base}/tags">All tags</a></li></ul></details>
<a href="${base}/branches">${icon("branch")} ${String(branches.length)} ${branches.length === 1 ? "branch" : "branches"}</a>
<a href="${base}/tags">${icon("tag")} ${String(tags.length)} ${tags.length === 1 ? "tag" : "tags"}</a>
<span class="refbar-end"><a href="${base}/commits/${ref}"${view === "commits" ? html` aria-current="page"` : ""}>${icon("history")} History</a>
<a href="${base}/archive/${ref}.zip" download>${icon("download")} Download ZIP</a>
<a href="${base}/archive/${ref}.tar.gz" download>tar.gz<span class="sr"> archive</span></a></span>`;
}
