// What the change pages show, read through the changes services the API answers with (so a page
// never shows a change the API would hide), and the page forms' writes (open, land).
import { Conflict, Unprocessable } from "../../errors.ts";
import type { Principal } from "../access/principal.ts";
import type { RepoTarget } from "../access/target.ts";
import { decide } from "../access/access.ts";
import { personOf } from "../access/principal.ts";
import { deleteComment, listComments, patchComment, postComment, renderBody } from "../changes/comments.ts";
import type { Comment, CommentCreate, CommentPatch } from "../changes/comment-schemas.ts";
import { createChange, getChange, landChange, landingNeeds, listChanges, patchChange, startChangeRuns, type LandingNeeds } from "../changes/changes.ts";
import { changeDiff } from "../changes/diff.ts";
import { listPatchsets, patchsetDiff } from "../changes/patchsets.ts";
import { targetQueue } from "../changes/queue.ts";
import { removeReviewer, requestReviewers } from "../changes/reviewers.ts";
import { applySuggestions } from "../changes/suggestions.ts";
import { dismissReview, listReviews, postReview } from "../changes/reviews.ts";
import type { Change, ChangeList, Diff, Patchset, Review, ReviewCreate } from "../changes/schemas.ts";
import type { Ctx } from "../context.ts";
import { listRefs } from "../repos/refs.ts";
import { getRepo, openRepo, type RepoBody } from "../repos/repos.ts";
import { openIssuesOf } from "./issues.ts";
import type { WatchLevel } from "../discovery/watching.ts";
import { viewerFacts } from "./chrome.ts";

/** The filters of the list page, as the API's `state` values (null: every state). */
export const CHANGE_FILTERS = ["open", "queued", "landed", "ejected", "closed", "all"] as const;
export type ChangeFilter = (typeof CHANGE_FILTERS)[number];

/** Changes shown on one list page. */
export const PAGE_CHANGES = 50;

/** The list page: one filter's changes, newest first, and the branches a new change could come from. */
export async function changesListView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  filter: ChangeFilter,
  cursor: string | undefined,
): Promise<{ repo: RepoBody; list: ChangeList; branches: string[]; openIssues: number | null; watching?: WatchLevel | null; canSync?: boolean }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const [repo, openIssues, viewer] = await Promise.all([getRepo(ctx, t), openIssuesOf(ctx, t), viewerFacts(ctx, t)]);
  const list = await listChanges(ctx, t, { state: filter === "all" ? undefined : filter, limit: String(PAGE_CHANGES), cursor });
  const branches = repo.viewer_write ? (await listRefs(ctx, t)).refs.filter((r) => r.name.startsWith("refs/heads/")).map((r) => r.name.slice(11)) : [];
  return { repo, list, branches, openIssues, ...viewer };
}

/** Which diff the change page shows: the current patchset's, another one's, or between two. */
export interface DiffChoice {
  patchset: number | null;
  against: number | null;
}

/** Which tab of a change page: the conversation (description, timeline, boxes) or the files (the diff). */
export type ChangeTab = "conversation" | "files" | "thread";

/** A line asked to comment on (`?comment=path:side:line` or `path:side:start-line`). */
export interface CommentAt {
  path: string;
  side: "old" | "new";
  line: number;
  startLine: number | null;
}

/** Reads `?comment=` (path first, so a path holding `:` still parses); null when malformed. */
export function parseCommentAt(raw: string | undefined): CommentAt | null {
  if (!raw || raw.length > 4200) return null;
  const m = /^(.+):(old|new):(?:([1-9][0-9]{0,8})-)?([1-9][0-9]{0,8})$/.exec(raw);
  if (!m) return null;
  const line = Number(m[4]);
  const startLine = m[3] ? Number(m[3]) : null;
  if (startLine !== null && startLine >= line) return { path: m[1]!, side: m[2] as "old" | "new", line, startLine: null };
  return { path: m[1]!, side: m[2] as "old" | "new", line, startLine };
}

/** The `?comment=` value of a line (the inverse of parseCommentAt). */
export function commentAtParam(c: CommentAt): string {
  return `${c.path}:${c.side}:${c.startLine !== null ? `${c.startLine}-` : ""}${c.line}`;
}

/** A thread: its root comment and its replies, oldest first. */
export interface Thread {
  root: Comment;
  replies: Comment[];
}

/** Comments read for one page at most (pages of 100; a busier change shows the first ones). */
export const PAGE_COMMENTS = 2000;

