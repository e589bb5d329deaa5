// The release of dependent jobs (plan-29 §3 C "Release"): a job with `needs` is planned `pending`
// (never claimable: the claim reads only `queued`); when a job ends, inside the same transaction,
// every pending job of its attempt whose needs all finished is decided: its `if` is evaluated
// (no status function = `success() && (…)`) over `needs` (each need's result and outputs, a
// matrix job's cells aggregated), `github`, `inputs` and `vars`, and the job is queued (its check
// recorded, the claim hub told after COMMIT) or skipped with the reason. A skip ends a job too,
// so the pass repeats until nothing moves (skips cascade). An `if` that cannot be evaluated (a
// fromJSON of bad output, say) fails the job with the expression's error, which quotes the
// expression's source and never a value.
//
// A placeholder (a job whose matrix, name, runs-on or timeout reads `needs`) is planned from its
// workflow file parsed again, which for a large file is hundreds of milliseconds: never on the
// event loop nor inside a write transaction. Released, it stays pending and a `ci.planPlaceholder`
// job is enqueued (release-plan.ts); that job parses on a worker thread, then in its own
// transaction runs this release again with the plan, which is used only if the placeholder is
// still pending, still released (a cancel meanwhile skips it as usual) and its inputs (needs,
// variables) are those the plan was made from.
import type { Queryable, Tx } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import { ExprError, evaluateCondition, parseCondition, parseTemplate, templateValue, toText, type Condition, type Status, type Value } from "./expr/index.ts";
import { announceQueued, claimHub, hubKey } from "./claim.ts";
import { admitJobs } from "./concurrency.ts";
import { variablesForJob } from "./job-secrets.ts";
import { newId } from "../../util/ids.ts";
import * as runs from "./store-runs.ts";
import type { GraphJob } from "./store-runs.ts";
import { forkGroup } from "./fork-groups.ts";
import { withPlannedGithub, type PullRequestFacts } from "./github-context.ts";
import { WORKFLOW_LIMITS, type Concurrency, type JobSpecV2, type ParsedWorkflow, type TriggerContext } from "./workflow.ts";
import { planKey, type PlanJobAtInput } from "./plan-task.ts";
import { planTimeText } from "./step-names.ts";
import { hostedCiRefusal } from "../billing/minutes.ts";
import { hostedDisabledMessage } from "./finish.ts";
import { loadPolicy } from "./policy.ts";

/**
 * What a job row's `plan` holds (createRun writes it; null for a job planned whole): the
 * job-level `concurrency` of a job with `needs`, which joins its group when it is released here
 * (its group evaluated then when it reads `needs`).
 */
export interface JobPlan {
  concurrency?: Concurrency;
  /**
   * A placeholder (a job whose matrix, name, runs-on or timeout reads `needs`): its workflow
   * file, read again when it is released (planJobAt) to plan its jobs, which replace it.
   */
  source?: string;
  /** What made it a placeholder (`jobs.run.strategy.matrix`): named in its error. */
  at?: string;
}

/** A released placeholder to plan (release-plan.ts): the job and where it is. */
export interface PlanPlaceholderPayload {
  repoId: string;
  runId: string;
  attempt: number;
  jobId: string;
}

/**
 * Planning a released placeholder off the event loop (release-plan.ts): one pending row per
 * placeholder (every release that finds it released again folds in); a busy thread pool is
 * retried soon.
 */
export const CI_PLAN_PLACEHOLDER = jobKind<PlanPlaceholderPayload>("ci.planPlaceholder", {
  unique: (p) => p.jobId,
  concurrency: 2,
  retry: { firstMs: 1000, maxMs: 60_000, attempts: 10 },
});

/** A placeholder's plan made before the transaction (release-plan.ts): the planner's answer and the key of what it read (plan-task.ts planKey). */
export interface PrePlanned {
  key: string;
  parsed: ParsedWorkflow;
}

/** The contexts a job's concurrency group may read at release (workflow.ts SITES.jobPlan). */
const JOB_PLAN_CONTEXTS: ReadonlySet<string> = new Set(["github", "inputs", "vars", "matrix", "needs"]);

