// Where every run starts (issue 29 plan §3 C "Trigger"): a push, a change, a dispatch and a
// schedule all end in `createRun`, inside the caller's transaction. Jobs without `needs` are
// `queued` (claimable), jobs with `needs` are `pending` (never claimable; released by
// release.ts when their needs end); every job's check is recorded (`pending` as `queued`). Only
// queued jobs are announced to the claim hubs, after COMMIT. Job rows and check rows are written
// as multi-row INSERTs (plan §6: a 256-job matrix is two statements, not 512).
import type { Tx } from "../../db/database.ts";
import type { JobState } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { hostedCiRefusal } from "../billing/minutes.ts";
import { now, type Ctx } from "../context.ts";
import { announceQueued, claimHub, hubKey } from "./claim.ts";
import { admitJobs, admitRun, cancelsInProgress, type JobAdmission } from "./concurrency.ts";
import { hostedDisabledMessage, runFailed, settleRun } from "./finish.ts";
import { decideRootJobs, type JobPlan } from "./release.ts";
import { variablesForJob } from "./job-secrets.ts";
import { loadPolicy } from "./policy.ts";
import { plannedStrings } from "./github-context.ts";
import { planTimeText, readsVars, type PreparedName } from "./step-names.ts";
import * as runs from "./store-runs.ts";
import type { PlannedJob, PlannedRun } from "./workflow.ts";

/** The events a run can be for (`runs.event`). */
export type RunEvent = "push" | "change" | "workflow_dispatch" | "schedule";

/** What a run is for: where, which commit, which event, who, and the event's data. */
export interface RunTrigger {
  repoId: string;
  orgId: string;
  /** The org's name (messages: hosted runners disabled). */
  orgName: string;
  ref: string;
  commit: string;
  event: RunEvent;
  /** Who pushed or dispatched (null: mirrors, schedules). */
  actorUserId: string | null;
  /** workflow_dispatch inputs, validated and typed. */
  inputs?: Record<string, string | boolean | number> | null;
  /** The minute slot of a scheduled run (one run per workflow per slot). */
  scheduleSlot?: number | null;
  /** False for a change from a fork: its jobs get no secrets. Default true. */
  trusted?: boolean;
}

/** A workflow file's outcome: the jobs (and run data) to create, or why it is malformed. */
export type PlannedWorkflow = { path: string; jobs: PlannedJob[]; run?: PlannedRun } | { path: string; error: string };

/** What createRun did: the run's id, or why it created nothing. */
export type CreateRunOutcome = { created: true; runId: string } | { created: false; reason: "exists" };

/**
 * Creates the run of one workflow for `trigger` inside `tx` (all of it or nothing). Push and
 * change runs are idempotent by (repo, commit, ref, event, workflow) — the trigger job is
 * at-least-once; a scheduled run is unique per slot (`runs_schedule_uq`); a dispatch always
 * creates a run (a request, no retry key).
 */
