// The ops domain's queries: readiness probes, queue gauges, what backup and fsck read, and the
// node secrets (the SSH host keys every node of a PostgreSQL installation shares).
import { inArray, sql } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import { x } from "../../db/dialect.ts";
import { tables } from "../../db/tables.ts";

/** One round trip to the database (readiness). */
export async function ping(q: Queryable): Promise<void> {
  await x(q).rows(sql`SELECT 1`);
}

/** Tags of the migrations recorded as applied. */
export async function appliedMigrations(q: Queryable): Promise<string[]> {
  return (await x(q).rows<{ tag: string }>(sql`SELECT tag FROM svc_migrations`)).map((r) => r.tag);
}

/** Mail outbox: messages still to send, messages given up on. */
export async function mailOutbox(q: Queryable): Promise<{ pending: number; failed: number; oldestPending: number | null }> {
  const [row] = await x(q).rows<{ pending: number | null; failed: number | null; oldestPending: number | null }>(sql`
    SELECT sum(CASE WHEN sent_at IS NULL AND failed_at IS NULL THEN 1 ELSE 0 END) AS pending, sum(CASE WHEN failed_at IS NOT NULL THEN 1 ELSE 0 END) AS failed,
           min(CASE WHEN sent_at IS NULL AND failed_at IS NULL THEN created_at END) AS "oldestPending"
    FROM mail_outbox`);
  return { pending: row?.pending ?? 0, failed: row?.failed ?? 0, oldestPending: row?.oldestPending ?? null };
}

/** A repository by its full name `org/name`, with its id. */
export interface RepoName {
  id: string;
  name: string;
}

/** Every repository with its full name, sorted by it. */
export async function allRepoNames(q: Queryable): Promise<RepoName[]> {
  return await x(q).rows<RepoName>(sql`SELECT r.id AS id, o.name || '/' || r.name AS name FROM repos r JOIN orgs o ON o.id = r.org_id ORDER BY 2`);
}

/** One repository by org and repository name (case-insensitive), or null. */
export async function repoByFullName(q: Queryable, org: string, name: string): Promise<RepoName | null> {
  const [row] = await x(q).rows<RepoName>(sql`SELECT r.id AS id, o.name || '/' || r.name AS name FROM repos r JOIN orgs o ON o.id = r.org_id
      WHERE lower(o.name) = lower(${org}) AND lower(r.name) = lower(${name})`);
  return row ?? null;
}

/** A pack row as backup and fsck read it. */
export interface PackFacts {
  repoId: string;
  /** The repository whose prefix holds the files (repoId itself unless the pack is shared). */
  storageRepoId: string;
  name: string;
  size: number;
  idxSize: number;
  objectCount: number;
  replacedAt: number | null;
}

/** Pack rows (live only unless `withReplaced`), of one repository or of all. */
export async function packRows(q: Queryable, opts: { repoId?: string; withReplaced?: boolean } = {}): Promise<PackFacts[]> {
  const repoFilter = opts.repoId === undefined ? sql`TRUE` : sql`repo_id = ${opts.repoId}`;
  const liveFilter = opts.withReplaced ? sql`TRUE` : sql`replaced_at IS NULL`;
  return await x(q).rows<PackFacts>(sql`
    SELECT repo_id AS "repoId", storage_repo_id AS "storageRepoId", name, size, idx_size AS "idxSize", object_count AS "objectCount", replaced_at AS "replacedAt"
    FROM packs WHERE ${repoFilter} AND ${liveFilter} ORDER BY repo_id, created_at`);
}

/** Refs of one repository. */
export async function refRows(q: Queryable, repoId: string): Promise<{ name: string; target: string }[]> {
  return await x(q).rows<{ name: string; target: string }>(sql`SELECT name, target FROM refs WHERE repo_id = ${repoId} ORDER BY name`);
}

/** Every repository id that exists (orphan detection). */
export async function repoIds(q: Queryable): Promise<Set<string>> {
  return new Set((await x(q).rows<{ id: string }>(sql`SELECT id FROM repos`)).map((r) => r.id));
}

/** A stored CI log chunk as backup and fsck read it, with its job's repository and recorded log size. */
export interface LogChunkFacts {
  repoId: string;
  jobId: string;
  offset: number;
  size: number;
  key: string;
  /** The job's log_size: the sum of its chunks' sizes when the log is whole. */
  logSize: number;
  /** The server's masking pass changed the stored bytes (their size is not `size`). */
  masked: boolean;
}

