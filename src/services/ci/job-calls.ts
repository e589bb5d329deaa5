// The five per-job runner calls (DECISIONS §3), each with the per-job token from claim: the job
// description, log appends, step states, the heartbeat (which answers `cancel`) and the verdict.
// The token acts only on its own running job and is revoked when the verdict lands.
import { AppError, Conflict, TooLarge, Unprocessable } from "../../errors.ts";
import type { StepState } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { callerFacts, decide, enforce } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { noteRunnerSeen } from "./credentials.ts";
import { failJob, minutes } from "./finish.ts";
import type { JobComplete, JobDescription, LogAppend, StepUpdate } from "./schemas.ts";
import * as runs from "./store-runs.ts";
import type { JobRow } from "./store-runs.ts";

/** How often the runner is asked to heartbeat (the job description says so). */
export const HEARTBEAT_INTERVAL_S = 2;
/** At most this much text per log call, and per job. */
export const LOG_LIMITS = Object.freeze({ appendBytes: 1024 * 1024, jobBytes: 64 * 1024 * 1024 });
const STEP_STATES = ["running", "success", "failure", "skipped", "cancelled"] as const;
const VERDICTS = ["success", "failure", "cancelled"] as const;

/** The running job `jobId` after checking the caller is its token (401 / 404 otherwise). */
async function ownJob(ctx: Ctx, actor: Principal, jobId: string): Promise<JobRow> {
  const job = await runs.jobById(ctx.db.read, jobId);
  enforce(decide({ caller: callerFacts(actor), orgRole: null }, { kind: "runner:job", jobTokenId: job?.state === "running" ? job.tokenId : null }));
  if (job!.runnerId) noteRunnerSeen(ctx, job!.runnerId);
  return job!;
}

/** GET /v1/runner/jobs/{job_id}: what to run. */
export async function describeJob(ctx: Ctx, actor: Principal, jobId: string): Promise<JobDescription> {
  const job = await ownJob(ctx, actor, jobId);
  const where = await runs.jobPlace(ctx.db.read, job.repoId, job.runId);
  if (!where) throw new AppError("not_found", "job not found");
  return {
    job_id: job.id,
    run_id: job.runId,
    key: job.key,
    repo: `${where.org}/${where.repo}`,
    clone_url: `${ctx.baseUrl}/${where.org}/${where.repo}.git`,
    commit: where.commit,
    ref: where.ref,
    runs_on: job.runsOn,
    env: job.spec.env,
    // A `uses` step (issue 29, parsed; actions run in issue 30) fails if an agent reads this field as a script.
    steps: job.spec.steps.map((s) => ({ name: s.name, run: s.run ?? `echo 'uses: ${s.uses} is not run by this server yet' >&2; exit 1`, env: s.env })),
    timeout_s: job.spec.timeoutS,
    heartbeat_s: HEARTBEAT_INTERVAL_S,
  };
}

/** Where one acknowledged log chunk is stored (a kind of stored file: services/ops/object-kinds.ts). */
export function logChunkKey(repoId: string, jobId: string, offset: number): string {
  return `repos/${repoId}/ci-logs/${jobId}/${String(offset).padStart(12, "0")}-${newId()}`;
}

/**
 * POST /v1/runner/jobs/{job_id}/logs `{ offset, text }` → `{ offset }`: idempotent at `offset`
 * (bytes of UTF-8). Text already stored is acknowledged again; a gap is a 409 carrying the offset
 * to resend from. The chunk is in the object store before the answer, so an acknowledged line
 * survives a crash.
 */
export async function appendLog(ctx: Ctx, actor: Principal, jobId: string, input: LogAppend): Promise<{ offset: number }> {
  const job = await ownJob(ctx, actor, jobId);
  const bytes = new TextEncoder().encode(input.text);
  if (bytes.byteLength > LOG_LIMITS.appendBytes) throw TooLarge(`at most ${LOG_LIMITS.appendBytes} bytes of log per call`);
  if (input.offset < job.logSize) return { offset: job.logSize };
  if (input.offset > job.logSize) throw Conflict(`the log is ${job.logSize} bytes long; send from there`, { offset: job.logSize });
  if (bytes.byteLength === 0) return { offset: job.logSize };
  if (job.logSize + bytes.byteLength > LOG_LIMITS.jobBytes) throw TooLarge(`a job's log may hold at most ${LOG_LIMITS.jobBytes} bytes`);
  // Files first, rows second: a crash between them leaves only an unreferenced object.
  const key = logChunkKey(job.repoId, job.id, input.offset);
  await ctx.store.put(key, bytes);
  const stored = await ctx.db.transaction((tx) => runs.appendLogChunk(tx, job.id, input.offset, bytes.byteLength, key));
  if (!stored) {
    await ctx.store.delete(key);
    const now = await runs.jobById(ctx.db.read, job.id);
    return { offset: now?.logSize ?? job.logSize };
  }
  return { offset: input.offset + bytes.byteLength };
}

