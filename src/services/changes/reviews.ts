// Reviews of a change (issue 28; DECISIONS §5 "Reviews on changes"): a verdict (approve,
// request_changes, comment) with an optional body and a batch of line comments, posted as one
// transaction that records one change.reviewed event and one thread activity.
import { AppError, Conflict, Invalid, NotFound, Unprocessable } from "../../errors.ts";
import type { Queryable } from "../../db/database.ts";
import type { User } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { personOf } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { queueLanding } from "./land-job.ts";
import { REVIEW_VERDICTS, type Review, type ReviewCreate, type ReviewDismiss, type ReviewList, type ReviewVerdict } from "./schemas.ts";
import * as store from "./store.ts";
import type { ChangeRow } from "./store.ts";
import * as reviewStore from "./store-reviews.ts";
import {
  commentBodies,
  commentParticipants,
  insertPreparedComments,
  mentionsIn,
  prepareComment,
  RENDER_VERSION,
  renderBody,
  rerenderStale,
  type PreparedComment,
} from "./comments.ts";
import { queueReanchor } from "./reanchor.ts";
import * as cstore from "./store-comments.ts";
import type { CommentRow } from "./store-comments.ts";
import type { Comment } from "./comment-schemas.ts";
import type { ReviewRow } from "./store-reviews.ts";

const MAX_BODY = 65_536;
const MAX_DISMISS_MESSAGE = 1000;
/** How many comments one review may carry. */
export const MAX_REVIEW_COMMENTS = 100;

/** Who may review `change`: a person with a role here, or its author, with a credential covering repo:write (access `repo:discuss`). Answers the person. */
export function needDiscussant(t: RepoTarget, change: Pick<ChangeRow, "authorUserId">): User {
  const me = personOf(t.actor);
  need(t, { kind: "repo:discuss", changeAuthor: me !== null && change.authorUserId !== null && change.authorUserId === me.id });
  return me!;
}

async function mustChange(q: Queryable, repoId: string, number: number): Promise<ChangeRow> {
  const row = Number.isInteger(number) && number >= 1 ? await store.changeByNumber(q, repoId, number) : null;
  if (!row) throw NotFound("change not found");
  return row;
}

/** The API shapes of review rows (author handles in one query; bodies of an older renderer rendered again); `comments` by review id. */
export async function reviewBodies(ctx: Ctx, rows: ReviewRow[], comments: Map<string, Comment[]> = new Map()): Promise<Review[]> {
  const [handles, rerendered] = await Promise.all([
    store.handlesOf(
      ctx.db.read,
      rows.map((r) => r.authorUserId).filter((x): x is string => x !== null),
    ),
    rerenderStale(ctx, rows, "review"),
  ]);
  return rows.map((r) => ({
    id: r.id,
    author: r.authorUserId && handles.has(r.authorUserId) ? { user_id: r.authorUserId, handle: handles.get(r.authorUserId)! } : null,
    verdict: r.verdict,
    body: r.body,
    body_html: rerendered.get(r.id) ?? r.bodyHtml,
    patchset: r.patchset,
    head: r.head,
    dismissed: r.dismissed,
    dismissed_reason: r.dismissedReason ?? null,
    created_at: r.createdAt,
    comments: comments.get(r.id) ?? [],
  }));
}

function checkBody(body: string | null | undefined): string | null {
  if (body === undefined || body === null || body.trim() === "") return null;
  if (body.length > MAX_BODY || body.includes("\0")) throw Unprocessable(`body must be at most ${MAX_BODY} characters without NUL`);
  return body;
}

/**
 * POST …/changes/{n}/reviews. 422: a verdict outside the three, approving or requesting changes
 * on one's own change, a `comment` review with neither body nor comments, a bad comment (with its
 * `index`). 409: approve or request_changes on a landed or closed change. A request for changes
 * on a queued change makes the lander look again (it ejects it with verdict `approval` when the
 * target's protection requires approvals).
 */
