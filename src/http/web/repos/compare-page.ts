// The compare pages (issue 33): two ref pickers (a plain GET form), then for `base...head` the
// ahead/behind summary, the merge base, the head's commits, the "Open a change" form (writers) and
// the diff, big files collapsed like the change page's files tab.
import type { Highlighter } from "../../../services/context.ts";
import type { DiffFile } from "../../../services/git/schemas.ts";
import type { CommitSummary } from "../../../services/repos/schemas.ts";
import type { ChangeDraft, ComparePicker, CompareView } from "../../../services/web/compare.ts";
import type { RefChoice } from "../../../services/web/views.ts";
import { CSRF_FIELD } from "../kit/csrf.ts";
import type { Frame } from "../kit/layout.ts";
import { html, seg, segs, type Html } from "../kit/html.ts";
import { diffView } from "./diff-view.ts";
import { when } from "./history-page.ts";
import { repoBase, repoTop } from "./repo-layout.ts";

/** Refs the pickers' suggestion list offers at most (any other name typed in compares too). */
export const PICKER_REFS = 1000;

/** Patch lines drawn in full before later files are collapsed (the change page's files tab draws as many). */
export const COMPARE_FULL_LINES = 1500;

/** `/org/repo/compare/base...head` for two revisions (each segment of a ref with slashes escaped apart). */
export function compareHref(repoHref: string, base: string, head: string): string {
  return `${repoHref}/compare/${segs(base)}...${segs(head)}`;
}

/** "1 commit", "1,000 commits". */
function commits(n: number): string {
  return `${n.toLocaleString("en")} ${n === 1 ? "commit" : "commits"}`;
}

/** The two pickers: text inputs with the refs as suggestions (a datalist), sent as ?base=&head=. */
function pickers(href: string, choices: readonly RefChoice[], base: string, head: string): Html {
  const offered = choices.slice(0, PICKER_REFS);
  return html`<form class="compare-pick" method="get" action="${href}/compare" role="search" aria-label="Pick what to compare">
<label for="compare-base">Base <input id="compare-base" type="text" name="base" list="compare-refs" value="${base}" required spellcheck="false" autocomplete="off" placeholder="a branch, tag or commit"></label>
<span class="compare-arrow" aria-hidden="true">←</span>
<label for="compare-head">Compare <input id="compare-head" type="text" name="head" list="compare-refs" value="${head}" required spellcheck="false" autocomplete="off" placeholder="a branch, tag or commit"></label>
<button type="submit">Compare</button>
<datalist id="compare-refs">${offered.map((c) => html`<option value="${c.name}">${c.kind}</option>`)}</datalist>
</form>`;
}

/** The page without a comparison: the pickers, the default branch as base and the newest-named other branch as head. */
export function comparePickerPage(frame: Frame, v: ComparePicker, base: string, head: string): Html {
  const href = repoBase(v.chrome);
  const branches = v.choices.filter((c) => c.kind === "branch");
  return html`<div class="compare-page">${repoTop(frame, v.chrome, "code")}
<h2>Compare changes</h2>
<p class="muted">Pick a base and a branch, tag or commit to compare with it: the page lists the commits it has that the base has not, and their changes since the two diverged.</p>
${pickers(href, v.choices, base, head)}
${branches.length < 2 ? html`<p class="muted">${branches.length === 0 ? "This repository has no branches yet: push two to compare them." : "This repository has one branch: push another one to compare it."}</p>` : ""}</div>`;
}

/** One commit of the range. */
function commitItem(href: string, c: CommitSummary): Html {
  const [title] = c.message.split("\n");
  return html`<li><div class="commit-title"><a href="${href}/commit/${c.sha}">${title}</a></div>
<div class="muted">${c.author.name} · <time datetime="${new Date(c.author.date).toISOString()}">${when(c.author.date)}</time> · <a class="sha" href="${href}/commit/${c.sha}" aria-label="Commit ${c.sha.slice(0, 10)}">${c.sha.slice(0, 10)}</a></div></li>`;
}

/** The "Open a change" form, prefilled (writers); posts to the changes list's create route. */
function openChangeBox(href: string, frame: Frame, d: ChangeDraft): Html {
  return html`<section class="box compare-open" aria-labelledby="open-h"><header><h3 class="inh" id="open-h">Open a change</h3><span class="muted">from <span class="path">${d.branch}</span> onto <span class="path">${d.target}</span></span></header>
<form class="stack-wide pad" method="post" action="${href}/changes">
${frame.csrf ? html`<input type="hidden" name="${CSRF_FIELD}" value="${frame.csrf}">` : ""}
<input type="hidden" name="branch" value="${d.branch}"><input type="hidden" name="target" value="${d.target}">
<label>Title <input type="text" name="title" required maxlength="200" value="${d.title}"></label>
<label>Description <span class="muted">(optional, Markdown)</span><textarea name="description" rows="6">${d.description}</textarea></label>
<div><button class="primary" type="submit">Open change</button></div>
</form></section>`;
}

