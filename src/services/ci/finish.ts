// Where a job ends, whatever ended it (the runner's verdict, a cancel, a timeout, silence, the
// machine's removal): one function, inside the caller's transaction, that records the outcome,
// revokes the per-job token, records the check result and the CI minutes, settles the run and
// de-registers an ephemeral machine.
import type { Tx } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import type { RunState } from "../../db/schema/index.ts";
import { releaseConcurrencyGroup } from "./concurrency.ts";
import { conclusionOf, releaseDependents } from "./release.ts";
import * as store from "./store.ts";
import * as runs from "./store-runs.ts";
import type { JobRow } from "./store-runs.ts";

/** SPEC §3.2: the error of a job whose machine was removed. */
export const RUNNER_REMOVED = "runner removed while the job was running";

/** SPEC §4.1 claim rule 5: why a hosted-runner job was refused. */
export function hostedDisabledMessage(orgName: string): string {
  return `hosted runners are disabled for the organization ${orgName}; runs-on must name self-hosted labels`;
}

/** A timeout in seconds as people read it in minutes ("1", "0.5"). */
export function minutes(seconds: number): string {
  return String(Math.round((seconds / 60) * 100) / 100);
}

/**
 * The state a run is in, given its jobs' states as the run counts them (release.ts conclusionOf:
 * a failure under job-level continue-on-error is a success): `skipped` counts as success (a run whose jobs
 * were all skipped succeeds, as on GitHub); `pending` and any state this node does not know (a
 * newer node's) as not finished, so a rolling upgrade never settles a run early.
 */
export function runStateOf(states: readonly string[]): RunState {
  if (states.some((s) => s === "running")) return "running";
  if (states.some((s) => !runs.JOB_FINISHED.includes(s))) return states.some((s) => runs.JOB_FINISHED.includes(s)) ? "running" : "queued";
  if (states.some((s) => s === "failure")) return "failure";
  if (states.some((s) => s === "cancelled")) return "cancelled";
  return "success";
}

/** Recomputes a run's state from its current attempt's jobs (finished_at once every job finished). */
export async function settleRun(tx: Tx, runId: string, t: number): Promise<RunState> {
  const state = runStateOf((await runs.jobStatesOfRun(tx, runId)).map(conclusionOf));
  await runs.setRunState(tx, runId, state, runs.FINISHED.includes(state) ? t : null);
  return state;
}

/**
 * A run first reached failure: "a failed CI run notifies whoever pushed it" (DECISIONS §5
 * Notifications) — a thread.activity on the run with its pusher as the one participant
 * (`ci_activity`) and the only one told. Runs nobody pushed (mirrors, schedules) notify nobody.
 */
export async function runFailed(
  ctx: Ctx,
  tx: Tx,
  run: Pick<runs.RunRow, "id" | "repoId" | "orgId" | "workflow" | "ref" | "commit" | "actorUserId" | "error">,
): Promise<void> {
  if (!run.actorUserId) return;
  const branch = run.ref.replace(/^refs\/heads\//, "");
  await ctx.events.emit(tx, {
    kind: "thread.activity",
    repoId: run.repoId,
    orgId: run.orgId,
    subject: { kind: "run", id: run.id, number: null, title: `${run.workflow} failed on ${branch} (${run.commit.slice(0, 7)})` },
    activity: "run_failed",
    // Why no actor: the failure is the service's news; the pusher must not be left out as "the actor".
    actorUserId: null,
    participants: [{ userId: run.actorUserId, reason: "ci_activity" }],
    summary: run.error ? { excerpt: run.error } : {},
    only: [run.actorUserId],
  });
}

/**
 * Ends a job (pending, queued or running) with `state` and `error`, then releases the jobs that
 * needed it (release.ts) and settles the run; false when it had already ended.
 */
export async function failJob(
  ctx: Ctx,
  tx: Tx,
  job: JobRow,
  state: "success" | "failure" | "cancelled",
  error: string | null,
  t: number,
  verdict: string | null = null,
  opts: { release?: boolean } = {},
): Promise<boolean> {
  if (!(await runs.finishJobRow(tx, job.id, { state, verdict, error, t }))) return false;
  // Why: the per-job credential lives exactly as long as the job runs (SPEC §4.1 claim rule 3).
  if (job.tokenId) await runs.deleteJobToken(tx, job.tokenId);
  await runs.recordRunCheck(tx, { repoId: job.repoId, runId: job.runId, key: job.key, state, jobId: job.id, updatedAt: t });
  // A queued change waiting for this check is looked at again (services/changes, `checks.reported`).
  const run = await runs.runOfRepo(tx, job.repoId, job.runId);
  if (run) await ctx.events.emit(tx, { kind: "checks.reported", repoId: job.repoId, commit: run.commit });
  if (job.startedAt !== null) await runs.finishMinutes(tx, job.id, t);
  // Its dependents move in the same transaction: the next job is queued at the COMMIT that ends this one.
  if (opts.release !== false) await releaseDependents(ctx, tx, job.runId, job.attempt, t);
  const settled = await settleRun(tx, job.runId, t);
  // Concurrency groups (concurrency.ts): the job's group admits its next job; a finished run's group its next run.
  await releaseConcurrencyGroup(ctx, tx, job, run, settled, t);
  if (run && settled === "failure" && run.state !== "failure") await runFailed(ctx, tx, run);
  // An ephemeral machine runs one job and then de-registers.
  if (job.runnerId && job.state === "running" && (await store.runnerIsEphemeral(tx, job.runnerId))) {
    await store.tombstoneRunner(tx, job.runnerId, t);
    // This node refuses the credential at its next call (other nodes: at their next epoch read).
    ctx.db.afterCommit(tx, () => ctx.facts.dropWithin());
  }
  return true;
}
