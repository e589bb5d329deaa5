// One change: its state and queue position, the land button (writers, while it can land), its
// description, its stack, its patchsets (switch, compare two) and the diff of the chosen one.
import type { Change } from "../../../services/changes/schemas.ts";
import type { ChangeView } from "../../../services/web/changes.ts";
import { CSRF_FIELD } from "../kit/csrf.ts";
import { html, segs, type Html } from "../kit/html.ts";
import type { LinkBase } from "../kit/markdown.ts";
import { changesHeader, stateBadge } from "./list-page.ts";
import { repoHref } from "../repos/tree-page.ts";
import { diffView } from "../repos/diff-view.ts";
import { when } from "../repos/history-page.ts";

/** Where the change stands: queued (and where in the queue), ejected (why), landed (as what). */
function statusBox(v: ChangeView): Html {
  const c = v.change;
  const base = repoHref(v.repo);
  switch (c.state) {
    case "queued": {
      const at = v.queue.findIndex((q) => q.number === c.number);
      return html`<p role="status"><strong>Queued</strong> to land on <span class="path">${c.target}</span>${at >= 0 ? ` — position ${at + 1} of ${v.queue.length} in its queue` : ""}.${c.waiting ? html` <span class="muted">${c.waiting}.</span>` : ""}</p>
${v.queue.length > 1 ? html`<ol class="queue" aria-label="Queue of ${c.target}">${v.queue.map((q) => html`<li><a href="${base}/changes/${q.number}"${q.number === c.number ? html` aria-current="true"` : ""}>#${q.number} ${q.title}</a></li>`)}</ol>` : ""}`;
    }
    case "ejected":
      return html`<div class="warn" role="status"><strong>Ejected by the lander</strong>${c.verdict ? html` (${c.verdict.kind}): ${c.verdict.message}${c.verdict.paths?.length ? html`<ul>${c.verdict.paths.map((p) => html`<li class="path">${p}</li>`)}</ul>` : ""}` : "."}</div>`;
    case "landed":
      return html`<p role="status"><strong>Landed</strong> on <span class="path">${c.target}</span>${c.landed_commit ? html` as <a class="sha" href="${base}/commit/${c.landed_commit}">${c.landed_commit.slice(0, 10)}</a>` : ""}${c.included_in ? html` with <a href="${base}/changes/${c.included_in}">#${c.included_in}</a>, which was stacked on it` : ""}.</p>`;
    case "closed":
      return html`<p role="status"><strong>Closed</strong> without landing.</p>`;
    default:
      return html`<p role="status"><strong>Open</strong>: not queued to land yet.</p>`;
  }
}

/** The land button, for writers while the change is open or ejected. */
function landForm(v: ChangeView, csrf: string | null): Html {
  const c = v.change;
  if (!v.repo.viewer_write || (c.state !== "open" && c.state !== "ejected") || !c.head) return html``;
  const beneath = v.stack.below.filter((b) => b.state !== "landed");
  return html`<form class="land" method="post" action="${repoHref(v.repo)}/changes/${c.number}/land">
${csrf ? html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">` : ""}<input type="hidden" name="head" value="${c.head}">
<button class="primary" type="submit">${c.state === "ejected" ? "Land again" : "Land"}</button>
<span class="muted">Queues patchset ${c.patchset} to land on <span class="path">${c.target}</span>${beneath.length ? html`, with ${beneath.map((b) => `#${b.number}`).join(", ")} beneath it` : ""}.</span>
</form>`;
}

function stackList(v: ChangeView): Html {
  const { below, above } = v.stack;
  if (!below.length && !above.length) return html``;
  const base = repoHref(v.repo);
  const item = (s: Change, current = false) =>
    html`<li${current ? html` aria-current="true"` : ""}><a href="${base}/changes/${s.number}">#${s.number} ${s.title}</a> ${stateBadge(s)}</li>`;
  return html`<section class="box" aria-labelledby="stack-h"><header><h2 class="inh" id="stack-h">Stack</h2><span class="muted">top first</span></header>
<ol class="list stack-list" reversed>${[...above].reverse().map((s) => item(s))}${item(v.change, true)}${[...below].reverse().map((s) => item(s))}</ol></section>`;
}

function patchsetBox(v: ChangeView): Html {
  const here = `${repoHref(v.repo)}/changes/${v.change.number}`;
  const { patchset, against } = v.shown;
  const options = (sel: number | null) =>
    v.patchsets.map((p) => html`<option value="${p.patchset}"${p.patchset === sel ? html` selected` : ""}>Patchset ${p.patchset}</option>`);
  return html`<section class="box" aria-labelledby="ps-h"><header><h2 class="inh" id="ps-h">Patchsets</h2></header>
<ul class="list">${[...v.patchsets].reverse().map((p) => html`<li${p.patchset === patchset && against === null ? html` aria-current="true"` : ""}><a href="${here}?ps=${p.patchset}">Patchset ${p.patchset}</a>${p.patchset === v.change.patchset ? html` <span class="badge">current</span>` : ""} <span class="sha">${p.head.slice(0, 10)}</span> <span class="muted">· <time datetime="${new Date(p.created_at).toISOString()}">${when(p.created_at)}</time></span></li>`)}</ul>
${v.patchsets.length > 1 ? html`<form class="filter pad" method="get" action="${here}"><label for="ps-from">Compare</label><select id="ps-from" name="against">${options(against ?? v.patchsets[v.patchsets.length - 2]!.patchset)}</select><label for="ps-to">with</label><select id="ps-to" name="ps">${options(patchset)}</select><button type="submit">Compare</button></form>` : ""}
</section>`;
}

/** Where a change description's relative links resolve: the target branch. */
export function descriptionBase(v: ChangeView): LinkBase {
  return { repo: repoHref(v.repo), ref: segs(v.change.target), dir: "" };
}

/** The change page; `description` is the description's markup (renderMarkdownOffloaded), null without one. */
export function changePage(v: ChangeView, csrf: string | null, description: Html | null): Html {
  const c = v.change;
  const base = repoHref(v.repo);
  const { patchset, against } = v.shown;
  const shownHead = v.diff?.head ?? null;
  // A fork's commits are not in this repository: its files cannot be opened here.
  const link = c.source
    ? () => null
    : (f: { status: string; path: string }) => (f.status === "deleted" || !shownHead ? null : `${base}/blob/${shownHead}/${segs(f.path)}`);
  const diffTitle =
    against !== null
      ? `Changes from patchset ${against} to patchset ${patchset}`
      : `Patchset ${patchset}${patchset === c.patchset ? "" : " (not the current one)"}`;
  return html`${changesHeader(v.repo)}
<h2 class="change-title">${c.title} <span class="muted">#${c.number}</span> ${stateBadge(c)}</h2>
<p class="muted">${c.author ? `${c.author.handle} wants` : "Wants"} to land <span class="path">${c.source ? `${c.source.org}/${c.source.repo}:` : ""}${c.branch}</span> on <span class="path">${c.target}</span> · patchset ${c.patchset}${c.head ? html` · head <span class="sha">${c.head.slice(0, 10)}</span>` : ""} · opened <time datetime="${new Date(c.created_at).toISOString()}">${when(c.created_at)}</time></p>
${statusBox(v)}
${landForm(v, csrf)}
${description ? html`<section class="box" aria-label="Description"><div class="markdown">${description}</div></section>` : ""}
${stackList(v)}
${patchsetBox(v)}
<h2 id="diff-h">${diffTitle}</h2>
${v.diff ? diffView(v.diff, link) : html`<p class="muted">This change has no commits to compare.</p>`}`;
}
