// The changes domain's queries: changes, their stacks and the lander's queue (queued rows).
import { and, asc, desc, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { type changes, LIVE_CHANGE_STATES } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type ChangeRow = typeof changes.$inferSelect;

/** States in which a change still follows its branch (its head moves with pushes). */
export const LIVE_STATES = LIVE_CHANGE_STATES;

/**
 * The next number of a repository's issues and changes (DECISIONS §5: one sequence, so `#N` names
 * one thing), inside the creating transaction. Why a counter row and not max(number): on
 * PostgreSQL two creators would read the same max; the upsert locks the repository's row until
 * the transaction ends, so the second waits and takes the next number. A repository with no row
 * yet starts after its highest change (rows are seeded by migration 0021 / pg 0009).
 */
export async function nextNumber(tx: Tx, repoId: string): Promise<number> {
  const { repoCounters, changes } = tables(tx);
  const row = one(
    await tx
      .insert(repoCounters)
      .values({ repoId, lastNumber: sql`(SELECT coalesce(max(${changes.number}), 0) FROM ${changes} WHERE ${changes.repoId} = ${repoId}) + 1` })
      .onConflictDoUpdate({ target: repoCounters.repoId, set: { lastNumber: sql`${repoCounters.lastNumber} + 1` } })
      .returning({ n: repoCounters.lastNumber }),
  );
  if (!row) throw new Error("the number counter answered no row");
  return Number(row.n);
}

/** Inserts a change. */
export async function insertChange(tx: Tx, row: ChangeRow): Promise<void> {
  const { changes } = tables(tx);
  await tx.insert(changes).values(row);
}

/** One change by its number. */
export async function changeByNumber(q: Queryable, repoId: string, number: number): Promise<ChangeRow | null> {
  const { changes } = tables(q);
  return (
    one(
      await q
        .select()
        .from(changes)
        .where(and(eq(changes.repoId, repoId), eq(changes.number, number)))
        .limit(1),
    ) ?? null
  );
}

/** A page of a repository's changes, newest first, optionally in one state. */
export async function listChanges(q: Queryable, repoId: string, state: string | null, after: number | null, limit: number): Promise<ChangeRow[]> {
  const { changes } = tables(q);
  return await q
    .select()
    .from(changes)
    .where(and(eq(changes.repoId, repoId), state ? eq(changes.state, state) : undefined, after !== null ? lt(changes.number, after) : undefined))
    .orderBy(desc(changes.number))
    .limit(limit);
}

/** Updates fields of one change. */
export async function updateChange(tx: Tx, id: string, set: Partial<ChangeRow>): Promise<void> {
  const { changes } = tables(tx);
  await tx.update(changes).set(set).where(eq(changes.id, id));
}

/**
 * Live changes whose branch is `branch` of repository `repoId`: changes in that repository with
 * no source, and changes anywhere whose source is that repository (a fork).
 */
export async function liveChangesOnBranch(tx: Queryable, repoId: string, branch: string): Promise<ChangeRow[]> {
  const { changes } = tables(tx);
  return await tx
    .select()
    .from(changes)
    .where(
      and(
        eq(changes.branch, branch),
        inArray(changes.state, [...LIVE_STATES]),
        or(and(eq(changes.repoId, repoId), isNull(changes.sourceRepoId)), eq(changes.sourceRepoId, repoId)),
      ),
    );
}

/** Every (repository, target) with queued changes: the lander's work list. */
export async function queuedTargets(q: Queryable): Promise<{ repoId: string; target: string }[]> {
  const { changes } = tables(q);
  return await q.selectDistinct({ repoId: changes.repoId, target: changes.target }).from(changes).where(eq(changes.state, "queued"));
}

/** The target branches of `repoId`'s queued changes whose head is `commit` (a check result for it arrived). */
export async function queuedTargetsAt(q: Queryable, repoId: string, commit: string): Promise<string[]> {
  const { changes } = tables(q);
  return (
    await q
      .selectDistinct({ target: changes.target })
      .from(changes)
      .where(and(eq(changes.state, "queued"), eq(changes.repoId, repoId), eq(changes.head, commit)))
  ).map((r) => r.target);
}

/** The first queued change of a target branch (queue order: time queued, then number). */
export async function queueHead(q: Queryable, repoId: string, target: string): Promise<ChangeRow | null> {
  const { changes } = tables(q);
  return (
    one(
      await q
        .select()
        .from(changes)
        .where(and(eq(changes.state, "queued"), eq(changes.repoId, repoId), eq(changes.target, target)))
        .orderBy(asc(changes.queuedAt), asc(changes.number))
        .limit(1),
    ) ?? null
  );
}

/** Handles of change authors, by user id. */
export async function handlesOf(q: Queryable, ids: string[]): Promise<Map<string, string>> {
  const { users } = tables(q);
  if (!ids.length) return new Map();
  const rows = await q
    .select({ id: users.id, handle: users.handle })
    .from(users)
    .where(inArray(users.id, [...new Set(ids)]));
  return new Map(rows.map((r) => [r.id, r.handle]));
}

/** `org/name` of repositories by id (fork sources). */
export async function repoNames(q: Queryable, ids: string[]): Promise<Map<string, { org: string; repo: string }>> {
  const { repos, orgs } = tables(q);
  if (!ids.length) return new Map();
  const rows = await q
    .select({ id: repos.id, org: orgs.name, repo: repos.name })
    .from(repos)
    .innerJoin(orgs, eq(orgs.id, repos.orgId))
    .where(inArray(repos.id, [...new Set(ids)]));
  return new Map(rows.map((r) => [r.id, { org: r.org, repo: r.repo }]));
}

/** A repository row and its org by repository id (the lander works from ids). */
export async function repoWithOrg(q: Queryable, repoId: string) {
  const { repos, orgs } = tables(q);
  return one(await q.select({ repo: repos, org: orgs }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(eq(repos.id, repoId)).limit(1)) ?? null;
}

/** Queued changes of a target in the order the lander takes them (time queued, then number), at most `limit`. */
export async function queuedOn(q: Queryable, repoId: string, target: string, limit: number): Promise<ChangeRow[]> {
  const { changes } = tables(q);
  return await q
    .select()
    .from(changes)
    .where(and(eq(changes.state, "queued"), eq(changes.repoId, repoId), eq(changes.target, target)))
    .orderBy(asc(changes.queuedAt), asc(changes.number))
    .limit(limit);
}
