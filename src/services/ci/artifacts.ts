// CI artifacts (issue 30; DECISIONS §5 "Actions"): zips a job uploads, kept per run in object
// storage for SVC_CI_ARTIFACT_DAYS. The agent reserves a name and size with its job token and
// gets an upload address: on S3 a presigned PUT to the bucket (svc moves none of the bytes), on
// fs svc's own content route (streamed to a temp file, hashed, within the declared size). It then
// confirms: the object must be there with that size, and the artifact is `ready`. Downloads are
// presigned GETs on S3 and svc's streamed file on fs.
//
// Object lifetime: a row names its object from the reservation on, so a row is deleted only
// after its object (the sweep: expired rows, reservations never confirmed, replaced and deleted
// artifacts). A crash between the two leaves a row whose object is gone: the next pass deletes
// the object again (absent is not an error) and then the row. A deleted repository's objects go
// with its prefix (repo.purge).
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { AppError, Conflict, Gone, Invalid, NotFound, TooLarge } from "../../errors.ts";
import { newId } from "../../util/ids.ts";
import type { Principal } from "../access/principal.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import { ownJob } from "./job-calls.ts";
import * as store from "./store-artifacts.ts";
import type { ArtifactRow } from "./store-artifacts.ts";
import * as runs from "./store-runs.ts";
import type { JobRow } from "./store-runs.ts";

const DAY = 24 * 3600 * 1000;

/** Bounds of an artifact: its name (GitHub's length) and its zip (S3's single PUT: 5 GiB). */
export const ARTIFACT_LIMITS = Object.freeze({ nameChars: 256, bytes: 5 * 1024 ** 3 });
/** Lifetime of a presigned upload or download address (used at once by the agent). */
const PRESIGN_SECONDS = 15 * 60;
/** Lifetime of the presigned address the API's zip redirect answers (a browser follows it at once). */
const REDIRECT_SECONDS = 5 * 60;
/** An upload reserved this long ago and never confirmed is swept. */
export const STALE_UPLOAD_MS = DAY;
/** Rows one read of a sweep pass takes; a pass reads at most SWEEP_BATCHES of them (the next hourly pass takes the rest). */
const SWEEP_BATCH = 1000;
const SWEEP_BATCHES = 100;