/** The contexts a job's `if` may read (workflow.ts checks this at plan time). */
const JOB_IF_CONTEXTS: ReadonlySet<string> = new Set(["github", "inputs", "vars", "needs"]);

/** What one `needs.<id>` says: GitHub's `result` and the job's outputs. */
export type NeedResult = "success" | "failure" | "cancelled" | "skipped";

/** A cancel reason that is not a cancel of the run (a timeout stops one job, not the run). */
const JOB_ONLY_REASONS: ReadonlySet<string> = new Set(["timeout"]);

/** Whether the run's attempt was asked to stop (a cancel, or a newer run of its concurrency group): `cancelled()` is true. */
export function cancelRequested(jobs: readonly Pick<GraphJob, "cancelReason">[]): boolean {
  return jobs.some((j) => j.cancelReason !== null && !JOB_ONLY_REASONS.has(j.cancelReason));
}

/**
 * A job's state as its run and what needs it count it (GitHub's conclusion): a failure under
 * job-level `continue-on-error: true` is a success there, while the job itself (its row, its
 * check) stays failed (GitHub's outcome).
 */
export function conclusionOf(job: { state: string; continues?: boolean }): string {
  return job.state === "failure" && job.continues === true ? "success" : job.state;
}

/**
 * A need's result over its cells (GitHub's rule for a matrix): failure if any cell failed, else
 * cancelled if any was, else skipped if every cell was, else success. Null while a cell is unfinished.
 */
export function aggregateResult(states: readonly string[]): NeedResult | null {
  if (states.some((s) => !runs.JOB_FINISHED.includes(s))) return null;
  if (states.some((s) => s === "failure")) return "failure";
  if (states.some((s) => s === "cancelled")) return "cancelled";
  if (states.length && states.every((s) => s === "skipped")) return "skipped";
  return "success";
}

/** A need's outputs: its cells' merged name by name, the last cell to finish winning. */
export function mergeOutputs(cells: readonly Pick<GraphJob, "outputs" | "finishedAt">[]): Record<string, string> {
  const out: Record<string, string> = {};
  const sorted = [...cells].sort((a, b) => (a.finishedAt ?? 0) - (b.finishedAt ?? 0));
  for (const c of sorted) Object.assign(out, c.outputs ?? {});
  return out;
}

/** The verdict on one pending job whose needs all finished. */
export type Decision = { kind: "queue" } | { kind: "skip"; reason: string } | { kind: "fail"; error: string };

/** What a decision reads besides the job: each workflow job's aggregate, and the other contexts (built on first use). */
export interface DecideEnv {
  results: ReadonlyMap<string, { result: NeedResult; outputs: Record<string, string> }>;
  /** Workflow job id → ids it needs (for failure() over ancestors). */
  graph: ReadonlyMap<string, readonly string[]>;
  cancelled: boolean;
  contexts(names: ReadonlySet<string>): Promise<Record<string, Value>>;
}

/** Every ancestor of `id` (its needs, their needs, …). */
function ancestors(graph: ReadonlyMap<string, readonly string[]>, id: string): Set<string> {
  const seen = new Set<string>();
  const todo = [...(graph.get(id) ?? [])];
  while (todo.length) {
    const n = todo.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    todo.push(...(graph.get(n) ?? []));
  }
  return seen;
}

/**
 * The status functions for a job (GitHub's job semantics): `success()` every need succeeded and no
 * ancestor failed or was cancelled, and the run was not cancelled; `failure()` some ancestor
 * failed; `cancelled()` the run was asked to stop.
 */
export function jobStatus(job: Pick<GraphJob, "workflowJob" | "needs">, env: Pick<DecideEnv, "results" | "graph" | "cancelled">): Status {
  const up = [...ancestors(env.graph, job.workflowJob)];
  for (const n of job.needs) up.push(n);
  const resultOf = (n: string) => env.results.get(n)?.result ?? "skipped";
  const failure = up.some((n) => resultOf(n) === "failure");
  const success = !env.cancelled && job.needs.every((n) => resultOf(n) === "success") && !up.some((n) => resultOf(n) === "cancelled") && !failure;
  return { success, failure, cancelled: env.cancelled };
}

