// Comment threads on the review page, one renderer for both tabs and for the fragment a scripted
// post gets back: the root and its replies (body as the sanitized HTML the comments service stored),
// a suggestion as a small diff with Apply and a batch checkbox, and the forms (reply, edit, delete,
// resolve / reopen). Resolved threads are collapsed in <details>; outdated ones say so and link to
// the patchset they were made on. Every form works without the script (303 back to `#t-{thread}`);
// `data-fragment` lets the script send it with fetch and swap the answer in.
import type { Comment } from "../../../services/changes/comment-schemas.ts";
import type { ChangeView, Thread } from "../../../services/web/changes.ts";
import { CSRF_FIELD } from "../kit/csrf.ts";
import { html, seg, trusted, type Html } from "../kit/html.ts";
import { repoHref } from "../repos/tree-page.ts";
import { when } from "../repos/history-page.ts";

/** Which tab a thread is drawn on (forms carry it so the answer is drawn for the same place). */
export type ThreadPlace = "files" | "conversation";

/** The batch form's id: suggestion checkboxes anywhere on the page belong to it (`form=` attribute). */
export const BATCH_FORM = "apply-batch";

function csrfField(csrf: string | null): Html {
  return csrf ? html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">` : html``;
}

function at(ms: number): Html {
  return html`<time datetime="${new Date(ms).toISOString()}">${when(ms)}</time>`;
}

function changeHref(v: ChangeView): string {
  return `${repoHref(v.repo)}/changes/${v.change.number}`;
}

/** Hidden fields telling the server where the form was (the redirect and the fragment follow it). */
function placeFields(v: ChangeView, place: ThreadPlace): Html {
  return html`<input type="hidden" name="view" value="${place}">${place === "files" && v.shown.patchset !== v.change.patchset ? html`<input type="hidden" name="ps" value="${v.shown.patchset}">` : ""}`;
}

/** "line 12" or "lines 10–12" of a comment, on its own patchset. */
function linesOf(c: Comment): string {
  return c.start_line !== null && c.start_line !== c.line ? `lines ${c.start_line}–${c.line}` : `line ${c.line}`;
}

/**
 * The second button of a comment form: the comment waits, pending, for the person's review ("Start
 * a review", or "Add review comment" once they have pending comments; the script relabels it).
 */
export function draftButton(v: ChangeView): Html {
  return html`<button type="submit" name="intent" value="review" data-draft>${v.pending ? "Add review comment" : "Start a review"}</button>`;
}

/** "N pending comments", which the script keeps up to date after each post (`data-pending`). */
export function pendingCount(n: number): Html {
  return html`<span data-pending>${n} pending ${n === 1 ? "comment" : "comments"}</span>`;
}

/** The lines a suggestion replaces and what it proposes, as a two-part diff. */
function suggestionDiff(c: Comment): Html {
  const s = c.suggestion!;
  const split = (t: string) => (t === "" ? [] : (t.endsWith("\n") ? t.slice(0, -1) : t).split("\n"));
  const old = split(c.anchor_text ?? "");
  const proposed = split(s.text);
  return html`<table class="diff suggestion"><caption class="sr">Suggested change</caption><tbody>${old.map((l) => html`<tr class="del"><td class="c">-${l}</td></tr>`)}${proposed.map((l) => html`<tr class="add"><td class="c">+${l}</td></tr>`)}</tbody></table>`;
}

/** A suggestion's state and, for writers while it applies, Apply and the batch checkbox. */
function suggestionBox(v: ChangeView, c: Comment, csrf: string | null, place: ThreadPlace): Html {
  const s = c.suggestion;
  if (!s) return html``;
  const base = repoHref(v.repo);
  let actions: Html = html``;
  if (s.applied_commit)
    actions = html`<p class="pad muted">Applied in <a class="sha" href="${base}/commit/${s.applied_commit}">${s.applied_commit.slice(0, 10)}</a>.</p>`;
  else if (c.draft) actions = html`<p class="pad muted">Pending: it can be applied once your review is submitted.</p>`;
  else if (!s.applicable) actions = html`<p class="pad muted">This suggestion no longer applies (its lines changed).</p>`;
  else if (v.rights.apply && v.change.head)
    // Not sent by the script: applying makes a new patchset, so the whole page is drawn again.
    actions = html`<div class="pad suggestion-actions"><form class="inline" method="post" action="${changeHref(v)}/suggestions/apply">${csrfField(csrf)}${placeFields(v, place)}<input type="hidden" name="comment_ids" value="${c.id}"><input type="hidden" name="head" value="${v.change.head}"><button type="submit">Apply suggestion</button></form>
<label class="radio"><input type="checkbox" name="comment_ids" value="${c.id}" form="${BATCH_FORM}"> Add to batch</label></div>`;
  return html`<div class="suggestion-box">${suggestionDiff(c)}${actions}</div>`;
}

