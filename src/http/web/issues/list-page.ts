// The issues list of a repository (state tabs with counts, filters by label, assignee, author and
// words, orders, cursor paging), the new-issue form, and what the issue pages share: the heading
// with the repository nav, state badges and label chips.
import type { Issue, Label } from "../../../services/issues/schemas.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import { ISSUE_SORTS, ISSUE_STATES, type Assignable, type IssueFilters, type IssueSort, type IssuesListView } from "../../../services/web/issues.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { alertOf, csrfField } from "../kit/sign-in.ts";
import { when } from "../repos/history-page.ts";
import { repoHref } from "../repos/tree-page.ts";
import { repoTop } from "../repos/repo-layout.ts";
import { icon } from "../kit/icons.ts";
import type { Frame } from "../kit/layout.ts";
import type { RepoChrome } from "../../../services/web/views.ts";

/** Which section of the repository nav is current. */
export type IssueSection = "issues" | "labels";

/** The top of the issue pages: the repository layout on its Issues tab, and the issues' own sections (issues, labels). */
export function issuesHeader(frame: Frame, chrome: RepoChrome, section: IssueSection): Html {
  const base = repoHref(chrome.repo);
  const cur = (s: IssueSection) => (s === section ? html` aria-current="page"` : "");
  return html`${repoTop(frame, chrome, "issues")}
<nav class="issue-sections" aria-label="Issue sections"><a href="${base}/issues"${cur("issues")}>${icon("issue")} Issues</a><a href="${base}/labels"${cur("labels")}>${icon("tag")} Labels</a></nav>`;
}

/** An issue's state as a badge (closed issues say why). */
export function issueBadge(i: Issue): Html {
  if (i.state === "open") return html`<span class="badge state-open">open</span>`;
  return html`<span class="badge state-closed${i.close_reason === "not_planned" ? " not-planned" : ""}">${i.close_reason === "not_planned" ? "closed: not planned" : "closed"}</span>`;
}

/**
 * A label's colour as a small image. Why an image: the pages' CSP has no inline styles (style
 * attributes are refused), and `img-src data:` is allowed; the name beside it stays in the
 * page's own colours, so its contrast never depends on the label's colour.
 */
