// The lander's queue of one target branch as people see it: queued changes in landing order.
import { requireRepoFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { changeBodies } from "./changes.ts";
import type { Change } from "./schemas.ts";
import { queuedOn } from "./store.ts";

/** How many queued changes of one target are shown at most. */
export const QUEUE_SHOWN = 100;

/** The queue of `target` (repo:read), first to land first. */
export async function targetQueue(ctx: Ctx, actor: Principal, orgName: string, repoName: string, target: string): Promise<Change[]> {
  const { repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:read");
  return changeBodies(ctx, await queuedOn(ctx.db.read, repo.id, target, QUEUE_SHOWN));
}
