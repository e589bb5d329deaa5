// The queries of Git LFS objects (issue 31): one row per verified object of a repository network
// (src/db/schema/lfs.ts). Uploads in flight have no row; a row is written once the bytes are
// stored and checked, and removed by the LFS GC when nothing reachable points at it.
import { and, asc, eq, gt, inArray, isNull, lte, or, sql } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import type { Repo } from "../../db/schema/index.ts";
import { tables } from "../../db/tables.ts";

/** An object row as the LFS service reads it. */
export interface LfsObjectRow {
  networkId: string;
  oid: string;
  size: number;
  repoId: string | null;
  orgId: string | null;
  createdAt: number;
  /** When a batch last offered the object as already held (GC's grace counts from the later of this and createdAt). */
  touchedAt?: number | null;
}

/** The rows of `oids` in the network (the oids it holds verified), by oid. */
export async function objectsIn(q: Queryable, networkId: string, oids: readonly string[]): Promise<Map<string, LfsObjectRow>> {
  if (oids.length === 0) return new Map();
  const { lfsObjects: o } = tables(q);
  const rows = (await q
    .select()
    .from(o)
    .where(and(eq(o.networkId, networkId), inArray(o.oid, [...oids])))) as LfsObjectRow[];
  return new Map(rows.map((r) => [r.oid, r]));
}

/** Records a verified object (a second verification of the same object keeps the first row: its uploader is counted). */
export async function insertObject(tx: Tx, row: LfsObjectRow): Promise<void> {
  const { lfsObjects: o } = tables(tx);
  await tx.insert(o).values(row).onConflictDoNothing();
}

/** A page of the network's rows after `afterOid`, in oid order (GC and fsck walk them in pages). */
export async function objectPage(q: Queryable, networkId: string, afterOid: string, limit: number): Promise<LfsObjectRow[]> {
  const { lfsObjects: o } = tables(q);
  return (await q
    .select()
    .from(o)
    .where(and(eq(o.networkId, networkId), gt(o.oid, afterOid)))
    .orderBy(asc(o.oid))
    .limit(limit)) as LfsObjectRow[];
}

/** Every network that holds objects. */
export async function networksWithObjects(q: Queryable): Promise<string[]> {
  const { lfsObjects: o } = tables(q);
  const rows = await q.selectDistinct({ networkId: o.networkId }).from(o).orderBy(asc(o.networkId));
  return rows.map((r) => r.networkId);
}

/**
 * Marks `oids` of the network as offered just now (a batch told the client it need not upload them),
 * in one statement; the oids whose rows still exist (a row GC removed meanwhile is not among them).
 */
export async function touchObjects(tx: Tx, networkId: string, oids: readonly string[], at: number): Promise<Set<string>> {
  if (oids.length === 0) return new Set();
  const { lfsObjects: o } = tables(tx);
  const rows = await tx
    .update(o)
    .set({ touchedAt: at })
    .where(and(eq(o.networkId, networkId), inArray(o.oid, [...oids])))
    .returning({ oid: o.oid });
  return new Set(rows.map((r) => r.oid));
}

/**
 * Removes one object's row, only if it is still the row GC judged (created at `createdAt`) and
 * neither created nor offered by a batch after `cutoff` (the condition is re-read by the delete
 * itself, inside the caller's transaction); whether it was removed.
 */
export async function deleteObject(tx: Tx, networkId: string, oid: string, createdAt: number, cutoff: number): Promise<boolean> {
  const { lfsObjects: o } = tables(tx);
  const gone = await tx
    .delete(o)
    .where(
      and(eq(o.networkId, networkId), eq(o.oid, oid), eq(o.createdAt, createdAt), lte(o.createdAt, cutoff), or(isNull(o.touchedAt), lte(o.touchedAt, cutoff))),
    )
    .returning({ oid: o.oid });
  return gone.length > 0;
}

/** The repositories of a network as rows (GC opens each one's snapshot). */
export async function networkRepos(q: Queryable, networkId: string): Promise<Repo[]> {
  const { repos: r } = tables(q);
  return (await q.select().from(r).where(sql`${r.id} = ${networkId} OR ${r.lfsNetworkId} = ${networkId}`)) as Repo[];
}

/** Every head any change of the repository ever had (a patchset's commits keep their LFS objects alive too). */
export async function patchsetHeads(q: Queryable, repoId: string): Promise<string[]> {
  const { changePatchsets: p, changes: c } = tables(q);
  const rows = await q.selectDistinct({ head: p.head }).from(p).innerJoin(c, eq(c.id, p.changeId)).where(eq(c.repoId, repoId));
  return rows.map((x) => x.head);
}
