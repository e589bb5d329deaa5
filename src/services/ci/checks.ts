// Check results as other domains read them (the lander's required checks): a service over the
// CI store, so no other domain reaches into ci/store-runs.ts.
import type { Ctx } from "../context.ts";
import * as runs from "./store-runs.ts";

/** A commit's latest check result per key: each CI job's state against its commit. */
export async function checkStatesOfCommit(ctx: Ctx, repoId: string, commit: string): Promise<Map<string, string>> {
  return new Map((await runs.checksOfCommit(ctx.db.read, repoId, commit)).map((c) => [c.key, c.state]));
}
