// Check results as other domains read them (the lander's required checks, a change's and a
// commit's checks): a service over the CI store, so no other domain reaches into its store modules.
import type { Ctx } from "../context.ts";
import type { Check } from "./schemas.ts";
import * as batched from "./store-checks.ts";
import * as runs from "./store-runs.ts";

/** A commit's latest check result per key: each CI job's state against its commit. */
export async function checkStatesOfCommit(ctx: Ctx, repoId: string, commit: string): Promise<Map<string, string>> {
  return new Map((await runs.checksOfCommit(ctx.db.read, repoId, commit)).map((c) => [c.key, c.state]));
}

/** How many commits one query asks about. */
const BATCH = 100;

/** The checks of several commits of one repository, by key (batched: one query per 100 commits). Commits with none are absent. */
export async function checksOfCommits(ctx: Ctx, repoId: string, commits: string[]): Promise<Map<string, Check[]>> {
  const out = new Map<string, Check[]>();
  const ids = [...new Set(commits)];
  for (let i = 0; i < ids.length; i += BATCH) {
    for (const r of await batched.checksOfCommits(ctx.db.read, repoId, ids.slice(i, i + BATCH))) {
      let list = out.get(r.commit);
      if (!list) out.set(r.commit, (list = []));
      list.push({ key: r.key, state: r.state, run_id: r.runId, job_id: r.jobId });
    }
  }
  return out;
}

/** A rollup of a commit's checks: failure when any failed or was cancelled, pending while any has not finished, else success (a skipped check passes); null with no checks. */
export function checksState(checks: readonly Check[] | undefined): "success" | "failure" | "pending" | null {
  if (!checks?.length) return null;
  if (checks.some((c) => c.state === "failure" || c.state === "cancelled")) return "failure";
  if (checks.some((c) => c.state !== "success" && c.state !== "skipped")) return "pending";
  return "success";
}
