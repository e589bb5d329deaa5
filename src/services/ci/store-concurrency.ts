// The CI domain's queries for concurrency groups (runs and jobs) and the schedule index.
import { and, asc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import { x } from "../../db/dialect.ts";
import { tables } from "../../db/tables.ts";
import type { RunRow } from "./store-runs.ts";

/** Takes the transaction-scoped lock of a concurrency group (advisory on PostgreSQL; SQLite serializes writers anyway). */
export async function lockGroup(tx: Tx, repoId: string, group: string): Promise<void> {
  await x(tx).lockKey(`ci.concurrency:${repoId}:${group}`);
}

/** The unfinished runs of a repository's concurrency group, oldest first. */
export async function unfinishedRunsInGroup(q: Queryable, repoId: string, group: string): Promise<RunRow[]> {
  const { runs } = tables(q);
  return await q
    .select()
    .from(runs)
    .where(and(eq(runs.repoId, repoId), eq(runs.concurrencyGroup, group), inArray(runs.state, ["queued", "running"])))
    .orderBy(asc(runs.createdAt), asc(runs.id));
}

/** Sets why a run waits (null: it may run) and, optionally, its error. */
export async function setRunWaiting(tx: Tx, id: string, waiting: string | null): Promise<void> {
  const { runs } = tables(tx);
  await tx.update(runs).set({ waiting }).where(eq(runs.id, id));
}

/** Gives the jobs of a run's attempt that a cancel just ended (error `cancelled`) the concurrency reason instead. */
export async function explainCancelled(tx: Tx, runId: string, attempt: number, reason: string): Promise<void> {
  const { workflowJobs: j } = tables(tx);
  await tx
    .update(j)
    .set({ error: reason })
    .where(and(eq(j.runId, runId), eq(j.attempt, attempt), eq(j.state, "cancelled"), eq(j.error, "cancelled")));
}

/** The oldest run of the group that waits for it, or null. */
export async function oldestWaitingRun(q: Queryable, repoId: string, group: string): Promise<RunRow | null> {
  const { runs } = tables(q);
  const rows = await q
    .select()
    .from(runs)
    .where(and(eq(runs.repoId, repoId), eq(runs.concurrencyGroup, group), eq(runs.state, "queued"), isNotNull(runs.waiting)))
    .orderBy(asc(runs.createdAt), asc(runs.id))
    .limit(1);
  return rows[0] ?? null;
}

/** The pending jobs without needs of a run's attempt (what a run released by its group queues), with routing. */
export async function pendingRootJobs(
  q: Queryable,
  runId: string,
  attempt: number,
): Promise<{ id: string; hosted: boolean; orgId: string; runsOn: string[] }[]> {
  const { workflowJobs: j } = tables(q);
  return await q
    .select({ id: j.id, hosted: j.hosted, orgId: j.orgId, runsOn: j.runsOn })
    .from(j)
    .where(and(eq(j.runId, runId), eq(j.attempt, attempt), eq(j.state, "pending"), sql`${j.needs} = '[]'`));
}

/** The unfinished jobs of a repository's job-level concurrency group (other runs' too), oldest first. */
export async function unfinishedJobsInGroup(
  q: Queryable,
  repoId: string,
  group: string,
): Promise<{ id: string; runId: string; state: string; hosted: boolean; orgId: string; runsOn: string[]; needs: string[] }[]> {
  const { workflowJobs: j } = tables(q);
  return await q
    .select({ id: j.id, runId: j.runId, state: j.state, hosted: j.hosted, orgId: j.orgId, runsOn: j.runsOn, needs: j.needs })
    .from(j)
    .where(and(eq(j.repoId, repoId), eq(j.concurrencyGroup, group), inArray(j.state, ["pending", "queued", "running"])))
    .orderBy(asc(j.queuedAt), asc(j.id));
}

/** A pending job becomes claimable; false when it was no longer pending. */
export async function queuePending(tx: Tx, id: string, t: number): Promise<boolean> {
  const { workflowJobs: j } = tables(tx);
  const r = await tx
    .update(j)
    .set({ state: "queued", queuedAt: t })
    .where(and(eq(j.id, id), eq(j.state, "pending")))
    .returning({ id: j.id });
  return r.length === 1;
}

/** The handles of users by id (a run's actor, shown with the run). */
export async function userHandles(q: Queryable, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const { users } = tables(q);
  const rows = await q.select({ id: users.id, handle: users.handle }).from(users).where(inArray(users.id, ids));
  return new Map(rows.map((r) => [r.id, r.handle]));
}

// ---- the schedule index (ci_schedules) ----

/** A row of the schedule index. */
export type ScheduleRow = { repoId: string; workflow: string; position: number; cron: string; commit: string; updatedAt: number };

/** The schedule rows of a repository. */
export async function schedulesOfRepo(q: Queryable, repoId: string): Promise<ScheduleRow[]> {
  const { ciSchedules: s } = tables(q);
  return await q.select().from(s).where(eq(s.repoId, repoId)).orderBy(asc(s.workflow), asc(s.position));
}

/** Replaces a repository's schedule rows (delete, then one multi-row INSERT). */
export async function replaceSchedules(tx: Tx, repoId: string, rows: ScheduleRow[]): Promise<void> {
  const { ciSchedules: s } = tables(tx);
  await tx.delete(s).where(eq(s.repoId, repoId));
  if (rows.length) await tx.insert(s).values(rows);
}

/** A page of the schedule index with each repository's org and default branch, after `after` (repo, workflow, position order). */
export async function schedulesPage(
  q: Queryable,
  after: { repoId: string; workflow: string; position: number } | null,
  limit: number,
): Promise<(ScheduleRow & { orgId: string; defaultBranch: string })[]> {
  const { ciSchedules: s, repos } = tables(q);
  const where = after ? sql`(${s.repoId}, ${s.workflow}, ${s.position}) > (${after.repoId}, ${after.workflow}, ${after.position})` : undefined;
  return await q
    .select({
      repoId: s.repoId,
      workflow: s.workflow,
      position: s.position,
      cron: s.cron,
      commit: s.commit,
      updatedAt: s.updatedAt,
      orgId: repos.orgId,
      defaultBranch: repos.defaultBranch,
    })
    .from(s)
    .innerJoin(repos, eq(repos.id, s.repoId))
    .where(where)
    .orderBy(asc(s.repoId), asc(s.workflow), asc(s.position))
    .limit(limit);
}
