// What the issue pages show, read through the issues services the API answers with (so a page
// never shows an issue the API would hide), and the page forms' writes (open, comment, edit,
// label, assign, close, reopen, delete; the labels page). Every write is one call to the API's
// service, which decides again who may.
import { AppError, NotFound } from "../../errors.ts";
import { decide } from "../access/access.ts";
import { factsForPeople } from "../access/lookup.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { may, spelledAs, type RepoTarget } from "../access/target.ts";
import { getChange } from "../changes/changes.ts";
import type { Ctx } from "../context.ts";
import { deleteIssueComment, issueTimeline, patchIssueComment, postIssueComment, type TimelineItem } from "../issues/comments.ts";
import { createIssue, deleteIssue, getIssue, listIssues, openIssueCount, patchIssue } from "../issues/issues.ts";
import { createLabel, deleteLabel, listLabels, patchLabel } from "../issues/labels.ts";
import type { Issue, IssueComment, IssueList, Label } from "../issues/schemas.ts";
import { listMembers } from "../orgs/orgs.ts";
import { getRepo, openRepo, type RepoBody } from "../repos/repos.ts";
import type { WatchLevel } from "../discovery/watching.ts";
import { viewerFacts } from "./chrome.ts";

/** The state tabs of the list page. */
export const ISSUE_STATES = ["open", "closed", "all"] as const;
export type IssueState = (typeof ISSUE_STATES)[number];

/** The list page's orders, each a sort key and a direction of the API's list. */
export const ISSUE_SORTS = {
  newest: { sort: "created", direction: "desc", label: "Newest" },
  oldest: { sort: "created", direction: "asc", label: "Oldest" },
  updated: { sort: "updated", direction: "desc", label: "Recently updated" },
  comments: { sort: "comments", direction: "desc", label: "Most commented" },
} as const;
export type IssueSort = keyof typeof ISSUE_SORTS;

/** Issues shown on one list page. */
export const PAGE_ISSUES = 30;

/** The list page's filters, as read from its query (unknown values fall back to the defaults). */
export interface IssueFilters {
  state: IssueState;
  label: string;
  assignee: string;
  author: string;
  q: string;
  sort: IssueSort;
  cursor: string | undefined;
}

/** Reads the list page's query: every value bounded (the service bounds them again). */
export function filtersOf(get: (name: string) => string | undefined): IssueFilters {
  const pick = (name: string, max: number) => (get(name) ?? "").trim().slice(0, max);
  const state = pick("state", 10);
  const sort = pick("sort", 10);
  return {
    state: (ISSUE_STATES as readonly string[]).includes(state) ? (state as IssueState) : "open",
    label: pick("label", 600),
    assignee: pick("assignee", 40),
    author: pick("author", 40),
    q: pick("q", 200),
    sort: Object.hasOwn(ISSUE_SORTS, sort) ? (sort as IssueSort) : "newest",
    cursor: get("cursor")?.slice(0, 500) || undefined,
  };
}

/** The list page: one filtered page of issues, the counts per state, the labels to filter by. */
export interface IssuesListView {
  repo: RepoBody;
  list: IssueList;
  labels: Label[];
  openIssues: number;
  /** Whether the caller may open an issue (the service decides again on post). */
  canOpen: boolean;
  /** The viewer's watch level (the layout's Watch button; RepoChrome). */
  watching?: WatchLevel | null;
  /** Whether the viewer may ask this mirror to sync (the layout's Sync now). */
  canSync?: boolean;
}

/** The repository of an issue page, resolved once (named as stored in the pages' messages). */
async function target(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<RepoTarget> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  return spelledAs(t, { org: orgName, repo: t.repo.name });
}

export async function issuesListView(ctx: Ctx, actor: Principal, orgName: string, repoName: string, f: IssueFilters): Promise<IssuesListView> {
  const t = await target(ctx, actor, orgName, repoName);
  const order = ISSUE_SORTS[f.sort];
  // Unfiltered, the list's own open count is the nav's: one count query fewer.
  const unfiltered = !f.label && !f.assignee && !f.author && !f.q;
  const [repo, list, labels, counted, viewer] = await Promise.all([
    getRepo(ctx, t),
    listIssues(ctx, t, {
      state: f.state,
      label: f.label || undefined,
      assignee: f.assignee || undefined,
      author: f.author || undefined,
      q: f.q || undefined,
      sort: order.sort,
      direction: order.direction,
      limit: String(PAGE_ISSUES),
      cursor: f.cursor,
    }),
    listLabels(ctx, t),
    unfiltered ? Promise.resolve(null) : openIssueCount(ctx, t),
    viewerFacts(ctx, t),
  ]);
  const openIssues = counted ?? list.counts.open;
  return { repo, list, labels: labels.labels, openIssues, canOpen: may(t, { kind: "issue:discuss" }), ...viewer };
}