/** Characters GitHub refuses in an artifact name (actions/toolkit's upload-artifact). */
const BAD_NAME = /[":<>|*?\r\n\\/]/;

/** Why `name` cannot name an artifact, or null when it can. */
export function artifactNameProblem(name: string): string | null {
  if (name.length === 0) return "the artifact name is empty";
  if (name.length > ARTIFACT_LIMITS.nameChars) return `the artifact name is longer than ${ARTIFACT_LIMITS.nameChars} characters`;
  if (BAD_NAME.test(name) || name.includes("\0"))
    return `the artifact name ${JSON.stringify(name.slice(0, 100))} contains a character artifacts may not use: " : < > | * ? \\r \\n \\ /`;
  if (name !== name.trim()) return "the artifact name starts or ends with white space";
  return null;
}

/** `attachment; filename="<name>.zip"` with an RFC 8187 form for names beyond ASCII (the API's answer, or the bucket's on S3). */
export function zipDisposition(name: string): string {
  const file = `${name}.zip`;
  const ascii = file.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file)}`;
}

/** Where the zip of artifact `id` lives (a kind of stored file: services/ops/object-kinds.ts). */
export function artifactKey(repoId: string, runId: string, id: string): string {
  return `repos/${repoId}/ci-artifacts/${runId}/${id}.zip`;
}

/** An address the agent moves bytes on: the bucket's (presigned; no credential) or svc's (the job token as bearer). */
export interface Transfer {
  url: string;
  headers: Record<string, string>;
}

/** What a reservation answers. */
export interface ArtifactReserved {
  artifact_id: string;
  expires_at: number;
  upload: Transfer & { method: "PUT" };
}

/** The largest zip this server takes (on fs also bounded by its request body limit). */
function maxBytes(ctx: Ctx): number {
  return ctx.store.presign ? ARTIFACT_LIMITS.bytes : Math.min(ARTIFACT_LIMITS.bytes, ctx.config.gitMaxPush);
}

/** The address of artifact `id`'s bytes on svc (fs): PUT to upload, GET to download. */
function contentUrl(ctx: Ctx, jobId: string, id: string): string {
  return `${ctx.baseUrl}/v1/runner/jobs/${encodeURIComponent(jobId)}/artifacts/${encodeURIComponent(id)}/content`;
}

/**
 * POST /v1/runner/jobs/{job_id}/artifacts `{ name, size, sha256?, overwrite?, retention_days? }`:
 * reserves `name` in the job's run. An artifact of an earlier attempt with that name is replaced;
 * one of the same attempt is a 409 unless `overwrite`. 400 for a name GitHub refuses, 413 past
 * the size bound; `retention_days` is capped at SVC_CI_ARTIFACT_DAYS.
 */
export async function reserveArtifact(
  ctx: Ctx,
  actor: Principal,
  jobId: string,
  input: { name: string; size: number; sha256?: string; overwrite?: boolean; retention_days?: number },
): Promise<ArtifactReserved> {
  const job = await ownJob(ctx, actor, jobId);
  const problem = artifactNameProblem(input.name);
  if (problem) throw Invalid(problem);
  if (!Number.isSafeInteger(input.size) || input.size < 0) throw Invalid("size must be a whole number of bytes");
  const cap = maxBytes(ctx);
  if (input.size > cap) throw TooLarge(`an artifact may be at most ${cap} bytes; this one is ${input.size}`);
  const sha256 = input.sha256?.toLowerCase() ?? null;
  if (sha256 !== null && !/^[0-9a-f]{64}$/.test(sha256)) throw Invalid("sha256 must be 64 hexadecimal digits");
  const days = Math.min(
    ctx.config.ciArtifactDays,
    input.retention_days && input.retention_days > 0 ? Math.ceil(input.retention_days) : ctx.config.ciArtifactDays,
  );
  const t = now();
  const id = newId();
  const row: ArtifactRow = {
    id,
    runId: job.runId,
    repoId: job.repoId,
    orgId: job.orgId,
    jobId: job.id,
    attempt: job.attempt,
    name: input.name,
    size: input.size,
    sha256,
    key: artifactKey(job.repoId, job.runId, id),
    state: "uploading",
    createdAt: t,
    expiresAt: t + days * DAY,
  };
  const replaced = await ctx.db.transaction(async (tx) => {
    const fresh = await runs.jobById(tx, job.id);
    if (fresh?.state !== "running") throw NotFound("job not found");
    const earlier = await store.artifactByName(tx, job.runId, input.name);
    if (earlier && earlier.attempt >= job.attempt && !input.overwrite)
      throw Conflict(`this run already has an artifact named ${JSON.stringify(input.name)}; upload with overwrite: true to replace it`);
    if (earlier) await store.retireArtifact(tx, earlier.id, t);
    await store.insertArtifact(tx, row);
    return earlier ?? null;
  });
  if (replaced) await removeArtifact(ctx, replaced);
  // Why the signed checksum on S3: the bucket then refuses a body other than the one reserved (svc never sees the bytes to hash them).
  const signed: Record<string, string> = sha256 ? { "x-amz-checksum-sha256": Buffer.from(sha256, "hex").toString("base64") } : {};
  const upload: ArtifactReserved["upload"] = ctx.store.presign
    ? { url: await ctx.store.presign("PUT", row.key, PRESIGN_SECONDS, { headers: signed }), method: "PUT", headers: signed }
    : { url: contentUrl(ctx, job.id, id), method: "PUT", headers: { "content-type": "application/zip" } };
  return { artifact_id: id, expires_at: row.expiresAt, upload };
}

/** The uploading artifact `id` of the job's run, uploaded by this job (404 otherwise). */
async function ownUpload(ctx: Ctx, job: JobRow, id: string): Promise<ArtifactRow> {
  const a = await store.artifactOfRun(ctx.db.read, job.runId, id);
  if (!a || a.jobId !== job.id) throw NotFound("artifact not found");
  return a;
}

/**
 * PUT /v1/runner/jobs/{job_id}/artifacts/{artifact_id}/content (fs only): the zip, streamed to a
 * temp file with the reserved size as a hard bound and hashed on the way (the reserved sha256,
 * when given, must match), then stored under the artifact's key.
 */
export async function putArtifactContent(
  ctx: Ctx,
  actor: Principal,
  jobId: string,
  id: string,
  body: ReadableStream<Uint8Array> | null,
  declaredLength: number | null,
): Promise<void> {
  const job = await ownJob(ctx, actor, jobId);
  if (ctx.store.presign) throw NotFound("upload to the address the reservation gave");
  const a = await ownUpload(ctx, job, id);
  if (a.state !== "uploading") throw Conflict("the artifact is already uploaded");
  if (declaredLength !== null && declaredLength !== a.size) throw Invalid(`the body is ${declaredLength} bytes; ${a.size} were reserved`);
  await mkdir(ctx.tmpDir, { recursive: true });
  const tmp = join(ctx.tmpDir, `artifact-${newId()}.zip`);
  try {
    const hash = createHash("sha256");
    const out = createWriteStream(tmp);
    let total = 0;
    try {
      if (body)
        for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
          total += chunk.byteLength;
          // Why a hard bound while reading: the reservation's size is the promise, and a body past it would fill the disk.
          if (total > a.size) throw TooLarge(`the body is larger than the ${a.size} bytes reserved`);
          hash.update(chunk);
          if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
        }
    } finally {
      await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    }
    if (total !== a.size) throw Invalid(`the body is ${total} bytes; ${a.size} were reserved`);
    const digest = hash.digest("hex");
    if (a.sha256 && digest !== a.sha256) throw Invalid(`the body's sha256 is ${digest}, not the ${a.sha256} reserved`);
    await ctx.store.putFile(a.key, tmp);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** What the agent and the API show of an artifact. */