/** Why a job without an `if` (implicit success()) does not run. */
function implicitSkipReason(job: Pick<GraphJob, "needs">, env: Pick<DecideEnv, "results" | "cancelled">): string {
  const bad = job.needs.filter((n) => env.results.get(n)?.result !== "success");
  if (!bad.length) return env.cancelled ? "the run was cancelled" : "an earlier job failed";
  const word = (r: NeedResult | undefined) => (r === "failure" ? "failed" : r === "cancelled" ? "was cancelled" : "was skipped");
  return bad.map((n) => `needs ${n} ${word(env.results.get(n)?.result)}`).join(", ");
}

/** How much of an `if` a skip reason quotes. */
const REASON_SOURCE_CHARS = 200;

/** Decides one pending job whose needs all finished. */
export async function decideJob(job: Pick<GraphJob, "workflowJob" | "needs" | "condition">, env: DecideEnv): Promise<Decision> {
  const status = jobStatus(job, env);
  const source = job.condition;
  if (source === null || source.trim() === "") return status.success ? { kind: "queue" } : { kind: "skip", reason: implicitSkipReason(job, env) };
  let cond: Condition;
  try {
    cond = parseCondition(source, { contexts: JOB_IF_CONTEXTS });
  } catch (e) {
    if (e instanceof ExprError) return { kind: "fail", error: `jobs.${job.workflowJob}.if: ${e.message}` };
    throw e;
  }
  if (cond.implicitSuccess && !status.success) return { kind: "skip", reason: implicitSkipReason(job, env) };
  const contexts = await env.contexts(cond.contexts);
  const needs = needsContext(job, env.results);
  let ok: boolean;
  try {
    ok = evaluateCondition(cond, { contexts: { ...contexts, needs }, status });
  } catch (e) {
    // Why the message and not more: ExprError quotes the expression's source, never a value (a value may be a secret).
    if (e instanceof ExprError) return { kind: "fail", error: `jobs.${job.workflowJob}.if: ${e.message}` };
    throw e;
  }
  if (ok) return { kind: "queue" };
  const shown = source.length > REASON_SOURCE_CHARS ? `${source.slice(0, REASON_SOURCE_CHARS)}…` : source;
  return { kind: "skip", reason: `if: ${shown} was false` };
}