/** What the caller may do on an issue page (the services decide again on each post). */
export interface IssueRights {
  /** Comment (`issue:discuss`). */
  discuss: boolean;
  /** Edit the title and body, close and reopen (writers, or the issue's author). */
  edit: boolean;
  /** Labels and assignees (writers). */
  triage: boolean;
  /** Delete the issue and others' comments (repository admins). */
  admin: boolean;
  /** The caller's user id (their own comments may be edited and deleted). */
  me: string | null;
}

/** A person an issue may be assigned to. */
export interface Assignable {
  user_id: string;
  handle: string;
}

/** An issue page: the issue, its timeline, the pickers' choices and the caller's rights. */
export interface IssueView {
  repo: RepoBody;
  issue: Issue;
  timeline: TimelineItem[];
  rights: IssueRights;
  openIssues: number;
  /** Every label of the repository (the label picker; empty unless the caller triages). */
  labels: Label[];
  /** People who may be assigned (the assignee picker; empty unless the caller triages). */
  assignable: Assignable[];
  /** The viewer's watch level (the layout's Watch button; RepoChrome). */
  watching?: WatchLevel | null;
  /** Whether the viewer may ask this mirror to sync (the layout's Sync now). */
  canSync?: boolean;
}

/** Members looked at for the assignee picker (the first ones by handle; current assignees always listed). */
const PICKER_MEMBERS = 100;

/** The people the assignee picker offers: members who can write the repository, and the current assignees. */
async function assignableOf(ctx: Ctx, t: RepoTarget, actor: Principal, current: readonly Assignable[]): Promise<Assignable[]> {
  let members: { user_id: string; handle: string }[] = [];
  try {
    members = (await listMembers(ctx, actor, t.org.name, { limit: PICKER_MEMBERS })).members;
  } catch (e) {
    // A writer through a repository grant may not read the org's members: the picker then lists the assignees and the caller.
    if (!(e instanceof AppError)) throw e;
  }
  const me = personOf(actor);
  const candidates = new Map<string, string>(members.map((m) => [m.user_id, m.handle]));
  if (me) candidates.set(me.id, me.handle);
  const facts = await factsForPeople(ctx, t.org, t.repo, [...candidates.keys()]);
  const out = new Map<string, Assignable>();
  for (const a of current) out.set(a.user_id, a);
  for (const [id, handle] of candidates) {
    const f = facts.get(id);
    // The same decision the service makes on assigning (an assignee can act on the issue).
    if (f && decide(f, { kind: "issue:triage" }).allow) out.set(id, { user_id: id, handle });
  }
  return [...out.values()].sort((a, b) => a.handle.localeCompare(b.handle));
}

/** An issue page; a number that names a change answers `{ change }` (numbers are shared: `#N` names one thing). */
export async function issueView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  number: number,
): Promise<{ kind: "issue"; view: IssueView } | { kind: "change"; number: number }> {
  const t = await target(ctx, actor, orgName, repoName);
  let issue: Issue;
  try {
    issue = await getIssue(ctx, t, number);
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "not_found" || number < 1) throw e;
    const change = await getChange(ctx, t, number).catch(() => null);
    if (!change) throw NotFound("issue not found");
    return { kind: "change", number: change.number };
  }
  const me = personOf(actor);
  const author = me !== null && issue.author?.user_id === me.id;
  const rights: IssueRights = {
    discuss: may(t, { kind: "issue:discuss" }),
    edit: may(t, { kind: "issue:edit", author }),
    triage: may(t, { kind: "issue:triage" }),
    admin: may(t, "repo:admin"),
    me: me?.id ?? null,
  };
  const [repo, timeline, openIssues, labels, assignable, viewer] = await Promise.all([
    getRepo(ctx, t),
    issueTimeline(ctx, t, number),
    openIssueCount(ctx, t),
    rights.triage ? listLabels(ctx, t).then((l) => l.labels) : Promise.resolve([]),
    rights.triage ? assignableOf(ctx, t, actor, issue.assignees) : Promise.resolve([]),
    viewerFacts(ctx, t),
  ]);
  return { kind: "issue", view: { repo, issue, timeline, rights, openIssues, labels, assignable, ...viewer } };
}

