// Planning a released placeholder (release.ts) off the event loop: the `ci.planPlaceholder` job.
//
// The release (inside a verdict's, a cancel's or a group's transaction) leaves a placeholder whose
// needs all finished pending and enqueues this job. Here, with no transaction open: read what its
// plan depends on (its file, the run's trigger and variables, its needs' results and outputs),
// plan it on a worker thread (plan-task.ts, within the parser's time limit), then in one write
// transaction run the release again with that plan. The release decides the placeholder again
// as the rows stand then (a run cancelled meanwhile skips it; a placeholder no longer pending is
// left alone) and uses the plan only if what it read is unchanged (planKey); otherwise the release
// enqueues a new planning (this one's row no longer folds others once it started). The transaction
// then settles the run as a job's end does (finish.ts).
import { now, type Ctx } from "../context.ts";
import { releaseConcurrencyGroup } from "./concurrency.ts";
import { runFailed, settleRun } from "./finish.ts";
import { planKey } from "./plan-task.ts";
import { aggregates, lazyContexts, placeholderInput, releaseDependents, type JobPlan, type PlanPlaceholderPayload, type PrePlanned } from "./release.ts";
import * as runs from "./store-runs.ts";
import { parserAnswer } from "./trigger.ts";
import { WORKFLOW_LIMITS } from "./workflow.ts";

/** The `ci.planPlaceholder` worker (release.ts CI_PLAN_PLACEHOLDER). */
export async function planReleasedPlaceholder(ctx: Ctx, p: PlanPlaceholderPayload): Promise<void> {
  // Read without a transaction: the rows the plan depends on are finished needs (they no longer change) and the run's trigger.
  const row = await runs.jobById(ctx.db.read, p.jobId);
  const source = (row?.plan as JobPlan | null | undefined)?.source;
  if (!row || row.state !== "pending" || source === undefined) return;
  const jobs = await runs.jobsOfAttempt(ctx.db.read, p.runId, p.attempt);
  const job = jobs.find((j) => j.id === p.jobId);
  if (!job) return;
  const { results } = aggregates(jobs);
  const at = await placeholderInput(ctx.db.read, job, source, { results, contexts: lazyContexts(ctx.db.read, p.runId, jobs) });
  if (!at) return;
  const parsed = await parserAnswer(at.input.path, () => ctx.threads.run("ci.planJobAt", at.input, { timeLimitMs: WORKFLOW_LIMITS.parseMs }));
  const pre: PrePlanned = { key: planKey(at.input), parsed };
  await ctx.db.transaction(async (tx) => {
    const run = await runs.runOfRepo(tx, p.repoId, p.runId);
    if (!run) return;
    const t = now();
    const moved = await releaseDependents(ctx, tx, p.runId, p.attempt, t, { plans: new Map([[p.jobId, pre]]) });
    if (!moved) return;
    // As a job's end (finish.ts failJob): a change waiting for these checks looks again, the run settles, its group moves on.
    await ctx.events.emit(tx, { kind: "checks.reported", repoId: run.repoId, commit: run.commit });
    const settled = await settleRun(tx, run.id, t);
    await releaseConcurrencyGroup(ctx, tx, row, run, settled, t);
    if (settled === "failure" && run.state !== "failure") await runFailed(ctx, tx, run);
  });
}