export interface ArtifactShown {
  id: string;
  name: string;
  size: number;
  expires_at: number;
  created_at: number;
  expired: boolean;
}

function shown(a: ArtifactRow, at: number): ArtifactShown {
  return { id: a.id, name: a.name, size: a.size, expires_at: a.expiresAt, created_at: a.createdAt, expired: a.expiresAt <= at };
}

/**
 * POST /v1/runner/jobs/{job_id}/artifacts/{artifact_id}/commit: the object must exist with the
 * reserved size; the artifact is then `ready` (idempotent: a second commit answers the same).
 */
export async function commitArtifact(ctx: Ctx, actor: Principal, jobId: string, id: string): Promise<ArtifactShown> {
  const job = await ownJob(ctx, actor, jobId);
  const a = await ownUpload(ctx, job, id);
  if (a.state === "ready") return shown(a, now());
  const stat = await ctx.store.stat(a.key);
  if (!stat) throw Conflict("the artifact's bytes have not arrived; upload them first");
  if (stat.size !== a.size) throw Conflict(`the uploaded object is ${stat.size} bytes; ${a.size} were reserved`);
  const ok = await ctx.db.transaction((tx) => store.markReady(tx, a.id, null));
  if (!ok) throw NotFound("artifact not found");
  return shown({ ...a, state: "ready" }, now());
}

/** GET /v1/runner/jobs/{job_id}/artifacts: the run's ready, unexpired artifacts, each with its download address. */
export async function jobRunArtifacts(ctx: Ctx, actor: Principal, jobId: string): Promise<{ artifacts: (ArtifactShown & { download: Transfer })[] }> {
  const job = await ownJob(ctx, actor, jobId);
  const t = now();
  const rows = (await store.readyArtifacts(ctx.db.read, job.runId)).filter((a) => a.expiresAt > t);
  const artifacts = [];
  for (const a of rows) {
    const download = ctx.store.presign
      ? { url: await ctx.store.presign("GET", a.key, PRESIGN_SECONDS), headers: {} }
      : { url: contentUrl(ctx, job.id, a.id), headers: {} };
    artifacts.push({ ...shown(a, t), download });
  }
  return { artifacts };
}

/** A stored zip to stream (fs): its file, size and name. */
export interface ArtifactFile {
  path: string;
  size: number;
  name: string;
}

/** GET /v1/runner/jobs/{job_id}/artifacts/{artifact_id}/content (fs only): a ready artifact of the job's run. */
export async function jobArtifactFile(ctx: Ctx, actor: Principal, jobId: string, id: string): Promise<ArtifactFile> {
  const job = await ownJob(ctx, actor, jobId);
  const a = await store.artifactOfRun(ctx.db.read, job.runId, id);
  if (!a || a.state !== "ready") throw NotFound("artifact not found");
  if (a.expiresAt <= now()) throw Gone("the artifact has expired");
  if (!ctx.store.localPath) throw NotFound("download from the address the listing gave");
  return { path: ctx.store.localPath(a.key), size: a.size, name: a.name };
}

