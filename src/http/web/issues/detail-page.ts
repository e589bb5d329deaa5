// One issue: its title (edit form for writers and the author), its description, a timeline of
// comments and events in words ("ada added the bug label", "closed this in #12"), the comment box
// with Close (completed / not planned) and Reopen, and a side column with the assignee and label
// pickers (checkboxes inside <details>, plain forms: no script needed) and the admins' Delete.
import type { IssueComment, IssueEvent } from "../../../services/issues/schemas.ts";
import type { TimelineItem } from "../../../services/issues/comments.ts";
import type { IssueView } from "../../../services/web/issues.ts";
import { html, seg, trusted, type Html } from "../kit/html.ts";
import { alertOf, csrfField } from "../kit/sign-in.ts";
import { when } from "../repos/history-page.ts";
import { repoHref } from "../repos/tree-page.ts";
import { issueBadge, issuesHeader, labelChip, pickerBoxes } from "./list-page.ts";
import type { Frame } from "../kit/layout.ts";

function at(ms: number): Html {
  return html`<time datetime="${new Date(ms).toISOString()}">${when(ms)}</time>`;
}

/** The issue's address. */
export function issueHref(v: IssueView): string {
  return `${repoHref(v.repo)}/issues/${v.issue.number}`;
}

function person(p: { handle: string } | null): Html {
  return p ? html`<a class="who" href="/${seg(p.handle)}">${p.handle}</a>` : html`<span class="who">someone</span>`;
}

const str = (x: unknown): string | null => (typeof x === "string" ? x : null);
const num = (x: unknown): number | null => (typeof x === "number" && Number.isSafeInteger(x) ? x : null);

/** What an event says, in words after its actor. */
function eventWords(v: IssueView, e: IssueEvent): Html {
  const base = repoHref(v.repo);
  const d = e.data;
  const change = num(d.change);
  const commit = str(d.commit);
  const commitLink = (sha: string) => html`<a class="sha" href="${base}/commit/${seg(sha)}">${sha.slice(0, 10)}</a>`;
  switch (e.kind) {
    case "labeled":
    case "unlabeled": {
      const label = labelChip({ name: str(d.label) ?? "?", color: str(d.color) ?? "888888", description: null });
      return e.kind === "labeled" ? html`added the ${label} label` : html`removed the ${label} label`;
    }
    case "assigned":
    case "unassigned": {
      const a = d.assignee as { handle?: unknown } | undefined;
      const handle = str(a?.handle);
      if (handle && e.actor && handle === e.actor.handle) return html`${e.kind === "assigned" ? "self-assigned this" : "removed their assignment"}`;
      const who = handle ? html`<a href="/${seg(handle)}">${handle}</a>` : "someone";
      return e.kind === "assigned" ? html`assigned ${who}` : html`unassigned ${who}`;
    }
    case "closed": {
      const reason = str(d.reason) === "not_planned" ? " as not planned" : " as completed";
      if (change !== null) return html`closed this in <a href="${base}/changes/${change}">#${change}</a>${commit ? html` (${commitLink(commit)})` : ""}`;
      if (commit) return html`closed this in commit ${commitLink(commit)}`;
      return html`closed this${reason}`;
    }
    case "reopened":
      return html`reopened this`;
    case "renamed":
      return html`changed the title from <del>${str(d.from) ?? ""}</del> to <ins>${str(d.to) ?? ""}</ins>`;
    case "edited":
      return html`edited the description`;
    case "referenced": {
      // From another repository (shown only to its readers: services/issues): its links and name.
      const src = d.source as { org?: unknown; repo?: unknown } | undefined;
      const from =
        src && str(src.org) && str(src.repo) ? { href: `/${seg(str(src.org)!)}/${seg(str(src.repo)!)}`, name: `${str(src.org)}/${str(src.repo)}` } : null;
      const at = from ? from.href : base;
      const prefix = from ? from.name : "";
      if (change !== null)
        return html`referenced this in <a href="${at}/changes/${change}">${prefix}#${change}</a>${str(d.title) ? html` ${str(d.title)}` : ""}`;
      if (commit)
        return html`referenced this in ${from ? html`${from.name} ` : ""}commit <a class="sha" href="${at}/commit/${seg(commit)}">${commit.slice(0, 10)}</a>${str(d.message) ? html` <span class="muted">${str(d.message)}</span>` : ""}`;
      return html`referenced this`;
    }
    default:
      return html`${e.kind}`;
  }
}

/** One event row: the actor (or "svc" for what a push did), the words, the time. */
function eventRow(v: IssueView, e: IssueEvent): Html {
  const who = e.actor ? person(e.actor) : html`<span class="who">Someone</span>`;
  return html`<li class="event event-${e.kind}" id="event-${e.id}">${who} ${eventWords(v, e)} ${at(e.created_at)}</li>`;
}

