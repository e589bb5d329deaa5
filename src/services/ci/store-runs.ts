// The CI domain's queries for runs, jobs, the claim, logs, check results and CI minutes.
import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, lte, or, sql } from "drizzle-orm";
import { checkResults, ciMinutes, jobLogChunks, orgs, repos, runs, tokens, workflowJobs, type RunState } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";

export type RunRow = typeof runs.$inferSelect;
export type JobRow = typeof workflowJobs.$inferSelect;

// Prepared statements, one set per connection (the read handle, the write handle): building and
// preparing the SQL is most of what a small query costs, and the claim path runs a dozen of them.
const preparedByHandle = new WeakMap<object, Map<string, unknown>>();
const ph = sql.placeholder;

/** The statement `name` prepared on `q` (built once per connection). */
export function prepared<T>(q: Queryable, name: string, build: (q: Queryable) => T): T {
  let m = preparedByHandle.get(q);
  if (!m) preparedByHandle.set(q, (m = new Map()));
  let stmt = m.get(name) as T | undefined;
  if (stmt === undefined) m.set(name, (stmt = build(q)));
  return stmt;
}

/** States after which nothing moves. */
export const FINISHED: readonly RunState[] = ["success", "failure", "cancelled"];

// ---- runs and jobs ----

/** Whether a run of this workflow already exists for the trigger (the trigger job is at-least-once). */
export async function runExists(q: Queryable, repoId: string, commit: string, ref: string, event: string, workflow: string): Promise<boolean> {
  return !!q.select({ id: runs.id }).from(runs).where(and(eq(runs.repoId, repoId), eq(runs.commit, commit), eq(runs.ref, ref), eq(runs.event, event), eq(runs.workflow, workflow))).get();
}

/** Creates a run. */
export async function insertRun(tx: Tx, row: RunRow): Promise<void> {
  tx.insert(runs).values(row).run();
}

/** Creates a job. */
export async function insertJob(tx: Tx, row: JobRow): Promise<void> {
  tx.insert(workflowJobs).values(row).run();
}

/** The run `id` of the repo, or null. */
export async function runOfRepo(q: Queryable, repoId: string, id: string): Promise<RunRow | null> {
  const stmt = prepared(q, "runOfRepo", (q) => q.select().from(runs).where(and(eq(runs.repoId, ph("repoId")), eq(runs.id, ph("id")))).prepare());
  return stmt.get({ repoId, id }) ?? null;
}

/** A page of the repo's runs, newest first, after the (created_at, id) position `after`. */
export async function listRuns(q: Queryable, repoId: string, page: { after: [number, string] | null; limit: number }): Promise<RunRow[]> {
  const where = page.after
    ? and(eq(runs.repoId, repoId), or(lt(runs.createdAt, page.after[0]), and(eq(runs.createdAt, page.after[0]), lt(runs.id, page.after[1]))))
    : eq(runs.repoId, repoId);
  return q.select().from(runs).where(where).orderBy(desc(runs.createdAt), desc(runs.id)).limit(page.limit).all();
}

/** The jobs of each run, in creation order. */
export async function jobsOfRuns(q: Queryable, runIds: string[]): Promise<JobRow[]> {
  if (!runIds.length) return [];
  return q.select().from(workflowJobs).where(inArray(workflowJobs.runId, runIds)).orderBy(asc(workflowJobs.queuedAt), asc(sql`rowid`)).all();
}

/** The job `id`, or null. */
export async function jobById(q: Queryable, id: string): Promise<JobRow | null> {
  return prepared(q, "jobById", (q) => q.select().from(workflowJobs).where(eq(workflowJobs.id, ph("id"))).prepare()).get({ id }) ?? null;
}

/** The running job a machine holds, or null. */
export async function runningJobOf(q: Queryable, runnerId: string): Promise<JobRow | null> {
  const stmt = prepared(q, "runningJobOf", (q) => q.select().from(workflowJobs).where(and(eq(workflowJobs.runnerId, ph("runnerId")), eq(workflowJobs.state, "running"))).prepare());
  return stmt.get({ runnerId }) ?? null;
}

