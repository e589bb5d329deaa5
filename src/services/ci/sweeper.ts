// The CI sweeper: ends jobs nobody will end. All state is in the database and every decision
// uses the service clock, so a restart loses nothing and tests move the clock instead of waiting.
//   - a running job whose heartbeats stopped for the heartbeat timeout (2 minutes) fails;
//   - a running job past its timeout-minutes is told to stop (heartbeat answers cancel), and is
//     cancelled outright if its runner does not report back within another heartbeat timeout;
//   - a job queued for 24 hours that no machine took fails.
import { now, type Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import { flushRunnerSeen } from "./credentials.ts";
import { failJob, minutes } from "./finish.ts";
import { flushHeartbeats } from "./job-calls.ts";
import * as runs from "./store-runs.ts";

/** How long a job may wait in the queue. */
export const QUEUED_LIFETIME_MS = 24 * 3600 * 1000;

/** One pass; answers how many jobs it ended or told to stop. */
export async function sweepCi(ctx: Ctx): Promise<number> {
  await flushHeartbeats(ctx);
  await flushRunnerSeen(ctx);
  const timeout = ctx.config.runnerHeartbeatTimeoutMs;
  const t = now();
  let n = 0;
  for (const job of await runs.silentJobs(ctx.db.read, t - timeout)) {
    const ended = await ctx.db.transaction(async (tx) => {
      const fresh = await runs.jobById(tx, job.id);
      const last = fresh ? (fresh.lastHeartbeatAt ?? fresh.startedAt ?? 0) : 0;
      if (!fresh || fresh.state !== "running" || last >= t - timeout) return false;
      return failJob(ctx, tx, fresh, "failure", `the runner stopped responding: no heartbeat for ${Math.round((t - last) / 1000)} seconds`, t);
    });
    if (ended) n++;
  }
  for (const job of await runs.overdueJobs(ctx.db.read, t)) {
    await ctx.db.transaction((tx) => runs.updateJob(tx, job.id, { cancelReason: "timeout" }));
    n++;
  }
  for (const job of await runs.timedOutUnanswered(ctx.db.read, t, timeout)) {
    if (
      await ctx.db.transaction(async (tx) => {
        const fresh = await runs.jobById(tx, job.id);
        return !!fresh && failJob(ctx, tx, fresh, "cancelled", `the job exceeded its timeout of ${minutes(fresh.spec.timeoutS)} minutes`, t);
      })
    )
      n++;
  }
  for (const job of await runs.staleQueuedJobs(ctx.db.read, t - QUEUED_LIFETIME_MS)) {
    if (
      await ctx.db.transaction(async (tx) => {
        const fresh = await runs.jobById(tx, job.id);
        return !!fresh && failJob(ctx, tx, fresh, "failure", "no runner took the job within 24 hours", t);
      })
    )
      n++;
  }
  return n;
}

/**
 * The sweeper's pass on every node, every quarter of the heartbeat timeout (200 ms to 5 s): each
 * end it writes is guarded by a fresh read in its own transaction, and an idle pass writes nothing.
 */
export const CI_SWEEP = jobKind<unknown>("ci.sweep", {
  every: { ms: (config) => Math.max(200, Math.min(5_000, Math.floor(config.runnerHeartbeatTimeoutMs / 4))), scope: "node" },
});
