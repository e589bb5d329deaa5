// The CI domain's queries for runs, jobs, the claim, logs, check results and CI minutes.
import { and, asc, desc, eq, gt, inArray, isNotNull, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { checkResults, repos, runs, workflowJobs, RunState } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { statementCache } from "../../db/statements.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";
import { x } from "../../db/dialect.ts";

export type RunRow = typeof runs.$inferSelect;
export type JobRow = typeof workflowJobs.$inferSelect;
/** A new run: the issue-29 columns (attempt, inputs, concurrency, schedule slot, trust) have defaults. */
export type NewRun = typeof runs.$inferInsert;
/** A new job: the issue-29 columns (attempt, needs, condition, outputs, …) have defaults. */
export type NewJob = typeof workflowJobs.$inferInsert & Pick<JobRow, "spec" | "steps" | "runsOn" | "state">;

const ph = sql.placeholder;

/**
 * Statements prepared once per connection (src/db/statements.ts), shared with ci/store.ts: the
 * claim path runs a dozen. Why plain SQL (`raw`) on the claim and verdict paths: drizzle's
 * parameter filling and row mapping cost more than the statements themselves there.
 */
export const { query, stmt } = statementCache("ci");

/** States after which nothing moves. */
export const FINISHED: readonly RunState[] = ["success", "failure", "cancelled"];
/** A job's states after which nothing moves: a run's, and `skipped`. */
export const JOB_FINISHED: readonly string[] = ["success", "failure", "cancelled", "skipped"];

// ---- runs and jobs ----

/**
 * Whether a job's job-level continue-on-error applies (GitHub's semantics: the job failed, the run
 * and what needs it count it a success): it failed and its spec says `continueOnError: true`
 * (workflow.ts decides it per matrix cell at plan time; a template left in an older spec is not
 * true). The spec is read only for failed rows (it may hold a megabyte of scripts).
 */
const CONTINUES = {
  sqlite: "CASE WHEN state = 'failure' THEN coalesce(json_extract(spec, '$.continueOnError') = 1, 0) ELSE 0 END",
  pg: "CASE WHEN state = 'failure' THEN coalesce(spec->'continueOnError' = 'true'::jsonb, false) ELSE false END",
} as const;

/** CONTINUES over `j`'s columns, for a drizzle select. */
export function continuesColumn(q: Queryable, j: Pick<typeof workflowJobs, "state" | "spec">) {
  const expr =
    x(q).name === "pg"
      ? sql`CASE WHEN ${j.state} = 'failure' THEN coalesce(${j.spec}->'continueOnError' = 'true'::jsonb, false) ELSE false END`
      : sql`CASE WHEN ${j.state} = 'failure' THEN coalesce(json_extract(${j.spec}, '$.continueOnError') = 1, 0) ELSE 0 END`;
  return expr.mapWith((v: unknown) => v === true || v === 1 || v === "1");
}

/** Whether a run of this workflow already exists for the trigger (the trigger job is at-least-once); `onlyTrusted`: a trusted run. */
export async function runExists(
  q: Queryable,
  repoId: string,
  commit: string,
  ref: string,
  event: string,
  workflow: string,
  onlyTrusted = false,
): Promise<boolean> {
  const { runs } = tables(q);
  return !!one(
    await q
      .select({ id: runs.id })
      .from(runs)
      .where(
        and(
          eq(runs.repoId, repoId),
          eq(runs.commit, commit),
          eq(runs.ref, ref),
          eq(runs.event, event),
          eq(runs.workflow, workflow),
          onlyTrusted ? eq(runs.trusted, true) : undefined,
        ),
      )
      .limit(1),
  );
}

/** Whether any run exists for the trigger's commit, ref and event (runs_trigger_idx). */
export async function anyRunOf(q: Queryable, repoId: string, commit: string, ref: string, event: string): Promise<boolean> {
  const { runs } = tables(q);
  return !!one(
    await q
      .select({ id: runs.id })
      .from(runs)
      .where(and(eq(runs.repoId, repoId), eq(runs.commit, commit), eq(runs.ref, ref), eq(runs.event, event)))
      .limit(1),
  );
}

/** Creates a run. */
export async function insertRun(tx: Tx, row: NewRun): Promise<void> {
  const { runs } = tables(tx);
  await tx.insert(runs).values(row);
}

/** Creates a job. */
export async function insertJob(tx: Tx, row: NewJob): Promise<void> {
  const { workflowJobs } = tables(tx);
  await tx.insert(workflowJobs).values(row);
}

/** Whether the scheduled run of this workflow for minute `slot` exists (runs_schedule_uq guards the insert too). */
export async function scheduledRunExists(q: Queryable, repoId: string, workflow: string, slot: number): Promise<boolean> {
  const { runs } = tables(q);
  return !!one(
    await q
      .select({ id: runs.id })
      .from(runs)
      .where(and(eq(runs.repoId, repoId), eq(runs.workflow, workflow), eq(runs.scheduleSlot, slot)))
      .limit(1),
  );
}

/** Rows per multi-row INSERT (well under SQLite's and PostgreSQL's bound-parameter limits). */
const INSERT_BATCH = 128;

/** Creates a run's jobs: one multi-row INSERT per 128 rows. */
export async function insertJobs(tx: Tx, rows: NewJob[]): Promise<void> {
  const { workflowJobs } = tables(tx);
  for (let i = 0; i < rows.length; i += INSERT_BATCH) await tx.insert(workflowJobs).values(rows.slice(i, i + INSERT_BATCH));
}

/** The run `id` of the repo, or null. */
export async function runOfRepo(q: Queryable, repoId: string, id: string): Promise<RunRow | null> {
  const { runs } = tables(q);
  const st = query(q, "runOfRepo", (q) =>
    q
      .select()
      .from(runs)
      .where(and(eq(runs.repoId, ph("repoId")), eq(runs.id, ph("id")))),
  );
  return (await st.get({ repoId, id })) ?? null;
}

/** A page of the repo's runs, newest first, after the (created_at, id) position `after`. */
export async function listRuns(q: Queryable, repoId: string, page: { after: [number, string] | null; limit: number }): Promise<RunRow[]> {
  const { runs } = tables(q);
  const where = page.after
    ? and(eq(runs.repoId, repoId), or(lt(runs.createdAt, page.after[0]), and(eq(runs.createdAt, page.after[0]), lt(runs.id, page.after[1]))))
    : eq(runs.repoId, repoId);
  return await q.select().from(runs).where(where).orderBy(desc(runs.createdAt), desc(runs.id)).limit(page.limit);
}

/** How much of a step's name the `steps` column keeps for lists (the runner gets it whole from the spec). */
export const STEP_NAME_SHOWN = 200;

/** A job without its spec (what lists and pages show): each step's name comes with its state. */
export type JobShown = Omit<JobRow, "spec" | UnshownJobColumns> & {
  /** It failed under a job-level `continue-on-error: true` (CONTINUES): its run counts it a success. */
  continues: boolean;
};
/** Job columns lists and pages do not read (SHOWN_COLUMNS): outputs are never shown (plan-29 §2.2), the plan is the server's. */
type UnshownJobColumns = "outputs" | "concurrencyGroup" | "plan";

/**
 * The columns of a JobShown row. Why not the spec: it may hold up to a megabyte per run of
 * scripts (issue 25 row 2), and lists and pages only need the step names, which the `steps`
 * column carries; rows written before it did get theirs from the spec inside SQLite.
 */
const SHOWN_COLUMNS_PG = `id, run_id, repo_id, org_id, key, runs_on, hosted, state, verdict, error, runner_id, runner_name, token_id, steps, cancel_reason, log_size,
  queued_at, started_at, finished_at, last_heartbeat_at, attempt, workflow_job, needs, condition, skip_reason, reused_from, NULL AS legacy_names,
  ${CONTINUES.pg} AS continues`;
// (PostgreSQL has no rows from before `steps` carried the names: its schema starts after that.)
const SHOWN_COLUMNS = `id, run_id, repo_id, org_id, key, runs_on, hosted, state, verdict, error, runner_id, runner_name, token_id, steps, cancel_reason, log_size,
  queued_at, started_at, finished_at, last_heartbeat_at, attempt, workflow_job, needs, condition, skip_reason, reused_from,
  CASE WHEN json_extract(steps, '$[0].name') IS NULL THEN (SELECT json_group_array(json_extract(s.value, '$.name')) FROM json_each(spec, '$.steps') s) END AS legacy_names,
  ${CONTINUES.sqlite} AS continues`;

/** A JSON column of a raw row: text on SQLite, already parsed (jsonb) on PostgreSQL. */
export function jsonOf<T>(v: unknown): T {
  return (typeof v === "string" ? JSON.parse(v) : v) as T;
}

/** A row of SHOWN_COLUMNS as a JobShown. */
function jobShownOf(r: Record<string, any>): JobShown {
  const steps = structuredClone(jsonOf<JobRow["steps"]>(r.steps));
  if (r.legacy_names) {
    const names = JSON.parse(r.legacy_names) as (string | null)[];
    for (let i = 0; i < steps.length; i++) steps[i] = { ...steps[i]!, name: String(names[i] ?? "").slice(0, STEP_NAME_SHOWN) };
  }
  return {
    id: r.id,
    runId: r.run_id,
    repoId: r.repo_id,
    orgId: r.org_id,
    key: r.key,
    runsOn: jsonOf(r.runs_on),
    hosted: !!r.hosted,
    state: r.state,
    verdict: r.verdict,
    error: r.error,
    runnerId: r.runner_id,
    runnerName: r.runner_name,
    tokenId: r.token_id,
    steps,
    cancelReason: r.cancel_reason,
    logSize: r.log_size,
    queuedAt: r.queued_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    lastHeartbeatAt: r.last_heartbeat_at,
    attempt: r.attempt ?? 1,
    workflowJob: r.workflow_job ?? "",
    needs: r.needs == null ? [] : jsonOf(r.needs),
    condition: r.condition ?? null,
    skipReason: r.skip_reason ?? null,
    reusedFrom: r.reused_from ?? null,
    continues: r.continues === true || r.continues === 1,
  };
}

/** The jobs of each run (every attempt), in creation order, without their specs. */
export async function shownJobsOfRuns(q: Queryable, runIds: string[]): Promise<JobShown[]> {
  if (!runIds.length) return [];
  const st = stmt(q, "shownJobsOfRuns", {
    sqlite: `SELECT ${SHOWN_COLUMNS} FROM workflow_jobs WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY queued_at, rowid`,
    pg: `SELECT ${SHOWN_COLUMNS_PG} FROM workflow_jobs WHERE run_id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) ORDER BY queued_at, id`,
  });
  const rows = (await st.all(JSON.stringify(runIds))) as Record<string, any>[];
  return rows.map(jobShownOf);
}

/** The job `id` without its spec, or null. */
export async function shownJobById(q: Queryable, id: string): Promise<JobShown | null> {
  const r = (await stmt(q, "shownJobById", {
    sqlite: `SELECT ${SHOWN_COLUMNS} FROM workflow_jobs WHERE id = ?`,
    pg: `SELECT ${SHOWN_COLUMNS_PG} FROM workflow_jobs WHERE id = $1`,
  }).get(id)) as Record<string, any> | null;
  return r ? jobShownOf(r) : null;
}

/** The spec of job `id` alone (not its plan, which a placeholder's file makes hundreds of KiB), or null. */
export async function jobSpecById(q: Queryable, id: string): Promise<unknown> {
  const r = (await stmt(q, "jobSpecById", "SELECT spec FROM workflow_jobs WHERE id = ?").get(id)) as { spec: unknown } | null;
  return r ? jsonOf(r.spec) : null;
}

/** The job `id`, or null. */
export async function jobById(q: Queryable, id: string): Promise<JobRow | null> {
  const r = (await stmt(q, "jobById", "SELECT * FROM workflow_jobs WHERE id = ?").get(id)) as Record<string, any> | null;
  return r ? jobRowOf(r) : null;
}

/** A workflow_jobs row as SQLite answers it (snake_case, JSON as text) as a JobRow. */
function jobRowOf(r: Record<string, any>): JobRow {
  return {
    id: r.id,
    runId: r.run_id,
    repoId: r.repo_id,
    orgId: r.org_id,
    key: r.key,
    runsOn: jsonOf(r.runs_on),
    hosted: !!r.hosted,
    spec: jsonOf(r.spec),
    state: r.state,
    verdict: r.verdict,
    error: r.error,
    runnerId: r.runner_id,
    runnerName: r.runner_name,
    tokenId: r.token_id,
    steps: jsonOf(r.steps),
    cancelReason: r.cancel_reason,
    logSize: r.log_size,
    queuedAt: r.queued_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    lastHeartbeatAt: r.last_heartbeat_at,
    attempt: r.attempt ?? 1,
    workflowJob: r.workflow_job ?? "",
    needs: r.needs == null ? [] : jsonOf(r.needs),
    condition: r.condition ?? null,
    skipReason: r.skip_reason ?? null,
    outputs: r.outputs == null ? null : jsonOf(r.outputs),
    concurrencyGroup: r.concurrency_group ?? null,
    reusedFrom: r.reused_from ?? null,
    plan: r.plan == null ? null : jsonOf(r.plan),
  };
}

/** The running job a machine holds, or null. */
export async function runningJobOf(q: Queryable, runnerId: string): Promise<JobRow | null> {
  const { workflowJobs } = tables(q);
  const st = query(q, "runningJobOf", (q) =>
    q
      .select()
      .from(workflowJobs)
      .where(and(eq(workflowJobs.runnerId, ph("runnerId")), eq(workflowJobs.state, "running"))),
  );
  return (await st.get({ runnerId })) ?? null;
}

/** Whether a machine holds a running job (one probe of the runner index). */
export async function hasRunningJob(q: Queryable, runnerId: string): Promise<boolean> {
  return (await stmt(q, "hasRunningJob", "SELECT 1 FROM workflow_jobs WHERE runner_id = ? AND state = 'running' LIMIT 1").get(runnerId)) !== null;
}

/** Updates a job's fields. */
export async function updateJob(tx: Tx, id: string, set: Partial<JobRow>): Promise<void> {
  const { workflowJobs } = tables(tx);
  await tx.update(workflowJobs).set(set).where(eq(workflowJobs.id, id));
}

/** Sets a run's state (and finished_at); a run already in that state is not written again. */
export async function setRunState(tx: Tx, id: string, state: RunState, finishedAt: number | null): Promise<void> {
  await stmt(
    tx,
    "setRunState",
    "UPDATE runs SET state = ?2, finished_at = ?3 WHERE id = ?1 AND (state IS DISTINCT FROM ?2 OR finished_at IS DISTINCT FROM ?3)",
  ).run(id, state, finishedAt);
}

/** Whether a run waits for its concurrency group (`runs.waiting` set). */
export async function runWaits(q: Queryable, id: string): Promise<boolean> {
  return (await stmt(q, "runWaits", "SELECT 1 AS ok FROM runs WHERE id = ? AND waiting IS NOT NULL").get(id)) !== null;
}

/** A queued run starts running (its first job was claimed); nothing happens to a run in any other state. */
export async function markRunRunning(tx: Tx, id: string): Promise<void> {
  await stmt(tx, "markRunRunning", "UPDATE runs SET state = 'running', finished_at = NULL WHERE id = ? AND state = 'queued'").run(id);
}

/**
 * Which states the jobs of a run's current attempt are in (one range of workflow_jobs_attempt_idx),
 * each with whether a failure is under job-level continue-on-error (CONTINUES). Plain strings: a
 * state a newer node wrote is passed on, not dropped (runStateOf treats it as unfinished).
 */
export async function jobStatesOfRun(q: Queryable, runId: string): Promise<{ state: string; continues: boolean }[]> {
  const where = (p: string) => `FROM workflow_jobs WHERE run_id = ${p} AND attempt = (SELECT attempt FROM runs WHERE id = ${p})`;
  const st = stmt(q, "jobStatesOfRun", {
    sqlite: `SELECT DISTINCT state, ${CONTINUES.sqlite} AS continues ${where("?1")}`,
    pg: `SELECT DISTINCT state, ${CONTINUES.pg} AS continues ${where("$1")}`,
  });
  return ((await st.all(runId)) as { state: string; continues: unknown }[]).map((r) => ({
    state: r.state,
    continues: r.continues === true || r.continues === 1,
  }));
}

/** The pending, queued and running jobs of a run (any attempt: earlier attempts have none). */
export async function unfinishedJobsOfRun(q: Queryable, runId: string): Promise<JobRow[]> {
  const { workflowJobs } = tables(q);
  return await q
    .select()
    .from(workflowJobs)
    .where(and(eq(workflowJobs.runId, runId), inArray(workflowJobs.state, ["pending", "queued", "running"])));
}

/** What the release of dependent jobs reads of each job of an attempt (no spec, no steps). */
export type GraphJob = Pick<
  JobRow,
  | "id"
  | "runId"
  | "repoId"
  | "orgId"
  | "key"
  | "runsOn"
  | "hosted"
  | "state"
  | "attempt"
  | "workflowJob"
  | "needs"
  | "condition"
  | "outputs"
  | "cancelReason"
  | "finishedAt"
  | "reusedFrom"
  | "concurrencyGroup"
> & {
  /** It failed under a job-level `continue-on-error: true` (CONTINUES): what needs it reads success. */
  continues: boolean;
  /** Its `plan` is set (what the release evaluates: release.ts JobPlan); read whole with jobById. */
  planned: boolean;
};

/** The jobs of one attempt of a run, in creation order (one range of workflow_jobs_attempt_idx; at most 256 rows). */
export async function jobsOfAttempt(q: Queryable, runId: string, attempt: number): Promise<GraphJob[]> {
  const { workflowJobs: j } = tables(q);
  return await q
    .select({
      id: j.id,
      runId: j.runId,
      repoId: j.repoId,
      orgId: j.orgId,
      key: j.key,
      runsOn: j.runsOn,
      hosted: j.hosted,
      state: j.state,
      attempt: j.attempt,
      workflowJob: j.workflowJob,
      needs: j.needs,
      condition: j.condition,
      outputs: j.outputs,
      cancelReason: j.cancelReason,
      finishedAt: j.finishedAt,
      reusedFrom: j.reusedFrom,
      concurrencyGroup: j.concurrencyGroup,
      continues: continuesColumn(q, j),
      planned: sql<boolean>`${j.plan} IS NOT NULL`.mapWith((v) => v === true || v === 1),
    })
    .from(j)
    .where(and(eq(j.runId, runId), eq(j.attempt, attempt)))
    .orderBy(asc(j.queuedAt), asc(j.id));
}

/** Whether an attempt of a run has a pending job (one probe of workflow_jobs_run_idx): the verdict path's cheap "anything to release?". */
export async function hasPendingJob(q: Queryable, runId: string, attempt: number): Promise<boolean> {
  return (
    (await stmt(q, "hasPendingJob", "SELECT 1 AS ok FROM workflow_jobs WHERE run_id = ? AND state = 'pending' AND attempt = ? LIMIT 1").get(runId, attempt)) !==
    null
  );
}

/** The whole rows of one attempt's jobs, in creation order (what a re-run copies). */
export async function jobRowsOfAttempt(q: Queryable, runId: string, attempt: number): Promise<JobRow[]> {
  const { workflowJobs: j } = tables(q);
  return await q
    .select()
    .from(j)
    .where(and(eq(j.runId, runId), eq(j.attempt, attempt)))
    .orderBy(asc(j.queuedAt), asc(j.id));
}

/** A run starts attempt `next` (queued, unfinished) if it is still at attempt `prev`; false otherwise. */
export async function startAttempt(tx: Tx, runId: string, prev: number, next: number): Promise<boolean> {
  const st = stmt(tx, "startAttempt", "UPDATE runs SET attempt = ?3, state = 'queued', finished_at = NULL WHERE id = ?1 AND attempt = ?2 RETURNING 1 AS ok");
  return (await st.get(runId, prev, next)) !== null;
}

/** A pending job becomes claimable (queued now); false when it was no longer pending. */
export async function queuePendingJob(tx: Tx, id: string, t: number): Promise<boolean> {
  const st = stmt(tx, "queuePendingJob", "UPDATE workflow_jobs SET state = 'queued', queued_at = ? WHERE id = ? AND state = 'pending' RETURNING 1 AS ok");
  return (await st.get(t, id)) !== null;
}

/** Deletes a pending job that its planned jobs replace (a placeholder, release.ts) with its check rows; false when it was no longer pending. */
export async function dropPendingJob(tx: Tx, repoId: string, id: string): Promise<boolean> {
  if ((await stmt(tx, "dropPendingJob", "DELETE FROM workflow_jobs WHERE id = ? AND state = 'pending' RETURNING 1 AS ok").get(id)) === null) return false;
  await stmt(tx, "dropPendingJobChecks", "DELETE FROM check_results WHERE repo_id = ? AND job_id = ?").run(repoId, id);
  return true;
}

/** A job not started yet (pending or queued) is skipped with its reason; false when it had started or ended. */
export async function skipPendingJob(tx: Tx, id: string, reason: string, t: number): Promise<boolean> {
  const st = stmt(
    tx,
    "skipPendingJob",
    "UPDATE workflow_jobs SET state = 'skipped', skip_reason = ?, finished_at = ? WHERE id = ? AND state IN ('pending', 'queued') RETURNING 1 AS ok",
  );
  return (await st.get(reason, t, id)) !== null;
}

/** Marks unfinished jobs with why they stop (`cancel`): running ones hear it at their next heartbeat. */
export async function markCancelReason(tx: Tx, ids: string[], reason: string): Promise<void> {
  if (!ids.length) return;
  const { workflowJobs } = tables(tx);
  await tx
    .update(workflowJobs)
    .set({ cancelReason: reason })
    .where(and(inArray(workflowJobs.id, ids), isNull(workflowJobs.cancelReason)));
}

/** Running jobs whose last heartbeat (or start) is before `before`. */
export async function silentJobs(q: Queryable, before: number): Promise<JobRow[]> {
  const { workflowJobs } = tables(q);
  return await q
    .select()
    .from(workflowJobs)
    .where(and(eq(workflowJobs.state, "running"), lt(sql`coalesce(${workflowJobs.lastHeartbeatAt}, ${workflowJobs.startedAt})`, before)))
    .limit(500);
}

/** Running jobs past their timeout that were not yet told to stop. */
export async function overdueJobs(q: Queryable, t: number): Promise<JobRow[]> {
  const { workflowJobs } = tables(q);
  return await q
    .select()
    .from(workflowJobs)
    .where(
      and(
        eq(workflowJobs.state, "running"),
        isNull(workflowJobs.cancelReason),
        lte(sql`${workflowJobs.startedAt} + ${x(q).jsonNumber(workflowJobs.spec, "timeoutS")} * 1000`, t),
      ),
    )
    .limit(500);
}

/** Running jobs told to stop for their timeout more than `graceMs` ago (the runner did not report back). */
export async function timedOutUnanswered(q: Queryable, t: number, graceMs: number): Promise<JobRow[]> {
  const { workflowJobs } = tables(q);
  return await q
    .select()
    .from(workflowJobs)
    .where(
      and(
        eq(workflowJobs.state, "running"),
        isNotNull(workflowJobs.cancelReason),
        lte(sql`${workflowJobs.startedAt} + ${x(q).jsonNumber(workflowJobs.spec, "timeoutS")} * 1000 + ${graceMs}`, t),
      ),
    )
    .limit(500);
}

/** Queued jobs created before `before` (nobody picked them up). */
export async function staleQueuedJobs(q: Queryable, before: number): Promise<JobRow[]> {
  const { workflowJobs } = tables(q);
  return await q
    .select()
    .from(workflowJobs)
    .where(and(eq(workflowJobs.state, "queued"), lt(workflowJobs.queuedAt, before)))
    .limit(500);
}

/** Queued hosted jobs of the org. */
export async function queuedHostedJobsOfOrg(q: Queryable, orgId: string): Promise<JobRow[]> {
  const { workflowJobs } = tables(q);
  return await q
    .select()
    .from(workflowJobs)
    .where(and(eq(workflowJobs.state, "queued"), eq(workflowJobs.hosted, true), eq(workflowJobs.orgId, orgId)));
}

/** Per org and kind (hosted or not): how many jobs are queued and the newest queue time; the claim's cheap "did anything change" probe. */
export async function queueSignature(q: Queryable): Promise<{ orgId: string; hosted: number; n: number; newest: number }[]> {
  return await x(q).rows<{ orgId: string; hosted: number; n: number; newest: number }>(
    sql`SELECT org_id AS "orgId", hosted, count(*) AS n, max(queued_at) AS newest FROM workflow_jobs WHERE state = 'queued' GROUP BY org_id, hosted`,
  );
}

/** What routing needs to know about a self-hosted machine (SPEC §4.1 claim rule 2). */
export interface Route {
  hosted: boolean;
  orgId: string | null;
  labels: string[];
  groupId: string | null;
  groupAll: boolean;
  allowPublic: boolean;
  /** The org's self_hosted policy (`all` or `selected`; a `disabled` org routes nothing). */
  policyAll: boolean;
}

/**
 * The SELECT of the oldest queued job `route` may take: runs-on ⊆ labels; for a self-hosted
 * machine the job is self-hosted, in its org, the group admits the repository (and allow_public
 * when it is public) and the policy admits self-hosted runners for it; for an instance machine
 * the job is hosted and its org does not disable hosted runners. Parameters: ?1 the machine's
 * labels (JSON), ?2 the org, ?3 the group. A condition that admits everything (group `all`,
 * allow_public, policy `all`) is left out of the SQL, so the common claim is one index range.
 */
function claimableSql(route: Route, dialect: "sqlite" | "pg"): { name: string; sql: string } {
  // runs-on ⊆ labels; PostgreSQL: jsonb containment, and a job another node is claiming is skipped.
  const labelsOk =
    dialect === "pg"
      ? "j.runs_on <@ ?1::text::jsonb"
      : "NOT EXISTS (SELECT 1 FROM json_each(j.runs_on) l WHERE l.value NOT IN (SELECT value FROM json_each(?1)))";
  const order = dialect === "pg" ? "ORDER BY j.queued_at, j.id LIMIT 1 FOR UPDATE SKIP LOCKED" : "ORDER BY j.queued_at, j.rowid LIMIT 1";
  if (route.hosted) {
    return {
      name: `claimable:${dialect}:hosted`,
      sql: `SELECT j.id FROM workflow_jobs j WHERE j.state = 'queued' AND j.hosted = TRUE AND ${labelsOk} AND NOT EXISTS (SELECT 1 FROM runner_policies p WHERE p.org_id = j.org_id AND p.hosted = 'disabled') ${order}`,
    };
  }
  const where = ["j.state = 'queued'", "j.hosted = FALSE", "j.org_id = ?2", labelsOk];
  if (!route.allowPublic) where.push("EXISTS (SELECT 1 FROM repos r WHERE r.id = j.repo_id AND r.public = FALSE)");
  if (!route.groupAll) where.push("j.repo_id IN (SELECT g.repo_id FROM runner_group_repos g WHERE g.group_id = ?3)");
  if (!route.policyAll) where.push("j.repo_id IN (SELECT p.repo_id FROM runner_policy_repos p WHERE p.org_id = ?2)");
  const name = `claimable:${dialect}:${route.allowPublic ? 1 : 0}${route.groupAll ? 1 : 0}${route.policyAll ? 1 : 0}`;
  return { name, sql: `SELECT j.id FROM workflow_jobs j WHERE ${where.join(" AND ")} ${order}` };
}

/** The id of the oldest queued job `route` may take (see claimableSql), or null. */
export async function claimableJob(q: Queryable, route: Route): Promise<string | null> {
  const { name, sql } = claimableSql(route, x(q).name);
  const st = stmt(q, name, sql);
  // A variant binds only the parameters it names (the hosted one has no org, the open ones no group).
  const count = Math.max(0, ...[...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1])));
  const row = (await st.get(...[JSON.stringify(route.labels), route.orgId, route.groupId].slice(0, count))) as { id: string } | undefined;
  return row?.id ?? null;
}

