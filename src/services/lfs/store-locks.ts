// The LFS locks' queries (lfs_locks, with each owner's handle). Async, so another database
// changes this file, not the services.
import { and, asc, count, eq, gt, or, type SQL } from "drizzle-orm";
import type { lfsLocks } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

/** A lock row as stored. */
export type LockRow = typeof lfsLocks.$inferSelect;

/** A lock with its owner's handle (the name the LFS API shows). */
export interface LockView {
  id: string;
  path: string;
  ownerId: string;
  ownerName: string;
  refName: string | null;
  createdAt: number;
}

function selectLocks(q: Queryable | Tx, where: SQL | undefined) {
  const { lfsLocks, users } = tables(q);
  return q
    .select({
      id: lfsLocks.id,
      path: lfsLocks.path,
      ownerId: lfsLocks.ownerId,
      ownerName: users.handle,
      refName: lfsLocks.refName,
      createdAt: lfsLocks.createdAt,
    })
    .from(lfsLocks)
    .innerJoin(users, eq(users.id, lfsLocks.ownerId))
    .where(where);
}

/** Takes the lock unless the path is locked already; false when it was (the unique path index decides). */
export async function insertLock(tx: Tx, row: LockRow): Promise<boolean> {
  const { lfsLocks } = tables(tx);
  const inserted = await tx.insert(lfsLocks).values(row).onConflictDoNothing().returning({ id: lfsLocks.id });
  return inserted.length > 0;
}

/** How many locks the repository has. */
export async function countLocks(q: Queryable | Tx, repoId: string): Promise<number> {
  const { lfsLocks } = tables(q);
  return one(await q.select({ n: count() }).from(lfsLocks).where(eq(lfsLocks.repoId, repoId)))?.n ?? 0;
}

/** The lock on exactly `path`, or null. */
export async function lockByPath(q: Queryable | Tx, repoId: string, path: string): Promise<LockView | null> {
  const { lfsLocks } = tables(q);
  return one(await selectLocks(q, and(eq(lfsLocks.repoId, repoId), eq(lfsLocks.path, path))).limit(1)) ?? null;
}

/** The lock `id` of the repository, or null. */
export async function lockById(q: Queryable | Tx, repoId: string, id: string): Promise<LockView | null> {
  const { lfsLocks } = tables(q);
  return one(await selectLocks(q, and(eq(lfsLocks.repoId, repoId), eq(lfsLocks.id, id))).limit(1)) ?? null;
}

/** A page of the repository's locks, oldest first, after `(createdAt, id)`; up to `limit` rows. */
export async function locksPage(
  q: Queryable,
  repoId: string,
  filter: { path?: string; id?: string },
  after: [number, string] | null,
  limit: number,
): Promise<LockView[]> {
  const { lfsLocks } = tables(q);
  const where = and(
    eq(lfsLocks.repoId, repoId),
    filter.path !== undefined ? eq(lfsLocks.path, filter.path) : undefined,
    filter.id !== undefined ? eq(lfsLocks.id, filter.id) : undefined,
    after ? or(gt(lfsLocks.createdAt, after[0]), and(eq(lfsLocks.createdAt, after[0]), gt(lfsLocks.id, after[1]))) : undefined,
  );
  return await selectLocks(q, where).orderBy(asc(lfsLocks.createdAt), asc(lfsLocks.id)).limit(limit);
}

/** Deletes the lock `id`; false when it was gone already. */
export async function deleteLock(tx: Tx, repoId: string, id: string): Promise<boolean> {
  const { lfsLocks } = tables(tx);
  const gone = await tx
    .delete(lfsLocks)
    .where(and(eq(lfsLocks.repoId, repoId), eq(lfsLocks.id, id)))
    .returning({ id: lfsLocks.id });
  return gone.length > 0;
}
