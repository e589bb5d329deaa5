// Concurrency groups (plan-29 §3 C "Concurrency", GitHub's semantics, per repository): at most
// one active and one waiting run (or job) per group. A new run of a group with
// `cancel-in-progress` cancels every unfinished run of the group; without it, it supersedes (cancels)
// the group's waiting run and waits itself while another run of the group is active: its jobs
// are `pending` and `runs.waiting` says why. When a run of the group reaches a final state, the
// oldest waiting run is released (its jobs without needs queued). Job-level `concurrency` is the
// same with workflow_jobs rows (for jobs without `needs`). Every decision is taken under the
// group's transaction-scoped lock, inside the transaction that creates or ends the run.
import type { Tx } from "../../db/database.ts";
import type { RunState } from "../../db/schema/index.ts";
import type { Ctx } from "../context.ts";
import { announceQueued, claimHub, hubKey } from "./claim.ts";
import { failJob, settleRun } from "./finish.ts";
import { releaseDependents } from "./release.ts";
import { cancelRunJobs } from "./runs.ts";
import * as groups from "./store-concurrency.ts";
import * as runs from "./store-runs.ts";
import type { JobRow, RunRow } from "./store-runs.ts";
import type { Concurrency } from "./workflow.ts";

/** Whether `cancel-in-progress` is on (a template left for release time counts as off). */
export function cancelsInProgress(c: Concurrency): boolean {
  return c.cancelInProgress === true || c.cancelInProgress === "true";
}

/** Jobs just queued, announced to every node's claim hub after COMMIT. */
export function announceJobs(ctx: Ctx, tx: Tx, jobs: { hosted: boolean; orgId: string; runsOn: string[] }[]): void {
  const byKey = new Map<string, string[][]>();
  for (const j of jobs) {
    const key = hubKey(j.hosted, j.orgId);
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(j.runsOn);
  }
  const hub = claimHub(ctx);
  for (const [key, list] of byKey) {
    announceQueued(ctx, key, tx);
    ctx.db.afterCommit(tx, () => hub.jobsQueued(key, list));
  }
}

/**
 * Ends a job for its group (pending or queued: now; running: told at its next heartbeat, its
 * dependents decided when it ends). `release: false` when its whole run is being cancelled.
 */
async function cancelJob(ctx: Ctx, tx: Tx, job: JobRow, reason: string, t: number, release: boolean): Promise<void> {
  if (job.state === "running") {
    if (job.cancelReason === null) await runs.updateJob(tx, job.id, { cancelReason: "cancel" });
  } else await failJob(ctx, tx, job, "cancelled", reason, t, null, { release });
}

/** Cancels a waiting run superseded in its group: every unfinished job ends (none has started) with `reason` as its error. */
export async function cancelRunForGroup(ctx: Ctx, tx: Tx, run: RunRow, reason: string, t: number): Promise<void> {
  const open = await runs.unfinishedJobsOfRun(tx, run.id);
  // Pending ones first: ending a queued job may release its dependents, which are ending anyway.
  open.sort((a, b) => (a.state === "pending" ? 0 : 1) - (b.state === "pending" ? 0 : 1));
  for (const job of open) {
    const fresh = job.state === "running" ? job : await runs.jobById(tx, job.id);
    if (fresh && ["pending", "queued", "running"].includes(fresh.state)) await cancelJob(ctx, tx, fresh, reason, t, false);
  }
}

/**
 * Admits a new run `runId` to its group (before the run row is written): cancels what the rules
 * cancel and answers why the run waits (null: it may start now).
 */
export async function admitRun(ctx: Ctx, tx: Tx, run: { id: string; repoId: string }, c: Concurrency, t: number): Promise<string | null> {
  await groups.lockGroup(tx, run.repoId, c.group);
  const others = await groups.unfinishedRunsInGroup(tx, run.repoId, c.group);
  const waitingOnes = others.filter((r) => r.waiting !== null);
  const active = others.filter((r) => r.waiting === null);
  // Waiting runs first: when an active one ends during this, no waiting run is left to release.
  for (const r of waitingOnes) await cancelRunForGroup(ctx, tx, r, `superseded by run ${run.id} in concurrency group ${c.group}`, t);
  if (cancelsInProgress(c)) {
    // An active run is cancelled like a cancel request (runs.ts): its `if: always()` / `cancelled()` cleanup jobs still run.
    // Why the reason on the jobs and not the run's `error`: that column means "never started", and a re-run refuses such runs.
    const reason = `cancelled: a newer run in concurrency group ${c.group}`;
    for (const r of active) {
      await cancelRunJobs(ctx, tx, r, reason, t);
      await groups.explainCancelled(tx, r.id, r.attempt, reason);
    }
    return null;
  }
  const holder = active[0];
  return holder ? `waiting for run ${holder.id} in concurrency group ${c.group}` : null;
}

