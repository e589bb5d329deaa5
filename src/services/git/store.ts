// The git domain's queries: refs and the pack list of a repository. Async, so another database
// changes this file, not the services.
import { and, eq, inArray, isNotNull, isNull, lte, sql } from "drizzle-orm";
import { orgs, packs, refs, repos } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import type { Oid, Ref } from "../../git/types.ts";

/** A live pack as the snapshot needs it. */
export interface PackRow {
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
  const rows = q.all<{ kind: "ref" | "pack"; name: string; target: string | null; size: number; created: number }>(sql`
    SELECT 'ref' AS kind, name, target, 0 AS size, 0 AS created FROM refs WHERE repo_id = ${repoId}
    UNION ALL
    SELECT 'pack' AS kind, name, reach_tips AS target, size, created_at AS created FROM packs WHERE repo_id = ${repoId} AND replaced_at IS NULL`);
  const refRows: Ref[] = [];
  const packRows: (PackRow & { created: number })[] = [];
  for (const r of rows) {
    if (r.kind === "ref") refRows.push({ name: r.name, oid: r.target! });
    else packRows.push({ name: r.name, size: r.size, reachTips: r.target, created: r.created });
  }
  refRows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  packRows.sort((a, b) => b.created - a.created);
  return { refs: refRows, packs: packRows.map(({ name, size, reachTips }) => ({ name, size, reachTips })) };
}

/** The live refs of a repository, sorted by name. */
export async function readRefs(q: Queryable, repoId: string): Promise<Ref[]> {
  return q.select({ name: refs.name, oid: refs.target }).from(refs).where(eq(refs.repoId, repoId)).orderBy(refs.name).all();
}

/** The current target of one ref, or null. */
export async function readRef(q: Queryable, repoId: string, name: string): Promise<Oid | null> {
  return q.select({ target: refs.target }).from(refs).where(and(eq(refs.repoId, repoId), eq(refs.name, name))).get()?.target ?? null;
}

/** A pack row with everything maintenance needs. */
export type PackRecord = typeof packs.$inferSelect;

/** Whether the repository still exists (a write racing its deletion answers `repo-deleted`). */
export async function repoIsLive(q: Queryable, repoId: string): Promise<boolean> {
  return !!q.select({ id: repos.id }).from(repos).where(eq(repos.id, repoId)).get();
}

/** The names of the repository's refs below `name/` (`name/a`, `name/a/b`, …). */
export async function refNamesBelow(q: Queryable, repoId: string, name: string): Promise<string[]> {
  // Why a range and not LIKE: ref names may hold `%` and `_`; `0` is the character after `/`.
  return q
    .select({ name: refs.name })
    .from(refs)
    .where(and(eq(refs.repoId, repoId), sql`${refs.name} > ${`${name}/`} AND ${refs.name} < ${`${name}0`}`))
    .all()
    .map((r) => r.name);
}

/** Creates a ref. */
export async function insertRef(tx: Tx, repoId: string, name: string, target: Oid): Promise<void> {
  tx.insert(refs).values({ repoId, name, target }).run();
}

/** Moves a ref from `old` to `target` (no-op when it is no longer at `old`). */
export async function moveRef(tx: Tx, repoId: string, name: string, old: Oid, target: Oid): Promise<void> {
  tx.update(refs).set({ target }).where(and(eq(refs.repoId, repoId), eq(refs.name, name), eq(refs.target, old))).run();
}

/** Deletes a ref. */
export async function deleteRef(tx: Tx, repoId: string, name: string): Promise<void> {
  tx.delete(refs).where(and(eq(refs.repoId, repoId), eq(refs.name, name))).run();
}

/** The repository's pack row named `name` (live or replaced), or null. */
export async function packByName(q: Queryable, repoId: string, name: string): Promise<PackRecord | null> {
  return q.select().from(packs).where(and(eq(packs.repoId, repoId), eq(packs.name, name))).get() ?? null;
}

/** Makes a stored pack visible to readers. */
export async function insertPack(tx: Tx, row: PackRecord): Promise<void> {
  tx.insert(packs).values(row).run();
}

/** Makes a replaced pack live again at `tier` (a merge produced the same pack once more), keeping its record unless given one. */
export async function revivePack(tx: Tx, id: string, tier: number, reachTips: string | null): Promise<void> {
  tx.update(packs).set(reachTips === null ? { replacedAt: null, tier } : { replacedAt: null, tier, reachTips }).where(eq(packs.id, id)).run();
}

/** Records that a live pack is exactly the closure of `reachTips`. */
export async function setReachTips(tx: Tx, id: string, reachTips: string): Promise<void> {
  tx.update(packs).set({ reachTips }).where(eq(packs.id, id)).run();
}

/** The repository's live packs. */
export async function livePacks(q: Queryable, repoId: string): Promise<PackRecord[]> {
  return q.select().from(packs).where(and(eq(packs.repoId, repoId), isNull(packs.replacedAt))).all();
}

/** The tiers of the repository's live packs, one entry per pack. */
export async function liveTiers(q: Queryable, repoId: string): Promise<number[]> {
  return q.select({ tier: packs.tier }).from(packs).where(and(eq(packs.repoId, repoId), isNull(packs.replacedAt))).all().map((p) => p.tier);
}

/** How many of the packs `ids` are still live. */
export async function countLive(q: Queryable, ids: string[]): Promise<number> {
  return q.select({ id: packs.id }).from(packs).where(and(inArray(packs.id, ids), isNull(packs.replacedAt))).all().length;
}

/** Marks packs replaced at `t`; their files are deleted after the grace period. */
export async function markPacksReplaced(tx: Tx, ids: string[], t: number): Promise<void> {
  if (ids.length) tx.update(packs).set({ replacedAt: t }).where(inArray(packs.id, ids)).run();
}

/** The repository's packs replaced at or before `cutoff`. */
export async function packsReplacedBefore(q: Queryable, repoId: string, cutoff: number): Promise<PackRecord[]> {
  return q.select().from(packs).where(and(eq(packs.repoId, repoId), isNotNull(packs.replacedAt), lte(packs.replacedAt, cutoff))).all();
}

/** Forgets a pack row (its files are already deleted). */
export async function deletePack(tx: Tx, id: string): Promise<void> {
  tx.delete(packs).where(eq(packs.id, id)).run();
}

/** The names of every pack row of the repository, live or replaced. */
export async function packNames(q: Queryable, repoId: string): Promise<string[]> {
  return q.select({ name: packs.name }).from(packs).where(eq(packs.repoId, repoId)).all().map((r) => r.name);
}

/** Live pack counts of every repository that has packs. */
export async function livePackCounts(q: Queryable): Promise<{ repoId: string; n: number; recorded: number }[]> {
  return q
    .select({ repoId: packs.repoId, n: sql<number>`count(*)`, recorded: sql<number>`count(${packs.reachTips})` })
    .from(packs)
    .where(isNull(packs.replacedAt))
    .groupBy(packs.repoId)
    .all();
}

/** Every repository with its full name (`org/repo`), for maintenance passes. */
export async function allRepoNames(q: Queryable): Promise<{ id: string; name: string }[]> {
  return q
    .select({ id: repos.id, name: sql<string>`${orgs.name} || '/' || ${repos.name}` })
    .from(repos)
    .innerJoin(orgs, eq(orgs.id, repos.orgId))
    .all();
}