export async function postReview(ctx: Ctx, t: RepoTarget, number: number, input: ReviewCreate): Promise<Review> {
  need(t, "repo:read");
  const { org, repo } = t;
  const change = await mustChange(ctx.db.read, repo.id, number);
  const person = needDiscussant(t, change);
  if (!REVIEW_VERDICTS.includes(input.verdict as never)) throw Unprocessable(`verdict must be one of ${REVIEW_VERDICTS.join(", ")}`);
  const verdict = input.verdict as ReviewVerdict;
  const body = checkBody(input.body);
  const items = input.comments ?? [];
  if (items.length > MAX_REVIEW_COMMENTS) throw Invalid(`a review carries at most ${MAX_REVIEW_COMMENTS} comments`);
  const own = change.authorUserId === person.id;
  if (own && verdict === "approve") throw Unprocessable("you cannot approve your own change");
  if (own && verdict === "request_changes") throw Unprocessable("you cannot request changes on your own change");
  // The caller's pending comments on the change are published with the review (and count as its comments).
  const drafts = await cstore.draftsOf(ctx.db.read, change.id, person.id);
  const tooMany = (pending: number) => Unprocessable(`a review carries at most ${MAX_REVIEW_COMMENTS} comments: ${items.length} sent and ${pending} pending`);
  if (items.length + drafts.length > MAX_REVIEW_COMMENTS) throw tooMany(drafts.length);
  const emptyComment = () => Unprocessable("a comment review needs a body or comments");
  if (verdict === "comment" && body === null && items.length === 0 && drafts.length === 0) throw emptyComment();
  const judged = verdict !== "comment";
  if (judged && (change.state === "landed" || change.state === "closed"))
    throw Conflict(`change #${number} is ${change.state}; it takes comments, not verdicts`);
  // Every comment is checked and anchored first (git reads, no writes); a bad one refuses the whole review.
  const prepared: PreparedComment[] = [];
  // The body is rendered like a comment's (sanitized, `#N` and `@handle` linked); people it mentions take part.
  const rendered = body === null ? null : await renderBody(ctx, t, change, body, null);
  for (const [index, item] of items.entries()) {
    try {
      prepared.push(await prepareComment(ctx, t, change, item, { inReview: true }));
    } catch (e) {
      if (e instanceof AppError && e.code === "unprocessable") throw new AppError("unprocessable", `comments[${index}]: ${e.message}`, { ...e.extra, index });
      throw e;
    }
  }
  // People the pending comments mention take part once they are published (a draft mentions nobody).
  const draftMentions = new Map<string, { id: string; handle: string }[]>();
  await Promise.all(
    drafts.map(async (d) => {
      if (d.body?.includes("@")) draftMentions.set(d.id, await mentionsIn(ctx, d.body));
    }),
  );

  const row = await ctx.db.transaction(async (tx) => {
    // The change as it is now: the review is on its current patchset.
    const cur = await mustChange(tx, repo.id, number);
    if (judged && (cur.state === "landed" || cur.state === "closed")) throw Conflict(`change #${number} is ${cur.state}; it takes comments, not verdicts`);
    const r: ReviewRow = {
      id: newId(),
      changeId: cur.id,
      repoId: repo.id,
      authorUserId: person.id,
      verdict,
      body,
      bodyHtml: rendered?.html ?? null,
      renderVersion: rendered ? RENDER_VERSION : 0,
      patchset: cur.patchset,
      head: cur.head ?? "",
      dismissed: false,
      dismissedReason: null,
      dismissedByUserId: null,
      dismissedAt: null,
      createdAt: now(),
    };
    await reviewStore.insertReview(tx, r);
    // Drafts as they are now (one written or deleted since the read above counts as it stands here).
    const published = await cstore.publishDrafts(tx, cur.id, person.id, r.id, r.createdAt);
    published.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (items.length + published.length > MAX_REVIEW_COMMENTS) throw tooMany(published.length);
    if (verdict === "comment" && body === null && items.length === 0 && published.length === 0) throw emptyComment();
    // A draft made on an earlier patchset is behind the current one: the re-anchor job maps it (reads map it meanwhile).
    if (published.some((c) => c.path !== null && c.anchoredPatchset < cur.patchset)) await queueReanchor(ctx, tx, cur.id);
    const rows = [...published, ...(await insertPreparedComments(tx, prepared, { reviewId: r.id }))];
    const n = rows.length;
    await ctx.events.record(tx, {
      repoId: repo.id,
      orgId: org.id,
      kind: "change.reviewed",
      payload: { change: cur.number, review: { id: r.id, verdict, author: { user_id: person.id, handle: person.handle }, patchset: r.patchset }, comments: n },
      actorUserId: person.id,
    });
    await ctx.events.emit(tx, {
      kind: "thread.activity",
      repoId: repo.id,
      orgId: org.id,
      subject: { kind: "change", id: cur.id, number: cur.number, title: cur.title },
      activity: "reviewed",
      actorUserId: person.id,
      // The reviewer takes part as `review`; people mentioned in the comments as `mention`.
      participants: [
        { userId: person.id, reason: "review" as const },
        ...commentParticipants(person.id, [
          ...published.map((c) => ({ mentions: draftMentions.get(c.id) ?? [] })),
          ...prepared,
          { mentions: rendered?.mentions ?? [] },
        ]).slice(1),
      ],
      summary: { verdict, comments: n, review_id: r.id, comment_ids: rows.map((c) => c.id), ...(body ? { excerpt: body.slice(0, 200) } : {}) },
    });
    // The lander never waits for approvals: it looks again and ejects the change if it is blocked now.
    if (verdict === "request_changes" && cur.state === "queued") await queueLanding(ctx, tx, repo.id, cur.target);
    return { review: r, comments: rows };
  });
  const comments = await commentBodies(ctx, row.comments, { change, repo });
  return (await reviewBodies(ctx, [row.review], new Map([[row.review.id, comments]])))[0]!;
}