/** What a job admitted to its group does: start, wait (pending), or end cancelled with a reason. */
export type JobAdmission = "queued" | "pending" | { cancelled: string };

/**
 * Admits the new jobs of one run to their job-level groups (in order; none written yet): earlier
 * jobs of the group (other runs' rows, and this run's earlier jobs) are cancelled or waited for as
 * the rules say. Answers each job's admission by id.
 */
export async function admitJobs(
  ctx: Ctx,
  tx: Tx,
  repoId: string,
  jobs: { id: string; concurrency: Concurrency }[],
  t: number,
): Promise<Map<string, JobAdmission>> {
  const out = new Map<string, JobAdmission>();
  const state = new Map<string, { holders: string[]; waiters: string[] }>();
  for (const j of jobs) {
    const g = j.concurrency.group;
    let s = state.get(g);
    if (!s) {
      await groups.lockGroup(tx, repoId, `job:${g}`);
      const rows = (await groups.unfinishedJobsInGroup(tx, repoId, g)).filter((r) => r.needs.length === 0);
      s = { holders: rows.filter((r) => r.state !== "pending").map((r) => r.id), waiters: rows.filter((r) => r.state === "pending").map((r) => r.id) };
      state.set(g, s);
    }
    const end = async (id: string, reason: string) => {
      if (out.has(id)) out.set(id, { cancelled: reason });
      else {
        const row = await runs.jobById(tx, id);
        if (row) await cancelJob(ctx, tx, row, reason, t, true);
      }
    };
    for (const id of s.waiters) await end(id, `superseded by a newer job in concurrency group ${g}`);
    s.waiters = [];
    if (cancelsInProgress(j.concurrency)) {
      for (const id of s.holders) await end(id, `cancelled: a newer job in concurrency group ${g}`);
      s.holders = [];
    }
    if (s.holders.length) {
      out.set(j.id, "pending");
      s.waiters.push(j.id);
    } else {
      out.set(j.id, "queued");
      s.holders.push(j.id);
    }
  }
  return out;
}

/** Whether a job-level group has an active (queued or running) job. */
async function jobGroupBusy(tx: Tx, repoId: string, group: string, except: string | null): Promise<boolean> {
  const rows = await groups.unfinishedJobsInGroup(tx, repoId, group);
  return rows.some((r) => r.id !== except && r.state !== "pending");
}

/** A run whose group freed up starts: its waiting note goes, its jobs without needs are queued (job groups permitting). */
async function releaseRun(ctx: Ctx, tx: Tx, run: RunRow, t: number): Promise<void> {
  await groups.setRunWaiting(tx, run.id, null);
  const roots = await groups.pendingRootJobs(tx, run.id, run.attempt);
  const queued: typeof roots = [];
  for (const j of roots) {
    const row = await runs.jobById(tx, j.id);
    if (row?.concurrencyGroup) {
      await groups.lockGroup(tx, run.repoId, `job:${row.concurrencyGroup}`);
      if (await jobGroupBusy(tx, run.repoId, row.concurrencyGroup, row.id)) continue;
    }
    if (await groups.queuePending(tx, j.id, t)) queued.push(j);
  }
  announceJobs(ctx, tx, queued);
  // A failed-only re-run's attempt: jobs whose needs were all kept from the earlier attempt start now too.
  if (await releaseDependents(ctx, tx, run.id, run.attempt, t)) await settleRun(tx, run.id, t);
}

/**
 * After a job ended (finish.ts `failJob`, once its run is settled): its job-level group admits
 * its oldest waiting job, and when the run reached a final state its run-level group releases
 * the oldest waiting run. Nothing when neither has a group.
 */
export async function releaseConcurrencyGroup(ctx: Ctx, tx: Tx, job: JobRow, run: RunRow | null, settled: RunState, t: number): Promise<void> {
  if (job.concurrencyGroup) {
    const g = job.concurrencyGroup;
    await groups.lockGroup(tx, job.repoId, `job:${g}`);
    const rows = await groups.unfinishedJobsInGroup(tx, job.repoId, g);
    if (!rows.some((r) => r.state !== "pending")) {
      for (const r of rows) {
        if (r.needs.length) continue;
        const owner = await runs.runOfRepo(tx, job.repoId, r.runId);
        // A job of a run that waits for its own group starts with that run.
        if (!owner || owner.waiting !== null) continue;
        if (await groups.queuePending(tx, r.id, t)) announceJobs(ctx, tx, [r]);
        break;
      }
    }
  }
  if (run?.concurrencyGroup && runs.FINISHED.includes(settled)) {
    await groups.lockGroup(tx, run.repoId, run.concurrencyGroup);
    const unfinished = await groups.unfinishedRunsInGroup(tx, run.repoId, run.concurrencyGroup);
    if (unfinished.some((r) => r.waiting === null)) return;
    const next = unfinished.find((r) => r.waiting !== null);
    if (next) await releaseRun(ctx, tx, next, t);
  }
}
