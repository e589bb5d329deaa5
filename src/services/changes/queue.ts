// The lander's queue of one target branch as people see it: queued changes in landing order.
import { need, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { changeBodies } from "./changes.ts";
import type { Change } from "./schemas.ts";
import { queuedOn } from "./store.ts";

/** How many queued changes of one target are shown at most. */
export const QUEUE_SHOWN = 100;

/** The queue of `target` (repo:read), first to land first. */
export async function targetQueue(ctx: Ctx, t: RepoTarget, target: string): Promise<Change[]> {
  need(t, "repo:read");
  const { repo } = t;
  return changeBodies(ctx, await queuedOn(ctx.db.read, repo.id, target, QUEUE_SHOWN));
}