export function swatch(color: string): Html {
  const hex = /^[0-9a-f]{6}$/.test(color) ? color : "888888";
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="12" height="12"><circle cx="6" cy="6" r="5.5" fill="#${hex}"/></svg>`;
  return html`<img class="swatch" src="data:image/svg+xml,${encodeURIComponent(svg)}" alt="" width="12" height="12">`;
}

/** A label as a chip, a link to the open issues carrying it when `base` is given. */
export function labelChip(l: Pick<Label, "name" | "color" | "description">, base: string | null = null): Html {
  const inner = html`${swatch(l.color)}${l.name}`;
  const title = l.description ? html` title="${l.description}"` : "";
  return base ? html`<a class="label" href="${base}/issues?label=${seg(l.name)}"${title}>${inner}</a>` : html`<span class="label"${title}>${inner}</span>`;
}

/** The list page's address with `change` applied to the current filters (the cursor dropped unless given). */
export function listHref(base: string, f: IssueFilters, change: Partial<IssueFilters>): string {
  const v = { ...f, cursor: undefined, ...change };
  const q = new URLSearchParams();
  if (v.state !== "open") q.set("state", v.state);
  for (const k of ["label", "assignee", "author", "q"] as const) if (v[k]) q.set(k, v[k]);
  if (v.sort !== "newest") q.set("sort", v.sort);
  if (v.cursor) q.set("cursor", v.cursor);
  const s = q.toString();
  return `${base}/issues${s ? `?${s}` : ""}`;
}

/** One issue in the list. */
function issueItem(repo: RepoBody, i: Issue): Html {
  const base = repoHref(repo);
  return html`<li class="issue-row"><div><a href="${base}/issues/${i.number}"><strong>${i.title}</strong></a> <span class="muted">#${i.number}</span> ${issueBadge(i)}${i.labels.length ? html` <span class="labels">${i.labels.map((l) => labelChip(l, base))}</span>` : ""}</div>
<div class="muted">${i.author ? html`opened by <a href="/${seg(i.author.handle)}">${i.author.handle}</a> ` : "opened "}<time datetime="${new Date(i.created_at).toISOString()}">${when(i.created_at)}</time>${i.assignees.length ? html` · assigned to ${i.assignees.map((a, n) => html`${n ? ", " : ""}<a href="/${seg(a.handle)}">${a.handle}</a>`)}` : ""}${i.comments ? html` · ${i.comments} ${i.comments === 1 ? "comment" : "comments"}` : ""}</div></li>`;
}

const STATE_WORDS = { open: "Open", closed: "Closed", all: "All" } as const;

/** The list page. */
export function issuesListPage(frame: Frame, v: IssuesListView, f: IssueFilters): Html {
  const base = repoHref(v.repo);
  const counts = { open: v.list.counts.open, closed: v.list.counts.closed, all: v.list.counts.open + v.list.counts.closed };
  const filtered = Boolean(f.label || f.assignee || f.author || f.q);
  const sortOption = (s: IssueSort) => html`<option value="${s}"${s === f.sort ? html` selected` : ""}>${ISSUE_SORTS[s].label}</option>`;
  const labelOption = (l: Label) => html`<option${l.name.toLowerCase() === f.label.toLowerCase() ? html` selected` : ""}>${l.name}</option>`;
  const knownLabel = !f.label || v.labels.some((l) => l.name.toLowerCase() === f.label.toLowerCase());
  return html`${issuesHeader(frame, v, "issues")}
<div class="issues-bar">${v.canOpen ? html`<a class="button" href="${base}/issues/new">New issue</a>` : ""}</div>
<form class="issue-filters" method="get" action="${base}/issues" role="search" aria-label="Filter issues">
<input type="hidden" name="state" value="${f.state}">
<label>Search <input type="search" name="q" value="${f.q}" maxlength="200" placeholder="words in the title or body"></label>
<label>Label <select name="label"><option value="">Any</option>${knownLabel ? "" : html`<option selected>${f.label}</option>`}${v.labels.map(labelOption)}</select></label>
<label>Assignee <input type="text" name="assignee" value="${f.assignee}" maxlength="40" placeholder="handle or none"></label>
<label>Author <input type="text" name="author" value="${f.author}" maxlength="40" placeholder="handle"></label>
<label>Sort <select name="sort">${(Object.keys(ISSUE_SORTS) as IssueSort[]).map(sortOption)}</select></label>
<div class="filter-buttons"><button type="submit">Filter</button>${filtered ? html` <a href="${listHref(base, f, { label: "", assignee: "", author: "", q: "" })}">Clear filters</a>` : ""}</div>
</form>
<nav class="tabs" aria-label="Issue state">${ISSUE_STATES.map(
    (s) =>
      html`<a href="${listHref(base, f, { state: s })}"${s === f.state ? html` aria-current="page"` : ""}>${STATE_WORDS[s]} <span class="tab-count">${counts[s]}</span></a>`,
  )}</nav>
<section class="box" aria-label="${STATE_WORDS[f.state]} issues">${
    v.list.issues.length
      ? html`<ul class="list">${v.list.issues.map((i) => issueItem(v.repo, i))}</ul>`
      : html`<p class="pad muted">${filtered ? "No issues match these filters." : f.state === "all" ? "No issues yet." : `No ${f.state} issues.`}</p>`
  }</section>
${v.list.next_cursor ? html`<nav class="pager" aria-label="Pages"><a href="${listHref(base, f, { cursor: v.list.next_cursor })}">More issues</a></nav>` : ""}`;
}

/** What the new-issue form had when it was refused. */
export interface NewIssueValues {
  title?: string;
  body?: string;
  labels?: string[];
  assignees?: string[];
}

/** Checkboxes inside <details>: a picker that works without a script (`name` repeated per choice). */
export function pickerBoxes(name: string, legend: string, choices: { value: string; label: Html | string }[], checked: ReadonlySet<string>): Html {
  if (!choices.length) return html``;
  return html`<fieldset class="picker"><legend>${legend}</legend><div class="picker-list">${choices.map(
    (c) =>
      html`<label class="check"><input type="checkbox" name="${name}" value="${c.value}"${checked.has(c.value.toLowerCase()) ? html` checked` : ""}> <span>${c.label}</span></label>`,
  )}</div></fieldset>`;
}

/** The new-issue form (labels and assignees for writers). */
export function newIssueForm(
  repo: RepoBody,
  labels: Label[],
  assignable: Assignable[],
  csrf: string | null,
  values: NewIssueValues = {},
  error?: string,
): Html {
  const lower = (xs: string[] | undefined) => new Set((xs ?? []).map((x) => x.toLowerCase()));
  const labelBoxes = pickerBoxes(
    "labels",
    "Labels",
    labels.map((l) => ({ value: l.name, label: labelChip(l) })),
    lower(values.labels),
  );
  const peopleBoxes = pickerBoxes(
    "assignees",
    "Assignees",
    assignable.map((a) => ({ value: a.handle, label: a.handle })),
    lower(values.assignees),
  );
  return html`${alertOf(error)}
<form class="stack-wide issue-form" method="post" action="${repoHref(repo)}/issues">${csrfField(csrf)}
<label>Title <input type="text" name="title" required maxlength="256" value="${values.title ?? ""}"></label>
<label>Description <span class="muted">(Markdown; #N, org/repo#N and @handle become links)</span><textarea name="body" rows="8" maxlength="65536">${values.body ?? ""}</textarea></label>
${labelBoxes || peopleBoxes ? html`<div class="pickers">${labelBoxes}${peopleBoxes}</div>` : ""}
<div><button class="primary" type="submit">Open issue</button></div>
</form>`;
}

/** The new-issue page. */
export function newIssuePage(frame: Frame, chrome: RepoChrome, form: Html): Html {
  return html`${issuesHeader(frame, chrome, "issues")}<h2>New issue</h2>${form}`;
}
