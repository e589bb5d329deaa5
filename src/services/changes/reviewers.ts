// Reviewers of a change (issue 28): the people asked to review it (POST/DELETE …/reviewers) and
// everyone who reviewed, each with a state derived from their reviews.
import { NotFound, Unprocessable } from "../../errors.ts";
import type { Queryable } from "../../db/database.ts";
import { decide, deferredFacts } from "../access/access.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { personOf } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import type { Reviewer, ReviewerList, ReviewersRequest } from "./schemas.ts";
import * as store from "./store.ts";
import type { ChangeRow } from "./store.ts";
import * as reviewStore from "./store-reviews.ts";
import type { ReviewerRow, ReviewRow } from "./store-reviews.ts";

/** How many people may be asked to review one change. */
export const MAX_REVIEWERS = 20;

/**
 * A person's standing on a change: their latest non-dismissed approve or request_changes review
 * (a later `comment` review keeps it). It ends by their own new verdict or an admin's dismissal;
 * approvals also end by a push when the target's protection dismisses stale approvals.
 */
export function standings(reviews: readonly ReviewRow[]): Map<string, ReviewRow> {
  const out = new Map<string, ReviewRow>();
  for (const r of reviews) {
    if (r.dismissed || r.verdict === "comment" || !r.authorUserId) continue;
    out.set(r.authorUserId, r);
  }
  return out;
}

/** Reviewer states from a change's reviews (oldest first) and requests, in order of first appearance; the author is never listed. */
function reviewerStates(change: ChangeRow, reviews: readonly ReviewRow[], requested: readonly ReviewerRow[], handles: Map<string, string>): Reviewer[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const add = (id: string | null) => {
    if (id && id !== change.authorUserId && !seen.has(id) && handles.has(id)) {
      seen.add(id);
      order.push(id);
    }
  };
  // Requested together (one request, one millisecond) = alphabetical, so the list reads the same every time.
  const byRequest = [...requested].sort((a, b) => a.requestedAt - b.requestedAt || (handles.get(a.userId) ?? "").localeCompare(handles.get(b.userId) ?? ""));
  for (const r of byRequest) add(r.userId);
  for (const r of reviews) add(r.authorUserId);
  const asked = new Set(requested.map((r) => r.userId));
  const reviewed = new Set(reviews.map((r) => r.authorUserId));
  const standing = standings(reviews);
  return order.map((id) => {
    const s = standing.get(id)?.verdict;
    const state = s === "approve" ? "approved" : s === "request_changes" ? "changes_requested" : reviewed.has(id) ? "commented" : "requested";
    return { user_id: id, handle: handles.get(id)!, state, requested: asked.has(id) };
  });
}

/** The reviewers of a page of changes (one query for reviews, one for requests, one for handles). */
export async function reviewersOfChanges(q: Queryable, rows: readonly ChangeRow[]): Promise<Map<string, Reviewer[]>> {
  const ids = rows.map((r) => r.id);
  const [reviews, requested] = await Promise.all([reviewStore.reviewsOf(q, ids), reviewStore.reviewersOf(q, ids)]);
  const handles = await store.handlesOf(q, [...reviews.map((r) => r.authorUserId).filter((x): x is string => x !== null), ...requested.map((r) => r.userId)]);
  const byChange = <T extends { changeId: string }>(list: T[]) => {
    const m = new Map<string, T[]>();
    for (const x of list) {
      let l = m.get(x.changeId);
      if (!l) m.set(x.changeId, (l = []));
      l.push(x);
    }
    return m;
  };
  const reviewsBy = byChange(reviews);
  const requestedBy = byChange(requested);
  return new Map(rows.map((c) => [c.id, reviewerStates(c, reviewsBy.get(c.id) ?? [], requestedBy.get(c.id) ?? [], handles)]));
}

async function mustChange(q: Queryable, repoId: string, number: number): Promise<ChangeRow> {
  const row = Number.isInteger(number) && number >= 1 ? await store.changeByNumber(q, repoId, number) : null;
  if (!row) throw NotFound("change not found");
  return row;
}

/** Refuses a change's reviewers being edited by anyone but writers and its author. */
function needEditor(t: RepoTarget, change: ChangeRow): void {
  const author = change.authorUserId !== null && change.authorUserId === personOf(t.actor)?.id;
  need(t, { kind: "change:edit", author });
}