/** GET …/changes/{n}/reviews (repo:read), oldest first. */
export async function listReviews(ctx: Ctx, t: RepoTarget, number: number): Promise<ReviewList> {
  need(t, "repo:read");
  const change = await mustChange(ctx.db.read, t.repo.id, number);
  const reviews = await reviewStore.reviewsOf(ctx.db.read, [change.id]);
  return { reviews: await reviewBodies(ctx, reviews, await commentsByReview(ctx, t, change, reviews)) };
}

/** The comments posted with `reviews`, as the API shows them, by review id (one query, one shaping pass). */
async function commentsByReview(ctx: Ctx, t: RepoTarget, change: ChangeRow, reviews: ReviewRow[]): Promise<Map<string, Comment[]>> {
  const rows: CommentRow[] = await reviewStore.commentsOfReviews(
    ctx.db.read,
    change.id,
    reviews.map((r) => r.id),
  );
  const out = new Map<string, Comment[]>();
  if (!rows.length) return out;
  const bodies = await commentBodies(ctx, rows, { change, repo: t.repo });
  rows.forEach((r, i) => {
    let l = out.get(r.reviewId!);
    if (!l) out.set(r.reviewId!, (l = []));
    l.push(bodies[i]!);
  });
  return out;
}

/**
 * POST …/changes/{n}/reviews/{id}/dismiss (repo:admin): the review stops counting (an approval
 * no longer approves; a request for changes no longer blocks). 422 for a `comment` review (it has
 * no verdict to dismiss); 409 when already dismissed.
 */
export async function dismissReview(ctx: Ctx, t: RepoTarget, number: number, id: string, input: ReviewDismiss): Promise<Review> {
  need(t, "repo:admin");
  const { org, repo, actor } = t;
  const message = input.message?.trim() || null;
  if (message && message.length > MAX_DISMISS_MESSAGE) throw Unprocessable(`message must be at most ${MAX_DISMISS_MESSAGE} characters`);
  const change = await mustChange(ctx.db.read, repo.id, number);
  const review = await reviewStore.reviewById(ctx.db.read, change.id, id);
  if (!review) throw NotFound("review not found");
  if (review.verdict === "comment") throw Unprocessable("a comment review has no verdict to dismiss");
  if (review.dismissed) throw Conflict("the review is already dismissed");
  const by = personOf(actor)?.id ?? null;
  const at = now();
  await ctx.db.transaction(async (tx) => {
    if (!(await reviewStore.dismissReview(tx, review.id, by, at))) throw Conflict("the review is already dismissed");
    await ctx.events.emit(tx, {
      kind: "thread.activity",
      repoId: repo.id,
      orgId: org.id,
      subject: { kind: "change", id: change.id, number: change.number, title: change.title },
      activity: "reviewed",
      actorUserId: by,
      participants: [],
      summary: { dismissed: review.id, verdict: review.verdict, ...(message ? { excerpt: message.slice(0, 200) } : {}) },
      only: review.authorUserId ? [review.authorUserId] : [],
    });
  });
  const dismissed = { ...review, dismissed: true, dismissedReason: "manual" as const, dismissedByUserId: by, dismissedAt: at };
  return (await reviewBodies(ctx, [dismissed], await commentsByReview(ctx, t, change, [dismissed])))[0]!;
}