export async function createRun(ctx: Ctx, tx: Tx, planned: PlannedWorkflow, trigger: RunTrigger): Promise<CreateRunOutcome> {
  const p = trigger;
  // A trusted trigger is not stopped by an untrusted run of the same commit and branch (a fork's change
  // first, then a maintainer pushing that branch here): only a trusted run makes it a repeat.
  if ((p.event === "push" || p.event === "change") && (await runs.runExists(tx, p.repoId, p.commit, p.ref, p.event, planned.path, p.trusted ?? true)))
    return { created: false, reason: "exists" };
  if (p.event === "schedule" && p.scheduleSlot != null && (await runs.scheduledRunExists(tx, p.repoId, planned.path, p.scheduleSlot)))
    return { created: false, reason: "exists" };
  const t = now();
  const runId = newId();
  const base = {
    id: runId,
    repoId: p.repoId,
    orgId: p.orgId,
    workflow: planned.path,
    commit: p.commit,
    ref: p.ref,
    event: p.event,
    actorUserId: p.actorUserId,
    createdAt: t,
    inputs: p.inputs ?? null,
    scheduleSlot: p.scheduleSlot ?? null,
    trusted: p.trusted ?? true,
  };
  if ("error" in planned) {
    await runs.insertRun(tx, { ...base, state: "failure", error: planned.error, finishedAt: t });
    await runFailed(ctx, tx, { ...base, error: planned.error });
    await ctx.events.emit(tx, { kind: "checks.reported", repoId: p.repoId, commit: p.commit });
    return { created: true, runId };
  }
  // SPEC §4.1 claim rule 5: hosted jobs under `hosted: disabled` fail the run at trigger time;
  // billing: past the month's hosted minutes, hosted jobs fail with ci_suspended_reason.
  const hosted = planned.jobs.some((j) => j.hosted);
  let refused: string | null = null;
  if (hosted) {
    const policy = await loadPolicy(tx, p.orgId);
    refused = policy.hosted === "disabled" ? hostedDisabledMessage(p.orgName) : await hostedCiRefusal(ctx, tx, p.orgId);
  }
  // Concurrency (concurrency.ts): the run may cancel others of its group, or wait for its group.
  const group = planned.run?.concurrency ?? null;
  const waiting = !refused && group ? await admitRun(ctx, tx, { id: runId, repoId: p.repoId }, group, t) : null;
  await runs.insertRun(tx, {
    ...base,
    state: refused ? "failure" : "queued",
    error: refused,
    finishedAt: refused ? t : null,
    concurrencyGroup: group?.group ?? null,
    cancelInProgress: group ? cancelsInProgress(group) : false,
    waiting,
  });
  if (refused) await runFailed(ctx, tx, { ...base, error: refused });
  // Job-level groups of jobs that start with the run (jobs with needs are refused a group until the release admits them).
  const ids = planned.jobs.map(() => newId());
  const gated = planned.jobs.flatMap((j, i) =>
    !refused && !waiting && j.concurrency && !j.needs?.length ? [{ id: ids[i]!, concurrency: j.concurrency }] : [],
  );
  const admitted = gated.length ? await admitJobs(ctx, tx, p.repoId, gated, t) : new Map<string, JobAdmission>();
  const queued = new Map<string, string[][]>();
  // Step names as lists show them: what is known now expanded (step-names.ts); vars read once, only when a name reads them.
  const names = planned.jobs.flatMap((j) => j.spec.steps.map((s) => s.name));
  const known = {
    github: {
      sha: p.commit,
      ref: p.ref,
      ref_name: p.ref.replace(/^refs\/(heads|tags)\//, ""),
      ref_type: p.ref.startsWith("refs/tags/") ? "tag" : "branch",
      repository_owner: p.orgName,
      event_name: p.event,
      // The plan-time fields the jobs carry (github-context.ts): event_name as `on:` spells it, workflow, head_ref, base_ref.
      ...plannedStrings(planned.jobs[0]?.spec.github),
    },
    inputs: { ...(p.inputs ?? {}) },
    vars: readsVars(names) ? await variablesForJob(tx, { orgId: p.orgId, repoId: p.repoId, trusted: p.trusted ?? true }) : undefined,
  };
  const parsedNames = new Map<string, PreparedName>();
  const jobRows: runs.NewJob[] = [];
  const checkRows: runs.CheckRow[] = [];
  for (const [i, j] of planned.jobs.entries()) {
    const id = ids[i]!;
    const admission = admitted.get(id);
    const cancelled = typeof admission === "object" ? admission.cancelled : null;
    const waits = !!j.needs?.length || waiting !== null || admission === "pending";
    const state: JobState = refused ? "failure" : cancelled ? "cancelled" : waits ? "pending" : "queued";
    const error = refused ? (j.hosted ? refused : "not started: the run was refused") : cancelled;
    jobRows.push({
      id,
      runId,
      repoId: p.repoId,
      orgId: p.orgId,
      key: j.key,
      runsOn: j.runsOn,
      hosted: j.hosted,
      spec: j.spec,
      state,
      verdict: null,
      error,
      runnerId: null,
      runnerName: null,
      tokenId: null,
      steps: j.spec.steps.map((s) => ({
        state: "pending",
        exit_code: null,
        name: planTimeText(s.name, { ...known, matrix: j.spec.matrix ?? {} }, parsedNames).slice(0, runs.STEP_NAME_SHOWN),
      })),
      cancelReason: null,
      logSize: 0,
      queuedAt: t,
      startedAt: null,
      finishedAt: refused || cancelled ? t : null,
      lastHeartbeatAt: null,
      attempt: 1,
      workflowJob: j.workflowJob ?? "",
      needs: j.needs ?? [],
      condition: j.condition ?? null,
      // A job with needs joins its group when release.ts releases it: the group (a template when it reads needs) waits in `plan`.
      concurrencyGroup: j.concurrency && !j.concurrency.dynamic && !j.needs?.length ? j.concurrency.group : null,
      plan:
        j.source !== undefined
          ? ({ source: j.source, at: j.dynamic } satisfies JobPlan)
          : j.concurrency && j.needs?.length
            ? ({ concurrency: j.concurrency } satisfies JobPlan)
            : null,
    });
    checkRows.push({
      repoId: p.repoId,
      commit: p.commit,
      key: j.key,
      state: state === "pending" ? "queued" : (state as runs.CheckRow["state"]),
      runId,
      jobId: id,
      updatedAt: t,
    });
    if (state === "queued") {
      const key = hubKey(j.hosted, p.orgId);
      let list = queued.get(key);
      if (!list) queued.set(key, (list = []));
      list.push(j.runsOn);
    }
  }
  await runs.insertJobs(tx, jobRows);
  await runs.recordChecks(tx, checkRows);
  // A job without needs whose `if` is false is skipped now, with what needs it (release.ts).
  if (!refused && jobRows.some((j) => j.condition != null && !j.needs?.length)) {
    await decideRootJobs(ctx, tx, runId, 1, t);
    await settleRun(tx, runId, t);
  }
  // Every node's waiting machines hear of the new jobs once they are visible (after COMMIT), and
  // this node's hub hands them to machines already waiting.
  const hub = claimHub(ctx);
  for (const [key, list] of queued) {
    announceQueued(ctx, key, tx);
    ctx.db.afterCommit(tx, () => hub.jobsQueued(key, list));
  }
  // A queued change waiting for these checks is looked at again (services/changes, `checks.reported`).
  await ctx.events.emit(tx, { kind: "checks.reported", repoId: p.repoId, commit: p.commit });
  return { created: true, runId };
}
