// Queries of reviews and requested reviewers (issue 28): the rows behind a change's verdicts and
// the people asked to review it.
import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { changeReviewers, changeReviews } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type ReviewRow = typeof changeReviews.$inferSelect;
export type ReviewerRow = typeof changeReviewers.$inferSelect;

/** Inserts a review. */
export async function insertReview(tx: Tx, row: ReviewRow): Promise<void> {
  const { changeReviews } = tables(tx);
  await tx.insert(changeReviews).values(row);
}

/** One review of a change by id, or null. */
export async function reviewById(q: Queryable, changeId: string, id: string): Promise<ReviewRow | null> {
  const { changeReviews } = tables(q);
  return (
    one(
      await q
        .select()
        .from(changeReviews)
        .where(and(eq(changeReviews.changeId, changeId), eq(changeReviews.id, id)))
        .limit(1),
    ) ?? null
  );
}

/**
 * The reviews of changes, oldest first (one query for a page of changes). A change's reviews are
 * bounded by the people who can review it times their reviews; the API lists them all.
 */
export async function reviewsOf(q: Queryable, changeIds: string[]): Promise<ReviewRow[]> {
  const { changeReviews } = tables(q);
  if (!changeIds.length) return [];
  return await q
    .select()
    .from(changeReviews)
    .where(inArray(changeReviews.changeId, [...new Set(changeIds)]))
    .orderBy(asc(changeReviews.createdAt), asc(changeReviews.id));
}

/** Marks one review dismissed (manual); false when it already was. */
export async function dismissReview(tx: Tx, id: string, byUserId: string | null, at: number): Promise<boolean> {
  const { changeReviews } = tables(tx);
  const rows = await tx
    .update(changeReviews)
    .set({ dismissed: true, dismissedReason: "manual", dismissedByUserId: byUserId, dismissedAt: at })
    .where(and(eq(changeReviews.id, id), eq(changeReviews.dismissed, false)))
    .returning({ id: changeReviews.id });
  return rows.length > 0;
}

/** Dismisses a change's approvals of patchsets before `patchset` (a push made them stale); idempotent. */
export async function dismissStaleApprovals(tx: Tx, changeId: string, patchset: number, at: number): Promise<void> {
  const { changeReviews } = tables(tx);
  await tx
    .update(changeReviews)
    .set({ dismissed: true, dismissedReason: "stale", dismissedAt: at })
    .where(
      and(eq(changeReviews.changeId, changeId), eq(changeReviews.verdict, "approve"), eq(changeReviews.dismissed, false), lt(changeReviews.patchset, patchset)),
    );
}

/** The people asked to review changes (one query for a page of changes), oldest request first. */
export async function reviewersOf(q: Queryable, changeIds: string[]): Promise<ReviewerRow[]> {
  const { changeReviewers } = tables(q);
  if (!changeIds.length) return [];
  return await q
    .select()
    .from(changeReviewers)
    .where(inArray(changeReviewers.changeId, [...new Set(changeIds)]))
    .orderBy(asc(changeReviewers.requestedAt), asc(changeReviewers.userId));
}

/** Adds requested reviewers; people already asked keep their first request. Answers the user ids newly added. */
export async function insertReviewers(tx: Tx, rows: ReviewerRow[]): Promise<string[]> {
  const { changeReviewers } = tables(tx);
  if (!rows.length) return [];
  const added = await tx.insert(changeReviewers).values(rows).onConflictDoNothing().returning({ userId: changeReviewers.userId });
  return added.map((r) => r.userId);
}

/** Removes one requested reviewer; false when they were not asked. */
export async function deleteReviewer(tx: Tx, changeId: string, userId: string): Promise<boolean> {
  const { changeReviewers } = tables(tx);
  const rows = await tx
    .delete(changeReviewers)
    .where(and(eq(changeReviewers.changeId, changeId), eq(changeReviewers.userId, userId)))
    .returning({ userId: changeReviewers.userId });
  return rows.length > 0;
}

/** People by handle (case-insensitive): id and stored handle. */
export async function usersByHandles(q: Queryable, handles: string[]): Promise<{ id: string; handle: string }[]> {
  const { users } = tables(q);
  const lower = [...new Set(handles.map((h) => h.toLowerCase()))];
  if (!lower.length) return [];
  return await q
    .select({ id: users.id, handle: users.handle })
    .from(users)
    .where(inArray(sql`lower(${users.handle})`, lower));
}

/** The published comments posted with reviews, oldest first (one query for a list of reviews). */
export async function commentsOfReviews(q: Queryable, changeId: string, reviewIds: string[]) {
  const { changeComments: c } = tables(q);
  if (!reviewIds.length) return [];
  return await q
    .select()
    .from(c)
    .where(and(eq(c.changeId, changeId), eq(c.state, "published"), inArray(c.reviewId, [...new Set(reviewIds)])))
    .orderBy(asc(c.createdAt), asc(c.id));
}

/** Stores a review's body re-rendered by this renderer, only if the row is still older and its body the one rendered. */
export async function writeRendered(tx: Tx, id: string, body: string, bodyHtml: string, version: number): Promise<void> {
  const { changeReviews: r } = tables(tx);
  await tx
    .update(r)
    .set({ bodyHtml, renderVersion: version })
    .where(and(eq(r.id, id), lt(r.renderVersion, version), eq(r.body, body)));
}
