// The git domain's queries: refs and the live pack list of a repository.
import { and, eq, sql } from "drizzle-orm";
import { refs } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import type { Oid, Ref } from "../../git/types.ts";

/** A live pack as the snapshot needs it. */
export interface PackRow {
  name: string;
  size: number;
}

/**
 * Refs (by name) and live packs (newest first) of a repository, read by one statement so both
 * come from the same committed state on any database.
 */
export async function snapshotRows(q: Queryable, repoId: string): Promise<{ refs: Ref[]; packs: PackRow[] }> {
  const rows = q.all<{ kind: "ref" | "pack"; name: string; target: string | null; size: number; created: number }>(sql`
    SELECT 'ref' AS kind, name, target, 0 AS size, 0 AS created FROM refs WHERE repo_id = ${repoId}
    UNION ALL
    SELECT 'pack' AS kind, name, NULL AS target, size, created_at AS created FROM packs WHERE repo_id = ${repoId} AND replaced_at IS NULL`);
  const refRows: Ref[] = [];
  const packRows: (PackRow & { created: number })[] = [];
  for (const r of rows) {
    if (r.kind === "ref") refRows.push({ name: r.name, oid: r.target! });
    else packRows.push({ name: r.name, size: r.size, created: r.created });
  }
  refRows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  packRows.sort((a, b) => b.created - a.created);
  return { refs: refRows, packs: packRows.map(({ name, size }) => ({ name, size })) };
}

/** The live refs of a repository, sorted by name. */
export async function readRefs(q: Queryable, repoId: string): Promise<Ref[]> {
  return q.select({ name: refs.name, oid: refs.target }).from(refs).where(eq(refs.repoId, repoId)).orderBy(refs.name).all();
}

/** The current target of one ref, or null. */
export async function readRef(q: Queryable, repoId: string, name: string): Promise<Oid | null> {
  return q.select({ target: refs.target }).from(refs).where(and(eq(refs.repoId, repoId), eq(refs.name, name))).get()?.target ?? null;
}
