// Runs and jobs as people read them (DECISIONS §3): list, get, a job's log as text, cancel.
import { Conflict, NotFound } from "../../errors.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import { pageOf, parsePage } from "../paging.ts";
import { parseCondition } from "./expr/index.ts";
import { failJob, runStateOf, settleRun } from "./finish.ts";
import { cancelRequested, conclusionOf, releaseDependents } from "./release.ts";
import type { Run } from "./schemas.ts";
import { userHandles } from "./store-concurrency.ts";
import * as runs from "./store-runs.ts";
import type { JobRow, JobShown, RunRow } from "./store-runs.ts";
import { waitingMessages } from "./waiting.ts";

/** A job's steps as lists show them: name, state, exit code (from the `steps` column, never the spec). */
export function shownSteps(job: JobShown): { name: string; state: string; exit_code: number | null }[] {
  return job.steps.map((s, i) => ({ name: s.name || `step ${i + 1}`, state: s.state, exit_code: s.exit_code }));
}

/** Why a pending job waits: the needs not finished yet (`waiting for build, test`); null when none (it is about to move). */
export function pendingMessage(job: Pick<JobShown, "needs">, sameAttempt: readonly Pick<JobShown, "workflowJob" | "state">[]): string | null {
  const open = job.needs.filter((n) => sameAttempt.some((j) => j.workflowJob === n && !runs.JOB_FINISHED.includes(j.state)));
  return open.length ? `waiting for ${open.join(", ")}` : null;
}

/** One attempt as the run's `attempts` list shows it: the latest from the run row, an earlier one from its jobs. */
function attemptOf(run: RunRow, attempt: number, jobs: readonly JobShown[]): Run["attempts"][number] {
  // A re-run queues every row of the new attempt at once (reused ones too): the attempt began then.
  const created_at = attempt === 1 || !jobs.length ? run.createdAt : Math.min(...jobs.map((j) => j.queuedAt));
  if (attempt === run.attempt) return { attempt, state: run.state, created_at, finished_at: run.finishedAt };
  const state = runStateOf(jobs.map(conclusionOf));
  const finished_at = runs.FINISHED.includes(state) ? Math.max(0, ...jobs.map((j) => j.finishedAt ?? 0)) : null;
  return { attempt, state, created_at, finished_at };
}

/** Runs as the API shows them: each with the jobs of its latest attempt, or of `attempt` when asked (one run). */
async function runBodies(q: Queryable, repoName: string, rows: RunRow[], attempt: number | null = null): Promise<Run[]> {
  const all = await runs.shownJobsOfRuns(
    q,
    rows.map((r) => r.id),
  );
  const handles = await userHandles(q, [...new Set(rows.flatMap((r) => (r.actorUserId ? [r.actorUserId] : [])))]);
  const byRun = new Map<string, JobShown[]>();
  for (const j of all) {
    let list = byRun.get(j.runId);
    if (!list) byRun.set(j.runId, (list = []));
    list.push(j);
  }
  const shown = rows.map((r) => (byRun.get(r.id) ?? []).filter((j) => j.attempt === (attempt ?? r.attempt)));
  const waiting = await waitingMessages(q, shown.flat());
  return rows.map((r, i) => {
    const jobs = shown[i]!;
    const mine = byRun.get(r.id) ?? [];
    const numbers = [...new Set([r.attempt, ...mine.map((j) => j.attempt)])].sort((a, b) => a - b);
    const attempts = numbers.map((n) =>
      attemptOf(
        r,
        n,
        mine.filter((j) => j.attempt === n),
      ),
    );
    const current = attempt === null || attempt === r.attempt ? null : attempts.find((a) => a.attempt === attempt)!;
    return {
      id: r.id,
      repo: repoName,
      workflow: r.workflow,
      commit: r.commit,
      ref: r.ref,
      event: r.event,
      state: current ? current.state : r.state,
      error: r.error,
      actor: r.actorUserId && handles.has(r.actorUserId) ? { id: r.actorUserId, handle: handles.get(r.actorUserId)! } : null,
      inputs: r.inputs ?? null,
      concurrency_group: r.concurrencyGroup,
      waiting: r.waiting,
      trusted: r.trusted,
      created_at: r.createdAt,
      finished_at: current ? current.finished_at : r.finishedAt,
      attempt: attempt ?? r.attempt,
      attempts,
      jobs: jobs.map((j) => ({
        id: j.id,
        key: j.key,
        name: j.workflowJob || j.key,
        attempt: j.attempt,
        needs: j.needs,
        condition: j.condition,
        runs_on: j.runsOn,
        state: j.state,
        skip_reason: j.skipReason,
        reused_from: j.reusedFrom,
        verdict: j.verdict,
        error: j.error,
        waiting: j.state === "pending" ? pendingMessage(j, jobs) : (waiting.get(j.id) ?? null),
        runner: j.runnerId ? { id: j.runnerId, name: j.runnerName ?? "" } : null,
        started_at: j.startedAt,
        finished_at: j.finishedAt,
        steps: shownSteps(j),
      })),
    };
  });
}

const isRunCursor = (k: unknown): k is [number, string] => Array.isArray(k) && k.length === 2 && typeof k[0] === "number" && typeof k[1] === "string";

/** GET /v1/orgs/{org}/repos/{repo}/runs: newest first, a page at a time. */
export async function listRuns(ctx: Ctx, t: RepoTarget, q: { limit?: unknown; cursor?: unknown }): Promise<{ runs: Run[]; next_cursor: string | null }> {
  need(t, "repo:read");
  const { repo } = t;
  const page = parsePage(q, isRunCursor);
  const rows = await runs.listRuns(ctx.db.read, repo.id, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor } = pageOf(rows, page, (r) => [r.createdAt, r.id]);
  return { runs: await runBodies(ctx.db.read, repo.name, items), next_cursor };
}

