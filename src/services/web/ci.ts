// What the CI pages show: runs, a run with its jobs, a job's log, and the pieces of a log the
// live view streams, all read through the same service calls (and access checks) as the API's
// run and log routes.
import { NotFound } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import type { Principal } from "../access/principal.ts";
import type { RepoTarget } from "../access/target.ts";
import { getRepo, openRepo, type RepoBody } from "../repos/repos.ts";
import { getRun, jobLogSince, listRuns, requireJob, shownSteps } from "../ci/runs.ts";
import type { Run } from "../ci/schemas.ts";

/** Run and job states that do not change any more. */
export const FINISHED_STATES: readonly string[] = ["success", "failure", "cancelled"];

/** The most of a log a page shows inline (its tail; the rest is in the raw log). */
export const PAGE_LOG_LIMIT = 1024 * 1024;

/** A job of a run, as the API answers it. */
export type RunJob = Run["jobs"][number];

/** A page of a repository's runs, newest first. */
export async function runsView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  cursor: string | undefined,
): Promise<{ repo: RepoBody; runs: Run[]; next: string | null }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const repo = await getRepo(ctx, t);
  const list = await listRuns(ctx, t, { cursor });
  return { repo, runs: list.runs, next: list.next_cursor };
}

/** One run with its jobs and steps. */
export async function runView(ctx: Ctx, actor: Principal, orgName: string, repoName: string, runId: string): Promise<{ repo: RepoBody; run: Run }> {
  return runViewOf(ctx, await openRepo(ctx, actor, orgName, repoName), runId);
}

async function runViewOf(ctx: Ctx, t: RepoTarget, runId: string): Promise<{ repo: RepoBody; run: Run }> {
  const repo = await getRepo(ctx, t);
  return { repo, run: await getRun(ctx, t, runId) };
}

/** A job's page: its run, the job, and the tail of its log so far (`next` is where live reading continues). */
export async function jobView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  runId: string,
  jobId: string,
): Promise<{ repo: RepoBody; run: Run; job: RunJob; log: { text: string; truncated: boolean; next: number } }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const { repo, run } = await runViewOf(ctx, t, runId);
  const job = run.jobs.find((j) => j.id === jobId);
  if (!job) throw NotFound("job not found");
  const size = (await requireJob(ctx, t, runId, jobId)).logSize;
  const from = Math.max(0, size - PAGE_LOG_LIMIT);
  const part = await jobLogSince(ctx, t, runId, jobId, from, PAGE_LOG_LIMIT);
  return { repo, run, job, log: { text: new TextDecoder().decode(part.bytes), truncated: from > 0, next: part.next } };
}

/** What the live log sends next: the job's state and steps now, and log text after `from`. */
export interface LogStep {
  state: string;
  verdict: string | null;
  error: string | null;
  finished: boolean;
  steps: { name: string; state: string; exit_code: number | null }[];
  /** Bytes of the log as text (UTF-8 decoded; a split character shows as U+FFFD). */
  text: string;
  /** The offset after `text`. */
  next: number;
  /** Whether bytes past `next` were already there (read again at once). */
  more: boolean;
}

/** The log after byte `from` (at most `max` bytes) and the job's state, checked like the log route every time. */
export async function logSince(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  runId: string,
  jobId: string,
  from: number,
  max: number,
): Promise<LogStep> {
  // Why a fresh resolution each time: the live log asks again and again, and access may change meanwhile.
  const { job, bytes, next } = await jobLogSince(ctx, await openRepo(ctx, actor, orgName, repoName), runId, jobId, from, max);
  return {
    state: job.state,
    verdict: job.verdict,
    error: job.error,
    finished: FINISHED_STATES.includes(job.state),
    steps: shownSteps(job),
    text: new TextDecoder().decode(bytes),
    next,
    more: next < job.logSize,
  };
}
