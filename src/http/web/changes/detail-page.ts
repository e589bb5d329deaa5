// One change as a review page in two tabs. Conversation (/changes/{n}): the description, a timeline
// (opened, patchsets pushed, landed or closed), and a right column with its state and queue
// position, the land button (writers, while it can land), its stack and its patchsets. Files
// (/changes/{n}/files): the diff of the chosen patchset (or between two), every line number a link
// that opens a comment form at that line, without any script (`?comment=path:side:line`).
import type { Change, Review } from "../../../services/changes/schemas.ts";
import type { Highlighter } from "../../../services/context.ts";
import { type ChangeView, type CommentAt, type Thread, type TimelineItem } from "../../../services/web/changes.ts";
import { CSRF_FIELD } from "../kit/csrf.ts";
import { escapeHtml, html, seg, segs, type Html } from "../kit/html.ts";
import type { LinkBase } from "../kit/markdown.ts";
import { changesHeader, stateBadge } from "./list-page.ts";
import { batchApplyForm, draftButton, generalCommentForm, lineCommentTemplate, pendingCount, threadBlock } from "./threads.ts";
import { repoHref } from "../repos/tree-page.ts";
import { diffFileView, diffView, type DiffLines, type DiffOptions, type DiffSide } from "../repos/diff-view.ts";
import type { DiffFile } from "../../../services/git/schemas.ts";
import { when } from "../repos/history-page.ts";
import type { Frame } from "../kit/layout.ts";

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

/** One line of what landing needs: met (✓), pending (●) or missing (✗), in words too. */
function needLine(state: "met" | "pending" | "missing", text: Html | string): Html {
  const mark = state === "met" ? "✓" : state === "pending" ? "●" : "✗";
  return html`<li class="need need-${state}"><span aria-hidden="true">${mark}</span> ${text}</li>`;
}

/**
 * What landing needs, as the land request judges it (landingNeeds: the same rule that answers
 * 409): approvals against the target's protection, who requested changes, the head's checks.
 */
