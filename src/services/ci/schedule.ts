// Scheduled workflows (issue 29, plan §3 C "Schedules"): the `ci_schedules` index holds the crons
// of each repository's default branch (refreshed by the ci.trigger worker when the default branch
// is pushed: replaced whole by the crons of the files that parse; a malformed file keeps none).
// The cluster-scoped periodic kind `ci.schedule` takes each minute slot once across nodes; slots
// missed while every node was down are not replayed (the jobs engine moves to the current slot).
// For its minute it pages through the index and enqueues one `ci.trigger` with event `schedule`
// per matching workflow; the run is created once per slot (runs_schedule_uq), so a repeated
// handler creates nothing twice.
//
// Test clock: under SVC_TEST_PERIOD_SCALE (test-only, ignored by the compiled binary) the slot is
// still read as a minute of cron time (`slot * 60 000`), so with scale 0.02 every 1.2 s slot is
// "one minute" and `* * * * *` fires once per slot.
import type { Tx } from "../../db/database.ts";
import { now, type Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import { CronError, cronMatches, parseCron } from "./cron.ts";
import * as index from "./store-concurrency.ts";
import { CI_TRIGGER, type TriggerPayload } from "./trigger.ts";

/** The periodic kind: one slot per minute across the cluster. */
export const CI_SCHEDULE = jobKind<{ slot: number }>("ci.schedule", { every: { ms: 60_000, scope: "cluster" } });

/** Index rows read per query. */
const PAGE = 1000;

/** Replaces a repository's schedule index with the crons of the default branch at `commit` (inside the trigger's transaction). */
export async function refreshScheduleIndex(tx: Tx, repoId: string, commit: string, files: { path: string; crons: string[] }[]): Promise<void> {
  const t = now();
  const rows = files.flatMap((f) => f.crons.map((cron, position) => ({ repoId, workflow: f.path, position, cron, commit, updatedAt: t })));
  // Nothing to write for a repository that schedules nothing and did not before (every push of most default branches).
  if (!rows.length && !(await index.schedulesOfRepo(tx, repoId)).length) return;
  await index.replaceSchedules(tx, repoId, rows);
}

/** The `ci.schedule` handler: a scheduled trigger per workflow whose cron matches the slot's minute. */
export async function fireSchedules(ctx: Ctx, p: { slot: number }): Promise<number> {
  const minute = p.slot * 60_000;
  let after: { repoId: string; workflow: string; position: number } | null = null;
  let fired = 0;
  for (;;) {
    const page = await index.schedulesPage(ctx.db.read, after, PAGE);
    if (!page.length) break;
    after = page[page.length - 1]!;
    const due = new Map<string, TriggerPayload>();
    for (const row of page) {
      const key = `${row.repoId}\0${row.workflow}`;
      if (due.has(key)) continue;
      let matches = false;
      try {
        matches = cronMatches(parseCron(row.cron), minute);
      } catch (e) {
        // A cron the parser refused was never indexed; one an older parser took is skipped.
        if (!(e instanceof CronError)) throw e;
      }
      if (!matches) continue;
      due.set(key, {
        repoId: row.repoId,
        orgId: row.orgId,
        ref: `refs/heads/${row.defaultBranch}`,
        commit: row.commit,
        event: "schedule",
        actorUserId: null,
        workflow: row.workflow,
        scheduleSlot: p.slot,
      });
    }
    if (due.size) {
      await ctx.db.transaction(async (tx) => {
        for (const payload of due.values()) await ctx.work.enqueue(tx, CI_TRIGGER, payload);
      });
      fired += due.size;
    }
    if (page.length < PAGE) break;
  }
  return fired;
}
