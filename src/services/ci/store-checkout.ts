// Where a job's agent fetches its commit from (issue 29, "fork changes without secrets"): the
// run's own repository, or for a change from a fork the fork (`checkoutRepoId` in the job's spec,
// set by the trigger). The claim binds the job's token to that repository.
import { eq } from "drizzle-orm";
import type { Queryable } from "../../db/database.ts";
import { x } from "../../db/dialect.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

/**
 * The repository job `jobId` fetches from when it is not the run's own (a fork), with that
 * repository's org (null when the fork is gone: the token then reads nothing); null for a job
 * that fetches from its run's repository.
 */
export async function checkoutRepoOfJob(q: Queryable, jobId: string): Promise<{ repoId: string; orgId: string | null } | null> {
  const { workflowJobs, repos } = tables(q);
  const from = x(q).jsonText(workflowJobs.spec, "checkoutRepoId");
  const r = one(
    await q.select({ repoId: from, orgId: repos.orgId }).from(workflowJobs).leftJoin(repos, eq(repos.id, from)).where(eq(workflowJobs.id, jobId)).limit(1),
  );
  return r?.repoId ? { repoId: r.repoId, orgId: r.orgId ?? null } : null;
}