/** GET /v1/orgs/{org}/repos/{repo}/runs/{id}/artifacts: the run's artifacts (expired ones until swept), by name. */
export async function listRunArtifacts(ctx: Ctx, t: RepoTarget, runId: string): Promise<{ artifacts: ArtifactShown[] }> {
  need(t, "repo:read");
  const run = await runs.runOfRepo(ctx.db.read, t.repo.id, runId);
  if (!run) throw NotFound("run not found");
  const at = now();
  return { artifacts: (await store.readyArtifacts(ctx.db.read, runId)).map((a) => shown(a, at)) };
}

/** How the API hands out a zip: a redirect to the bucket (S3), or the file to stream (fs). */
export type ArtifactDownload = { kind: "redirect"; url: string } | ({ kind: "file" } & ArtifactFile);

/** GET /v1/orgs/{org}/repos/{repo}/artifacts/{artifact_id}/zip (and the run page's link, which names the run too): 404 unknown, 410 expired. */
export async function downloadArtifact(ctx: Ctx, t: RepoTarget, id: string, runId?: string): Promise<ArtifactDownload> {
  need(t, "repo:read");
  const a = await store.artifactOfRepo(ctx.db.read, t.repo.id, id);
  if (!a || a.state !== "ready" || (runId !== undefined && a.runId !== runId)) throw NotFound("artifact not found");
  if (a.expiresAt <= now()) throw Gone(`the artifact ${JSON.stringify(a.name)} expired on ${new Date(a.expiresAt).toISOString()}`);
  if (ctx.store.presign)
    return {
      kind: "redirect",
      url: await ctx.store.presign("GET", a.key, REDIRECT_SECONDS, { query: { "response-content-disposition": zipDisposition(a.name) } }),
    };
  if (!ctx.store.localPath) throw new AppError("internal", "the object store can neither presign nor serve files");
  return { kind: "file", path: ctx.store.localPath(a.key), size: a.size, name: a.name };
}

/** DELETE /v1/orgs/{org}/repos/{repo}/artifacts/{artifact_id} (repo write): the object, then the row. */
export async function deleteArtifact(ctx: Ctx, t: RepoTarget, id: string): Promise<void> {
  need(t, "repo:write");
  const a = await store.artifactOfRepo(ctx.db.read, t.repo.id, id);
  if (!a || a.state !== "ready") throw NotFound("artifact not found");
  // First out of every list and download (due now), so a crash before the rest leaves it to the sweep.
  await ctx.db.transaction((tx) => store.expireArtifact(tx, a.id, now()));
  await removeArtifact(ctx, a);
}

/** Deletes a due artifact's object, then its row (idempotent; the row goes only if it is still due). */
async function removeArtifact(ctx: Ctx, a: ArtifactRow): Promise<boolean> {
  await ctx.store.delete(a.key);
  const t = now();
  return ctx.db.transaction((tx) => store.deleteIfDue(tx, a.id, t, t - STALE_UPLOAD_MS));
}

/**
 * One retention pass: expired artifacts, replaced and deleted ones, and reservations never
 * confirmed within a day, each object first and then its row. Answers how many rows went.
 */
export async function sweepArtifacts(ctx: Ctx): Promise<number> {
  const t = now();
  let n = 0;
  // Why several reads: a thousand a pass would leave a backlog once more than 24,000 artifacts a day fall due.
  for (let i = 0; i < SWEEP_BATCHES; i++) {
    const rows = await store.sweepable(ctx.db.read, t, t - STALE_UPLOAD_MS, SWEEP_BATCH);
    let gone = 0;
    for (const a of rows) if (await removeArtifact(ctx, a)) gone++;
    n += gone;
    // Why stop when nothing went: a row still listed but no longer due would be read again and again.
    if (rows.length < SWEEP_BATCH || gone === 0) break;
  }
  return n;
}

/** The retention sweep, hourly, once per slot across the cluster (SVC_CI_ARTIFACT_DAYS). */
export const CI_ARTIFACT_SWEEP = jobKind<unknown>("ci.artifact-sweep", { every: { ms: 3600 * 1000, scope: "cluster" } });