/** One comment: author, time, body, its suggestion; its author may edit it, its author or an admin delete it. */
function commentItem(v: ChangeView, t: Thread, c: Comment, csrf: string | null, place: ThreadPlace): Html {
  const here = changeHref(v);
  const mine = v.rights.me !== null && c.author?.user_id === v.rights.me;
  const deleted = c.body === null;
  // Why trusted: body_html is the comments service's sanitize-html output (markdown-it, html off), stored at write time.
  const body = deleted ? html`<p class="pad muted">This comment was deleted.</p>` : html`<div class="markdown">${trusted(c.body_html ?? "")}</div>`;
  const edit =
    mine && !deleted
      ? html`<details class="edit-comment"><summary>Edit</summary><form class="stack-wide pad" method="post" action="${here}/comments/${c.id}/edit" data-fragment>${csrfField(csrf)}${placeFields(v, place)}<label>Edit comment<textarea name="body" rows="4" required maxlength="65536">${c.body}</textarea></label><div><button class="primary" type="submit">Save</button></div></form></details>`
      : "";
  const del =
    !deleted && (mine || v.rights.deleteAny)
      ? html`<form class="inline" method="post" action="${here}/comments/${c.id}/delete" data-fragment>${csrfField(csrf)}${placeFields(v, place)}<input type="hidden" name="thread" value="${t.root.id}"><button class="link" type="submit" aria-label="Delete comment by ${c.author?.handle ?? "someone"}">Delete</button></form>`
      : "";
  const pending = c.draft ? html` <span class="badge pending">Pending</span>` : "";
  return html`<article class="comment${c.draft ? " draft" : ""}" id="comment-${c.id}"><header><strong>${c.author?.handle ?? "someone"}</strong>${pending} <span class="muted">${at(c.created_at)}${c.edited_at ? " · edited" : ""}</span>${del}</header>
${body}${deleted ? "" : suggestionBox(v, c, csrf, place)}${edit}</article>`;
}

/** Where a line thread is, with a link to it on the files tab, and (conversation) the code it is about. */
function threadHead(v: ChangeView, t: Thread, place: ThreadPlace): Html {
  const c = t.root;
  if (c.path === null) return html``;
  const here = changeHref(v);
  // `file=`: the files tab draws the thread's file in full (a big change's later files are collapsed).
  const file = `file=${seg(c.path)}`;
  const outdated = c.outdated
    ? html` <span class="badge outdated">outdated</span> <a href="${here}/files?ps=${c.patchset}&amp;${file}#t-${c.id}">on patchset ${c.patchset}</a>`
    : html` <span class="muted">patchset ${c.patchset}</span>`;
  const code =
    place === "conversation" && (c.context_text || c.anchor_text)
      ? html`<pre class="thread-code" aria-label="The lines commented on">${c.context_text ? html`<span class="muted">${c.context_text}</span>` : ""}<mark>${c.anchor_text ?? ""}</mark></pre>`
      : "";
  return html`<header class="thread-head"><a class="path" href="${here}/files?${c.outdated ? `ps=${c.patchset}&` : ""}${file}#t-${c.id}">${c.path}</a> <span class="muted">${linesOf(c)} (${c.side})</span>${outdated}</header>${code}`;
}

