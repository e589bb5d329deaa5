// The reads and writes of the per-job runner calls beyond the job row itself (issue 29 part D):
// the run a job description names (workflow, event, attempt, inputs, trust, actor), the results
// and outputs of the jobs it needs (the `needs` context), a job's reported outputs, and the
// `masked` flag of a log chunk the server's masking pass changed.
import { and, eq, inArray } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";
import { continuesColumn } from "./store-runs.ts";

/** What a job description says about its run. */
export interface RunFacts {
  org: string;
  repo: string;
  commit: string;
  ref: string;
  workflow: string;
  event: string;
  attempt: number;
  inputs: Record<string, string | number | boolean> | null;
  trusted: boolean;
  actor: { id: string; handle: string } | null;
}

/** The run `runId` of `repoId` as a job description shows it, or null when it is gone. */
export async function runFacts(q: Queryable, repoId: string, runId: string): Promise<RunFacts | null> {
  const { orgs, repos, runs, users } = tables(q);
  const r = one(
    await q
      .select({
        org: orgs.name,
        repo: repos.name,
        commit: runs.commit,
        ref: runs.ref,
        workflow: runs.workflow,
        event: runs.event,
        attempt: runs.attempt,
        inputs: runs.inputs,
        trusted: runs.trusted,
        actorId: users.id,
        actorHandle: users.handle,
      })
      .from(runs)
      .innerJoin(repos, eq(repos.id, runs.repoId))
      .innerJoin(orgs, eq(orgs.id, repos.orgId))
      .leftJoin(users, eq(users.id, runs.actorUserId))
      .where(and(eq(runs.id, runId), eq(runs.repoId, repoId)))
      .limit(1),
  );
  if (!r) return null;
  const { actorId, actorHandle, ...rest } = r;
  return { ...rest, trusted: !!rest.trusted, actor: actorId && actorHandle ? { id: actorId, handle: actorHandle } : null };
}

/** The jobs of a run's attempt named by `workflowJobs` (every matrix cell of each): what the `needs` context reads. */
export async function neededJobs(
  q: Queryable,
  runId: string,
  attempt: number,
  workflowJobs: readonly string[],
): Promise<{ workflowJob: string; state: string; continues: boolean; outputs: Record<string, string> | null; finishedAt: number | null }[]> {
  if (!workflowJobs.length) return [];
  const { workflowJobs: jobs } = tables(q);
  return await q
    .select({ workflowJob: jobs.workflowJob, state: jobs.state, continues: continuesColumn(q, jobs), outputs: jobs.outputs, finishedAt: jobs.finishedAt })
    .from(jobs)
    .where(and(eq(jobs.runId, runId), eq(jobs.attempt, attempt), inArray(jobs.workflowJob, [...workflowJobs])));
}

/** Marks the log chunk at `offset` as changed by the server's masking pass (served whole from then on). */
export async function markChunkMasked(tx: Tx, jobId: string, offset: number): Promise<void> {
  const { jobLogChunks } = tables(tx);
  await tx
    .update(jobLogChunks)
    .set({ masked: true })
    .where(and(eq(jobLogChunks.jobId, jobId), eq(jobLogChunks.offset, offset)));
}
