// The lander's kind of durable work, apart from the lander so the land request (changes.ts) can
// queue it without importing the lander (which imports changes.ts).
import type { Tx } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";

/** The payload of a `change.land` job: one target branch's queue. */
export interface LandPayload {
  repoId: string;
  target: string;
}

/**
 * Working one target's queue until it is empty or waiting: enqueued by the land request, by a
 * check result for a queued change's head, and by the lander's scan. One attempt per target at a
 * time; one pending row per target (a request while it waits folds into it).
 */
export const CHANGE_LAND = jobKind<LandPayload>("change.land", {
  key: (p) => `land:${p.repoId}:${p.target}`,
  unique: (p) => `${p.repoId}:${p.target}`,
  concurrency: 2,
  // Short and renewed while a landing runs: after a crash the queue resumes within seconds (the
  // lander had no lease before the engine; the publish CAS keeps a late attempt harmless).
  leaseMs: 15_000,
});

/** Queues a pass over `target`'s queue inside `tx` (folded into one already waiting). */
export async function queueLanding(ctx: Ctx, tx: Tx, repoId: string, target: string): Promise<void> {
  await ctx.work.enqueue(tx, CHANGE_LAND, { repoId, target });
}
