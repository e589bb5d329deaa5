// Queries of comments on changes (issue 28): one row per comment; a thread is the rows sharing the
// root's id in `thread_id`. Drafts belong to their author alone and are never listed to others.
import { and, asc, eq, gt, inArray, lt, or, sql } from "drizzle-orm";
import type { changeComments } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";
import type { ChangeRow } from "./store.ts";

export type CommentRow = typeof changeComments.$inferSelect;

/** Inserts comments (a post, or a review's batch). */
export async function insertComments(tx: Tx, rows: CommentRow[]): Promise<void> {
  if (!rows.length) return;
  const { changeComments } = tables(tx);
  await tx.insert(changeComments).values(rows);
}

/** One comment of a change by id, or null. */
export async function commentById(q: Queryable, changeId: string, id: string): Promise<CommentRow | null> {
  const { changeComments } = tables(q);
  return (
    one(
      await q
        .select()
        .from(changeComments)
        .where(and(eq(changeComments.changeId, changeId), eq(changeComments.id, id)))
        .limit(1),
    ) ?? null
  );
}

/** Filters of a comment listing. */
export interface CommentFilter {
  patchset?: number;
  path?: string;
  /** Drafts of this person are listed too (their own); everyone else's drafts never are. */
  viewerUserId?: string | null;
  /** Continue after this (created_at, id). */
  after?: [number, string] | null;
}

/** A page of a change's comments, oldest first (limit + 1 rows so the caller knows more exist). */
export async function listComments(q: Queryable, changeId: string, f: CommentFilter, limit: number): Promise<CommentRow[]> {
  const { changeComments: c } = tables(q);
  const visible = f.viewerUserId ? or(eq(c.state, "published"), and(eq(c.state, "draft"), eq(c.authorUserId, f.viewerUserId))) : eq(c.state, "published");
  const after = f.after ? or(gt(c.createdAt, f.after[0]), and(eq(c.createdAt, f.after[0]), gt(c.id, f.after[1]))) : undefined;
  return await q
    .select()
    .from(c)
    .where(
      and(
        eq(c.changeId, changeId),
        visible,
        f.patchset !== undefined ? eq(c.patchset, f.patchset) : undefined,
        // A reply has no path of its own: filtering by path lists the threads rooted on it.
        f.path !== undefined
          ? or(
              eq(c.path, f.path),
              inArray(
                c.threadId,
                q
                  .select({ id: c.id })
                  .from(c)
                  .where(and(eq(c.changeId, changeId), eq(c.path, f.path))),
              ),
            )
          : undefined,
        after,
      ),
    )
    .orderBy(asc(c.createdAt), asc(c.id))
    .limit(limit);
}

/** Roots of threads by id (a listing's replies show their root's resolved flag). */
export async function commentsByIds(q: Queryable, ids: string[]): Promise<CommentRow[]> {
  if (!ids.length) return [];
  const { changeComments } = tables(q);
  return await q
    .select()
    .from(changeComments)
    .where(inArray(changeComments.id, [...new Set(ids)]));
}

/** Updates one comment. */
export async function updateComment(tx: Tx, id: string, set: Partial<CommentRow>): Promise<void> {
  const { changeComments } = tables(tx);
  await tx.update(changeComments).set(set).where(eq(changeComments.id, id));
}

/** Deletes one comment row. */
export async function deleteCommentRow(tx: Tx, id: string): Promise<void> {
  const { changeComments } = tables(tx);
  await tx.delete(changeComments).where(eq(changeComments.id, id));
}

/** How many other comments a thread holds beside its root. */
export async function repliesOf(q: Queryable, threadId: string): Promise<number> {
  const { changeComments } = tables(q);
  const row = one(
    await q
      .select({ n: sql<number>`count(*)` })
      .from(changeComments)
      .where(and(eq(changeComments.threadId, threadId), sql`${changeComments.id} <> ${threadId}`)),
  );
  return Number(row?.n ?? 0);
}

/** Published line comments of a change anchored behind `patchset` (the re-anchor job's work), at most `limit`. */
export async function behindComments(q: Queryable, changeId: string, patchset: number, limit: number): Promise<CommentRow[]> {
  const { changeComments: c } = tables(q);
  return await q
    .select()
    .from(c)
    .where(and(eq(c.changeId, changeId), eq(c.state, "published"), sql`${c.path} IS NOT NULL`, lt(c.anchoredPatchset, patchset)))
    .orderBy(asc(c.createdAt), asc(c.id))
    .limit(limit);
}

/** Writes a re-anchored position, only if the row is still behind `patchset` (replay-safe, monotonic). */
export async function writeAnchor(
  tx: Tx,
  id: string,
  patchset: number,
  set: { outdated: boolean; curLine: number | null; curStartLine: number | null },
): Promise<void> {
  const { changeComments: c } = tables(tx);
  await tx
    .update(c)
    .set({ ...set, anchoredPatchset: patchset })
    .where(and(eq(c.id, id), lt(c.anchoredPatchset, patchset)));
}

/** Which of `numbers` are changes of the repository (a `#N` in a comment links only when it is). */
export async function existingChangeNumbers(q: Queryable, repoId: string, numbers: number[]): Promise<Set<number>> {
  if (!numbers.length) return new Set();
  const { changes } = tables(q);
  const rows = await q
    .select({ n: changes.number })
    .from(changes)
    .where(and(eq(changes.repoId, repoId), inArray(changes.number, [...new Set(numbers)])));
  return new Set(rows.map((r) => r.n));
}