function needsList(v: ChangeView): Html {
  const n = v.needs;
  if (!n) return html``;
  const base = repoHref(v.repo);
  const c = v.change;
  const lines: Html[] = [];
  if (n.stack) lines.push(needLine("missing", n.stack));
  const b = n.blocking;
  if (b && b.number !== c.number)
    lines.push(needLine("missing", html`<a href="${base}/changes/${b.number}">#${b.number}</a> beneath lacks approvals: ${b.message}`));
  if (n.changesRequestedBy.length)
    lines.push(needLine("missing", html`Changes requested by ${n.changesRequestedBy.map((h, i) => html`${i ? ", " : ""}<a href="/${seg(h)}">@${h}</a>`)}`));
  if (n.required === 0) lines.push(html`<li class="need muted">No approvals required on <span class="path">${c.target}</span></li>`);
  else if (n.approvals < n.required) {
    const more = n.required - n.approvals;
    lines.push(needLine("missing", `${more} approval${more === 1 ? "" : "s"} needed (${n.approvals} of ${n.required} required)`));
  } else lines.push(needLine("met", `${n.approvals} of ${n.required} required approval${n.required === 1 ? "" : "s"}`));
  const checks = c.checks ?? [];
  const failing = checks.filter((k) => k.state === "failure" || k.state === "cancelled").length;
  const pending = checks.filter((k) => k.state !== "success" && k.state !== "failure" && k.state !== "cancelled").length;
  if (!checks.length) lines.push(html`<li class="need muted">No checks reported</li>`);
  else if (failing) lines.push(needLine("missing", `${failing} of ${checks.length} check${checks.length === 1 ? "" : "s"} failing`));
  else if (pending) lines.push(needLine("pending", `${pending} of ${checks.length} check${checks.length === 1 ? "" : "s"} running`));
  else lines.push(needLine("met", `${checks.length} check${checks.length === 1 ? "" : "s"} passed`));
  const states = new Map(checks.map((k) => [k.key, k.state]));
  const unmet = n.requiredChecks.filter((k) => states.get(k) !== "success");
  if (unmet.length)
    lines.push(
      needLine(
        unmet.some((k) => states.get(k) === "failure" || states.get(k) === "cancelled") ? "missing" : "pending",
        html`Required: ${unmet.map((k, i) => html`${i ? ", " : ""}<span class="path">${k}</span> ${states.get(k) ?? "no result yet"}`)}`,
      ),
    );
  // Mergeability as far as one ref read tells (the merge itself is the lander's: a conflict ejects).
  const target = html`<span class="path">${c.target}</span>`;
  if (n.targetTip === null) lines.push(needLine("missing", html`Target branch ${target} does not exist`));
  else if (c.base && n.targetTip === c.base) lines.push(needLine("met", html`Up to date with ${target}`));
  else if (c.head) lines.push(html`<li class="need muted">${target} has moved since this patchset; the lander merges it (a conflict ejects the change)</li>`);
  return html`<ul class="needs" aria-label="What landing needs">${lines}</ul>`;
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

function patchsetBox(v: ChangeView, tab: "conversation" | "files"): Html {
  const here = `${repoHref(v.repo)}/changes/${v.change.number}/files`;
  const { patchset, against } = v.shown;
  const options = (sel: number | null) =>
    v.patchsets.map((p) => html`<option value="${p.patchset}"${p.patchset === sel ? html` selected` : ""}>Patchset ${p.patchset}</option>`);
  return html`<section class="box" aria-labelledby="ps-h"><header><h2 class="inh" id="ps-h">Patchsets</h2></header>
<ul class="list">${[...v.patchsets].reverse().map((p) => html`<li${tab === "files" && p.patchset === patchset && against === null ? html` aria-current="true"` : ""}><a href="${here}?ps=${p.patchset}">Patchset ${p.patchset}</a>${p.patchset === v.change.patchset ? html` <span class="badge">current</span>` : ""} <span class="sha">${p.head.slice(0, 10)}</span> <span class="muted">· <time datetime="${new Date(p.created_at).toISOString()}">${when(p.created_at)}</time></span></li>`)}</ul>
${v.patchsets.length > 1 && tab === "files" ? html`<form class="filter pad" method="get" action="${here}"><label for="ps-from">Compare</label><select id="ps-from" name="against">${options(against ?? v.patchsets[v.patchsets.length - 2]!.patchset)}</select><label for="ps-to">with</label><select id="ps-to" name="ps">${options(patchset)}</select><button type="submit">Compare</button></form>` : ""}
</section>`;
}

/** Where a change description's relative links resolve: the target branch. */
export function descriptionBase(v: ChangeView): LinkBase {
  return { repo: repoHref(v.repo), ref: segs(v.change.target), dir: "" };
}

/** The change's address (both tabs hang under it). */
export function changeHref(v: ChangeView): string {
  return `${repoHref(v.repo)}/changes/${v.change.number}`;
}

/** The form token field, when the page has a session. */
function csrfField(csrf: string | null): Html {
  return csrf ? html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">` : html``;
}

/** Title (with its edit form for writers and the author), who wants what, and the two tabs. */
function changeHeader(v: ChangeView, frame: Frame): Html {
  const csrf = frame.csrf;
  const c = v.change;
  const here = changeHref(v);
  const edit = v.canEdit
    ? html`<details class="edit-title"><summary class="button">Edit title</summary><form class="title-form" method="post" action="${here}/edit">${csrfField(csrf)}<label for="title-in" class="sr">Title</label><input id="title-in" type="text" name="title" required maxlength="200" value="${c.title}"><button class="primary" type="submit">Save</button></form></details>`
    : "";
  return html`${changesHeader(frame, v)}
<div class="change-head"><h2 class="change-title">${c.title} <span class="muted">#${c.number}</span> ${stateBadge(c)}</h2>${edit}</div>
<p class="muted">${c.author ? `${c.author.handle} wants` : "Wants"} to land <span class="path">${c.source ? `${c.source.org}/${c.source.repo}:` : ""}${c.branch}</span> on <span class="path">${c.target}</span> · patchset ${c.patchset}${c.head ? html` · head <span class="sha">${c.head.slice(0, 10)}</span>` : ""} · opened <time datetime="${new Date(c.created_at).toISOString()}">${when(c.created_at)}</time></p>
<nav class="tabs" aria-label="Change"><a href="${here}"${v.tab === "conversation" ? html` aria-current="page"` : ""}>Conversation</a><a href="${here}/files"${v.tab === "files" ? html` aria-current="page"` : ""}>Files changed</a></nav>`;
}

/** A time as the pages show it, machine-readable too. */
function at(ms: number): Html {
  return html`<time datetime="${new Date(ms).toISOString()}">${when(ms)}</time>`;
}

/** One timeline row. */
function timelineRow(v: ChangeView, item: TimelineItem, csrf: string | null, rendered: ReadonlyMap<string, Html>): Html {
  const base = repoHref(v.repo);
  const here = changeHref(v);
  switch (item.kind) {
    case "opened":
      return html`<li class="event">${item.author ? html`<strong>${item.author}</strong> opened` : "Opened"} this change ${at(item.at)}</li>`;
    case "patchset":
      return html`<li class="event" id="ps-${item.patchset}">Pushed <a href="${here}/files?ps=${item.patchset}">patchset ${item.patchset}</a> <span class="sha">${item.head.slice(0, 10)}</span> ${at(item.at)}${item.patchset > 1 ? html` · <a href="${here}/files?ps=${item.patchset}&amp;against=${item.patchset - 1}">changes since patchset ${item.patchset - 1}</a>` : ""}</li>`;
    case "landed":
      return html`<li class="event"><strong>Landed</strong>${item.commit ? html` as <a class="sha" href="${base}/commit/${item.commit}">${item.commit.slice(0, 10)}</a>` : ""}${item.includedIn ? html` with <a href="${base}/changes/${item.includedIn}">#${item.includedIn}</a>` : ""} ${at(item.at)}</li>`;
    case "ejected":
      return html`<li class="event"><strong>Ejected</strong> by the lander${item.message ? html`: ${item.message}` : ""} ${at(item.at)}</li>`;
    case "closed":
      return html`<li class="event"><strong>Closed</strong> ${at(item.at)}</li>`;
    case "review":
      return reviewItem(v, item.review, csrf, rendered);
    case "thread":
      return html`<li class="thread-item">${threadBlock(v, item.thread, csrf, "conversation")}</li>`;
  }
}

const VERDICT_WORDS: Readonly<Record<string, string>> = { approve: "approved these changes", request_changes: "requested changes", comment: "reviewed" };

/** A review in the timeline: who, what verdict, on which patchset, its body; admins may dismiss a verdict. */
function reviewItem(v: ChangeView, r: Review, csrf: string | null, rendered: ReadonlyMap<string, Html>): Html {
  const here = changeHref(v);
  const body = rendered.get(r.id);
  const dismiss =
    v.repo.viewer_admin && !r.dismissed && r.verdict !== "comment"
      ? html`<form class="inline" method="post" action="${here}/reviews/${r.id}/dismiss">${csrfField(csrf)}<button class="link" type="submit">Dismiss</button></form>`
      : "";
  return html`<li class="review verdict-${r.verdict}" id="review-${r.id}"><div class="box"><header><span><strong>${r.author?.handle ?? "someone"}</strong> ${VERDICT_WORDS[r.verdict] ?? r.verdict} on <a href="${here}/files?ps=${r.patchset}">patchset ${r.patchset}</a> ${at(r.created_at)}</span>${r.dismissed ? html`<span class="badge">dismissed${r.dismissed_reason === "stale" ? " (new patchset)" : ""}</span>` : ""}${dismiss}</header>${body ? html`<div class="markdown">${body}</div>` : ""}${v.threads
    .filter((t) => t.root.review_id === r.id)
    .map((t) => threadBlock(v, t, csrf, "conversation"))}</div></li>`;
}

/** The review form: a body and a verdict (the author may only comment on their own change). */
export function reviewForm(v: ChangeView, csrf: string | null): Html {
  if (!v.canComment) return html``;
  const judged = !v.isAuthor && v.change.state !== "landed" && v.change.state !== "closed";
  const radio = (value: string, label: string, hint: string, checked = false) =>
    html`<label class="radio"><input type="radio" name="verdict" value="${value}"${checked ? html` checked` : ""}> <span>${label} <span class="muted">${hint}</span></span></label>`;
  return html`<section class="box" id="review" aria-labelledby="review-h"><header><h3 class="inh" id="review-h">Review</h3><span class="muted">patchset ${v.change.patchset}</span></header>
<form class="pad stack-wide" method="post" action="${changeHref(v)}/reviews">${csrfField(csrf)}
<p class="pending-note" data-pending-note${v.pending ? "" : html` hidden`}>${pendingCount(v.pending)} will be published with this review.</p>
<label>Comment <span class="muted">(Markdown)</span><textarea name="body" rows="4" maxlength="65536"></textarea></label>
<fieldset><legend>Verdict</legend>${radio("comment", "Comment", "feedback without a verdict", true)}${judged ? html`${radio("approve", "Approve", "these changes may land")}${radio("request_changes", "Request changes", "these changes must change before landing")}` : ""}</fieldset>
<div><button class="primary" type="submit">Submit review</button></div>
</form></section>`;
}

const REVIEWER_WORDS: Readonly<Record<string, string>> = {
  requested: "asked to review",
  approved: "approved",
  changes_requested: "requested changes",
  commented: "commented",
};

/** Reviewers: who was asked and where each stands; writers and the author ask more, or take a request back. */
function reviewersBox(v: ChangeView, csrf: string | null): Html {
  const here = changeHref(v);
  const people = v.change.reviewers ?? [];
  return html`<section class="box" aria-labelledby="reviewers-h"><header><h3 class="inh" id="reviewers-h">Reviewers</h3></header>
${people.length ? html`<ul class="list">${people.map((p) => html`<li class="reviewer state-${p.state}"><a href="/${seg(p.handle)}">${p.handle}</a> <span class="muted">${REVIEWER_WORDS[p.state] ?? p.state}</span>${v.canEdit && p.requested ? html` <form class="inline" method="post" action="${here}/reviewers/${seg(p.handle)}/remove">${csrfField(csrf)}<button class="link" type="submit" aria-label="Remove ${p.handle} from the reviewers">Remove</button></form>` : ""}</li>`)}</ul>` : html`<p class="pad muted">Nobody yet.</p>`}
${v.canEdit && v.change.state !== "landed" && v.change.state !== "closed" ? html`<form class="pad ask" method="post" action="${here}/reviewers">${csrfField(csrf)}<label for="ask-in" class="sr">Handles to ask</label><input id="ask-in" type="text" name="handles" placeholder="handle, handle" autocomplete="off" required><button type="submit">Ask</button></form>` : ""}
</section>`;
}

const CHECK_WORDS: Readonly<Record<string, string>> = { success: "✓", failure: "✗", cancelled: "⊘", running: "●", queued: "○" };

/** The head's checks: key, state, links to the run and the job's log. */
function checksBox(v: ChangeView, csrf: string | null): Html {
  const checks = v.change.checks ?? [];
  const base = repoHref(v.repo);
  return html`<section class="box" aria-labelledby="checks-h"><header><h3 class="inh" id="checks-h">Checks</h3>${v.change.head ? html`<span class="sha">${v.change.head.slice(0, 10)}</span>` : ""}</header>
${checks.length ? html`<ul class="list">${checks.map((c) => html`<li class="check state-${c.state}"><span aria-hidden="true">${CHECK_WORDS[c.state] ?? "·"}</span> <a href="${base}/runs/${seg(c.run_id)}">${c.key}</a> <span class="muted">${c.state}</span> · <a href="${base}/runs/${seg(c.run_id)}/jobs/${seg(c.job_id)}" aria-label="Log of ${c.key}">log</a></li>`)}</ul>` : html`<p class="pad muted">No checks reported for this head.</p>${startRunsForm(v, csrf)}`}
</section>`;
}

/**
 * A writer's approval of a fork change's runs (POST …/changes/{number}/runs): shown while a change
 * from a fork has no checks for its head (its author may not write here, so nothing ran).
 */
function startRunsForm(v: ChangeView, csrf: string | null): Html {
  const c = v.change;
  if (!v.repo.viewer_write || !c.source || !c.head || c.state === "landed" || c.state === "closed") return html``;
  return html`<form class="pad" method="post" action="${repoHref(v.repo)}/changes/${c.number}/runs">${csrfField(csrf)}
<button type="submit">Run checks</button> <span class="muted">Runs this fork's workflows for patchset ${c.patchset}, without secrets or variables: read them first.</span>
</form>`;
}

/** Close or reopen, for writers and the author. */
function stateForm(v: ChangeView, csrf: string | null): Html {
  const c = v.change;
  if (!v.canEdit || c.state === "landed") return html``;
  const reopen = c.state === "closed";
  return html`<form class="inline" method="post" action="${changeHref(v)}/${reopen ? "reopen" : "close"}">${csrfField(csrf)}<button type="submit">${reopen ? "Reopen change" : "Close change"}</button></form>`;
}

/**
 * The conversation tab: description, timeline and review form on the left; status, land,
 * reviewers, checks, stack and patchsets on the right. `rendered` holds the Markdown of review
 * and comment bodies by id.
 */
export function conversationPage(v: ChangeView, frame: Frame, description: Html | null, rendered: ReadonlyMap<string, Html> = new Map(), error?: string): Html {
  const csrf = frame.csrf;
  return html`${changeHeader(v, frame)}
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<div class="review">
<div class="review-main">
<section class="box" aria-label="Description"><header><strong>${v.change.author?.handle ?? "Someone"}</strong> <span class="muted">described it</span></header>${description ? html`<div class="markdown">${description}</div>` : html`<p class="pad muted">No description.</p>`}</section>
<h3 class="sr" id="timeline-h">Timeline</h3>
<ol class="timeline" id="timeline" aria-labelledby="timeline-h">${v.timeline.map((i) => timelineRow(v, i, csrf, rendered))}</ol>
${generalCommentForm(v, csrf)}
${reviewForm(v, csrf)}
<div class="change-actions">${stateForm(v, csrf)}</div>
</div>
<aside class="review-side" aria-label="Status">
<section class="box" aria-labelledby="status-h"><header><h3 class="inh" id="status-h">Status</h3></header><div class="pad">${statusBox(v)}${needsList(v)}${landForm(v, csrf)}</div></section>
${reviewersBox(v, csrf)}
${checksBox(v, csrf)}
${stackList(v)}
${patchsetBox(v, "conversation")}
</aside>
</div>`;
}

/** The files tab's inline comment form under a line (`?comment=`; plain HTML, no script needed). */
function lineCommentForm(v: ChangeView, csrf: string | null, at: CommentAt, anchor: string): Html {
  const range = at.startLine !== null ? `lines ${at.startLine}–${at.line}` : `line ${at.line}`;
  return html`<tr class="comment-row"><td colspan="3"><form class="line-comment stack-wide" method="post" action="${changeHref(v)}/comments" data-fragment>${csrfField(csrf)}<input type="hidden" name="view" value="files">${v.shown.patchset !== v.change.patchset ? html`<input type="hidden" name="ps" value="${v.shown.patchset}">` : ""}
<input type="hidden" name="path" value="${at.path}"><input type="hidden" name="side" value="${at.side}"><input type="hidden" name="line" value="${at.line}"><input type="hidden" name="patchset" value="${v.shown.patchset}">
<label>Comment on ${range} (${at.side}) of <span class="path">${at.path}</span><textarea name="body" rows="4" required maxlength="65536" autofocus></textarea></label>
<label class="from">Start at line <span class="muted">(optional, for a range)</span><input type="text" inputmode="numeric" pattern="[0-9]*" name="start_line" value="${at.startLine ?? ""}"></label>
<div><button class="primary" type="submit" name="intent" value="comment">Add comment</button> ${draftButton(v)} <a href="${changeHref(v)}/files?${v.shown.patchset !== v.change.patchset ? `ps=${v.shown.patchset}&` : ""}file=${seg(at.path)}#${anchor}">Cancel</a></div>
</form></td></tr>`;
}

/** Patch lines the files tab draws in full before it collapses later files (each then has "Load diff"). */
export const FILES_TAB_FULL_LINES = 1500;

/**
 * The files tab's diff drawing, shared by the page and the one-file fragment: threads by the line
 * they sit under, the line-number links, the collapsed files' "Load diff" and the conversations
 * not on a drawn line. `open` names a file drawn in full wherever it is (`?file=`).
 */
function filesDiff(v: ChangeView, csrf: string | null, commentAt: CommentAt | null, open: string | null) {
  const c = v.change;
  const base = repoHref(v.repo);
  const here = changeHref(v);
  const { patchset, against } = v.shown;
  const shownHead = v.diff?.head ?? null;
  // A fork's commits are not in this repository: its files cannot be opened here.
  const link = c.source
    ? () => null
    : (f: { status: string; path: string }) => (f.status === "deleted" || !shownHead ? null : `${base}/blob/${shownHead}/${segs(f.path)}`);
  const ps = patchset !== c.patchset ? `ps=${patchset}&` : "";
  const interdiff = against !== null;
  /** This view's query (patchset, interdiff) ahead of a further parameter. */
  const shownQuery = `${ps || (interdiff ? `ps=${patchset}&` : "")}${interdiff ? `against=${against}&` : ""}`;
  // Threads by the line they sit under on the shown patchset: the current one places them at
  // their current position; an older one shows the threads made on it at their own lines.
  const key = (path: string, side: string, line: number) => `${side}:${line}:${path}`;
  const atLine = new Map<string, Thread[]>();
  const byFile = new Map<string, Thread[]>();
  const onLine = new Set<string>();
  for (const t of interdiff ? [] : v.threads) {
    const r = t.root;
    if (r.path === null || r.side === null) continue;
    byFile.set(r.path, [...(byFile.get(r.path) ?? []), t]);
    const line = patchset === c.patchset ? (r.outdated ? null : r.current_line) : r.patchset === patchset ? r.line : null;
    if (line === null) continue;
    onLine.add(r.id);
    const k = key(r.path, r.side, line);
    atLine.set(k, [...(atLine.get(k) ?? []), t]);
  }
  const placed = new Set<string>();
  const folded = new Set<string>();
  const threadRow = (threads: Thread[]) => {
    for (const t of threads) placed.add(t.root.id);
    return `<tr class="thread-row"><td colspan="3">${threads.map((t) => threadBlock(v, t, csrf, "files").value).join("")}</td></tr>`;
  };
  // Comments are on one patchset's diff: the interdiff's numbers are not a patchset's lines.
  // The row hook runs once per diff row: each file's link prefix is built (and escaped) once, and
  // the cells are plain strings (the side comes from the cell's class, the number from its text).
  const lines: DiffLines | undefined = interdiff
    ? undefined
    : (f, i) => {
        const prefix = escapeHtml(`${here}/files?${ps}comment=${seg(f.path)}%3A`);
        const cell = v.canComment
          ? (side: DiffSide, n: number) =>
              `<td class="${side === "old" ? "o" : "n"}" id="c-${i}-${side}-${n}"><a href="${prefix}${side}%3A${n}#c-${i}-${side}-${n}" aria-label="Comment on line ${n} (${side})">${n}</a></td>`
          : null;
        // Everything the cell draws besides its side and number: the file's index and link prefix.
        const cellKey = `${i}:${prefix}`;
        const formHere = commentAt !== null && commentAt.path === f.path;
        if (!byFile.has(f.path) && !formHere) return { cell, after: null, key: cellKey };
        const after = (o: number | null, n: number | null) => {
          let rows = "";
          if (o !== null) {
            const found = atLine.get(key(f.path, "old", o));
            if (found?.length) rows += threadRow(found);
          }
          if (n !== null) {
            const found = atLine.get(key(f.path, "new", n));
            if (found?.length) rows += threadRow(found);
          }
          if (formHere && (commentAt.side === "old" ? o === commentAt.line : n === commentAt.line))
            rows += lineCommentForm(v, csrf, commentAt, `c-${i}-${commentAt.side}-${commentAt.line}`).value;
          return rows || null;
        };
        return { cell, after };
      };
  // Threads of a file that sit on no drawn line (outdated, or made on another patchset): listed
  // under it. A collapsed file's threads on its lines are only counted (its "Load diff" shows them).
  const fileExtra = (f: { path: string }) => {
    const collapsed = folded.has(f.path);
    const rest = (byFile.get(f.path) ?? []).filter((t) => !placed.has(t.root.id) && !(collapsed && onLine.has(t.root.id)));
    if (collapsed) for (const t of byFile.get(f.path) ?? []) placed.add(t.root.id);
    for (const t of rest) placed.add(t.root.id);
    if (!rest.length) return null;
    return html`<details class="elsewhere"><summary>${rest.length} ${rest.length === 1 ? "conversation" : "conversations"} not on these lines (outdated or on another patchset)</summary>${rest.map((t) => threadBlock(v, t, csrf, "files"))}</details>`;
  };
  const collapsed = (f: DiffFile, i: number) => {
    folded.add(f.path);
    const n = (byFile.get(f.path) ?? []).filter((t) => onLine.has(t.root.id)).length;
    return html`<p class="pad load-diff"><a href="${here}/files?${shownQuery}file=${seg(f.path)}#diff-${i}" data-load-diff>Load diff</a> <span class="muted">${(f.additions + f.deletions).toLocaleString("en")} changed lines${n ? ` · ${n} ${n === 1 ? "conversation" : "conversations"}` : ""}</span></p>`;
  };
  const options: DiffOptions = {
    lines,
    fileExtra: interdiff ? undefined : fileExtra,
    collapse: { full: FILES_TAB_FULL_LINES, open: (f) => f.path === open || f.path === commentAt?.path, collapsed },
  };
  return { link, options, placed, interdiff };
}

/** The files tab: the chosen patchset's diff (or the interdiff) with every line number a comment link. */
export async function filesPage(
  v: ChangeView,
  frame: Frame,
  commentAt: CommentAt | null,
  error?: string,
  open: string | null = null,
  highlighter?: Highlighter,
): Promise<Html> {
  const csrf = frame.csrf;
  const c = v.change;
  const { patchset, against } = v.shown;
  const diffTitle =
    against !== null
      ? `Changes from patchset ${against} to patchset ${patchset}`
      : `Patchset ${patchset}${patchset === c.patchset ? "" : " (not the current one)"}`;
  const { link, options, placed, interdiff } = filesDiff(v, csrf, commentAt, open);
  const diff = v.diff ? await diffView(v.diff, link, { ...options, highlighter }) : html`<p class="muted">This change has no commits to compare.</p>`;
  const lost = interdiff ? [] : v.threads.filter((t) => t.root.path !== null && !placed.has(t.root.id));
  return html`${changeHeader(v, frame)}
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
${v.canComment ? html`<details class="review-drop"${error ? html` open` : ""}><summary class="button">Review changes<span class="badge" data-pending-note${v.pending ? "" : html` hidden`}>${pendingCount(v.pending)}</span></summary>${reviewForm(v, csrf)}</details>` : ""}
${patchsetBox(v, "files")}
${batchApplyForm(v, csrf)}
<h3 id="diff-h">${diffTitle}</h3>
${lineCommentTemplate(v, csrf)}
<div data-review-files>${diff}</div>
${lost.length ? html`<section class="box" aria-labelledby="lost-h"><header><h3 class="inh" id="lost-h">Conversations on files not in this diff</h3></header><div class="pad">${lost.map((t) => threadBlock(v, t, csrf, "files"))}</div></section>` : ""}`;
}

/** One file of the files tab drawn in full, alone (what "Load diff" swaps in): null when the diff has no such file. */
export async function filesFragment(v: ChangeView, csrf: string | null, path: string, highlighter?: Highlighter): Promise<Html | null> {
  const index = v.diff ? v.diff.files.findIndex((f) => f.path === path) : -1;
  if (!v.diff || index < 0) return null;
  const { link, options } = filesDiff(v, csrf, null, path);
  return await diffFileView(v.diff, index + 1, link, { ...options, highlighter });
}