/** Why there is no form: not signed in, or not allowed to write here. */
function openChangeHint(v: CompareView, frame: Frame, here: string): Html {
  if (!v.draft) return html``;
  if (!frame.viewer)
    return html`<p class="compare-hint"><a href="/login?next=${seg(here)}">Sign in</a> to open a change from <span class="path">${v.head}</span>.</p>`;
  return html`<p class="compare-hint muted">Opening a change here takes write access to ${v.chrome.repo.org}/${v.chrome.repo.name}.</p>`;
}

/** A compare page: the pickers, then the comparison or why there is none. `open` names a file drawn in full (`?file=`). */
export async function comparePage(frame: Frame, v: CompareView, open: string | null, highlighter?: Highlighter): Promise<Html> {
  return html`<div class="compare-page">${await comparison(frame, v, open, highlighter)}</div>`;
}

async function comparison(frame: Frame, v: CompareView, open: string | null, highlighter?: Highlighter): Promise<Html> {
  const href = repoBase(v.chrome);
  const here = compareHref(href, v.base, v.head);
  const top = html`${repoTop(frame, v.chrome, "code")}
<h2>Compare changes</h2>
${pickers(href, v.choices, v.base, v.head)}`;
  const c = v.comparison;
  if (!c) {
    return html`${top}<p class="error" role="alert">${v.refusal?.message ?? "Nothing to compare."}</p>
<p class="muted">Pick a branch, tag or commit of this repository for each side.</p>`;
  }
  const swap = html`<a href="${compareHref(href, v.head, v.base)}">Compare the other way</a>`;
  const mergeBase = c.merge_base
    ? html`Merge base <a class="sha" href="${href}/commit/${c.merge_base}" aria-label="Merge base commit ${c.merge_base.slice(0, 10)}">${c.merge_base.slice(0, 10)}</a>.`
    : html`<strong>No common history</strong>: the diff is against <span class="path">${v.base}</span> itself.`;
  const summary = html`<p class="compare-summary" role="status"><span class="path">${v.head}</span> is <strong>${commits(c.ahead)} ahead</strong> of and <strong>${commits(c.behind)} behind</strong> <span class="path">${v.base}</span>. ${mergeBase}</p>`;
  if (c.ahead === 0) {
    const same = c.base === c.head;
    return html`${top}${summary}
<section class="box" aria-labelledby="nothing-h"><header><h3 class="inh" id="nothing-h">There isn't anything to compare</h3></header>
<p class="pad">${same ? html`<span class="path">${v.base}</span> and <span class="path">${v.head}</span> are the same commit.` : html`<span class="path">${v.base}</span> already has every commit of <span class="path">${v.head}</span>.`}${c.behind > 0 ? html` ${swap}.` : ""}</p></section>`;
  }
  const list = c.commits.map((x) => commitItem(href, x));
  const moreNote =
    c.ahead > c.commits.length
      ? html`<p class="pad muted" role="note">Showing the newest ${commits(c.commits.length)} of ${c.ahead.toLocaleString("en")}. <a href="${href}/commits/${segs(v.head)}">The whole history of ${v.head}</a>.</p>`
      : "";
  const link = (f: DiffFile) => (f.status === "deleted" ? null : `${href}/blob/${c.head}/${segs(f.path)}`);
  const collapsed = (f: DiffFile, i: number) =>
    html`<p class="pad load-diff"><a href="${here}?file=${seg(f.path)}#diff-${i}">Load diff</a> <span class="muted">${(f.additions + f.deletions).toLocaleString("en")} changed lines</span></p>`;
  const diff = await diffView(c, link, { collapse: { full: COMPARE_FULL_LINES, open: (f) => f.path === open, collapsed }, highlighter });
  const already = v.open.length
    ? html`<p class="compare-hint" role="note">Already open from <span class="path">${v.head}</span> onto <span class="path">${v.base}</span>: ${v.open.map((o, i) => html`${i ? ", " : ""}<a href="${href}/changes/${o.number}">#${o.number} ${o.title}</a>`)}.</p>`
    : "";
  return html`${top}${summary}${already}
${v.draft && v.chrome.repo.viewer_write ? openChangeBox(href, frame, v.draft) : openChangeHint(v, frame, here)}
<section class="box" aria-labelledby="commits-h"><header><h3 class="inh" id="commits-h">Commits</h3><span class="badge">${c.ahead.toLocaleString("en")}</span></header>
<ul class="list compare-commits">${list}</ul>${moreNote}</section>
<h3>Files changed</h3>
${diff}`;
}