/** What the claim needs of the job it started. */
export interface StartedJob {
  id: string;
  runId: string;
  repoId: string;
  orgId: string;
  key: string;
  hosted: boolean;
}

/**
 * Finds the oldest job `route` may take and moves it from queued to running on the machine, in
 * one statement (a compare-and-set on the state inside the write transaction); null when there is
 * none.
 */
export async function claimNextJob(
  tx: Tx,
  route: Route,
  set: { runnerId: string; runnerName: string; tokenId: string; t: number },
): Promise<StartedJob | null> {
  const dialect = x(tx).name;
  const { name, sql } = claimableSql(route, dialect);
  // PostgreSQL types every parameter of a statement: one a variant leaves out still needs a use.
  const typed = dialect === "pg" ? [2, 3].filter((n) => !sql.includes(`?${n}`)).map((n) => ` AND (?${n}::text IS NULL OR TRUE)`) : [];
  const st = stmt(
    tx,
    `start:${name}`,
    `UPDATE workflow_jobs SET state = 'running', runner_id = ?4, runner_name = ?5, token_id = ?6, started_at = ?7, last_heartbeat_at = ?7
     WHERE id = (${sql}) AND state = 'queued'${typed.join("")} RETURNING id, run_id, repo_id, org_id, key, hosted`,
  );
  const r = (await st.get(JSON.stringify(route.labels), route.orgId, route.groupId, set.runnerId, set.runnerName, set.tokenId, set.t)) as Record<
    string,
    any
  > | null;
  return r ? { id: r.id, runId: r.run_id, repoId: r.repo_id, orgId: r.org_id, key: r.key, hosted: !!r.hosted } : null;
}

