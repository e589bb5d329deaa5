// The jobs table's own housekeeping: finished rows are kept a month (for diagnostics), then deleted.
import { now } from "../../util/clock.ts";
import type { Ctx } from "../context.ts";
import { jobKind } from "./kind.ts";
import { pruneDone } from "./store.ts";

/** Finished jobs are kept this long. */
export const DONE_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Deleting finished jobs past the retention period, once a day across the cluster. */
export const JOBS_PRUNE = jobKind<unknown>("jobs.prune", { every: { ms: 24 * 3600 * 1000, scope: "cluster" } });

/** The `jobs.prune` handler; answers how many rows went. */
export async function pruneJobs(ctx: Ctx): Promise<number> {
  return ctx.db.transaction((tx) => pruneDone(tx, now() - DONE_RETENTION_MS));
}