/** The `github` and `inputs` contexts of a run, read from its row (what the job's `if` may read). */
async function runContexts(
  q: Queryable,
  runId: string,
  repoId: string,
  jobId: string,
): Promise<{ github: Record<string, Value>; inputs: Record<string, Value> }> {
  const run = await runs.runOfRepo(q, repoId, runId);
  const place = await runs.jobPlace(q, repoId, runId);
  if (!run || !place) return { github: {}, inputs: {} };
  const repository = `${place.org}/${place.repo}`;
  const github: Record<string, Value> = {
    sha: run.commit,
    ref: run.ref,
    ref_name: run.ref.replace(/^refs\/(heads|tags)\//, ""),
    ref_type: run.ref.startsWith("refs/tags/") ? "tag" : "branch",
    repository,
    repository_owner: place.org,
    event_name: run.event,
    workflow: run.workflow,
    run_id: run.id,
    run_attempt: String(run.attempt),
  };
  const inputs: Record<string, Value> = { ...(run.inputs ?? {}) };
  if (run.inputs) github.event = { inputs: Object.fromEntries(Object.entries(run.inputs).map(([k, v]) => [k, String(v)])) };
  // The plan-time fields every job of the run carries (github-context.ts): what its parse and its job description read.
  const planned = ((await runs.jobById(q, jobId))?.spec as JobSpecV2 | undefined)?.github;
  return { github: withPlannedGithub(github, planned) as Record<string, Value>, inputs };
}

/** The run-wide contexts an `if` reads (github/inputs, vars), each read at most once and only when a condition names it. */
export function lazyContexts(q: Queryable, runId: string, jobs: readonly GraphJob[]): (names: ReadonlySet<string>) => Promise<Record<string, Value>> {
  let built: Promise<Record<string, Value>> | null = null;
  let vars: Promise<Record<string, string>> | null = null;
  return async (names) => {
    const out: Record<string, Value> = {};
    if (names.has("github") || names.has("inputs")) Object.assign(out, await (built ??= runContexts(q, runId, jobs[0]!.repoId, jobs[0]!.id)));
    if (names.has("vars"))
      out.vars = await (vars ??= runs
        .runOfRepo(q, jobs[0]!.repoId, runId)
        .then((run) => variablesForJob(q, { orgId: jobs[0]!.orgId, repoId: jobs[0]!.repoId, trusted: run?.trusted ?? false })));
    return out;
  };
}

/** The `needs` context of a job: each need's result and outputs. */
function needsContext(job: Pick<GraphJob, "needs">, results: DecideEnv["results"]): Record<string, Value> {
  const needs: Record<string, Value> = {};
  for (const n of job.needs) {
    const r = results.get(n);
    needs[n] = { result: r?.result ?? "skipped", outputs: { ...(r?.outputs ?? {}) } };
  }
  return needs;
}

/**
 * A released job's concurrency group, evaluated now when it reads `needs` (with github, inputs,
 * vars, its matrix cell and needs), or why it cannot be (the message names the expression).
 */
export async function groupAtRelease(
  job: Pick<GraphJob, "workflowJob" | "needs">,
  c: Concurrency,
  env: Pick<DecideEnv, "results" | "contexts">,
): Promise<{ ok: true; concurrency: Concurrency } | { ok: false; error: string }> {
  if (!c.dynamic) return { ok: true, concurrency: c };
  const what = `jobs.${job.workflowJob}.concurrency`;
  try {
    const g = parseTemplate(c.group, { contexts: JOB_PLAN_CONTEXTS });
    const ct = typeof c.cancelInProgress === "string" ? parseTemplate(c.cancelInProgress, { contexts: JOB_PLAN_CONTEXTS }) : null;
    const names = new Set([...g.contexts, ...(ct?.contexts ?? [])]);
    const contexts = { ...(await env.contexts(names)), matrix: c.matrix ?? {}, needs: needsContext(job, env.results) };
    const group = toText(templateValue(g, { contexts }));
    if (group === "") return { ok: false, error: `${what}.group: ${JSON.stringify(c.group.slice(0, 200))} evaluated to an empty group` };
    if (group.length > WORKFLOW_LIMITS.concurrencyGroupChars)
      return {
        ok: false,
        error: `${what}.group: ${JSON.stringify(c.group.slice(0, 200))} is longer than ${WORKFLOW_LIMITS.concurrencyGroupChars} characters once evaluated`,
      };
    let cancel: boolean | string = c.cancelInProgress;
    if (ct) {
      const v = templateValue(ct, { contexts });
      cancel = v === true || v === "true";
    }
    return { ok: true, concurrency: { group, cancelInProgress: cancel } };
  } catch (e) {
    if (e instanceof ExprError) return { ok: false, error: `${what}: ${e.message}` };
    throw e;
  }
}

/**
 * Ends a pending job at its release: failed (an `if` or a plan that cannot be evaluated, a group
 * that cannot be placed; `error` names why) or cancelled (its job-level group cancelled it). Its
 * row, its check and the in-memory job move together; false when it is no longer pending.
 */
async function endAtRelease(tx: Tx, job: GraphJob, state: "failure" | "cancelled", error: string, t: number): Promise<boolean> {
  if (!(await runs.finishJobRow(tx, job.id, { state, verdict: null, error, t }))) return false;
  job.state = state;
  job.finishedAt = t;
  await runs.recordRunCheck(tx, { repoId: job.repoId, runId: job.runId, key: job.key, state, jobId: job.id, updatedAt: t });
  return true;
}

/**
 * Queues a released job: its row and check `queued`, and its runs-on noted under its claim hub's
 * key in `queued` (the hub told after COMMIT). False when it is no longer pending.
 */
async function queueAtRelease(tx: Tx, job: GraphJob, t: number, queued: Map<string, string[][]>): Promise<boolean> {
  if (!(await runs.queuePendingJob(tx, job.id, t))) return false;
  job.state = "queued";
  await runs.recordRunCheck(tx, { repoId: job.repoId, runId: job.runId, key: job.key, state: "queued", jobId: job.id, updatedAt: t });
  const key = hubKey(job.hosted, job.orgId);
  let list = queued.get(key);
  if (!list) queued.set(key, (list = []));
  list.push(job.runsOn);
  return true;
}

/**
 * What planning a released placeholder reads (plan-task.ts): its file, its workflow job, the
 * run's trigger with the variables as they are now, and its `needs`; with the run and the
 * contexts its cells' step names read. Null when the run is gone.
 */
export async function placeholderInput(
  q: Queryable,
  job: GraphJob,
  source: string,
  env: Pick<DecideEnv, "results" | "contexts">,
): Promise<{ run: runs.RunRow; input: PlanJobAtInput; known: Record<string, Value>; github: Record<string, Value> } | null> {
  const run = await runs.runOfRepo(q, job.repoId, job.runId);
  if (!run) return null;
  const known = await env.contexts(new Set(["github", "inputs", "vars"]));
  const github = (known.github ?? {}) as Record<string, Value>;
  const trigger: TriggerContext = {
    sha: run.commit,
    ref: run.ref,
    repository: String(github.repository ?? ""),
    event: run.event as TriggerContext["event"],
    inputs: run.inputs ?? undefined,
    vars: (known.vars ?? {}) as Record<string, string>,
  };
  // A change run's pull request (github-context.ts), so the cells' plan-time values read head_ref/base_ref as the run's did.
  const pr = (github.event as { pull_request?: PullRequestFacts } | undefined)?.pull_request;
  if (pr) trigger.change = pr;
  return { run, known, github, input: { path: run.workflow, text: source, job: job.workflowJob, trigger, needs: needsContext(job, env.results) } };
}

/**
 * Plans a released placeholder's jobs from `pre` (planJobAt on a thread before the transaction:
 * its file read again with the needs' results and outputs) and writes them in its place: one
 * pending row a matrix cell (its needs, `if` and attempt), their checks `queued`; the
 * placeholder's row and check go. Or why it fails: the planner's error (file, line, column, the
 * expression), a run past 256 jobs or with a key twice, or hosted cells the org's policy or
 * minutes refuse. `again` when what the plan read changed since it was made.
 */
async function planPlaceholder(
  ctx: Ctx,
  tx: Tx,
  job: GraphJob,
  plan: JobPlan & { source: string },
  jobs: readonly GraphJob[],
  env: Pick<DecideEnv, "results" | "contexts">,
  t: number,
  pre: PrePlanned,
): Promise<{ ok: true; cells: GraphJob[] } | { ok: false; error: string } | { ok: "again" }> {
  const at = await placeholderInput(tx, job, plan.source, env);
  if (!at) return { ok: false, error: "the run is gone" };
  if (planKey(at.input) !== pre.key) return { ok: "again" };
  const { run, known, github } = at;
  const parsed = pre.parsed;
  if (!parsed.ok) return { ok: false, error: `${parsed.error} (${plan.at ?? `jobs.${job.workflowJob}`} read from needs when the job was released)` };
  const others = jobs.filter((j) => j.id !== job.id);
  if (others.length + parsed.jobs.length > WORKFLOW_LIMITS.jobsPerRun)
    return {
      ok: false,
      error: `jobs.${job.workflowJob}: the run would have more than ${WORKFLOW_LIMITS.jobsPerRun} jobs with its ${parsed.jobs.length} matrix cells`,
    };
  const keys = new Set(others.map((j) => j.key.toLowerCase()));
  const twice = parsed.jobs.find((p) => keys.has(p.key.toLowerCase()));
  if (twice) return { ok: false, error: `jobs.${job.workflowJob}: two jobs have the key ${JSON.stringify(twice.key)}` };
  // SPEC §4.1 claim rule 5 and billing, as createRun decides them for the jobs it plans: hosted cells refused here fail the placeholder.
  if (parsed.jobs.some((p) => p.hosted)) {
    const policy = await loadPolicy(tx, job.orgId);
    const refused = policy.hosted === "disabled" ? hostedDisabledMessage(String(github.repository_owner ?? "")) : await hostedCiRefusal(ctx, tx, job.orgId);
    if (refused) return { ok: false, error: refused };
  }
  // A fork's run (trigger.ts fromFork): its cells fetch from the fork, keep the placeholder's
  // planned github facts, and their groups stay the fork's.
  const held = ((await runs.jobSpecById(tx, job.id)) ?? undefined) as JobSpecV2 | undefined;
  const fork = held?.checkoutRepoId;
  if (!(await runs.dropPendingJob(tx, job.repoId, job.id))) return { ok: false, error: "the job is no longer pending" };
  const rows: runs.NewJob[] = [];
  const cells: GraphJob[] = [];
  for (const p of parsed.jobs) {
    const id = newId();
    const plan: JobPlan | null = p.concurrency ? { concurrency: fork ? forkGroup(p.concurrency, fork) : p.concurrency } : null;
    const spec: JobSpecV2 = { ...p.spec, ...(fork ? { checkoutRepoId: fork } : {}), ...(held?.github ? { github: held.github } : {}) };
    rows.push({
      id,
      runId: job.runId,
      repoId: job.repoId,
      orgId: job.orgId,
      key: p.key,
      runsOn: p.runsOn,
      hosted: p.hosted,
      spec,
      state: "pending",
      verdict: null,
      error: null,
      steps: p.spec.steps.map((s) => ({
        state: "pending",
        exit_code: null,
        name: planTimeText(s.name, {
          github: Object.fromEntries(Object.entries(github).flatMap(([k, v]) => (typeof v === "string" ? [[k, v]] : []))),
          inputs: (known.inputs ?? {}) as Record<string, Value>,
          vars: known.vars as Record<string, string> | undefined,
          matrix: p.spec.matrix ?? {},
        }).slice(0, runs.STEP_NAME_SHOWN),
      })),
      logSize: 0,
      queuedAt: t,
      attempt: job.attempt,
      workflowJob: job.workflowJob,
      needs: job.needs,
      condition: job.condition,
      plan,
    });
    cells.push({
      ...job,
      id,
      key: p.key,
      runsOn: p.runsOn,
      hosted: p.hosted,
      state: "pending",
      outputs: null,
      finishedAt: null,
      cancelReason: null,
      reusedFrom: null,
      concurrencyGroup: null,
      continues: false,
      planned: plan !== null,
    });
  }
  await runs.insertJobs(tx, rows);
  await runs.recordChecks(
    tx,
    rows.map((r) => ({ repoId: job.repoId, commit: run.commit, key: r.key, state: "queued" as const, runId: job.runId, jobId: r.id!, updatedAt: t })),
  );
  return { ok: true, cells };
}

/**
 * Moves the pending jobs of attempt `attempt` of run `runId` whose needs all finished: queued (check
 * `queued`, the hub told after COMMIT) or skipped with a reason, to a fixpoint; an `if` that fails to
 * evaluate fails its job. Inside the caller's transaction; the caller settles the run. Answers how
 * many jobs moved. A released placeholder is planned from `opts.plans` (release-plan.ts) when
 * its plan was made from what it reads now, and otherwise left pending with its planning enqueued.
 */
/** Each workflow job's cells, and the aggregate (result, merged outputs) of those whose cells all finished, as the rows stand. */
export function aggregates(jobs: readonly GraphJob[]): {
  cells: Map<string, GraphJob[]>;
  results: Map<string, { result: NeedResult; outputs: Record<string, string> }>;
} {
  const cells = new Map<string, GraphJob[]>();
  for (const j of jobs) {
    let list = cells.get(j.workflowJob);
    if (!list) cells.set(j.workflowJob, (list = []));
    list.push(j);
  }
  const results = new Map<string, { result: NeedResult; outputs: Record<string, string> }>();
  for (const [id, list] of cells) {
    const result = aggregateResult(list.map(conclusionOf));
    if (result) results.set(id, { result, outputs: mergeOutputs(list) });
  }
  return { cells, results };
}

/** Leaves a released placeholder pending and has it planned off the loop (release-plan.ts); folds into a planning already pending. */
async function deferPlan(ctx: Ctx, tx: Tx, job: GraphJob): Promise<void> {
  await ctx.work.enqueue(tx, CI_PLAN_PLACEHOLDER, { repoId: job.repoId, runId: job.runId, attempt: job.attempt, jobId: job.id });
}

export async function releaseDependents(
  ctx: Ctx,
  tx: Tx,
  runId: string,
  attempt: number,
  t: number,
  opts: { plans?: ReadonlyMap<string, PrePlanned> } = {},
): Promise<number> {
  // Why probe first: every verdict calls this, and a 256-cell matrix without needs must not read 256 rows per verdict.
  if (!(await runs.hasPendingJob(tx, runId, attempt))) return 0;
  const jobs = await runs.jobsOfAttempt(tx, runId, attempt);
  if (!jobs.some((j) => j.state === "pending")) return 0;
  const graph = new Map<string, readonly string[]>();
  for (const j of jobs) if (j.workflowJob && !graph.has(j.workflowJob)) graph.set(j.workflowJob, j.needs);
  const contexts = lazyContexts(tx, runId, jobs);
  const cancelled = cancelRequested(jobs);
  const queued = new Map<string, string[][]>();
  // A run waiting for its concurrency group queues nothing (its group releases it: concurrency.ts); read on the first job to queue.
  let waits: Promise<boolean> | null = null;
  let moved = 0;
  for (;;) {
    // Each workflow job's aggregate over its cells, as the rows stand now.
    const { cells, results } = aggregates(jobs);
    let changed = false;
    // Jobs to queue that have a job-level group: admitted to it together after this pass.
    const gated: { job: GraphJob; concurrency: Concurrency }[] = [];
    // Placeholders replaced by their planned jobs in this pass.
    const replaced: { job: GraphJob; cells: GraphJob[] }[] = [];
    for (const job of jobs) {
      if (job.state !== "pending") continue;
      // A pending job without needs waits for its concurrency group (concurrency.ts releases it), never for a job.
      if (!job.needs.length) continue;
      // Released already and waiting in its job-level group (concurrency.ts queues it when the group frees up).
      if (job.concurrencyGroup !== null) continue;
      // A need no row stands for (never planned) counts as finished and skipped.
      if (!job.needs.every((n) => results.has(n) || !cells.has(n))) continue;
      const d = await decideJob(job, { results, graph, cancelled, contexts });
      if (d.kind === "queue") {
        if (await (waits ??= runs.runWaits(tx, runId))) continue;
        const plan = job.planned ? ((await runs.jobById(tx, job.id))?.plan as JobPlan | null) : null;
        if (plan?.source !== undefined) {
          // A placeholder: planned off the loop first (release-plan.ts), then its jobs are written
          // pending here, in a later transaction, and decided by the next pass (their `if` is its).
          const pre = opts.plans?.get(job.id);
          if (!pre) {
            await deferPlan(ctx, tx, job);
            continue;
          }
          const p = await planPlaceholder(ctx, tx, job, { ...plan, source: plan.source }, jobs, { results, contexts }, t, pre);
          if (p.ok === "again") {
            await deferPlan(ctx, tx, job);
            continue;
          }
          if (p.ok) {
            replaced.push({ job, cells: p.cells });
            changed = true;
            moved++;
            continue;
          }
          if (await endAtRelease(tx, job, "failure", p.error, t)) {
            changed = true;
            moved++;
          }
          continue;
        }
        if (plan?.concurrency) {
          const g = await groupAtRelease(job, plan.concurrency, { results, contexts });
          if (g.ok) {
            gated.push({ job, concurrency: g.concurrency });
            continue;
          }
          if (await endAtRelease(tx, job, "failure", g.error, t)) {
            changed = true;
            moved++;
          }
          continue;
        }
        if (!(await queueAtRelease(tx, job, t, queued))) continue;
      } else if (d.kind === "skip") {
        if (!(await runs.skipPendingJob(tx, job.id, d.reason, t))) continue;
        job.state = "skipped";
        job.finishedAt = t;
        await runs.recordRunCheck(tx, { repoId: job.repoId, runId, key: job.key, state: "skipped", jobId: job.id, updatedAt: t });
        changed = true;
      } else {
        if (!(await endAtRelease(tx, job, "failure", d.error, t))) continue;
        changed = true;
      }
      moved++;
    }
    for (const { job, cells: planned } of replaced) jobs.splice(jobs.indexOf(job), 1, ...planned);
    if (gated.length) {
      // Job-level groups (concurrency.ts, the rules of a run's jobs at creation): each job queued, waiting
      // (pending, its row in the group) or cancelled; jobs of this run the rules end are counted here.
      const ended: string[] = [];
      const admitted = await admitJobs(
        ctx,
        tx,
        jobs[0]!.repoId,
        gated.map((g) => ({ id: g.job.id, concurrency: g.concurrency })),
        t,
        { runId, ended },
      );
      for (const { job, concurrency } of gated) {
        const a = admitted.get(job.id);
        await runs.updateJob(tx, job.id, { concurrencyGroup: concurrency.group });
        job.concurrencyGroup = concurrency.group;
        if (a === "queued") await queueAtRelease(tx, job, t, queued);
        else if (typeof a === "object" && (await endAtRelease(tx, job, "cancelled", a.cancelled, t))) changed = true;
      }
      for (const id of ended) {
        const j = jobs.find((x) => x.id === id);
        if (!j) continue;
        j.state = "cancelled";
        j.finishedAt = t;
        changed = true;
      }
    }
    // A queued job changes no aggregate (it is not finished); a skip or a failure may finish a need.
    if (!changed) break;
  }
  // Every node's waiting machines hear of the released jobs once they are visible (after COMMIT).
  for (const key of queued.keys()) announceQueued(ctx, key, tx);
  if (queued.size) {
    const hub = claimHub(ctx);
    ctx.db.afterCommit(tx, () => {
      for (const [key, list] of queued) hub.jobsQueued(key, list);
    });
  }
  return moved;
}

/**
 * A new attempt's jobs without needs that have an `if` (a push's, a dispatch's, a re-run's): the
 * `if` is evaluated now (no needs; `success()` unless the run is cancelled), a false one skips the
 * job (and, through the release, what needs it), an error fails it. Inside the creating
 * transaction; the caller settles the run. Answers how many jobs moved.
 */
export async function decideRootJobs(ctx: Ctx, tx: Tx, runId: string, attempt: number, t: number): Promise<number> {
  const jobs = await runs.jobsOfAttempt(tx, runId, attempt);
  const roots = jobs.filter((j) => !j.needs.length && j.condition !== null && (j.state === "queued" || j.state === "pending"));
  if (!roots.length) return 0;
  const contexts = lazyContexts(tx, runId, jobs);
  const env: DecideEnv = { results: new Map(), graph: new Map(), cancelled: cancelRequested(jobs), contexts };
  let moved = 0;
  for (const job of roots) {
    const d = await decideJob(job, env);
    if (d.kind === "queue") continue;
    const ok =
      d.kind === "skip"
        ? await runs.skipPendingJob(tx, job.id, d.reason, t)
        : await runs.finishJobRow(tx, job.id, { state: "failure", verdict: null, error: d.error, t });
    if (!ok) continue;
    await runs.recordRunCheck(tx, { repoId: job.repoId, runId, key: job.key, state: d.kind === "skip" ? "skipped" : "failure", jobId: job.id, updatedAt: t });
    moved++;
  }
  if (moved) moved += await releaseDependents(ctx, tx, runId, attempt, t);
  return moved;
}