/** Finishes a job if it is not finished yet; false when it already was. */
export async function finishJobRow(tx: Tx, id: string, set: { state: RunState; verdict: string | null; error: string | null; t: number }): Promise<boolean> {
  const st = stmt(
    tx,
    "finishJobRow",
    "UPDATE workflow_jobs SET state = ?, verdict = ?, error = ?, finished_at = ?, token_id = NULL WHERE id = ? AND state IN ('pending', 'queued', 'running') RETURNING 1 AS ok",
  );
  return (await st.get(set.state, set.verdict, set.error, set.t, id)) !== null;
}

/** Writes batched heartbeat stamps (never moving one backwards). */
export async function stampHeartbeats(tx: Tx, stamps: [string, number][]): Promise<void> {
  const { workflowJobs } = tables(tx);
  for (const [id, t] of stamps) {
    await tx
      .update(workflowJobs)
      .set({ lastHeartbeatAt: x(tx).greatest(sql`coalesce(${workflowJobs.lastHeartbeatAt}, 0)`, t) })
      .where(and(eq(workflowJobs.id, id), eq(workflowJobs.state, "running")));
  }
}

/** Where a job's run is: org and repository names, commit and ref (null when the repository is gone). */
export async function jobPlace(q: Queryable, repoId: string, runId: string): Promise<{ org: string; repo: string; commit: string; ref: string } | null> {
  const { orgs, repos, runs } = tables(q);
  return (
    one(
      await q
        .select({ org: orgs.name, repo: repos.name, commit: runs.commit, ref: runs.ref })
        .from(runs)
        .innerJoin(repos, eq(repos.id, runs.repoId))
        .innerJoin(orgs, eq(orgs.id, repos.orgId))
        .where(and(eq(runs.id, runId), eq(runs.repoId, repoId)))
        .limit(1),
    ) ?? null
  );
}