/** A comment: author, time, body (the issues service's sanitized markup); its author edits it, its author or an admin deletes it. */
function commentRow(v: IssueView, c: IssueComment, csrf: string | null): Html {
  const here = issueHref(v);
  const mine = v.rights.me !== null && c.author?.user_id === v.rights.me;
  const by = c.author?.handle ?? "someone";
  const del =
    mine || v.rights.admin
      ? html`<form class="inline" method="post" action="${here}/comments/${seg(c.id)}/delete">${csrfField(csrf)}<button class="link" type="submit" aria-label="Delete comment by ${by}">Delete</button></form>`
      : "";
  const edit = mine
    ? html`<details class="edit-comment"><summary>Edit</summary><form class="stack-wide pad" method="post" action="${here}/comments/${seg(c.id)}/edit">${csrfField(csrf)}<label>Edit comment<textarea name="body" rows="4" required maxlength="65536">${c.body}</textarea></label><div><button class="primary" type="submit">Save</button></div></form></details>`
    : "";
  // Why trusted: body_html is the issues service's output (markdown-it with html off, sanitize-html, then only our reference links added).
  return html`<li class="comment-item"><article class="comment box" id="comment-${c.id}"><header><span>${person(c.author)} commented ${at(c.created_at)}${c.edited_at ? html` <span class="muted">· edited</span>` : ""}</span>${del}</header>
<div class="markdown">${trusted(c.body_html)}</div>${edit}</article></li>`;
}

function timelineRow(v: IssueView, item: TimelineItem, csrf: string | null): Html {
  return item.type === "comment" ? commentRow(v, item.comment, csrf) : eventRow(v, item.event);
}

/** The description box: the body as sanitized markup, its edit form for writers and the author. */
function descriptionBox(v: IssueView, csrf: string | null): Html {
  const i = v.issue;
  const here = issueHref(v);
  const edit = v.rights.edit
    ? html`<details class="edit-comment"><summary>Edit description</summary><form class="stack-wide pad" method="post" action="${here}/edit">${csrfField(csrf)}<input type="hidden" name="title" value="${i.title}"><label>Description<textarea name="body" rows="8" maxlength="65536">${i.body ?? ""}</textarea></label><div><button class="primary" type="submit">Save</button></div></form></details>`
    : "";
  // Why trusted: body_html is the issues service's sanitized output (see commentRow).
  const body = i.body_html ? html`<div class="markdown">${trusted(i.body_html)}</div>` : html`<p class="pad muted">No description.</p>`;
  return html`<article class="comment box description" id="description"><header><span>${person(i.author)} opened this issue ${at(i.created_at)}</span></header>${body}${edit}</article>`;
}

/** The comment box (holding `typed` after a refused comment) with Close (two reasons) and Reopen beside it. */
function commentBox(v: IssueView, csrf: string | null, typed = ""): Html {
  const i = v.issue;
  const here = issueHref(v);
  const comment = v.rights.discuss
    ? html`<form class="stack-wide comment-form" method="post" action="${here}/comments" id="comment-form">${csrfField(csrf)}
<label>Add a comment <span class="muted">(Markdown)</span><textarea name="body" rows="5" required maxlength="65536">${typed}</textarea></label>
<div><button class="primary" type="submit">Comment</button></div></form>`
    : v.rights.me === null
      ? html`<p class="muted"><a href="/login">Sign in</a> to comment.</p>`
      : "";
  let state: Html = html``;
  if (v.rights.edit) {
    state =
      i.state === "open"
        ? html`<form class="state-form" method="post" action="${here}/close">${csrfField(csrf)}<fieldset><legend>Close this issue</legend><label class="radio"><input type="radio" name="reason" value="completed" checked> <span>Completed <span class="muted">done, fixed</span></span></label><label class="radio"><input type="radio" name="reason" value="not_planned"> <span>Not planned <span class="muted">won't fix, duplicate, stale</span></span></label><div><button type="submit">Close issue</button></div></fieldset></form>`
        : html`<form class="state-form" method="post" action="${here}/reopen">${csrfField(csrf)}<button type="submit">Reopen issue</button></form>`;
  }
  return html`<section class="comment-area" aria-label="Comment and state">${comment}${state}</section>`;
}

/** Who and how it was closed, above the timeline. */
function closedNote(v: IssueView): Html {
  const i = v.issue;
  if (i.state !== "closed") return html``;
  const base = repoHref(v.repo);
  const by = i.closed_by;
  const how =
    by?.kind === "change"
      ? html` by <a href="${base}/changes/${by.number}">#${by.number}</a>`
      : by?.kind === "commit"
        ? html` by commit <a class="sha" href="${base}/commit/${seg(by.sha)}">${by.sha.slice(0, 10)}</a>`
        : by?.kind === "person"
          ? html` by <a href="/${seg(by.handle)}">${by.handle}</a>`
          : "";
  return html`<p role="status" class="closed-note"><strong>Closed</strong> ${i.close_reason === "not_planned" ? "as not planned" : "as completed"}${how}${i.closed_at ? html` ${at(i.closed_at)}` : ""}.</p>`;
}

