// The queries on ci_artifacts (issue 30): a run's artifacts by name, the reservation an upload
// makes, its confirmation, and what the retention sweep deletes. Every write is one statement,
// guarded by the state it expects, so a repeated call changes nothing twice.
import { and, asc, eq, lte, or } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import type { ciArtifacts } from "../../db/schema/index.ts";
import { tables } from "../../db/tables.ts";

/** A row of ci_artifacts. */
export type ArtifactRow = typeof ciArtifacts.$inferSelect;

/** The artifact `id` of run `runId`, or undefined. */
export async function artifactOfRun(q: Queryable, runId: string, id: string): Promise<ArtifactRow | undefined> {
  const { ciArtifacts: a } = tables(q);
  return one(
    await q
      .select()
      .from(a)
      .where(and(eq(a.id, id), eq(a.runId, runId)))
      .limit(1),
  );
}

/** The artifact `id` of repository `repoId`, or undefined. */
export async function artifactOfRepo(q: Queryable, repoId: string, id: string): Promise<ArtifactRow | undefined> {
  const { ciArtifacts: a } = tables(q);
  return one(
    await q
      .select()
      .from(a)
      .where(and(eq(a.id, id), eq(a.repoId, repoId)))
      .limit(1),
  );
}

/** The artifact named `name` in run `runId` (any state), or undefined. */
export async function artifactByName(q: Queryable, runId: string, name: string): Promise<ArtifactRow | undefined> {
  const { ciArtifacts: a } = tables(q);
  return one(
    await q
      .select()
      .from(a)
      .where(and(eq(a.runId, runId), eq(a.name, name)))
      .limit(1),
  );
}

/** The ready artifacts of run `runId`, by name. */
export async function readyArtifacts(q: Queryable, runId: string): Promise<ArtifactRow[]> {
  const { ciArtifacts: a } = tables(q);
  return await q
    .select()
    .from(a)
    .where(and(eq(a.runId, runId), eq(a.state, "ready")))
    .orderBy(asc(a.name));
}

/** Records a reservation. */
export async function insertArtifact(tx: Tx, row: ArtifactRow): Promise<void> {
  const { ciArtifacts: a } = tables(tx);
  await tx.insert(a).values(row);
}

/**
 * Takes an earlier artifact out of its name (a later attempt's upload, or `overwrite`): it is
 * renamed out of the name space (`replaced:<id>`, a name no upload may use) and made due now,
 * so the sweep deletes its object and then its row. Why not delete the row here: the object
 * would then have no row, and nothing would ever sweep it.
 */
export async function retireArtifact(tx: Tx, id: string, at: number): Promise<void> {
  const { ciArtifacts: a } = tables(tx);
  await tx
    .update(a)
    .set({ name: `replaced:${id}`, state: "uploading", expiresAt: at })
    .where(eq(a.id, id));
}

/** Marks an uploading artifact ready (its object checked); answers whether it was uploading. */
export async function markReady(tx: Tx, id: string, sha256: string | null): Promise<boolean> {
  const { ciArtifacts: a } = tables(tx);
  const rows = await tx
    .update(a)
    .set(sha256 ? { state: "ready", sha256 } : { state: "ready" })
    .where(and(eq(a.id, id), eq(a.state, "uploading")))
    .returning({ id: a.id });
  return rows.length > 0;
}

/** Rows the sweep deletes: expired ones, and reservations older than `staleBefore` never confirmed (at most `limit`). */
export async function sweepable(q: Queryable, at: number, staleBefore: number, limit: number): Promise<ArtifactRow[]> {
  const { ciArtifacts: a } = tables(q);
  return await q
    .select()
    .from(a)
    .where(or(lte(a.expiresAt, at), and(eq(a.state, "uploading"), lte(a.createdAt, staleBefore))))
    .orderBy(asc(a.expiresAt))
    .limit(limit);
}

/** Deletes the row `id` when it is still due (expired or stale); answers whether it did. */
export async function deleteIfDue(tx: Tx, id: string, at: number, staleBefore: number): Promise<boolean> {
  const { ciArtifacts: a } = tables(tx);
  const rows = await tx
    .delete(a)
    .where(and(eq(a.id, id), or(lte(a.expiresAt, at), and(eq(a.state, "uploading"), lte(a.createdAt, staleBefore)))))
    .returning({ id: a.id });
  return rows.length > 0;
}

/** Makes the artifact `id` due now (a person deleted it): the sweep removes its object, then its row. */
export async function expireArtifact(tx: Tx, id: string, at: number): Promise<void> {
  const { ciArtifacts: a } = tables(tx);
  await tx
    .update(a)
    .set({ name: `deleted:${id}`, state: "uploading", expiresAt: at })
    .where(eq(a.id, id));
}
