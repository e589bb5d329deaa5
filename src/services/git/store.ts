// The git domain's queries: refs and the pack list of a repository. Async, so another database
// changes this file, not the services.
import { and, count, asc, eq, inArray, isNotNull, isNull, lte, ne, sql } from "drizzle-orm";
import { LIVE_CHANGE_STATES, type packs, type protections } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { statementCache } from "../../db/statements.ts";
import type { Oid, Ref } from "../../git/types.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";
import { x } from "../../db/dialect.ts";

/** A live pack as the snapshot needs it. */
export interface PackRow {
  /** The repository whose key prefix holds the files (itself, or the one it shares the pack with). */
  storageRepoId: string;
  name: string;
  size: number;
  /** The pack's reachability record: tips it is exactly the closure of (newline-separated), or null. */
  reachTips: string | null;
}

/**
 * Refs (by name) and live packs (newest first) of a repository, read by one statement so both
 * come from the same committed state on any database.
 */
export async function snapshotRows(q: Queryable, repoId: string): Promise<{ refs: Ref[]; packs: PackRow[] }> {
  const rows = await x(q).rows<{ kind: "ref" | "pack"; name: string; target: string | null; storage: string; size: number; created: number }>(sql`
    SELECT 'ref' AS kind, name, target, '' AS storage, 0 AS size, 0 AS created FROM refs WHERE repo_id = ${repoId}
    UNION ALL
    SELECT 'pack' AS kind, name, reach_tips AS target, storage_repo_id AS storage, size, created_at AS created FROM packs WHERE repo_id = ${repoId} AND replaced_at IS NULL`);
  const refRows: Ref[] = [];
  const packRows: (PackRow & { created: number })[] = [];
  for (const r of rows) {
    if (r.kind === "ref") refRows.push({ name: r.name, oid: r.target! });
    else packRows.push({ storageRepoId: r.storage, name: r.name, size: r.size, reachTips: r.target, created: r.created });
  }
  refRows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  packRows.sort((a, b) => b.created - a.created);
  return { refs: refRows, packs: packRows.map(({ storageRepoId, name, size, reachTips }) => ({ storageRepoId, name, size, reachTips })) };
}

/** A branch protection as stored (the rules git enforces; repos/protections.ts edits them). */
export type ProtectionRow = typeof protections.$inferSelect;

/** The protections of a repository, by pattern. */
export async function protectionsOf(q: Queryable, repoId: string): Promise<ProtectionRow[]> {
  const { protections } = tables(q);
  return await q.select().from(protections).where(eq(protections.repoId, repoId)).orderBy(protections.pattern);
}

/** An LFS lock as a push checks it: the locked path and who holds it (services/lfs/locks.ts edits them). */
export interface LockedPath {
  id: string;
  path: string;
  ownerId: string;
  ownerName: string;
}

/**
 * The LFS locks of a repository held by anyone but `exceptUserId` (null: every lock). One indexed
 * range read (lfs_locks_repo_created_idx); a repository without locks answers an empty list.
 */
export async function lockedPathsOf(q: Queryable, repoId: string, exceptUserId: string | null): Promise<LockedPath[]> {
  const { lfsLocks, users } = tables(q);
  const where = exceptUserId === null ? eq(lfsLocks.repoId, repoId) : and(eq(lfsLocks.repoId, repoId), ne(lfsLocks.ownerId, exceptUserId));
  return await q
    .select({ id: lfsLocks.id, path: lfsLocks.path, ownerId: lfsLocks.ownerId, ownerName: users.handle })
    .from(lfsLocks)
    .innerJoin(users, eq(users.id, lfsLocks.ownerId))
    .where(where)
    .orderBy(asc(lfsLocks.createdAt), asc(lfsLocks.id));
}