/** Updates a job's fields. */
export async function updateJob(tx: Tx, id: string, set: Partial<JobRow>): Promise<void> {
  tx.update(workflowJobs).set(set).where(eq(workflowJobs.id, id)).run();
}

/** Sets a run's state (and finished_at). */
export async function setRunState(tx: Tx, id: string, state: RunState, finishedAt: number | null): Promise<void> {
  prepared(tx, "setRunState", (q) => q.update(runs).set({ state: sql`${ph("state")}`, finishedAt: sql`${ph("finishedAt")}` }).where(eq(runs.id, ph("id"))).prepare()).run({ id, state, finishedAt });
}

/** Updates a run's fields. */
export async function updateRun(tx: Tx, id: string, set: Partial<RunRow>): Promise<void> {
  tx.update(runs).set(set).where(eq(runs.id, id)).run();
}

/** Which states a run's jobs are in (one index probe per state). */
export async function jobStatesOfRun(q: Queryable, runId: string): Promise<RunState[]> {
  // The outer column is spelled out: drizzle writes a selected column unqualified, which inside the subquery would mean j.id.
  const has = (state: RunState) => sql<number>`EXISTS (SELECT 1 FROM workflow_jobs j WHERE j.run_id = "runs"."id" AND j.state = ${state})`;
  const stmt = prepared(q, "jobStatesOfRun", (q) =>
    q.select({ queued: has("queued"), running: has("running"), success: has("success"), failure: has("failure"), cancelled: has("cancelled") }).from(runs).where(eq(runs.id, ph("runId"))).prepare(),
  );
  const row = stmt.get({ runId });
  return row ? (Object.keys(row) as RunState[]).filter((k) => row[k as keyof typeof row]) : [];
}

/** The queued and running jobs of a run. */
export async function unfinishedJobsOfRun(q: Queryable, runId: string): Promise<JobRow[]> {
  return q.select().from(workflowJobs).where(and(eq(workflowJobs.runId, runId), inArray(workflowJobs.state, ["queued", "running"]))).all();
}

/** Running jobs whose last heartbeat (or start) is before `before`. */
export async function silentJobs(q: Queryable, before: number): Promise<JobRow[]> {
  return q.select().from(workflowJobs).where(and(eq(workflowJobs.state, "running"), lt(sql`coalesce(${workflowJobs.lastHeartbeatAt}, ${workflowJobs.startedAt})`, before))).limit(500).all();
}

/** Running jobs past their timeout that were not yet told to stop. */
export async function overdueJobs(q: Queryable, t: number): Promise<JobRow[]> {
  return q
    .select()
    .from(workflowJobs)
    .where(and(eq(workflowJobs.state, "running"), isNull(workflowJobs.cancelReason), lte(sql`${workflowJobs.startedAt} + json_extract(${workflowJobs.spec}, '$.timeoutS') * 1000`, t)))
    .limit(500)
    .all();
}

/** Running jobs told to stop for their timeout more than `graceMs` ago (the runner did not report back). */
export async function timedOutUnanswered(q: Queryable, t: number, graceMs: number): Promise<JobRow[]> {
  return q
    .select()
    .from(workflowJobs)
    .where(and(eq(workflowJobs.state, "running"), isNotNull(workflowJobs.cancelReason), lte(sql`${workflowJobs.startedAt} + json_extract(${workflowJobs.spec}, '$.timeoutS') * 1000 + ${graceMs}`, t)))
    .limit(500)
    .all();
}

/** Queued jobs created before `before` (nobody picked them up). */
export async function staleQueuedJobs(q: Queryable, before: number): Promise<JobRow[]> {
  return q.select().from(workflowJobs).where(and(eq(workflowJobs.state, "queued"), lt(workflowJobs.queuedAt, before))).limit(500).all();
}

/** Queued hosted jobs of the org. */
export async function queuedHostedJobsOfOrg(q: Queryable, orgId: string): Promise<JobRow[]> {
  return q.select().from(workflowJobs).where(and(eq(workflowJobs.state, "queued"), eq(workflowJobs.hosted, true), eq(workflowJobs.orgId, orgId))).all();
}

