// The mirrors' queries: origins and their credentials, sync requests waiting to start, and the
// sync fields of Repo (SPEC §2.1).
import { and, eq, isNull, lt, sql } from "drizzle-orm";
import type { mirrors, mirrorSyncRequests, Org, Repo } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type MirrorRow = typeof mirrors.$inferSelect;
export type SyncRequestRow = typeof mirrorSyncRequests.$inferSelect;

/** Stores a new mirror's origin key and credentials. */
export async function insertMirror(tx: Tx, row: MirrorRow): Promise<void> {
  const { mirrors } = tables(tx);
  await tx.insert(mirrors).values(row);
}

/** The mirror row of a repository, or null. */
export async function mirrorOf(q: Queryable, repoId: string): Promise<MirrorRow | null> {
  const { mirrors } = tables(q);
  return one(await q.select().from(mirrors).where(eq(mirrors.repoId, repoId)).limit(1)) ?? null;
}

/** The repositories mirroring the origin with this key. */
export async function mirrorsByKey(q: Queryable, key: string): Promise<string[]> {
  const { mirrors } = tables(q);
  return (await q.select({ id: mirrors.repoId }).from(mirrors).where(eq(mirrors.originKey, key))).map((r) => r.id);
}

/** The sync request waiting for a repository, or null. */
export async function pendingRequest(q: Queryable, repoId: string): Promise<SyncRequestRow | null> {
  const { mirrorSyncRequests } = tables(q);
  return one(await q.select().from(mirrorSyncRequests).where(eq(mirrorSyncRequests.repoId, repoId)).limit(1)) ?? null;
}

/** Records a sync request (its job was queued in the same transaction). */
export async function insertRequest(tx: Tx, row: SyncRequestRow): Promise<void> {
  const { mirrorSyncRequests } = tables(tx);
  await tx.insert(mirrorSyncRequests).values(row);
}

/** Moves a waiting request's receipt time earlier. */
export async function setReceivedAt(tx: Tx, repoId: string, receivedAt: number): Promise<void> {
  const { mirrorSyncRequests } = tables(tx);
  await tx.update(mirrorSyncRequests).set({ receivedAt }).where(eq(mirrorSyncRequests.repoId, repoId));
}

/** Takes the request of job `jobId` off the table (the sync starts); returns it, or null when another job owns it. */
export async function takeRequest(tx: Tx, repoId: string, jobId: string): Promise<SyncRequestRow | null> {
  const { mirrorSyncRequests } = tables(tx);
  return (
    one(
      await tx
        .delete(mirrorSyncRequests)
        .where(and(eq(mirrorSyncRequests.repoId, repoId), eq(mirrorSyncRequests.jobId, jobId)))
        .returning(),
    ) ?? null
  );
}

/** The repository and its org, or null when deleted. */
export async function repoWithOrg(q: Queryable, repoId: string): Promise<{ repo: Repo; org: Org } | null> {
  const { repos, orgs } = tables(q);
  const row = one(await q.select({ repo: repos, org: orgs }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(eq(repos.id, repoId)).limit(1));
  return row ?? null;
}

/** Mirrors not synced since `before` (or, never synced, created before it) with no sync waiting: the schedule's work. */
export async function dueMirrors(q: Queryable, before: number, limit: number): Promise<string[]> {
  const { mirrors, repos, mirrorSyncRequests } = tables(q);
  return (
    await q
      .select({ id: mirrors.repoId })
      .from(mirrors)
      .innerJoin(repos, eq(repos.id, mirrors.repoId))
      .leftJoin(mirrorSyncRequests, eq(mirrorSyncRequests.repoId, mirrors.repoId))
      .where(and(isNull(mirrorSyncRequests.repoId), lt(sql`coalesce(${repos.lastSyncAt}, ${repos.createdAt})`, before)))
      .limit(limit)
  ).map((r) => r.id);
}

/** The outcome of a sync on the Repo: when, the origin's default-branch commit when it succeeded, the error when not. */
export async function setSyncFields(
  tx: Tx,
  repoId: string,
  f: { at: number; commit?: string | null; error: string | null; defaultBranch?: string },
): Promise<void> {
  const { repos } = tables(tx);
  const set: Partial<Repo> = { lastSyncAt: f.at, syncError: f.error };
  if (f.commit !== undefined) set.lastSyncedCommit = f.commit;
  if (f.defaultBranch !== undefined) set.defaultBranch = f.defaultBranch;
  await tx.update(repos).set(set).where(eq(repos.id, repoId));
}