/** The new-issue page: the repository, and the labels and people a writer may set at once. */
export async function newIssueView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
): Promise<{
  repo: RepoBody;
  openIssues: number;
  canOpen: boolean;
  labels: Label[];
  assignable: Assignable[];
  watching?: WatchLevel | null;
  canSync?: boolean;
}> {
  const t = await target(ctx, actor, orgName, repoName);
  const triage = may(t, { kind: "issue:triage" });
  const [repo, openIssues, labels, assignable, viewer] = await Promise.all([
    getRepo(ctx, t),
    openIssueCount(ctx, t),
    triage ? listLabels(ctx, t).then((l) => l.labels) : Promise.resolve([]),
    triage ? assignableOf(ctx, t, actor, []) : Promise.resolve([]),
    viewerFacts(ctx, t),
  ]);
  return { repo, openIssues, canOpen: may(t, { kind: "issue:discuss" }), labels, assignable, ...viewer };
}

/** The labels page: every label, the open count for the nav, and whether the caller edits labels. */
export async function labelsView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
): Promise<{ repo: RepoBody; labels: Label[]; openIssues: number; canEdit: boolean; watching?: WatchLevel | null; canSync?: boolean }> {
  const t = await target(ctx, actor, orgName, repoName);
  const [repo, labels, openIssues, viewer] = await Promise.all([getRepo(ctx, t), listLabels(ctx, t), openIssueCount(ctx, t), viewerFacts(ctx, t)]);
  return { repo, labels: labels.labels, openIssues, canEdit: may(t, { kind: "issue:triage" }), ...viewer };
}

/** Whether `number` names an issue the caller may read (a change page's 404 then sends them to it). */
export async function isIssue(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number): Promise<boolean> {
  if (number < 1) return false;
  const t = await target(ctx, actor, orgName, repoName).catch(() => null);
  return (
    t !== null &&
    (await getIssue(ctx, t, number).then(
      () => true,
      () => false,
    ))
  );
}

/** The open count the repository nav shows (null when the caller may not read the repository's issues). */
export async function openIssuesOf(ctx: Ctx, t: RepoTarget): Promise<number | null> {
  return may(t, "repo:read") ? openIssueCount(ctx, t) : null;
}

// ── the forms ───────────────────────────────────────────────────────────────────────────────

/** The new-issue form: the API's create (labels and assignees only when given: readers send neither). */
export async function openIssueFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  form: { title: string; body: string; labels: string[]; assignees: string[] },
): Promise<Issue> {
  return createIssue(ctx, await target(ctx, actor, orgName, repoName), {
    title: form.title,
    body: form.body || null,
    ...(form.labels.length ? { labels: form.labels } : {}),
    ...(form.assignees.length ? { assignees: form.assignees } : {}),
  });
}

/** Title and body, close (with its reason), reopen, the label and assignee sets: the API's PATCH. */
export async function patchIssueFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  number: number,
  patch: Parameters<typeof patchIssue>[3],
): Promise<Issue> {
  return patchIssue(ctx, await target(ctx, actor, orgName, repoName), number, patch);
}

/** The admins' Delete button: the API's DELETE. */
export async function deleteIssueFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number): Promise<void> {
  await deleteIssue(ctx, await target(ctx, actor, orgName, repoName), number);
}

/** The comment box: the API's POST …/comments. */
export async function commentFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, body: string): Promise<IssueComment> {
  return postIssueComment(ctx, await target(ctx, actor, orgName, repoName), number, { body });
}

/** A comment's Edit form: the API's PATCH …/comments/{id}. */
export async function editCommentFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  number: number,
  id: string,
  body: string,
): Promise<IssueComment> {
  return patchIssueComment(ctx, await target(ctx, actor, orgName, repoName), number, id, { body });
}

/** A comment's Delete button: the API's DELETE …/comments/{id}. */
export async function deleteCommentFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, id: string): Promise<void> {
  await deleteIssueComment(ctx, await target(ctx, actor, orgName, repoName), number, id);
}

/** The labels page's new-label form: the API's POST …/labels. */
export async function createLabelFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  form: { name: string; color: string; description: string },
): Promise<Label> {
  return createLabel(ctx, await target(ctx, actor, orgName, repoName), { name: form.name, color: form.color, description: form.description || null });
}

/** A label's edit form: the API's PATCH …/labels/{name}. */
export async function editLabelFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  name: string,
  form: { name: string; color: string; description: string },
): Promise<Label> {
  return patchLabel(ctx, await target(ctx, actor, orgName, repoName), name, {
    name: form.name,
    color: form.color,
    description: form.description || null,
  });
}

/** A label's Delete button: the API's DELETE …/labels/{name}. */
export async function deleteLabelFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, name: string): Promise<void> {
  await deleteLabel(ctx, await target(ctx, actor, orgName, repoName), name);
}