/** Which of `numbers` are issues of the repository (numbers are shared with changes: `#N` links to whichever it is). */
export async function existingIssueNumbers(q: Queryable, repoId: string, numbers: number[]): Promise<Set<number>> {
  if (!numbers.length) return new Set();
  const { issues } = tables(q);
  const rows = await q
    .select({ n: issues.number })
    .from(issues)
    .where(and(eq(issues.repoId, repoId), inArray(issues.number, [...new Set(numbers)])));
  return new Set(rows.map((r) => r.n));
}

/** Which of `numbers` are issues of which of `repoIds`. */
export async function issueNumbersIn(q: Queryable, repoIds: string[], numbers: number[]): Promise<{ repoId: string; number: number }[]> {
  if (!repoIds.length || !numbers.length) return [];
  const { issues } = tables(q);
  return await q
    .select({ repoId: issues.repoId, number: issues.number })
    .from(issues)
    .where(and(inArray(issues.repoId, [...new Set(repoIds)]), inArray(issues.number, [...new Set(numbers)])));
}

/** People by handle, case-insensitively (an `@handle` links when the person exists). */
export async function usersByHandles(q: Queryable, handles: string[]): Promise<{ id: string; handle: string }[]> {
  if (!handles.length) return [];
  const { users } = tables(q);
  const lower = [...new Set(handles.map((h) => h.toLowerCase()))];
  return await q
    .select({ id: users.id, handle: users.handle })
    .from(users)
    .where(inArray(sql`lower(${users.handle})`, lower));
}

/** One change by id (comments carry the change's id; the re-anchor job works from it). */
export async function changeById(q: Queryable, id: string): Promise<ChangeRow | null> {
  const { changes } = tables(q);
  return one(await q.select().from(changes).where(eq(changes.id, id)).limit(1)) ?? null;
}

/** How many pending (draft) comments a person holds on a change. */
export async function draftCount(q: Queryable, changeId: string, authorUserId: string): Promise<number> {
  const { changeComments: c } = tables(q);
  const row = one(
    await q
      .select({ n: sql<number>`count(*)` })
      .from(c)
      .where(and(eq(c.changeId, changeId), eq(c.authorUserId, authorUserId), eq(c.state, "draft"))),
  );
  return Number(row?.n ?? 0);
}

/** A person's pending (draft) comments on a change, oldest first (at most MAX_PENDING_COMMENTS exist). */
export async function draftsOf(q: Queryable, changeId: string, authorUserId: string): Promise<CommentRow[]> {
  const { changeComments: c } = tables(q);
  return await q
    .select()
    .from(c)
    .where(and(eq(c.changeId, changeId), eq(c.authorUserId, authorUserId), eq(c.state, "draft")))
    .orderBy(asc(c.createdAt), asc(c.id));
}

/**
 * Publishes a person's pending comments on a change with their review: published, `review_id`
 * set, `updated_at` the review's time (`created_at` stays when each was written, so they keep the
 * order they were written in). Answers the rows as stored.
 */
export async function publishDrafts(tx: Tx, changeId: string, authorUserId: string, reviewId: string, at: number): Promise<CommentRow[]> {
  const { changeComments: c } = tables(tx);
  return await tx
    .update(c)
    .set({ state: "published", reviewId, updatedAt: at })
    .where(and(eq(c.changeId, changeId), eq(c.authorUserId, authorUserId), eq(c.state, "draft")))
    .returning();
}

/**
 * Repositories named `org/repo` (case-insensitively), with whether each is public: an
 * `org/repo#N` in a comment links only to a public repository or the comment's own.
 */
export async function reposByFullNames(
  q: Queryable,
  names: { org: string; repo: string }[],
): Promise<{ id: string; org: string; name: string; public: boolean }[]> {
  if (!names.length) return [];
  const { repos, orgs } = tables(q);
  return await q
    .select({ id: repos.id, org: orgs.name, name: repos.name, public: repos.public })
    .from(repos)
    .innerJoin(orgs, eq(orgs.id, repos.orgId))
    .where(or(...names.map((n) => and(eq(orgs.name, n.org.toLowerCase()), eq(sql`lower(${repos.name})`, n.repo.toLowerCase())))));
}

/** Which of `numbers` are changes of which of `repoIds` (pairs; the caller keeps the ones it asked about). */
export async function changeNumbersIn(q: Queryable, repoIds: string[], numbers: number[]): Promise<{ repoId: string; number: number }[]> {
  if (!repoIds.length || !numbers.length) return [];
  const { changes } = tables(q);
  return await q
    .select({ repoId: changes.repoId, number: changes.number })
    .from(changes)
    .where(and(inArray(changes.repoId, [...new Set(repoIds)]), inArray(changes.number, [...new Set(numbers)])));
}

/**
 * Stores a comment's body re-rendered by this renderer (RENDER_VERSION bumps), only if the row is
 * still older and its body is the one rendered (an edit or delete meanwhile keeps its own).
 */
export async function writeRendered(tx: Tx, id: string, body: string, bodyHtml: string, version: number): Promise<void> {
  const { changeComments: c } = tables(tx);
  await tx
    .update(c)
    .set({ bodyHtml, renderVersion: version })
    .where(and(eq(c.id, id), lt(c.renderVersion, version), eq(c.body, body)));
}