/** Per org and kind (hosted or not): how many jobs are queued and the newest queue time; the claim's cheap "did anything change" probe. */
export async function queueSignature(q: Queryable): Promise<{ orgId: string; hosted: number; n: number; newest: number }[]> {
  return q.all<{ orgId: string; hosted: number; n: number; newest: number }>(
    sql`SELECT org_id AS orgId, hosted, count(*) AS n, max(queued_at) AS newest FROM workflow_jobs WHERE state = 'queued' GROUP BY org_id, hosted`,
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
 * The oldest queued job `route` may take, or null: runs-on ⊆ labels; for a self-hosted machine the
 * job is self-hosted, in its org, the group admits the repository (and allow_public when it is
 * public) and the policy admits self-hosted runners for it; for an instance machine the job is
 * hosted and its org does not disable hosted runners. `onlyId` restricts the search to one job.
 */
export async function claimableJob(q: Queryable, route: Route, onlyId: string | null = null): Promise<string | null> {
  const labelsOk = sql`NOT EXISTS (SELECT 1 FROM json_each(${workflowJobs.runsOn}) l WHERE l.value NOT IN (SELECT value FROM json_each(${ph("labels")})))`;
  const only = sql`(${ph("onlyId")} IS NULL OR ${workflowJobs.id} = ${ph("onlyId")})`;
  const params = { labels: JSON.stringify(route.labels), onlyId };
  if (route.hosted) {
    const stmt = prepared(q, "claimableHosted", (q) =>
      q
        .select({ id: workflowJobs.id })
        .from(workflowJobs)
        .where(and(eq(workflowJobs.state, "queued"), eq(workflowJobs.hosted, true), labelsOk, only, sql`NOT EXISTS (SELECT 1 FROM runner_policies p WHERE p.org_id = ${workflowJobs.orgId} AND p.hosted = 'disabled')`))
        .orderBy(workflowJobs.queuedAt, sql`${workflowJobs}.rowid`)
        .limit(1)
        .prepare(),
    );
    return stmt.get(params)?.id ?? null;
  }
  const stmt = prepared(q, "claimableSelfHosted", (q) =>
    q
      .select({ id: workflowJobs.id })
      .from(workflowJobs)
      .innerJoin(repos, eq(repos.id, workflowJobs.repoId))
      .where(
        and(
          eq(workflowJobs.state, "queued"),
          eq(workflowJobs.hosted, false),
          eq(workflowJobs.orgId, ph("orgId")),
          labelsOk,
          only,
          sql`(${ph("allowPublic")} = 1 OR ${repos.public} = 0)`,
          sql`(${ph("groupAll")} = 1 OR ${workflowJobs.repoId} IN (SELECT g.repo_id FROM runner_group_repos g WHERE g.group_id = ${ph("groupId")}))`,
          sql`(${ph("policyAll")} = 1 OR ${workflowJobs.repoId} IN (SELECT p.repo_id FROM runner_policy_repos p WHERE p.org_id = ${ph("orgId")}))`,
        ),
      )
      .orderBy(workflowJobs.queuedAt, sql`${workflowJobs}.rowid`)
      .limit(1)
      .prepare(),
  );
  return stmt.get({ ...params, orgId: route.orgId, groupId: route.groupId, allowPublic: route.allowPublic ? 1 : 0, groupAll: route.groupAll ? 1 : 0, policyAll: route.policyAll ? 1 : 0 })?.id ?? null;
}

/** Moves a queued job to running on a machine; false when someone else took it first (compare-and-set). */
export async function startJob(tx: Tx, id: string, set: { runnerId: string; runnerName: string; tokenId: string; t: number }): Promise<JobRow | null> {
  const stmt = prepared(tx, "startJob", (q) =>
    q
      .update(workflowJobs)
      .set({ state: "running", runnerId: sql`${ph("runnerId")}`, runnerName: sql`${ph("runnerName")}`, tokenId: sql`${ph("tokenId")}`, startedAt: sql`${ph("t")}`, lastHeartbeatAt: sql`${ph("t")}` })
      .where(and(eq(workflowJobs.id, ph("id")), eq(workflowJobs.state, "queued")))
      .returning()
      .prepare(),
  );
  return stmt.get({ id, ...set }) ?? null;
}

/** Finishes a job if it is not finished yet; false when it already was. */
export async function finishJobRow(tx: Tx, id: string, set: { state: RunState; verdict: string | null; error: string | null; t: number }): Promise<boolean> {
  const stmt = prepared(tx, "finishJobRow", (q) =>
    q
      .update(workflowJobs)
      .set({ state: sql`${ph("state")}`, verdict: sql`${ph("verdict")}`, error: sql`${ph("error")}`, finishedAt: sql`${ph("t")}`, tokenId: null })
      .where(and(eq(workflowJobs.id, ph("id")), inArray(workflowJobs.state, ["queued", "running"])))
      .returning({ id: workflowJobs.id })
      .prepare(),
  );
  return stmt.all({ id, ...set }).length === 1;
}

/** Writes batched heartbeat stamps (never moving one backwards). */
export async function stampHeartbeats(tx: Tx, stamps: [string, number][]): Promise<void> {
  for (const [id, t] of stamps) {
    tx.update(workflowJobs).set({ lastHeartbeatAt: sql`max(coalesce(${workflowJobs.lastHeartbeatAt}, 0), ${t})` }).where(and(eq(workflowJobs.id, id), eq(workflowJobs.state, "running"))).run();
  }
}

/** Where a job's run is: org and repository names, commit and ref (null when the repository is gone). */
export async function jobPlace(q: Queryable, repoId: string, runId: string): Promise<{ org: string; repo: string; commit: string; ref: string } | null> {
  return (
    q
      .select({ org: orgs.name, repo: repos.name, commit: runs.commit, ref: runs.ref })
      .from(runs)
      .innerJoin(repos, eq(repos.id, runs.repoId))
      .innerJoin(orgs, eq(orgs.id, repos.orgId))
      .where(and(eq(runs.id, runId), eq(runs.repoId, repoId)))
      .get() ?? null
  );
}

/** The repository `repoId` with its org's name, or null when it is gone. */
export async function repoWithOrg(q: Queryable, repoId: string): Promise<{ repo: typeof repos.$inferSelect; orgName: string } | null> {
  return q.select({ repo: repos, orgName: orgs.name }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(eq(repos.id, repoId)).get() ?? null;
}

/** The repository name of a repo id (null when deleted). */
export async function repoName(q: Queryable, repoId: string): Promise<string | null> {
  return q.select({ name: repos.name }).from(repos).where(eq(repos.id, repoId)).get()?.name ?? null;
}

// ---- per-job tokens (rows of the people domain's tokens table, kind `job`) ----

/** Creates the per-job token: repo:read on one repository, no person behind it. */
export async function insertJobToken(tx: Tx, row: { id: string; orgId: string; repoId: string; secretHash: string; label: string; createdAt: number }): Promise<void> {
  const stmt = prepared(tx, "insertJobToken", (q) =>
    q
      .insert(tokens)
      .values({ id: ph("id"), orgId: ph("orgId"), userId: null, kind: "job", scopes: ["repo:read"], label: ph("label"), repoId: ph("repoId"), secretHash: ph("secretHash"), lastUsedAt: null, createdAt: ph("createdAt") })
      .prepare(),
  );
  stmt.run(row);
}

/** Revokes a per-job token (the next use is a 401). */
export async function deleteJobToken(tx: Tx, id: string): Promise<void> {
  prepared(tx, "deleteJobToken", (q) => q.delete(tokens).where(and(eq(tokens.id, ph("id")), eq(tokens.kind, "job"))).prepare()).run({ id });
}

// ---- logs ----

/** Records an acknowledged log chunk and grows the log, if the log is exactly `offset` long; false otherwise. */
export async function appendLogChunk(tx: Tx, jobId: string, offset: number, size: number, key: string): Promise<boolean> {
  const r = tx
    .update(workflowJobs)
    .set({ logSize: sql`${workflowJobs.logSize} + ${size}` })
    .where(and(eq(workflowJobs.id, jobId), eq(workflowJobs.logSize, offset)))
    .returning({ id: sql`1` })
    .all();
  if (r.length !== 1) return false;
  tx.insert(jobLogChunks).values({ jobId, offset, size, key }).run();
  return true;
}

/** The log's chunks in order. */
export async function logChunks(q: Queryable, jobId: string): Promise<{ offset: number; size: number; key: string }[]> {
  return q.select({ offset: jobLogChunks.offset, size: jobLogChunks.size, key: jobLogChunks.key }).from(jobLogChunks).where(eq(jobLogChunks.jobId, jobId)).orderBy(asc(jobLogChunks.offset)).all();
}

// ---- check results and minutes ----

/** Records a job's state against its commit under its key (what required checks read). */
export async function recordCheck(tx: Tx, row: typeof checkResults.$inferSelect): Promise<void> {
  const stmt = prepared(tx, "recordCheck", (q) =>
    q
      .insert(checkResults)
      .values({ repoId: ph("repoId"), commit: ph("commit"), key: ph("key"), state: ph("state"), runId: ph("runId"), jobId: ph("jobId"), updatedAt: ph("updatedAt") })
      .onConflictDoUpdate({ target: [checkResults.repoId, checkResults.commit, checkResults.key], set: { state: sql`excluded.state`, runId: sql`excluded.run_id`, jobId: sql`excluded.job_id`, updatedAt: sql`excluded.updated_at` } })
      .prepare(),
  );
  stmt.run(row);
}

/** The check results of a commit, by key. */
export async function checksOfCommit(q: Queryable, repoId: string, commit: string): Promise<(typeof checkResults.$inferSelect)[]> {
  return q.select().from(checkResults).where(and(eq(checkResults.repoId, repoId), eq(checkResults.commit, commit))).orderBy(asc(checkResults.key)).all();
}

/** Starts counting a job's minutes. */
export async function startMinutes(tx: Tx, row: { jobId: string; orgId: string; repoId: string; hosted: boolean; startedAt: number }): Promise<void> {
  const stmt = prepared(tx, "startMinutes", (q) =>
    q.insert(ciMinutes).values({ jobId: ph("jobId"), orgId: ph("orgId"), repoId: ph("repoId"), hosted: ph("hosted"), startedAt: ph("startedAt"), finishedAt: null, minutes: null }).onConflictDoNothing().prepare(),
  );
  stmt.run({ ...row, hosted: row.hosted ? 1 : 0 });
}

/** Stops counting a job's minutes (whole minutes, rounded up). */
export async function finishMinutes(tx: Tx, jobId: string, t: number): Promise<void> {
  const stmt = prepared(tx, "finishMinutes", (q) =>
    q
      .update(ciMinutes)
      .set({ finishedAt: sql`${ph("t")}`, minutes: sql`max(1, (${ph("t")} - ${ciMinutes.startedAt} + 59999) / 60000)` })
      .where(and(eq(ciMinutes.jobId, ph("jobId")), isNull(ciMinutes.finishedAt)))
      .prepare(),
  );
  stmt.run({ jobId, t });
}

/** Minutes used by the org's hosted jobs that started in [from, to); a running job counts from its start. */
export async function hostedMinutesUsed(q: Queryable, orgId: string, from: number, to: number, t: number): Promise<number> {
  const row = q
    .select({ n: sql<number>`coalesce(sum(coalesce(${ciMinutes.minutes}, max(1, (${t} - ${ciMinutes.startedAt} + 59999) / 60000))), 0)` })
    .from(ciMinutes)
    .where(and(eq(ciMinutes.orgId, orgId), eq(ciMinutes.hosted, true), sql`${ciMinutes.startedAt} >= ${from}`, sql`${ciMinutes.startedAt} < ${to}`))
    .get();
  return row?.n ?? 0;
}