/** GET …/changes/{n}/reviewers (repo:read). */
export async function listReviewers(ctx: Ctx, t: RepoTarget, number: number): Promise<ReviewerList> {
  need(t, "repo:read");
  const change = await mustChange(ctx.db.read, t.repo.id, number);
  return { reviewers: (await reviewersOfChanges(ctx.db.read, [change])).get(change.id) ?? [] };
}

/**
 * POST …/changes/{n}/reviewers `{ handles }`: writers or the change's author ask people who can
 * review on the repository (a role in its org). 422 for an unknown handle and for one who cannot, with the same
 * message (a request is no probe of who can see a private repository), for the author, and when
 * more than 20 people would be asked. People already asked stay asked (no second notification).
 */
export async function requestReviewers(ctx: Ctx, t: RepoTarget, number: number, body: ReviewersRequest): Promise<ReviewerList> {
  need(t, "repo:read");
  const { org, repo, actor } = t;
  const change = await mustChange(ctx.db.read, repo.id, number);
  needEditor(t, change);
  const handles = [...new Map(body.handles.map((h) => [h.toLowerCase(), h])).values()];
  if (!handles.length || handles.length > MAX_REVIEWERS) throw Unprocessable(`handles must name 1-${MAX_REVIEWERS} people`);
  const found = new Map((await reviewStore.usersByHandles(ctx.db.read, handles)).map((u) => [u.handle.toLowerCase(), u]));
  const people: { id: string; handle: string }[] = [];
  for (const h of handles) {
    const u = found.get(h.toLowerCase());
    const unknown = () => Unprocessable(`@${h} is not a person who can review on ${t.named.org}/${t.named.repo}`);
    if (!u) throw unknown();
    if (u.id === change.authorUserId) throw Unprocessable(`@${u.handle} wrote change #${number}; the author cannot review it`);
    // Why decided now and per person: whoever is asked gets a notification naming the change, and
    // must be able to review it (repo:discuss: a role here; on a public repository reading is not enough).
    if (!decide(await deferredFacts(ctx, u.id, org, repo), { kind: "repo:discuss" }).allow) throw unknown();
    people.push(u);
  }
  const requester = personOf(actor)?.id ?? null;
  await ctx.db.transaction(async (tx) => {
    const cur = await mustChange(tx, repo.id, number);
    const already = new Set((await reviewStore.reviewersOf(tx, [cur.id])).map((r) => r.userId));
    const fresh = people.filter((p) => !already.has(p.id));
    if (already.size + fresh.length > MAX_REVIEWERS)
      throw Unprocessable(`a change may have at most ${MAX_REVIEWERS} requested reviewers (it has ${already.size})`);
    const t0 = now();
    const added = await reviewStore.insertReviewers(
      tx,
      fresh.map((p) => ({ changeId: cur.id, userId: p.id, requestedByUserId: requester, requestedAt: t0 })),
    );
    if (!added.length) return;
    await ctx.events.emit(tx, {
      kind: "thread.activity",
      repoId: repo.id,
      orgId: org.id,
      subject: { kind: "change", id: cur.id, number: cur.number, title: cur.title },
      activity: "review_requested",
      actorUserId: requester,
      participants: added.map((userId) => ({ userId, reason: "review_requested" as const })),
      summary: { reviewers: fresh.filter((p) => added.includes(p.id)).map((p) => p.handle) },
      only: added,
    });
  });
  return listReviewers(ctx, t, number);
}

/** DELETE …/changes/{n}/reviewers/{handle}: writers or the author; 404 when that person was not asked. Their reviews stay. */
export async function removeReviewer(ctx: Ctx, t: RepoTarget, number: number, handle: string): Promise<void> {
  need(t, "repo:read");
  const change = await mustChange(ctx.db.read, t.repo.id, number);
  needEditor(t, change);
  const u = (await reviewStore.usersByHandles(ctx.db.read, [handle]))[0];
  const gone = u ? await ctx.db.transaction((tx) => reviewStore.deleteReviewer(tx, change.id, u.id)) : false;
  if (!gone) throw NotFound(`@${handle} was not asked to review change #${number}`);
}
