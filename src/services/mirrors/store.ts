// The mirrors' queries: origins and their credentials, sync requests waiting to start, and the
// sync fields of Repo (SPEC §2.1).
import { and, eq, isNull, lt, sql } from "drizzle-orm";
import { mirrors, mirrorSyncRequests, orgs, repos, type Org, type Repo } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";

export type MirrorRow = typeof mirrors.$inferSelect;
export type SyncRequestRow = typeof mirrorSyncRequests.$inferSelect;

/** Stores a new mirror's origin key and credentials. */
export async function insertMirror(tx: Tx, row: MirrorRow): Promise<void> {
  tx.insert(mirrors).values(row).run();
}

/** The mirror row of a repository, or null. */
export async function mirrorOf(q: Queryable, repoId: string): Promise<MirrorRow | null> {
  return q.select().from(mirrors).where(eq(mirrors.repoId, repoId)).get() ?? null;
}

/** The repositories mirroring the origin with this key. */
export async function mirrorsByKey(q: Queryable, key: string): Promise<string[]> {
  return q
    .select({ id: mirrors.repoId })
    .from(mirrors)
    .where(eq(mirrors.originKey, key))
    .all()
    .map((r) => r.id);
}

/** The sync request waiting for a repository, or null. */
export async function pendingRequest(q: Queryable, repoId: string): Promise<SyncRequestRow | null> {
  return q.select().from(mirrorSyncRequests).where(eq(mirrorSyncRequests.repoId, repoId)).get() ?? null;
}

/** Records a sync request (its job was queued in the same transaction). */
export async function insertRequest(tx: Tx, row: SyncRequestRow): Promise<void> {
  tx.insert(mirrorSyncRequests).values(row).run();
}

/** Moves a waiting request's receipt time earlier. */
export async function setReceivedAt(tx: Tx, repoId: string, receivedAt: number): Promise<void> {
  tx.update(mirrorSyncRequests).set({ receivedAt }).where(eq(mirrorSyncRequests.repoId, repoId)).run();
}

/** Takes the request of job `jobId` off the table (the sync starts); returns it, or null when another job owns it. */
export async function takeRequest(tx: Tx, repoId: string, jobId: string): Promise<SyncRequestRow | null> {
  return (
    tx
      .delete(mirrorSyncRequests)
      .where(and(eq(mirrorSyncRequests.repoId, repoId), eq(mirrorSyncRequests.jobId, jobId)))
      .returning()
      .get() ?? null
  );
}

/** The repository and its org, or null when deleted. */
export async function repoWithOrg(q: Queryable, repoId: string): Promise<{ repo: Repo; org: Org } | null> {
  const row = q.select({ repo: repos, org: orgs }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(eq(repos.id, repoId)).get();
  return row ?? null;
}

/** Mirrors not synced since `before` (or, never synced, created before it) with no sync waiting: the schedule's work. */
export async function dueMirrors(q: Queryable, before: number, limit: number): Promise<string[]> {
  return q
    .select({ id: mirrors.repoId })
    .from(mirrors)
    .innerJoin(repos, eq(repos.id, mirrors.repoId))
    .leftJoin(mirrorSyncRequests, eq(mirrorSyncRequests.repoId, mirrors.repoId))
    .where(and(isNull(mirrorSyncRequests.repoId), lt(sql`coalesce(${repos.lastSyncAt}, ${repos.createdAt})`, before)))
    .limit(limit)
    .all()
    .map((r) => r.id);
}

/** The outcome of a sync on the Repo: when, the origin's default-branch commit when it succeeded, the error when not. */
export async function setSyncFields(
  tx: Tx,
  repoId: string,
  f: { at: number; commit?: string | null; error: string | null; defaultBranch?: string },
): Promise<void> {
  const set: Partial<Repo> = { lastSyncAt: f.at, syncError: f.error };
  if (f.commit !== undefined) set.lastSyncedCommit = f.commit;
  if (f.defaultBranch !== undefined) set.defaultBranch = f.defaultBranch;
  tx.update(repos).set(set).where(eq(repos.id, repoId)).run();
}
