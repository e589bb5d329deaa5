// Where a job's agent fetches its commit from (issue 29, "fork changes without secrets"): the
// run's own repository, or for a change from a fork the fork (`checkoutRepoId` in the job's spec,
// set by the trigger). The claim binds the job's token to that repository.
import type { Queryable } from "../../db/database.ts";
import { statementCache } from "../../db/statements.ts";

// Why a plain prepared statement: it runs in every claim transaction, where drizzle's building
// and row mapping would cost more than the statement (see store-runs.ts).
const { stmt } = statementCache("ci.checkout");
const CHECKOUT_REPO = {
  sqlite: `SELECT json_extract(j.spec, '$.checkoutRepoId') AS repo_id, r.org_id AS org_id FROM workflow_jobs j
           LEFT JOIN repos r ON r.id = json_extract(j.spec, '$.checkoutRepoId') WHERE j.id = ?1`,
  pg: `SELECT j.spec->>'checkoutRepoId' AS repo_id, r.org_id AS org_id FROM workflow_jobs j
       LEFT JOIN repos r ON r.id = j.spec->>'checkoutRepoId' WHERE j.id = $1`,
} as const;

/**
 * The repository job `jobId` fetches from when it is not the run's own (a fork), with that
 * repository's org (null when the fork is gone: the token then reads nothing); null for a job
 * that fetches from its run's repository.
 */
export async function checkoutRepoOfJob(q: Queryable, jobId: string): Promise<{ repoId: string; orgId: string | null } | null> {
  const r = await stmt(q, "checkoutRepoOfJob", CHECKOUT_REPO).get<{ repo_id: string | null; org_id: string | null }>(jobId);
  return r?.repo_id ? { repoId: r.repo_id, orgId: r.org_id ?? null } : null;
}