/** POST /v1/runner/jobs/{job_id}/steps/{index} `{ state, exit_code? }`. */
export async function setStepState(ctx: Ctx, actor: Principal, jobId: string, index: number, input: StepUpdate): Promise<void> {
  await ownJob(ctx, actor, jobId);
  if (!STEP_STATES.includes(input.state as never)) throw Unprocessable(`state must be one of ${STEP_STATES.join(", ")}`);
  await ctx.db.transaction(async (tx) => {
    const job = await runs.jobById(tx, jobId);
    if (!job || job.state !== "running") return;
    if (!Number.isInteger(index) || index < 0 || index >= job.steps.length) throw Unprocessable(`no step ${index}: the job has ${job.steps.length} steps`);
    const steps: StepState[] = job.steps.map((s, i) =>
      i === index ? { ...s, state: input.state as StepState["state"], exit_code: input.exit_code ?? null } : s,
    );
    await runs.updateJob(tx, job.id, { steps });
  });
}

// Heartbeats, stamped in batches (as last_seen_at is): the timeout is two minutes, so a stamp a
// few seconds late changes nothing, and a write per heartbeat would empty the fact cache.
/** Writes every waiting heartbeat stamp (the sweeper calls this before looking for silent jobs). */
export async function flushHeartbeats(ctx: Ctx): Promise<void> {
  const m = ctx.buffers.heartbeats;
  if (m.pending.size === 0) return;
  const stamps = m.take(now());
  await ctx.db.transaction((tx) => runs.stampHeartbeats(tx, stamps));
}

/** POST /v1/runner/jobs/{job_id}/heartbeat → `{ cancel }`. */
export async function heartbeat(ctx: Ctx, actor: Principal, jobId: string): Promise<{ cancel: boolean }> {
  const job = await ownJob(ctx, actor, jobId);
  ctx.buffers.heartbeats.note(job.id, now());
  return { cancel: job.cancelReason !== null };
}

/** The error recorded with a verdict. */
function verdictError(job: JobRow, verdict: (typeof VERDICTS)[number]): string | null {
  if (verdict === "success") return null;
  if (verdict === "cancelled") {
    if (job.cancelReason === "timeout") return `the job exceeded its timeout of ${minutes(job.spec.timeoutS)} minutes`;
    if (job.cancelReason === "cancel") return "cancelled";
    return "cancelled by the runner";
  }
  const i = job.steps.findIndex((s) => s.state === "failure");
  if (i < 0) return "the job failed";
  const code = job.steps[i]!.exit_code;
  return `step ${JSON.stringify(job.spec.steps[i]?.name ?? String(i))} failed${code === null ? "" : ` with exit code ${code}`}`;
}

/** POST /v1/runner/jobs/{job_id}/complete `{ verdict }`: the job ends and its token is revoked. */
export async function completeJob(ctx: Ctx, actor: Principal, jobId: string, input: JobComplete): Promise<void> {
  // One read of the job, inside the transaction: the token check (401/404), then the verdict (422).
  await ctx.db.transaction(async (tx) => {
    const job = await runs.jobById(tx, jobId);
    enforce(decide({ caller: callerFacts(actor), orgRole: null }, { kind: "runner:job", jobTokenId: job?.state === "running" ? job.tokenId : null }));
    if (!VERDICTS.includes(input.verdict as never)) throw Unprocessable(`verdict must be one of ${VERDICTS.join(", ")}`);
    const verdict = input.verdict as (typeof VERDICTS)[number];
    if (job!.runnerId) noteRunnerSeen(ctx, job!.runnerId);
    ctx.buffers.heartbeats.pending.delete(jobId);
    await failJob(ctx, tx, job!, verdict, verdictError(job!, verdict), now(), verdict);
  });
}