/** The repository `repoId` with its org's name, or null when it is gone. */
export async function repoWithOrg(q: Queryable, repoId: string): Promise<{ repo: typeof repos.$inferSelect; orgName: string } | null> {
  const { repos, orgs } = tables(q);
  return (
    one(await q.select({ repo: repos, orgName: orgs.name }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(eq(repos.id, repoId)).limit(1)) ?? null
  );
}

/** The repository name of a repo id (null when deleted). */
export async function repoName(q: Queryable, repoId: string): Promise<string | null> {
  const { repos } = tables(q);
  return one(await q.select({ name: repos.name }).from(repos).where(eq(repos.id, repoId)).limit(1))?.name ?? null;
}

// ---- per-job tokens (rows of the people domain's tokens table, kind `job`) ----

/** Creates the per-job token: repo:read on one repository, no person behind it. */
export async function insertJobToken(
  tx: Tx,
  row: { id: string; orgId: string; repoId: string; secretHash: string; label: string; createdAt: number },
): Promise<void> {
  const st = stmt(
    tx,
    "insertJobToken",
    `INSERT INTO tokens (id, org_id, user_id, kind, scopes, label, repo_id, secret_hash, last_used_at, created_at) VALUES (?, ?, NULL, 'job', '["repo:read"]', ?, ?, ?, NULL, ?)`,
  );
  await st.run(row.id, row.orgId, row.label, row.repoId, row.secretHash, row.createdAt);
}

/** Revokes a per-job token (the next use is a 401). */
export async function deleteJobToken(tx: Tx, id: string): Promise<void> {
  await stmt(tx, "deleteJobToken", "DELETE FROM tokens WHERE id = ? AND kind = 'job'").run(id);
}

// ---- logs ----

/** Records an acknowledged log chunk and grows the log, if the log is exactly `offset` long; false otherwise. */
export async function appendLogChunk(tx: Tx, jobId: string, offset: number, size: number, key: string): Promise<boolean> {
  const { workflowJobs, jobLogChunks } = tables(tx);
  const r = await tx
    .update(workflowJobs)
    .set({ logSize: sql`${workflowJobs.logSize} + ${size}` })
    .where(and(eq(workflowJobs.id, jobId), eq(workflowJobs.logSize, offset)))
    .returning({ id: sql`1` });
  if (r.length !== 1) return false;
  await tx.insert(jobLogChunks).values({ jobId, offset, size, key });
  return true;
}

/** The log's chunks in order. */
export async function logChunks(q: Queryable, jobId: string): Promise<{ offset: number; size: number; key: string }[]> {
  const { jobLogChunks } = tables(q);
  return await q
    .select({ offset: jobLogChunks.offset, size: jobLogChunks.size, key: jobLogChunks.key })
    .from(jobLogChunks)
    .where(eq(jobLogChunks.jobId, jobId))
    .orderBy(asc(jobLogChunks.offset));
}

/** Up to `limit` chunks holding bytes at or after `from`, in order. */
export async function logChunksFrom(
  q: Queryable,
  jobId: string,
  from: number,
  limit: number,
): Promise<{ offset: number; size: number; key: string; masked: boolean }[]> {
  const { jobLogChunks } = tables(q);
  return await q
    .select({ offset: jobLogChunks.offset, size: jobLogChunks.size, key: jobLogChunks.key, masked: jobLogChunks.masked })
    .from(jobLogChunks)
    .where(and(eq(jobLogChunks.jobId, jobId), gt(sql`${jobLogChunks.offset} + ${jobLogChunks.size}`, from)))
    .orderBy(asc(jobLogChunks.offset))
    .limit(limit);
}

// ---- check results and minutes ----

/** Records a job's state against its commit under its key (what required checks read). */
export async function recordCheck(tx: Tx, row: typeof checkResults.$inferSelect): Promise<void> {
  const { checkResults } = tables(tx);
  const st = query(tx, "recordCheck", (q) =>
    q
      .insert(checkResults)
      .values({
        repoId: ph("repoId"),
        commit: ph("commit"),
        key: ph("key"),
        state: ph("state"),
        runId: ph("runId"),
        jobId: ph("jobId"),
        updatedAt: ph("updatedAt"),
      })
      .onConflictDoUpdate({
        target: [checkResults.repoId, checkResults.commit, checkResults.key],
        set: { state: sql`excluded.state`, runId: sql`excluded.run_id`, jobId: sql`excluded.job_id`, updatedAt: sql`excluded.updated_at` },
      }),
  );
  await st.run(row);
}

/** A check_results row. */
export type CheckRow = typeof checkResults.$inferSelect;

/** Records several jobs' states against their commit (multi-row upserts; a key written twice keeps its last row). */
export async function recordChecks(tx: Tx, rows: CheckRow[]): Promise<void> {
  const { checkResults } = tables(tx);
  // Why deduplicated: one upsert statement may not touch the same (repo, commit, key) row twice (PostgreSQL).
  const byKey = new Map<string, CheckRow>();
  for (const r of rows) byKey.set(`${r.repoId}\0${r.commit}\0${r.key}`, r);
  const unique = [...byKey.values()];
  for (let i = 0; i < unique.length; i += INSERT_BATCH) {
    await tx
      .insert(checkResults)
      .values(unique.slice(i, i + INSERT_BATCH))
      .onConflictDoUpdate({
        target: [checkResults.repoId, checkResults.commit, checkResults.key],
        set: { state: sql`excluded.state`, runId: sql`excluded.run_id`, jobId: sql`excluded.job_id`, updatedAt: sql`excluded.updated_at` },
      });
  }
}

/** Records a job's state against its run's commit (read from the run in the same statement); nothing when the run is gone. */
export async function recordRunCheck(
  tx: Tx,
  row: { repoId: string; runId: string; key: string; state: RunState | "skipped"; jobId: string; updatedAt: number },
): Promise<void> {
  const st = stmt(
    tx,
    "recordRunCheck",
    `INSERT INTO check_results (repo_id, "commit", key, state, run_id, job_id, updated_at) SELECT repo_id, "commit", ?3, ?4, id, ?5, ?6 FROM runs WHERE id = ?1 AND repo_id = ?2
     ON CONFLICT (repo_id, "commit", key) DO UPDATE SET state = excluded.state, run_id = excluded.run_id, job_id = excluded.job_id, updated_at = excluded.updated_at`,
  );
  await st.run(row.runId, row.repoId, row.key, row.state, row.jobId, row.updatedAt);
}

/** The check results of a commit, by key. */
export async function checksOfCommit(q: Queryable, repoId: string, commit: string): Promise<(typeof checkResults.$inferSelect)[]> {
  const { checkResults } = tables(q);
  return await q
    .select()
    .from(checkResults)
    .where(and(eq(checkResults.repoId, repoId), eq(checkResults.commit, commit)))
    .orderBy(asc(checkResults.key));
}

/** Starts counting a job's minutes. */
export async function startMinutes(tx: Tx, row: { jobId: string; orgId: string; repoId: string; hosted: boolean; startedAt: number }): Promise<void> {
  const st = stmt(
    tx,
    "startMinutes",
    "INSERT INTO ci_minutes (job_id, org_id, repo_id, hosted, started_at, finished_at, minutes) VALUES (?, ?, ?, ?, ?, NULL, NULL) ON CONFLICT DO NOTHING",
  );
  await st.run(row.jobId, row.orgId, row.repoId, row.hosted, row.startedAt);
}

/** Stops counting a job's minutes (whole minutes, rounded up). */
export async function finishMinutes(tx: Tx, jobId: string, t: number): Promise<void> {
  await stmt(tx, "finishMinutes", {
    sqlite: "UPDATE ci_minutes SET finished_at = ?1, minutes = max(1, (?1 - started_at + 59999) / 60000) WHERE job_id = ?2 AND finished_at IS NULL",
    pg: "UPDATE ci_minutes SET finished_at = $1, minutes = greatest(1, ($1 - started_at + 59999) / 60000) WHERE job_id = $2 AND finished_at IS NULL",
  }).run(t, jobId);
}
