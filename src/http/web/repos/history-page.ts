// History (newest first, with a path filter) and the commit page (message, parents, diff).
import type { Check } from "../../../services/ci/schemas.ts";
import type { Highlighter } from "../../../services/context.ts";
import type { FileDiffs } from "../../../services/git/diff.ts";
import type { CommitList, CommitSummary } from "../../../services/repos/schemas.ts";
import type { RepoFrame } from "../../../services/web/views.ts";
import { html, seg, segs, type Html } from "../kit/html.ts";
import { codeTop, repoHref } from "./tree-page.ts";
import type { Frame } from "../kit/layout.ts";
import { repoTop } from "./repo-layout.ts";
import type { RepoChrome } from "../../../services/web/views.ts";
import { diffView } from "./diff-view.ts";

/** A date for people (UTC, to the minute). */
export function when(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

/** A check state's mark (the words beside it say the same for screen readers). */
const CHECK_MARKS: Readonly<Record<string, string>> = { success: "✓", failure: "✗", cancelled: "⊘", running: "●", queued: "○", pending: "●" };

/** The words of a commit's checks rollup (`checks_state`). */
const ROLLUP_WORDS: Readonly<Record<string, string>> = { success: "checks passed", failure: "checks failing", pending: "checks running" };

/** A commit's checks rollup in the history: a mark and its words, linking to the commit page's checks. */
function rollupBadge(base: string, sha: string, state: string | null): Html {
  if (!state) return html``;
  return html` · <a class="checks-state state-${state}" href="${base}/commit/${sha}#checks"><span aria-hidden="true">${CHECK_MARKS[state] ?? "·"}</span> ${ROLLUP_WORDS[state] ?? state}</a>`;
}

/** Each check of a commit: its key (to its run), its state, and a link to the job's log. */
export function checksList(base: string, checks: readonly Check[]): Html {
  if (!checks.length) return html`<p class="pad muted">No checks reported for this commit.</p>`;
  return html`<ul class="list">${checks.map((c) => html`<li class="check state-${c.state}"><span aria-hidden="true">${CHECK_MARKS[c.state] ?? "·"}</span> <a href="${base}/runs/${seg(c.run_id)}">${c.key}</a> <span class="muted">${c.state}</span> · <a href="${base}/runs/${seg(c.run_id)}/jobs/${seg(c.job_id)}" aria-label="Log of ${c.key}">log</a></li>`)}</ul>`;
}

/** Commit history, newest first, with a form to filter it by path. */
export function historyPage(frame: Frame, f: RepoFrame, list: CommitList): Html {
  const base = repoHref(f.repo);
  const items = list.commits.map((c) => {
    const [title, ...rest] = c.message.split("\n");
    const body = rest.join("\n").trim();
    return html`<li><div class="commit-title"><a href="${base}/commit/${c.sha}">${title}</a></div>
<div class="muted">${c.author.name} · <time datetime="${new Date(c.committer.date).toISOString()}">${when(c.committer.date)}</time> · <a class="sha" href="${base}/commit/${c.sha}" aria-label="Commit ${c.sha.slice(0, 10)}">${c.sha.slice(0, 10)}</a>${rollupBadge(base, c.sha, c.checks_state)} · <a href="${base}/tree/${c.sha}${f.path ? `/${segs(f.path)}` : ""}">Browse</a></div>${body ? html`<details><summary class="muted">More</summary><pre class="msg">${body}</pre></details>` : ""}</li>`;
  });
  const here = f.path ? `/${segs(f.path)}` : "";
  return html`${codeTop(frame, f, "commits", false)}
<h2>History of ${f.path ? html`<span class="path">${f.path}</span>` : f.ref.short}</h2>
<form class="filter" method="get" action="${base}/commits/${segs(f.ref.short)}" role="search"><label for="path-filter">Only commits that changed</label><input id="path-filter" type="text" name="path" placeholder="a path, e.g. src/app.ts" value="${f.path}" spellcheck="false"><button type="submit">Filter</button>${f.path ? html`<a href="${base}/commits/${segs(f.ref.short)}">All commits</a>` : ""}</form>
<section class="box" aria-label="Commits">${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="pad muted">No commits${f.path ? " changed this path" : ""}.</p>`}</section>
${list.next_cursor ? html`<nav class="pager" aria-label="Pages"><a href="${base}/commits/${segs(f.ref.short)}${here}?cursor=${seg(list.next_cursor)}">Older commits</a></nav>` : ""}`;
}

/** One commit: its message, who and when, its parents, its checks, and its diff against the first parent. */
export async function commitPage(
  frame: Frame,
  chrome: RepoChrome,
  c: CommitSummary,
  diff: FileDiffs,
  checks: readonly Check[],
  highlighter?: Highlighter,
  onPlain?: () => void,
): Promise<Html> {
  const base = repoHref(chrome.repo);
  const [title, ...rest] = c.message.split("\n");
  const body = rest.join("\n").trim();
  return html`${repoTop(frame, chrome, "code")}
<section class="box" aria-labelledby="commit-h"><header><h2 class="inh commit-title" id="commit-h">${title}</h2></header>
${body ? html`<pre class="pad msg">${body}</pre>` : ""}
<p class="pad muted">${c.author.name} authored <time datetime="${new Date(c.author.date).toISOString()}">${when(c.author.date)}</time>${c.committer.name !== c.author.name ? ` · ${c.committer.name} committed` : ""}</p>
<p class="pad">Commit <span class="sha">${c.sha}</span>${c.parents.length ? html` · ${c.parents.length === 1 ? "parent" : "parents"} ${c.parents.map((p, i) => html`${i ? ", " : ""}<a class="sha" href="${base}/commit/${p}">${p.slice(0, 10)}</a>`)}` : " · root commit"} · <a href="${base}/tree/${c.sha}">Browse files</a></p></section>
<section class="box" id="checks" aria-labelledby="checks-h"><header><h2 class="inh" id="checks-h">Checks</h2></header>${checksList(base, checks)}</section>
${await diffView(diff, (f) => (f.status === "deleted" ? null : `${base}/blob/${c.sha}/${segs(f.path)}`), { highlighter, onPlain })}`;
}
