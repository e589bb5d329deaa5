// Dependency caches (issue 30, DECISIONS §5 CI "Actions"): the agent's `actions/cache` calls with
// the per-job token. An entry is an archive in object storage, immutable per (repository, scope,
// key, version). GitHub's scoping rule: a job reads its own scope (its run's ref) and then the
// repository's default branch; it writes only its own scope. A change run's ref is its source
// branch; a change from a fork writes `fork:{fork id}/{ref}`, a scope no run of the target reads,
// so a fork can never poison the target's caches (it may still read the default branch's).
// Bytes: on S3 the agent GETs and PUTs presigned bucket URLs (svc moves none of them); on fs they
// stream through svc (`…/content`), the upload capped at the size declared at the reservation.
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { AppError, Conflict, Invalid, NotFound, TooLarge, Unprocessable } from "../../errors.ts";
import { newId } from "../../util/ids.ts";
import type { Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { ownJob } from "./job-calls.ts";
import type { CacheCommitted, CacheHit, CacheLookup, CacheReserve, CacheReserved } from "./caches-schemas.ts";
import * as caches from "./store-caches.ts";
import type { CacheRow } from "./store-caches.ts";
import type { JobRow } from "./store-runs.ts";
import type { JobSpecV2 } from "./workflow.ts";

/** Bounds of the cache calls (GitHub's where it has them). */
export const CACHE_LIMITS = Object.freeze({
  keyChars: 512,
  restoreKeys: 10,
  /** A presigned URL's lifetime: long enough to start a transfer, short enough to be useless later. */
  presignSeconds: 15 * 60,
  /** A restore stamps last_used_at at most once per this window per entry (no write per restore of a hot key). */
  touchWindowMs: 60_000,
  /** S3 takes at most 5 GiB in one PUT (presigned uploads are single PUTs). */
  s3SinglePut: 5 * 1024 ** 3,
});

// Why hex only, 16 to 128 digits: the agent sends a digest (SHA-256 of the paths); anything else is not one.
const VERSION = /^[0-9a-f]{16,128}$/;
// What newId() makes: the id in a content path is checked before it reaches a query or a key.
const CACHE_ID = /^[a-z2-7]{16}$/;

/** Where an entry's archive is stored (a kind of stored file: services/ops/object-kinds.ts). */
export function cacheObjectKey(repoId: string, cacheId: string): string {
  return `repos/${repoId}/ci-caches/${cacheId}`;
}

/**
 * The scope a job writes: its run's ref, or for a change from a fork (an untrusted run, or a job
 * that fetches from another repository) `fork:{fork id}/{ref}`.
 */
export function scopeOf(ref: string, trusted: boolean, forkId: string | null): string {
  // Why both signals: either alone means the code comes from outside the repository's writers.
  return trusted && !forkId ? ref : `fork:${forkId ?? "untrusted"}/${ref}`;
}

/** A job's cache facts: its row, the scope it writes, and the scopes it reads in order. */
interface CacheJob {
  job: JobRow;
  scope: string;
  reads: string[];
}

/** The running job `jobId` after checking the caller is its token (401 / 404 otherwise), with its scopes. */
async function cacheJob(ctx: Ctx, actor: Principal, jobId: string): Promise<CacheJob> {
  const job = await ownJob(ctx, actor, jobId);
  const facts = await caches.cacheJobFacts(ctx.db.read, job.runId);
  if (!facts) throw NotFound("job not found");
  const scope = scopeOf(facts.ref, facts.trusted, (job.spec as JobSpecV2).checkoutRepoId ?? null);
  const fallback = `refs/heads/${facts.defaultBranch}`;
  return { job, scope, reads: scope === fallback ? [scope] : [scope, fallback] };
}

function checkKey(key: string, what: string): void {
  if (typeof key !== "string" || key.length === 0) throw Invalid(`${what} must not be empty`);
  if (key.length > CACHE_LIMITS.keyChars) throw Invalid(`${what} is longer than ${CACHE_LIMITS.keyChars} characters`);
  if (key.includes(",")) throw Invalid(`${what} cannot contain commas`);
}

function checkVersion(version: string): void {
  if (typeof version !== "string" || !VERSION.test(version)) throw Invalid("version must be a lower-case hex digest (16 to 128 digits)");
}

/** How a client fetches a ready entry: a presigned bucket URL (S3), or this server's content path (fs). */
async function downloadOf(ctx: Ctx, jobId: string, row: CacheRow): Promise<CacheHit["download"]> {
  if (ctx.store.presign) return { url: await ctx.store.presign("GET", row.key, CACHE_LIMITS.presignSeconds), headers: {} };
  return { url: contentUrl(ctx, jobId, row.id), headers: {} };
}

/** This server's content route of an entry (fs), absolute as artifacts' are: the agent sends the job token only to its server's /v1/runner/ routes. */
function contentUrl(ctx: Ctx, jobId: string, cacheId: string): string {
  return `${ctx.baseUrl}/v1/runner/jobs/${jobId}/caches/${cacheId}/content`;
}

/**
 * POST /v1/runner/jobs/{job_id}/caches/lookup: the entry to restore, or null (204). Per scope in
 * order (the job's, then the default branch's): the key exactly, then the key and each restore key
 * as a prefix (newest first), all with the same version (GitHub's rule).
 */
export async function lookupCache(ctx: Ctx, actor: Principal, jobId: string, input: CacheLookup): Promise<CacheHit | null> {
  const { job, reads } = await cacheJob(ctx, actor, jobId);
  checkKey(input.key, "key");
  const restoreKeys = input.restore_keys ?? [];
  if (restoreKeys.length > CACHE_LIMITS.restoreKeys) throw Invalid(`at most ${CACHE_LIMITS.restoreKeys} restore keys`);
  for (const k of restoreKeys) checkKey(k, "a restore key");
  checkVersion(input.version);
  for (const scope of reads) {
    let row = await caches.exactEntry(ctx.db.read, job.repoId, scope, input.key, input.version);
    for (const prefix of [input.key, ...restoreKeys]) {
      if (row) break;
      row = await caches.newestWithPrefix(ctx.db.read, job.repoId, scope, prefix, input.version);
    }
    if (!row) continue;
    const t = now();
    if (row.lastUsedAt < t - CACHE_LIMITS.touchWindowMs) await ctx.db.transaction((tx) => caches.touchEntry(tx, row!.id, t, CACHE_LIMITS.touchWindowMs));
    return { cache_id: row.id, cache_key: row.cacheKey, size: row.size, exact: row.cacheKey === input.key, scope, download: await downloadOf(ctx, jobId, row) };
  }
  return null;
}

/** The largest entry this server takes. */
function entryLimit(ctx: Ctx): number {
  return ctx.store.presign ? Math.min(ctx.config.ciCacheMax, CACHE_LIMITS.s3SinglePut) : ctx.config.ciCacheMax;
}

/**
 * POST /v1/runner/jobs/{job_id}/caches: reserves (key, version) in the job's own scope and answers
 * where to PUT the archive. 409 when the scope has it already (entries are immutable) or another
 * job is saving it.
 */
export async function reserveCache(ctx: Ctx, actor: Principal, jobId: string, input: CacheReserve): Promise<CacheReserved> {
  const { job, scope } = await cacheJob(ctx, actor, jobId);
  checkKey(input.key, "key");
  checkVersion(input.version);
  const limit = entryLimit(ctx);
  if (!Number.isSafeInteger(input.size) || input.size < 0) throw Invalid("size must be a whole number of bytes");
  if (input.size > limit) throw TooLarge(`the cache is ${input.size} bytes; this server takes at most ${limit} bytes per entry (SVC_CI_CACHE_MAX)`);
  const sha256 = input.sha256?.toLowerCase() ?? null;
  if (sha256 !== null && !/^[0-9a-f]{64}$/.test(sha256)) throw Invalid("sha256 must be 64 hexadecimal digits");
  if (sha256 === null && ctx.store.presign) throw Invalid("sha256 (the archive's SHA-256, hex) is required: the bucket's upload address is bound to it");
  const id = newId();
  const key = cacheObjectKey(job.repoId, id);
  const t = now();
  const made = await ctx.db.transaction((tx) =>
    caches.reserveEntry(tx, {
      id,
      repoId: job.repoId,
      orgId: job.orgId,
      scope,
      cacheKey: input.key,
      version: input.version,
      size: input.size,
      key,
      state: "reserved",
      jobId: job.id,
      createdAt: t,
      lastUsedAt: t,
    }),
  );
  if (!made) throw Conflict(`a cache with key ${JSON.stringify(input.key)} already exists for ${scope} (entries are immutable), or another job is saving it`);
  if (ctx.store.presign) {
    // Why the signed checksum and length: the bucket then refuses a body other than the one reserved (svc never sees the bytes
    // to hash them), and a bucket that does not check checksums still refuses another size (SVC_CI_CACHE_MAX holds), as for LFS.
    const signed = { "Content-Length": String(input.size), "x-amz-checksum-sha256": Buffer.from(sha256!, "hex").toString("base64") };
    return {
      cache_id: id,
      upload: { url: await ctx.store.presign("PUT", key, CACHE_LIMITS.presignSeconds, { headers: signed }), method: "PUT", headers: signed },
    };
  }
  return { cache_id: id, upload: { url: contentUrl(ctx, jobId, id), method: "PUT", headers: {} } };
}

/** The reservation `cacheId` the job made (404 otherwise: another job's or repository's entry is not its to write). */
async function ownReservation(ctx: Ctx, job: JobRow, cacheId: string): Promise<CacheRow> {
  const row = CACHE_ID.test(cacheId) ? await caches.entryById(ctx.db.read, job.repoId, cacheId) : null;
  if (!row || row.jobId !== job.id) throw NotFound("cache reservation not found");
  if (row.state !== "reserved") throw Conflict("the cache is already committed");
  return row;
}

/**
 * PUT /v1/runner/jobs/{job_id}/caches/{cache_id}/content (fs): streams the body to a temp file,
 * never more than the size declared at the reservation (413 past it; 400 when short), then stores it.
 */
export async function writeCacheContent(
  ctx: Ctx,
  actor: Principal,
  jobId: string,
  cacheId: string,
  body: AsyncIterable<Uint8Array> | null,
  declaredLength: number | null,
): Promise<void> {
  const { job } = await cacheJob(ctx, actor, jobId);
  if (!ctx.store.localPath) throw NotFound("this server's caches are uploaded to the bucket: use the URL the reservation gave");
  const row = await ownReservation(ctx, job, cacheId);
  if (declaredLength !== null && declaredLength !== row.size) throw Invalid(`the body is ${declaredLength} bytes; the reservation said ${row.size}`);
  const temp = join(ctx.tmpDir, `cache-${row.id}-${newId()}`);
  const file = await open(temp, "wx");
  let total = 0;
  try {
    try {
      for await (const chunk of body ?? []) {
        total += chunk.byteLength;
        // Why a hard cap: the declared size was checked against the limit; a body that runs past it is refused before it fills the disk.
        if (total > row.size) throw TooLarge(`the body is larger than the ${row.size} bytes reserved`);
        await file.write(chunk);
      }
    } finally {
      await file.close();
    }
    if (total !== row.size) throw Invalid(`the body is ${total} bytes; the reservation said ${row.size}`);
    await ctx.store.putFile(row.key, temp);
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * POST /v1/runner/jobs/{job_id}/caches/{cache_id}/commit: the stored archive must have the size
 * reserved; the entry is then ready (restores see it). A wrong size deletes the upload and the
 * reservation, so the job may save again.
 */
export async function commitCache(ctx: Ctx, actor: Principal, jobId: string, cacheId: string): Promise<CacheCommitted> {
  const { job } = await cacheJob(ctx, actor, jobId);
  if (!CACHE_ID.test(cacheId)) throw NotFound("cache reservation not found");
  const row = await caches.entryById(ctx.db.read, job.repoId, cacheId);
  if (!row) {
    // The reservation was swept (stale) while the upload ran: its late bytes have no row, so they go now.
    await ctx.store.delete(cacheObjectKey(job.repoId, cacheId));
    throw NotFound("cache reservation not found (it expired); save again");
  }
  if (row.jobId !== job.id) throw NotFound("cache reservation not found");
  if (row.state === "ready") return { cache_id: row.id, size: row.size };
  const stored = await ctx.store.stat(row.key);
  if (!stored) throw Conflict("nothing was uploaded for this cache yet");
  if (stored.size !== row.size) {
    await ctx.store.delete(row.key);
    await ctx.db.transaction((tx) => caches.deleteEntry(tx, row.id));
    throw Unprocessable(`the upload is ${stored.size} bytes; the reservation said ${row.size}`);
  }
  const ok = await ctx.db.transaction((tx) => caches.markReady(tx, row.id, stored.size, now()));
  if (!ok) throw NotFound("cache reservation not found (it expired); save again");
  return { cache_id: row.id, size: row.size };
}

/**
 * GET /v1/runner/jobs/{job_id}/caches/{cache_id}/content (fs): the file of a ready entry the job
 * may read (its own scope's or the default branch's), to stream with sendfile.
 */
export async function cacheContent(ctx: Ctx, actor: Principal, jobId: string, cacheId: string): Promise<{ path: string; size: number }> {
  const { job, reads } = await cacheJob(ctx, actor, jobId);
  if (!ctx.store.localPath) throw NotFound("this server's caches are served by the bucket: use the URL the lookup gave");
  const row = CACHE_ID.test(cacheId) ? await caches.entryById(ctx.db.read, job.repoId, cacheId) : null;
  // Why the scope check: a job reads what a lookup could have answered it, nothing of another branch.
  if (!row || row.state !== "ready" || !reads.includes(row.scope)) throw NotFound("cache not found");
  const stored = await ctx.store.stat(row.key);
  if (!stored) throw new AppError("not_found", "cache not found (evicted)");
  return { path: ctx.store.localPath(row.key), size: stored.size };
}