/** The reply form and the resolve toggle under a thread. */
function threadForms(v: ChangeView, t: Thread, csrf: string | null, place: ThreadPlace): Html {
  const here = changeHref(v);
  // A pending thread is its author's until their review publishes it: edited, not replied to or resolved.
  if (t.root.draft) return html``;
  const reply = v.rights.discuss
    ? html`<details class="reply"><summary class="button">Reply</summary><form class="stack-wide pad" method="post" action="${here}/comments" data-fragment>${csrfField(csrf)}${placeFields(v, place)}<input type="hidden" name="in_reply_to" value="${t.root.id}"><label>Reply<textarea name="body" rows="3" required maxlength="65536"></textarea></label><div><button class="primary" type="submit">Reply</button>${place === "files" ? html` ${draftButton(v)}` : ""}</div></form></details>`
    : "";
  const resolve =
    v.rights.resolve && t.root.path !== null
      ? html`<form class="inline" method="post" action="${here}/comments/${t.root.id}/${t.root.resolved ? "unresolve" : "resolve"}" data-fragment>${csrfField(csrf)}${placeFields(v, place)}<button type="submit">${t.root.resolved ? "Unresolve conversation" : "Resolve conversation"}</button></form>`
      : "";
  return reply || resolve ? html`<div class="thread-forms">${reply}${resolve}</div>` : html``;
}

/** A whole thread; resolved ones collapsed in <details> (open on request, e.g. after resolving). */
export function threadBlock(v: ChangeView, t: Thread, csrf: string | null, place: ThreadPlace): Html {
  const inner = html`${threadHead(v, t, place)}${[t.root, ...t.replies].map((c) => commentItem(v, t, c, csrf, place))}${threadForms(v, t, csrf, place)}`;
  if (t.root.resolved) {
    const who = t.root.author?.handle ?? "someone";
    return html`<details class="thread resolved" id="t-${t.root.id}"><summary>${t.root.path !== null ? html`<span class="path">${t.root.path}</span> ` : ""}<span class="muted">Resolved conversation started by ${who} · ${t.replies.length + 1} ${t.replies.length ? "comments" : "comment"}</span></summary>${inner}</details>`;
  }
  return html`<div class="thread${t.root.outdated ? " outdated" : ""}" id="t-${t.root.id}">${inner}</div>`;
}

/** What a post about a thread answers when the thread is gone (its last comment deleted). */
export function goneThread(id: string): Html {
  return html`<div class="thread gone" id="t-${id}" hidden></div>`;
}

/** The comment form the script clones under a line (its fields are filled by the script). */
export function lineCommentTemplate(v: ChangeView, csrf: string | null): Html {
  if (!v.rights.discuss || v.shown.against !== null) return html``;
  return html`<template id="line-comment-template"><tr class="comment-row"><td colspan="3"><form class="line-comment stack-wide" method="post" action="${changeHref(v)}/comments" data-fragment>${csrfField(csrf)}${placeFields(v, "files")}
<input type="hidden" name="path" value=""><input type="hidden" name="side" value=""><input type="hidden" name="line" value=""><input type="hidden" name="start_line" value=""><input type="hidden" name="patchset" value="${v.shown.patchset}">
<label>Comment on <span data-what></span><textarea name="body" rows="4" required maxlength="65536"></textarea></label>
<div><button class="primary" type="submit">Add comment</button> ${draftButton(v)} <button type="button" data-cancel>Cancel</button></div>
</form></td></tr></template>`;
}

/** The general comment form at the bottom of the conversation. */
export function generalCommentForm(v: ChangeView, csrf: string | null): Html {
  if (!v.rights.discuss) return html``;
  return html`<form class="stack-wide general-comment" method="post" action="${changeHref(v)}/comments" data-fragment data-append="#timeline">${csrfField(csrf)}${placeFields(v, "conversation")}
<label>Add a comment <span class="muted">(Markdown)</span><textarea name="body" rows="4" required maxlength="65536"></textarea></label>
<div><button class="primary" type="submit">Comment</button></div></form>`;
}

/** The batch Apply form (writers), which the suggestion checkboxes of the page join. */
export function batchApplyForm(v: ChangeView, csrf: string | null): Html {
  if (!v.rights.apply || !v.change.head || !v.threads.some((t) => t.root.suggestion?.applicable || t.replies.some((r) => r.suggestion?.applicable)))
    return html``;
  return html`<form id="${BATCH_FORM}" class="batch" method="post" action="${changeHref(v)}/suggestions/apply">${csrfField(csrf)}${placeFields(v, "files")}<input type="hidden" name="head" value="${v.change.head}"><button type="submit">Apply the selected suggestions as one commit</button></form>`;
}

/** `seg` for a thread id in a URL (ids are ours, but an href is escaped all the same). */
export function threadAnchor(id: string): string {
  return `#t-${seg(id)}`;
}