/** A repository's name and its org's name as they are now, or null once it is gone. */
export async function repoAddress(q: Queryable, repoId: string): Promise<{ org: string; repo: string } | null> {
  const { orgs, repos } = tables(q);
  return (
    one(await q.select({ org: orgs.name, repo: repos.name }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(eq(repos.id, repoId)).limit(1)) ?? null
  );
}

/** The repository's default branch (the name HEAD points at), or null once it is gone. */
export async function defaultBranchOf(q: Queryable, repoId: string): Promise<string | null> {
  const { repos } = tables(q);
  return one(await q.select({ name: repos.defaultBranch }).from(repos).where(eq(repos.id, repoId)).limit(1))?.name ?? null;
}

/** Points the repository's HEAD at branch `name`. */
export async function setDefaultBranch(tx: Tx, repoId: string, name: string): Promise<void> {
  const { repos } = tables(tx);
  await tx.update(repos).set({ defaultBranch: name }).where(eq(repos.id, repoId));
}

/** Marks the repository active at `at` (explore's order, issue 33): the publish transaction calls it when a ref moved. */
export async function touchRepoActive(tx: Tx, repoId: string, at: number): Promise<void> {
  const { repos } = tables(tx);
  await tx.update(repos).set({ activeAt: at }).where(eq(repos.id, repoId));
}

/**
 * The heads of every patchset of `repoId`'s open changes whose commits live in `repoId` (not a
 * fork's): a reader of the repository reads its changes, so these are tips of what it may read
 * (docs/architecture.md, "Reachability is the boundary").
 */
export async function openChangeHeads(q: Queryable, repoId: string): Promise<string[]> {
  // Prepared once per connection: reads by id ask on every request, and building the query cost
  // more than running it (bench/README.md, "Reads by id").
  return (await query(q, "openHeads", prepareOpenHeads).all({ repoId })).map((r) => r.head);
}

function prepareOpenHeads(q: Queryable) {
  const { changePatchsets, changes } = tables(q);
  return q
    .selectDistinct({ head: changePatchsets.head })
    .from(changePatchsets)
    .innerJoin(changes, eq(changes.id, changePatchsets.changeId))
    .where(and(eq(changes.repoId, sql.placeholder("repoId")), isNull(changes.sourceRepoId), inArray(changes.state, [...LIVE_CHANGE_STATES])))
    .orderBy(asc(changePatchsets.head));
}
const { query } = statementCache("git.store");

/** The live refs of a repository, sorted by name. */
export async function readRefs(q: Queryable, repoId: string): Promise<Ref[]> {
  const { refs } = tables(q);
  return await q.select({ name: refs.name, oid: refs.target }).from(refs).where(eq(refs.repoId, repoId)).orderBy(refs.name);
}

/** The current target of one ref, or null. */
export async function readRef(q: Queryable, repoId: string, name: string): Promise<Oid | null> {
  const { refs } = tables(q);
  return (
    one(
      await q
        .select({ target: refs.target })
        .from(refs)
        .where(and(eq(refs.repoId, repoId), eq(refs.name, name)))
        .limit(1),
    )?.target ?? null
  );
}

/** A pack row with everything maintenance needs. */
export type PackRecord = typeof packs.$inferSelect;

/** Whether the repository still exists (a write racing its deletion answers `repo-deleted`). */
export async function repoIsLive(q: Queryable, repoId: string): Promise<boolean> {
  const { repos } = tables(q);
  return !!one(await q.select({ id: repos.id }).from(repos).where(eq(repos.id, repoId)).limit(1));
}

/** The names of the repository's refs below `name/` (`name/a`, `name/a/b`, …). */
export async function refNamesBelow(q: Queryable, repoId: string, name: string): Promise<string[]> {
  const { refs } = tables(q);
  // Why a range and not LIKE: ref names may hold `%` and `_`; `0` is the character after `/`.
  return (
    await q
      .select({ name: refs.name })
      .from(refs)
      .where(and(eq(refs.repoId, repoId), sql`${refs.name} > ${`${name}/`} AND ${refs.name} < ${`${name}0`}`))
  ).map((r) => r.name);
}

/** Creates a ref. */
export async function insertRef(tx: Tx, repoId: string, name: string, target: Oid): Promise<void> {
  const { refs } = tables(tx);
  await tx.insert(refs).values({ repoId, name, target });
}

/** Moves a ref from `old` to `target` (no-op when it is no longer at `old`). */
export async function moveRef(tx: Tx, repoId: string, name: string, old: Oid, target: Oid): Promise<void> {
  const { refs } = tables(tx);
  await tx
    .update(refs)
    .set({ target })
    .where(and(eq(refs.repoId, repoId), eq(refs.name, name), eq(refs.target, old)));
}

/** Deletes a ref. */
export async function deleteRef(tx: Tx, repoId: string, name: string): Promise<void> {
  const { refs } = tables(tx);
  await tx.delete(refs).where(and(eq(refs.repoId, repoId), eq(refs.name, name)));
}

/** The repository's pack row named `name` (live or replaced), or null. */
export async function packByName(q: Queryable, repoId: string, name: string): Promise<PackRecord | null> {
  const { packs } = tables(q);
  return (
    one(
      await q
        .select()
        .from(packs)
        .where(and(eq(packs.repoId, repoId), eq(packs.name, name)))
        .limit(1),
    ) ?? null
  );
}

/** Makes a stored pack visible to readers. */
export async function insertPack(tx: Tx, row: PackRecord): Promise<void> {
  const { packs } = tables(tx);
  await tx.insert(packs).values(row);
}

/** Makes a replaced pack live again at `tier` (a merge produced the same pack once more), keeping its record unless given one. */
export async function revivePack(tx: Tx, id: string, tier: number, reachTips: string | null): Promise<void> {
  const { packs } = tables(tx);
  await tx
    .update(packs)
    .set(reachTips === null ? { replacedAt: null, tier } : { replacedAt: null, tier, reachTips })
    .where(eq(packs.id, id));
}

/** Records that a live pack is exactly the closure of `reachTips`. */
export async function setReachTips(tx: Tx, id: string, reachTips: string): Promise<void> {
  const { packs } = tables(tx);
  await tx.update(packs).set({ reachTips }).where(eq(packs.id, id));
}

/** The repository's live packs. */
export async function livePacks(q: Queryable, repoId: string): Promise<PackRecord[]> {
  const { packs } = tables(q);
  return await q
    .select()
    .from(packs)
    .where(and(eq(packs.repoId, repoId), isNull(packs.replacedAt)));
}

/** The tiers of the repository's own live packs (stored under its prefix), one entry per pack. */
export async function liveTiers(q: Queryable, repoId: string): Promise<number[]> {
  const { packs } = tables(q);
  return (
    await q
      .select({ tier: packs.tier })
      .from(packs)
      .where(and(eq(packs.repoId, repoId), eq(packs.storageRepoId, repoId), isNull(packs.replacedAt)))
  ).map((p) => p.tier);
}

/** How many of the packs `ids` are still live. */
export async function countLive(q: Queryable, ids: string[]): Promise<number> {
  const { packs } = tables(q);
  return (
    await q
      .select({ id: packs.id })
      .from(packs)
      .where(and(inArray(packs.id, ids), isNull(packs.replacedAt)))
  ).length;
}

/** Marks packs replaced at `t`; their files are deleted after the grace period. */
export async function markPacksReplaced(tx: Tx, ids: string[], t: number): Promise<void> {
  const { packs } = tables(tx);
  if (ids.length) await tx.update(packs).set({ replacedAt: t }).where(inArray(packs.id, ids));
}

/** The repository's packs replaced at or before `cutoff`. */
export async function packsReplacedBefore(q: Queryable, repoId: string, cutoff: number): Promise<PackRecord[]> {
  const { packs } = tables(q);
  return await q
    .select()
    .from(packs)
    .where(and(eq(packs.repoId, repoId), isNotNull(packs.replacedAt), lte(packs.replacedAt, cutoff)));
}

/** Forgets a replaced pack row if it is still replaced at or before `cutoff`; false when it was revived or is gone. */
export async function deleteReplacedPack(tx: Tx, id: string, cutoff: number): Promise<boolean> {
  const { packs } = tables(tx);
  return (
    (
      await tx
        .delete(packs)
        .where(and(eq(packs.id, id), isNotNull(packs.replacedAt), lte(packs.replacedAt, cutoff)))
        .returning({ id: packs.id })
    ).length > 0
  );
}

/** Whether any pack row of any repository, live or replaced, names the files `name` stored under `storageRepoId`. */
export async function packFileNamed(q: Queryable, storageRepoId: string, name: string): Promise<boolean> {
  const { packs } = tables(q);
  return !!one(
    await q
      .select({ id: packs.id })
      .from(packs)
      .where(and(eq(packs.storageRepoId, storageRepoId), eq(packs.name, name)))
      .limit(1),
  );
}

/** The names of the pack files under `storageRepoId`'s prefix that some row (of any repository) names. */
export async function packNamesStoredUnder(q: Queryable, storageRepoId: string): Promise<Set<string>> {
  const { packs } = tables(q);
  return new Set((await q.selectDistinct({ name: packs.name }).from(packs).where(eq(packs.storageRepoId, storageRepoId))).map((r) => r.name));
}

/** The other repositories whose stored packs `repoId`'s rows name (a fork's parent and its ancestors). */
export async function sharedStorageOf(q: Queryable, repoId: string): Promise<string[]> {
  const { packs } = tables(q);
  return (
    await q
      .selectDistinct({ id: packs.storageRepoId })
      .from(packs)
      .where(and(eq(packs.repoId, repoId), sql`${packs.storageRepoId} <> ${repoId}`))
  ).map((r) => r.id);
}

/**
 * Adds the live packs of `fromRepoId` to the live pack list of `toRepoId`, naming the same stored
 * files (no bytes are copied). A pack `toRepoId` already lists live is skipped; one it lists as
 * replaced is made live again (its files are still there: a row's files outlive it). Answers how
 * many packs became live in `toRepoId`.
 */
export async function sharePackRows(tx: Tx, fromRepoId: string, toRepoId: string, newId: () => string, t: number): Promise<number> {
  const { packs } = tables(tx);
  const source = await tx
    .select()
    .from(packs)
    .where(and(eq(packs.repoId, fromRepoId), isNull(packs.replacedAt)));
  if (!source.length) return 0;
  const mine = new Map(
    (await tx.select({ id: packs.id, name: packs.name, replacedAt: packs.replacedAt }).from(packs).where(eq(packs.repoId, toRepoId))).map((r) => [r.name, r]),
  );
  let added = 0;
  for (const p of source) {
    const have = mine.get(p.name);
    if (have && have.replacedAt === null) continue;
    if (have) await tx.update(packs).set({ replacedAt: null }).where(eq(packs.id, have.id));
    else await tx.insert(packs).values({ ...p, id: newId(), repoId: toRepoId, createdAt: p.createdAt ?? t });
    added++;
  }
  return added;
}

/** Live pack counts of every repository that has packs: all, those with a record, its own (not shared). */
export async function livePackCounts(q: Queryable): Promise<{ repoId: string; n: number; recorded: number; own: number }[]> {
  const { packs } = tables(q);
  return await q
    .select({
      repoId: packs.repoId,
      n: count(),
      recorded: sql<number>`count(${packs.reachTips})`,
      own: sql<number>`sum(CASE WHEN ${packs.storageRepoId} = ${packs.repoId} THEN 1 ELSE 0 END)`,
    })
    .from(packs)
    .where(isNull(packs.replacedAt))
    .groupBy(packs.repoId);
}

/** Every repository with its full name (`org/repo`), for maintenance passes. */
export async function allRepoNames(q: Queryable): Promise<{ id: string; name: string }[]> {
  const { repos, orgs } = tables(q);
  return await q
    .select({ id: repos.id, name: sql<string>`${orgs.name} || '/' || ${repos.name}` })
    .from(repos)
    .innerJoin(orgs, eq(orgs.id, repos.orgId));
}
