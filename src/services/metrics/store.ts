// The metrics domain's queries: per-org metric buckets (minute, hour, day), and what usage adds up
// (live pack bytes, transfer bytes). Async, so another database changes this file, not the services.
import { sql } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import { x } from "../../db/dialect.ts";

/** One stored bucket. */
export interface BucketRow {
  orgId: string;
  kind: string;
  grain: number;
  start: number;
  count: number;
  bytes: number;
  msSum: number;
  /** The stored histogram (services/metrics/histogram.ts `encode`). */
  hist: Uint8Array;
}

/** The bucket at this key, or null. */
export async function bucketAt(tx: Tx, key: { orgId: string; kind: string; grain: number; start: number }): Promise<BucketRow | null> {
  return (
    (
      await x(tx).rows<BucketRow>(sql`
      SELECT org_id AS "orgId", kind, grain, start, count, bytes, ms_sum AS "msSum", hist FROM metric_buckets
      WHERE org_id = ${key.orgId} AND kind = ${key.kind} AND grain = ${key.grain} AND start = ${key.start}`)
    )[0] ?? null
  );
}

/** Writes a bucket (insert, or replace the one at its key). */
export async function putBucket(tx: Tx, row: BucketRow): Promise<void> {
  await x(tx).run(sql`
    INSERT INTO metric_buckets (org_id, kind, grain, start, count, bytes, ms_sum, hist)
    VALUES (${row.orgId}, ${row.kind}, ${row.grain}, ${row.start}, ${row.count}, ${row.bytes}, ${row.msSum}, ${row.hist})
    ON CONFLICT (org_id, kind, grain, start) DO UPDATE SET count = excluded.count, bytes = excluded.bytes, ms_sum = excluded.ms_sum, hist = excluded.hist`);
}

/** A half-open range of bucket starts at one grain. */
export interface BucketRange {
  grain: number;
  from: number;
  to: number;
}

/** The org's buckets of the given kinds in the given ranges (one statement). */
export async function bucketsIn(
  q: Queryable,
  orgId: string,
  kinds: readonly string[],
  ranges: readonly BucketRange[],
): Promise<Omit<BucketRow, "orgId" | "start">[]> {
  if (!kinds.length || !ranges.length) return [];
  const rangeSql = sql.join(
    ranges.map((r) => sql`(grain = ${r.grain} AND start >= ${r.from} AND start < ${r.to})`),
    sql` OR `,
  );
  return await x(q).rows(sql`
    SELECT kind, grain, count, bytes, ms_sum AS "msSum", hist FROM metric_buckets
    WHERE org_id = ${orgId} AND kind IN (${sql.join(
      kinds.map((k) => sql`${k}`),
      sql`, `,
    )}) AND (${rangeSql})`);
}

/**
 * Bytes stored per repository of the org, by name: every live pack (and its index), the Git LFS
 * objects the repository uploaded first (issue 31: a fork that reuses its parent's objects adds
 * nothing) and every confirmed CI artifact's zip (issue 30); repositories with none answer 0.
 */
export async function liveBytesPerRepo(q: Queryable, orgId: string): Promise<{ name: string; bytes: number }[]> {
  const rows = await x(q).rows<{ name: string; bytes: number | string }>(sql`
    SELECT r.name AS name,
      CAST(coalesce((SELECT sum(p.size + p.idx_size) FROM packs p WHERE p.repo_id = r.id AND p.replaced_at IS NULL), 0)
         + coalesce((SELECT sum(o.size) FROM lfs_objects o WHERE o.repo_id = r.id), 0)
         + coalesce((SELECT sum(a.size) FROM ci_artifacts a WHERE a.repo_id = r.id AND a.state = 'ready'), 0) AS BIGINT) AS bytes
    FROM repos r
    WHERE r.org_id = ${orgId}
    ORDER BY lower(r.name)`);
  return rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
}