/** What the caller may do with comments on this change (the services decide again on each post). */
export interface CommentRights {
  /** Comment, reply and review (`repo:discuss`). */
  discuss: boolean;
  /** Resolve and reopen threads (writers or the change's author). */
  resolve: boolean;
  /** Delete other people's comments (repo admins). */
  deleteAny: boolean;
  /** Apply suggestions (writers of the repository holding the branch). */
  apply: boolean;
  /** The caller's user id (their own comments may be edited and deleted). */
  me: string | null;
}

/** One row of the conversation tab's timeline, oldest first. */
export type TimelineItem =
  | { kind: "opened"; at: number; author: string | null }
  | { kind: "patchset"; at: number; patchset: number; head: string }
  | { kind: "landed"; at: number; commit: string | null; includedIn: number | null }
  | { kind: "ejected"; at: number; message: string | null }
  | { kind: "closed"; at: number }
  | { kind: "review"; at: number; review: Review }
  | { kind: "thread"; at: number; thread: Thread };

/** A change page: the change, its patchsets, the chosen diff, its stack and its target's queue. */
export interface ChangeView {
  repo: RepoBody;
  change: Change;
  /** Whether the caller may edit the title and close or reopen (a writer or the change's author). */
  canEdit: boolean;
  /** Whether the caller may comment (`repo:discuss`; the service decides again on post). */
  canComment: boolean;
  rights: CommentRights;
  /** Every thread of the change (published, and the caller's own drafts), oldest first. */
  threads: Thread[];
  /** How many pending (draft) comments the caller holds on the change (their next review publishes them). */
  pending: number;
  tab: ChangeTab;
  patchsets: Patchset[];
  shown: { patchset: number; against: number | null };
  /** The diff (files tab only; null on the conversation tab or without commits). */
  diff: Diff | null;
  timeline: TimelineItem[];
  /** Whether the caller is the change's author (who may not approve or request changes on it). */
  isAuthor: boolean;
  /** Changes beneath (bottom first), then this one, then those stacked on it. */
  stack: { below: Change[]; above: Change[] };
  queue: Change[];
  /** What landing needs (approvals, required checks), as the land request judges it; null on a landed or closed change and off the conversation tab. */
  needs: LandingNeeds | null;
  /** Open issues (the nav's Issues count). */
  openIssues: number | null;
  /** The viewer's watch level (the layout's Watch button; RepoChrome). */
  watching?: WatchLevel | null;
  /** Whether the viewer may ask this mirror to sync (the layout's Sync now). */
  canSync?: boolean;
  /**
   * The description as sanitized markup with `#N` (an issue or a change), `org/repo#N` and
   * `@handle` linked like a comment's (conversation tab only; null without a description).
   */
  descriptionHtml: string | null;
}

/** How deep a stack is followed for the page (the service caps stacks at 50). */
const STACK_SHOWN = 50;

export async function changeView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  number: number,
  tab: ChangeTab,
  choice: DiffChoice = { patchset: null, against: null },
): Promise<ChangeView> {
  // One resolution for the whole page (plan §4): every read below decides on the same target.
  const t = await openRepo(ctx, actor, orgName, repoName);
  const repo = await getRepo(ctx, t);
  const change = await getChange(ctx, t, number);
  const me = personOf(actor);
  const canEdit = repo.viewer_write || (me !== null && change.author?.user_id === me.id);
  const { patchsets } = await listPatchsets(ctx, t, number);
  const wanted = choice.patchset !== null && patchsets.some((p) => p.patchset === choice.patchset) ? choice.patchset : change.patchset;
  const against = choice.against !== null && choice.against !== wanted && patchsets.some((p) => p.patchset === choice.against) ? choice.against : null;
  let diff: Diff | null = null;
  // The conversation tab never computes the diff (plan §5): it is the files tab's.
  if (tab === "files" && change.head && change.base) {
    diff = wanted === change.patchset && against === null ? await changeDiff(ctx, t, number) : await patchsetDiff(ctx, t, number, wanted, against);
  }
  const below: Change[] = [];
  for (let n = tab === "thread" ? null : change.depends_on; n !== null && below.length < STACK_SHOWN; ) {
    const c = await getChange(ctx, t, n).catch(() => null);
    if (!c) break;
    below.unshift(c);
    n = c.state === "landed" ? null : c.depends_on;
  }
  const above = tab === "thread" ? [] : await dependents(ctx, t, change.number);
  const queue = change.state === "queued" ? await targetQueue(ctx, t, change.target) : [];
  const isAuthor = me !== null && change.author?.user_id === me.id;
  const canComment = decide(t.facts, { kind: "repo:discuss", changeAuthor: isAuthor }).allow;
  const rights: CommentRights = {
    discuss: canComment,
    resolve: canComment && decide(t.facts, { kind: "thread:resolve", changeAuthor: isAuthor }).allow,
    deleteAny: canComment && decide(t.facts, { kind: "comment:delete", author: false }).allow,
    apply: canComment && !change.source && repo.viewer_write,
    me: me?.id ?? null,
  };
  const comments = await allComments(ctx, t, number);
  const threads = threadsOf(comments);
  // Reviews are the conversation's (the files tab shows the review form, not the history).
  // ("thread": one thread re-drawn after a post, neither diff nor reviews.)
  const reviews = tab === "conversation" ? (await listReviews(ctx, t, number)).reviews : [];
  const needs = tab === "conversation" && change.state !== "landed" && change.state !== "closed" ? await landingNeeds(ctx, t, number) : null;
  return {
    repo,
    change,
    canEdit,
    canComment,
    rights,
    threads,
    // Only the caller's own drafts are ever listed to them.
    pending: comments.filter((c) => c.draft).length,
    tab,
    patchsets,
    shown: { patchset: wanted, against },
    diff,
    timeline: timelineOf(change, patchsets, reviews, threads),
    isAuthor,
    stack: { below, above },
    queue,
    needs,
    openIssues: tab === "thread" ? null : await openIssuesOf(ctx, t),
    ...(tab === "thread" ? {} : await viewerFacts(ctx, t)),
    // Relative links resolve against the target branch (a description outlives its head), as a URL's segments.
    descriptionHtml:
      tab === "conversation" && change.description
        ? (
            await renderBody(
              ctx,
              t,
              { repoId: t.repo.id, head: null, target: change.target.split("/").map(encodeURIComponent).join("/") },
              change.description,
              null,
            )
          ).html
        : null,
  };
}

