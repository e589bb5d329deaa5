// Re-running a finished run (issue 29 "re-run of a whole run or only its failed jobs"; plan-29 §3
// C "Re-run"): a new attempt of the same run. Every job row of the last attempt is copied into
// the new attempt with a new id: run again (fresh steps, `queued`, or `pending` when it has
// needs), or — failed only — kept as it ended (`reused_from` names the job whose result and
// outputs it stands for; its log is that job's). Failed-only runs again the failed and cancelled
// jobs and everything that needs them, transitively. The old attempt's rows and logs stay
// (GET …/runs/{id}?attempt=N); the commit's checks move to the new rows. The attempt joins the
// run's concurrency group as a new run would (it may cancel others or wait).
import { Conflict, NotFound } from "../../errors.ts";
import type { JobState } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import { announceQueued, claimHub, hubKey } from "./claim.ts";
import { admitRun } from "./concurrency.ts";
import { settleRun } from "./finish.ts";
import { decideRootJobs, releaseDependents } from "./release.ts";
import { getRun } from "./runs.ts";
import type { Run } from "./schemas.ts";
import { setRunWaiting } from "./store-concurrency.ts";
import * as runs from "./store-runs.ts";
import type { JobRow } from "./store-runs.ts";

/** The old jobs a failed-only re-run runs again: failed and cancelled ones, and every job that needs one of them (transitively). */
export function jobsToRunAgain(old: readonly Pick<JobRow, "id" | "state" | "workflowJob" | "needs">[]): Set<string> {
  const again = new Set(old.filter((j) => j.state === "failure" || j.state === "cancelled").map((j) => j.id));
  for (let grew = true; grew; ) {
    grew = false;
    const names = new Set(old.filter((j) => again.has(j.id)).map((j) => j.workflowJob));
    for (const j of old) {
      if (again.has(j.id) || !j.needs.some((n) => names.has(n))) continue;
      again.add(j.id);
      grew = true;
    }
  }
  return again;
}

/** POST …/runs/{id}/rerun `{ failed_only? }` → the run at its new attempt; 409 while it is not finished, or failed-only with nothing failed. */
export async function rerunRun(ctx: Ctx, t: RepoTarget, runId: string, input: { failed_only?: boolean }): Promise<Run> {
  need(t, "repo:write");
  const { repo } = t;
  const failedOnly = input.failed_only === true;
  const queued = new Map<string, string[][]>();
  await ctx.db.transaction(async (tx) => {
    queued.clear();
    const run = await runs.runOfRepo(tx, repo.id, runId);
    if (!run) throw NotFound("run not found");
    if (!runs.FINISHED.includes(run.state) || (await runs.unfinishedJobsOfRun(tx, run.id)).length)
      throw Conflict(`the run is not finished (${run.state}); cancel it or wait for it to end`);
    if (run.error) throw Conflict(`the run did not start (${run.error.slice(0, 200)}); push a fix to run it again`);
    const old = await runs.jobRowsOfAttempt(tx, run.id, run.attempt);
    if (!old.length) throw Conflict("the run has no jobs to run again");
    const again = failedOnly ? jobsToRunAgain(old) : new Set(old.map((j) => j.id));
    if (!again.size) throw Conflict("no job of the run failed or was cancelled; re-run all jobs instead");
    const attempt = run.attempt + 1;
    const at = now();
    // The attempt joins the run's concurrency group like a new run (GitHub: a re-run is a new member
    // of its group): it cancels the group's waiting run, and the running ones under
    // cancel-in-progress, or waits for the group (concurrency.ts). Admitted while the run is still
    // finished, so it is not one of the group's unfinished runs it is compared with.
    const group = run.concurrencyGroup ? { group: run.concurrencyGroup, cancelInProgress: run.cancelInProgress } : null;
    const waiting = group ? await admitRun(ctx, tx, { id: run.id, repoId: run.repoId }, group, at) : null;
    if (!(await runs.startAttempt(tx, run.id, run.attempt, attempt))) throw Conflict("the run was re-run meanwhile");
    if (waiting !== run.waiting) await setRunWaiting(tx, run.id, waiting);
    const rows: runs.NewJob[] = old.map((j) => {
      if (!again.has(j.id))
        // Kept as it ended: its result and outputs count for the jobs that need it; its log is the original's.
        return { ...j, id: newId(), attempt, reusedFrom: j.reusedFrom ?? j.id, tokenId: null, cancelReason: null, queuedAt: at };
      // A waiting attempt's jobs are all pending: its group releases them (concurrency.ts releaseRun).
      const state: JobState = j.needs.length || waiting !== null ? "pending" : "queued";
      if (state === "queued") {
        const key = hubKey(j.hosted, j.orgId);
        let list = queued.get(key);
        if (!list) queued.set(key, (list = []));
        list.push(j.runsOn);
      }
      return {
        ...j,
        id: newId(),
        attempt,
        state,
        verdict: null,
        error: null,
        runnerId: null,
        runnerName: null,
        tokenId: null,
        steps: j.steps.map((s) => ({ state: "pending", exit_code: null, name: s.name })),
        cancelReason: null,
        logSize: 0,
        queuedAt: at,
        startedAt: null,
        finishedAt: null,
        lastHeartbeatAt: null,
        skipReason: null,
        outputs: null,
        reusedFrom: null,
      };
    });
    await runs.insertJobs(tx, rows);
    // The commit's checks move to the new attempt's rows.
    await runs.recordChecks(
      tx,
      rows.map((r) => ({
        repoId: run.repoId,
        commit: run.commit,
        key: r.key,
        state: r.state === "pending" ? "queued" : (r.state as runs.CheckRow["state"]),
        runId: run.id,
        jobId: r.id!,
        updatedAt: at,
      })),
    );
    // An `if` on a job without needs is decided now; pending jobs whose needs were all kept are released now
    // (a waiting attempt's once its group releases it: release.ts leaves them pending meanwhile).
    await decideRootJobs(ctx, tx, run.id, attempt, at);
    await releaseDependents(ctx, tx, run.id, attempt, at);
    // A waiting attempt is queued, like a new run waiting for its group (jobs kept from the last attempt would make it "running").
    if ((await settleRun(tx, run.id, at)) === "running" && waiting !== null) await runs.setRunState(tx, run.id, "queued", null);
    const hub = claimHub(ctx);
    for (const [key, list] of queued) {
      announceQueued(ctx, key, tx);
      ctx.db.afterCommit(tx, () => hub.jobsQueued(key, list));
    }
    await ctx.events.emit(tx, { kind: "checks.reported", repoId: run.repoId, commit: run.commit });
  });
  return getRun(ctx, t, runId);
}