/** Every CI log chunk row (of one repository, or of all), by job then offset. */
export async function logChunkRows(q: Queryable, opts: { repoId?: string } = {}): Promise<LogChunkFacts[]> {
  const repoFilter = opts.repoId === undefined ? sql`TRUE` : sql`j.repo_id = ${opts.repoId}`;
  return await x(q).rows<LogChunkFacts>(sql`
    SELECT j.repo_id AS "repoId", c.job_id AS "jobId", c."offset" AS "offset", c.size AS size, c.key AS key, j.log_size AS "logSize", c.masked AS masked
    FROM job_log_chunks c JOIN workflow_jobs j ON j.id = c.job_id
    WHERE ${repoFilter} ORDER BY j.repo_id, c.job_id, c."offset"`);
}

/** Every CI cache entry's archive key and size (`ready` entries only, or reservations too): what backup copies and fsck accounts for. */
export async function cacheEntryFiles(q: Queryable, opts: { readyOnly: boolean }): Promise<{ key: string; size: number }[]> {
  const { ciCaches: c } = tables(q);
  const rows = q.select({ key: c.key, size: c.size }).from(c);
  return await (opts.readyOnly ? rows.where(sql`${c.state} = 'ready'`) : rows);
}

/** Every CI artifact row's object: its key, size and whether it is confirmed (ready). */
export async function artifactRows(q: Queryable): Promise<{ key: string; size: number; ready: boolean }[]> {
  const rows = await x(q).rows<{ key: string; size: number; state: string }>(sql`SELECT key, size, state FROM ci_artifacts ORDER BY key`);
  return rows.map((r) => ({ key: r.key, size: Number(r.size), ready: r.state === "ready" }));
}

/** Jobs of one repository that have written log text (log_size > 0), with their run and key, for fsck. */
export async function jobsWithLogs(q: Queryable, repoId: string): Promise<{ id: string; runId: string; key: string; logSize: number }[]> {
  return await x(q).rows<{ id: string; runId: string; key: string; logSize: number }>(sql`
    SELECT id, run_id AS "runId", key, log_size AS "logSize" FROM workflow_jobs WHERE repo_id = ${repoId} AND log_size > 0 ORDER BY queued_at, id`);
}

/** A verified Git LFS object: its network (the root repository's id), oid and size. */
export interface LfsObjectFacts {
  networkId: string;
  oid: string;
  size: number;
}

/** Every Git LFS object row (of one network, or of all), by network then oid. */
export async function lfsObjectRows(q: Queryable, opts: { networkId?: string } = {}): Promise<LfsObjectFacts[]> {
  const filter = opts.networkId === undefined ? sql`TRUE` : sql`network_id = ${opts.networkId}`;
  return await x(q).rows<LfsObjectFacts>(sql`
    SELECT network_id AS "networkId", oid, size FROM lfs_objects WHERE ${filter} ORDER BY network_id, oid`);
}

/** The uploaded avatars people's rows name (issue 33): `users.avatar` keys. */
export async function avatarKeys(q: Queryable): Promise<string[]> {
  const rows = await x(q).rows<{ avatar: string }>(sql`SELECT avatar FROM users WHERE avatar IS NOT NULL ORDER BY avatar`);
  return rows.map((r) => r.avatar);
}

/** Node secrets by name (those stored among `names`): the SSH host keys of a PostgreSQL installation. */
export async function nodeSecretValues(q: Queryable, names: readonly string[]): Promise<Map<string, string>> {
  const { nodeSecrets } = tables(q);
  const rows = await q
    .select({ name: nodeSecrets.name, value: nodeSecrets.value })
    .from(nodeSecrets)
    .where(inArray(nodeSecrets.name, [...names]));
  return new Map(rows.map((r) => [r.name, r.value]));
}

/** Stores node secrets: `replace` overwrites a stored value of the same name, else the stored one stays. */
export async function putNodeSecrets(tx: Tx, rows: readonly { name: string; value: string }[], at: number, opts: { replace: boolean }): Promise<void> {
  if (rows.length === 0) return;
  const { nodeSecrets } = tables(tx);
  const insert = tx.insert(nodeSecrets).values(rows.map((r) => ({ name: r.name, value: r.value, createdAt: at })));
  if (opts.replace) await insert.onConflictDoUpdate({ target: nodeSecrets.name, set: { value: sql`excluded.value`, createdAt: at } });
  else await insert.onConflictDoNothing();
}