/** The timeline's rows a change and its patchsets tell: opened, each later patchset, how it ended. */
function timelineOf(change: Change, patchsets: Patchset[], reviews: Review[], threads: Thread[]): TimelineItem[] {
  const items: TimelineItem[] = [{ kind: "opened", at: change.created_at, author: change.author?.handle ?? null }];
  // A review's own comments show under the review; every other thread on its own row.
  for (const thread of threads) if (thread.root.review_id === null) items.push({ kind: "thread", at: thread.root.created_at, thread });
  for (const review of reviews) items.push({ kind: "review", at: review.created_at, review });
  for (const p of patchsets) if (p.patchset > 1) items.push({ kind: "patchset", at: p.created_at, patchset: p.patchset, head: p.head });
  // The change keeps no time of its ending but its last update, which that ending was.
  if (change.state === "landed") items.push({ kind: "landed", at: change.updated_at, commit: change.landed_commit, includedIn: change.included_in });
  else if (change.state === "ejected") items.push({ kind: "ejected", at: change.updated_at, message: change.verdict?.message ?? null });
  else if (change.state === "closed") items.push({ kind: "closed", at: change.updated_at });
  return items.sort((a, b) => a.at - b.at);
}

/** Live changes stacked directly or transitively on `number` (looked for among the newest live changes). */
async function dependents(ctx: Ctx, t: RepoTarget, number: number): Promise<Change[]> {
  const live: Change[] = [];
  for (const state of ["open", "queued", "ejected"] as const) live.push(...(await listChanges(ctx, t, { state, limit: "100" })).changes);
  const out: Change[] = [];
  const tops = new Set([number]);
  for (let grew = true; grew && out.length < STACK_SHOWN; ) {
    grew = false;
    for (const c of live) {
      if (c.depends_on !== null && tops.has(c.depends_on) && !tops.has(c.number)) {
        tops.add(c.number);
        out.push(c);
        grew = true;
      }
    }
  }
  return out;
}

/**
 * The land button: the API's land request (repo:write; 409 for a landed or closed change). The
 * form carries the head the page showed; when the branch moved since, nothing is queued (409):
 * the person landing should see what they land.
 */
export async function landFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, shownHead: string | null): Promise<Change> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  if (shownHead) {
    const now = await getChange(ctx, t, number);
    if (now.head !== shownHead) throw Conflict(`change #${number} moved to patchset ${now.patchset} since this page was loaded; review it and land again`);
  }
  return landChange(ctx, t, number);
}

/** The "Run checks" button of a change from a fork: the API's POST …/changes/{number}/runs (writers). */
export async function startRunsFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number): Promise<Change> {
  return startChangeRuns(ctx, await openRepo(ctx, actor, orgName, repoName), number);
}

/** The title form: the API's PATCH (writers or the change's author, `change:edit`). */
export async function editChangeFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, title: string): Promise<Change> {
  return patchChange(ctx, await openRepo(ctx, actor, orgName, repoName), number, { title });
}