/** The side column: assignees and labels (pickers for writers), the admins' Delete. */
function sideColumn(v: IssueView, csrf: string | null): Html {
  const i = v.issue;
  const here = issueHref(v);
  const base = repoHref(v.repo);
  const assignees = i.assignees.length
    ? html`<ul class="plain">${i.assignees.map((a) => html`<li><a href="/${seg(a.handle)}">${a.handle}</a></li>`)}</ul>`
    : html`<p class="muted">No one assigned</p>`;
  const labels = i.labels.length ? html`<p class="labels">${i.labels.map((l) => labelChip(l, base))}</p>` : html`<p class="muted">None yet</p>`;
  const lower = (xs: string[]) => new Set(xs.map((x) => x.toLowerCase()));
  const assigneePicker = v.rights.triage
    ? html`<details class="picker-menu"><summary class="button">Edit assignees</summary><form method="post" action="${here}/assignees">${csrfField(csrf)}<input type="hidden" name="set" value="1">${
        v.assignable.length
          ? pickerBoxes(
              "assignees",
              "Assign people",
              v.assignable.map((a) => ({ value: a.handle, label: a.handle })),
              lower(i.assignees.map((a) => a.handle)),
            )
          : html`<p class="muted">No one can be assigned.</p>`
      }<div><button class="primary" type="submit">Apply</button></div></form></details>`
    : "";
  const labelPicker = v.rights.triage
    ? html`<details class="picker-menu"><summary class="button">Edit labels</summary><form method="post" action="${here}/labels">${csrfField(csrf)}<input type="hidden" name="set" value="1">${
        v.labels.length
          ? pickerBoxes(
              "labels",
              "Apply labels",
              v.labels.map((l) => ({ value: l.name, label: labelChip(l) })),
              lower(i.labels.map((l) => l.name)),
            )
          : html`<p class="muted">This repository has no labels yet.</p>`
      }<div><button class="primary" type="submit">Apply</button> <a href="${base}/labels">Manage labels</a></div></form></details>`
    : "";
  const del = v.rights.admin
    ? html`<section class="box" aria-labelledby="danger-h"><header><h2 class="inh" id="danger-h">Delete</h2></header><form class="pad" method="post" action="${here}/delete">${csrfField(csrf)}<p class="muted">Deletes the issue, its comments and its timeline. Its number is not given again.</p><button type="submit" class="danger">Delete issue</button></form></section>`
    : "";
  return html`<aside class="issue-side" aria-label="Issue details">
<section class="box" aria-labelledby="assignees-h"><header><h2 class="inh" id="assignees-h">Assignees</h2></header><div class="pad">${assignees}${assigneePicker}</div></section>
<section class="box" aria-labelledby="labels-h"><header><h2 class="inh" id="labels-h">Labels</h2></header><div class="pad">${labels}${labelPicker}</div></section>
${del}</aside>`;
}

/** The whole issue page; `refusal` is shown above the forms after a refused post (`typed`: the refused comment). */
export function issuePage(v: IssueView, frame: Frame, refusal?: string, typed?: string): Html {
  const csrf = frame.csrf;
  const i = v.issue;
  const here = issueHref(v);
  const edit = v.rights.edit
    ? html`<details class="edit-title"><summary class="button">Edit title</summary><form class="title-form" method="post" action="${here}/edit">${csrfField(csrf)}<label for="title-in" class="sr">Title</label><input id="title-in" type="text" name="title" required maxlength="256" value="${i.title}"><button class="primary" type="submit">Save</button></form></details>`
    : "";
  return html`${issuesHeader(frame, v, "issues")}
<div class="change-head"><h2 class="change-title">${i.title} <span class="muted">#${i.number}</span> ${issueBadge(i)}</h2>${edit}</div>
<p class="muted">${i.author ? html`${person(i.author)} opened this issue` : "Opened"} ${at(i.created_at)} · ${i.comments} ${i.comments === 1 ? "comment" : "comments"}</p>
${alertOf(refusal)}
<div class="review issue-layout"><div class="issue-main">
${closedNote(v)}
${descriptionBox(v, csrf)}
<ol class="timeline" id="timeline" aria-label="Timeline">${v.timeline.map((item) => timelineRow(v, item, csrf))}</ol>
${commentBox(v, csrf, typed)}
</div>
${sideColumn(v, csrf)}</div>`;
}