/** GET /v1/orgs/{org}/repos/{repo}/runs/{id}[?attempt=N]: the latest attempt, or attempt N (404 when the run has none such). */
export async function getRun(ctx: Ctx, t: RepoTarget, runId: string, attempt: number | null = null): Promise<Run> {
  need(t, "repo:read");
  const { repo } = t;
  const run = await runs.runOfRepo(ctx.db.read, repo.id, runId);
  if (!run) throw NotFound("run not found");
  if (attempt !== null && !(Number.isInteger(attempt) && attempt >= 1 && attempt <= run.attempt)) throw NotFound("attempt not found");
  return (await runBodies(ctx.db.read, repo.name, [run], attempt))[0]!;
}

/** The job `jobId` of run `runId` in the repository, after repo:read (the log routes' one check); 404 for any other job. */
export async function requireJob(ctx: Ctx, t: RepoTarget, runId: string, jobId: string): Promise<JobShown> {
  need(t, "repo:read");
  const { repo } = t;
  const job = await runs.shownJobById(ctx.db.read, jobId);
  if (!job || job.runId !== runId || job.repoId !== repo.id) throw NotFound("job not found");
  return job;
}

/** GET …/runs/{id}/jobs/{job_id}/logs: the acknowledged log, streamed chunk by chunk from the object store. */
export async function jobLog(ctx: Ctx, t: RepoTarget, runId: string, jobId: string): Promise<ReadableStream<Uint8Array>> {
  const job = await requireJob(ctx, t, runId, jobId);
  // A job a failed-only re-run kept has the log of the job it stands for.
  const chunks = await runs.logChunks(ctx.db.read, job.reusedFrom ?? job.id);
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const c = chunks[i++];
      if (!c) return controller.close();
      const bytes = await ctx.store.get(c.key);
      if (!bytes) return controller.error(new Error(`log chunk ${c.key} is missing`));
      controller.enqueue(bytes);
    },
  });
}

/** POST …/runs/{id}/cancel: see cancelRunJobs; 409 when every job already finished. */
export async function cancelRun(ctx: Ctx, t: RepoTarget, runId: string): Promise<Run> {
  need(t, "repo:write");
  const { repo } = t;
  await ctx.db.transaction(async (tx) => {
    const run = await runs.runOfRepo(tx, repo.id, runId);
    if (!run) throw NotFound("run not found");
    if (!(await cancelRunJobs(ctx, tx, run, "cancel", now()))) throw Conflict(`the run already finished (${run.state})`);
  });
  return getRun(ctx, t, runId);
}

/** Whether a pending job may still run after a cancel: it has needs and its `if` calls a status function (`always()`, `cancelled()`, `failure()`). */
function runsAfterCancel(job: Pick<JobRow, "needs" | "condition">): boolean {
  if (!job.needs.length || job.condition === null) return false;
  try {
    return !parseCondition(job.condition).implicitSuccess;
  } catch {
    return false;
  }
}

/**
 * Stops the current attempt of `run` (a cancel, or `reason` of a concurrency cancel): queued and
 * pending jobs end `cancelled` now, running ones get `reason` (their machine hears it at the next
 * heartbeat); then the release runs with `cancelled()` true, so pending cleanup jobs (`if:
 * always()`, `cancelled()`) still run once their needs end. A second cancel ends those too. False
 * when nothing was unfinished. Inside the caller's transaction.
 */
export async function cancelRunJobs(ctx: Ctx, tx: Tx, run: RunRow, reason: string, t: number): Promise<boolean> {
  const open = (await runs.unfinishedJobsOfRun(tx, run.id)).filter((j) => j.attempt === run.attempt);
  if (!open.length) return false;
  const again = cancelRequested(await runs.jobsOfAttempt(tx, run.id, run.attempt));
  const keep = (j: JobRow) => j.state === "pending" && !again && runsAfterCancel(j);
  // Why mark the ended rows too: the reason on the attempt's rows is what makes cancelled() true for later releases.
  await runs.markCancelReason(
    tx,
    open.filter((j) => !keep(j)).map((j) => j.id),
    reason,
  );
  for (const job of open) {
    if (job.state === "running" || keep(job)) continue;
    await failJob(ctx, tx, job, "cancelled", "cancelled", t, null, { release: false });
  }
  await releaseDependents(ctx, tx, run.id, run.attempt, t);
  await settleRun(tx, run.id, t);
  return true;
}

/**
 * A job as it is now and its log from byte `from` on (at most about `max` bytes, whole chunks
 * but the first), with the same check as the log route: what the web page's live log reads.
 */
export async function jobLogSince(
  ctx: Ctx,
  t: RepoTarget,
  runId: string,
  jobId: string,
  from: number,
  max: number,
): Promise<{ job: JobShown; bytes: Uint8Array; next: number }> {
  const job = await requireJob(ctx, t, runId, jobId);
  const start = Math.max(0, Math.min(from, job.logSize));
  const parts: Uint8Array[] = [];
  let next = start;
  for (const c of await runs.logChunksFrom(ctx.db.read, job.reusedFrom ?? job.id, start, 64)) {
    if (next - start >= max || c.offset > next) break;
    // A chunk the server's masking pass changed holds other bytes than its offset/size say: it is
    // served whole (also to a reader starting inside it: no reader ever got part of it), and
    // `next` moves to its end in the agent's bytes.
    const bytes = await ctx.store.get(c.key);
    if (!bytes) throw new Error(`log chunk ${c.key} is missing`);
    const part = c.masked ? bytes : bytes.subarray(next - c.offset);
    parts.push(part);
    next = c.masked ? c.offset + c.size : next + part.byteLength;
  }
  return { job, bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), next };
}