/** The close and reopen buttons: the API's PATCH of `state`. */
export async function setChangeStateFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  number: number,
  state: "open" | "closed",
): Promise<Change> {
  return patchChange(ctx, await openRepo(ctx, actor, orgName, repoName), number, { state });
}

/** Every comment of the change the caller may see, oldest first (at most PAGE_COMMENTS). */
async function allComments(ctx: Ctx, t: RepoTarget, number: number): Promise<Comment[]> {
  const out: Comment[] = [];
  let cursor: string | undefined;
  do {
    const page = await listComments(ctx, t, number, { limit: "100", cursor });
    out.push(...page.comments);
    cursor = page.next_cursor ?? undefined;
  } while (cursor && out.length < PAGE_COMMENTS);
  return out;
}

/** Comments grouped into threads (a reply whose root is not among them is shown as a root). */
export function threadsOf(comments: Comment[]): Thread[] {
  const byRoot = new Map<string, Thread>();
  for (const c of comments) if (c.thread_id === c.id) byRoot.set(c.id, { root: c, replies: [] });
  for (const c of comments) {
    if (c.thread_id === c.id) continue;
    const t = byRoot.get(c.thread_id);
    if (t) t.replies.push(c);
    else byRoot.set(c.id, { root: c, replies: [] });
  }
  return [...byRoot.values()].sort((a, b) => a.root.created_at - b.root.created_at);
}

/** The thread holding comment `id` after a post (the fragment the script swaps in); null when it is gone. */
export async function threadView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  number: number,
  id: string,
): Promise<ChangeView & { thread: Thread | null }> {
  const v = await changeView(ctx, actor, orgName, repoName, number, "thread");
  const thread = v.threads.find((t) => t.root.id === id || t.replies.some((r) => r.id === id)) ?? null;
  return { ...v, thread };
}

/** The comment forms: the API's POST …/comments (general, line, or a reply with `in_reply_to`). */
export async function commentFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, input: CommentCreate): Promise<Comment> {
  return postComment(ctx, await openRepo(ctx, actor, orgName, repoName), number, input);
}

/** Edit (body), resolve or reopen: the API's PATCH …/comments/{id}. */
export async function patchCommentFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, id: string, input: CommentPatch) {
  return patchComment(ctx, await openRepo(ctx, actor, orgName, repoName), number, id, input);
}

/** Delete: the API's DELETE …/comments/{id}. */
export async function deleteCommentFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, id: string): Promise<void> {
  await deleteComment(ctx, await openRepo(ctx, actor, orgName, repoName), number, id);
}

/** Apply (one) and the batch form: the API's POST …/suggestions/apply with the head the page showed. */
export async function applyFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, ids: string[], head: string) {
  if (!ids.length) throw Unprocessable("choose at least one suggestion to apply");
  return applySuggestions(ctx, await openRepo(ctx, actor, orgName, repoName), number, {
    comment_ids: ids,
    head: /^[0-9a-f]{40}$/.test(head) ? head : undefined,
  });
}

/** The review form: the API's POST …/reviews (a verdict and a body; the comments service decides who may). */
export async function reviewFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  number: number,
  form: { verdict: string; body: string },
): Promise<Review> {
  return postReview(ctx, await openRepo(ctx, actor, orgName, repoName), number, { verdict: form.verdict as ReviewCreate["verdict"], body: form.body || null });
}

/** The reviewers form: the API's POST …/reviewers (handles separated by spaces or commas). */
export async function requestReviewersFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, handles: string[]) {
  if (!handles.length) throw Unprocessable("name at least one person to ask");
  return requestReviewers(ctx, await openRepo(ctx, actor, orgName, repoName), number, { handles });
}

/** A reviewer's Remove button: the API's DELETE …/reviewers/{handle}. */
export async function removeReviewerFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, handle: string): Promise<void> {
  await removeReviewer(ctx, await openRepo(ctx, actor, orgName, repoName), number, handle);
}

/** An admin's Dismiss button: the API's POST …/reviews/{id}/dismiss. */
export async function dismissReviewFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number, id: string, message: string) {
  return dismissReview(ctx, await openRepo(ctx, actor, orgName, repoName), number, id, { message: message || null });
}

/** The "open a change" form: the API's create (a branch of this repository; repo:write). */
export async function openChangeFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  form: { title: string; branch: string; target: string; description: string },
): Promise<Change> {
  return createChange(ctx, await openRepo(ctx, actor, orgName, repoName), {
    title: form.title,
    branch: form.branch,
    target: form.target || undefined,
    description: form.description || null,
  });
}
