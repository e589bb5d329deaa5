// The five per-job runner calls (DECISIONS §3), each with the per-job token from claim: the job
// description, log appends, step states, the heartbeat (which answers `cancel`) and the verdict.
// The token acts only on its own running job and is revoked when the verdict lands.
import { AppError, Conflict, TooLarge, Unprocessable } from "../../errors.ts";
import type { StepState } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { callerFacts, decide, enforce } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { noteRunnerSeen } from "./credentials.ts";
import { failJob, minutes } from "./finish.ts";
import { withPlannedGithub } from "./github-context.ts";
import { secretsForJob, variablesForJob } from "./job-secrets.ts";
import { aggregateResult, conclusionOf, mergeOutputs } from "./release.ts";
import { Masker } from "./mask.ts";
import type { JobComplete, JobDescription, LogAppend, StepUpdate } from "./schemas.ts";
import * as jobCalls from "./store-job-calls.ts";
import * as runs from "./store-runs.ts";
import type { JobRow } from "./store-runs.ts";
import type { JobSpecV2, StepSpec } from "./workflow.ts";

/** How often the runner is asked to heartbeat (the job description says so). */
export const HEARTBEAT_INTERVAL_S = 2;
/** At most this much text per log call, and per job. */
export const LOG_LIMITS = Object.freeze({ appendBytes: 1024 * 1024, jobBytes: 64 * 1024 * 1024 });
const STEP_STATES = ["running", "success", "failure", "skipped", "cancelled"] as const;
const VERDICTS = ["success", "failure", "cancelled"] as const;

/** The running job `jobId` after checking the caller is its token (401 / 404 otherwise). */
export async function ownJob(ctx: Ctx, actor: Principal, jobId: string): Promise<JobRow> {
  const job = await runs.jobById(ctx.db.read, jobId);
  enforce(decide({ caller: callerFacts(actor), orgRole: null }, { kind: "runner:job", jobTokenId: job?.state === "running" ? job.tokenId : null }));
  if (job!.runnerId) noteRunnerSeen(ctx, job!.runnerId);
  return job!;
}

/** What the agent sends to say it runs format-2 descriptions (`x-svc-runner-format: 2`). */
export const RUNNER_FORMAT_HEADER = "x-svc-runner-format";

/** The `needs` context of a job: per needed workflow job its result and outputs over its matrix cells (release.ts's rules). */
function needsContext(
  rows: Awaited<ReturnType<typeof jobCalls.neededJobs>>,
  needs: readonly string[],
): Record<string, { result: string; outputs: Record<string, string> }> {
  const out: Record<string, { result: string; outputs: Record<string, string> }> = {};
  for (const id of needs) {
    const cells = rows.filter((r) => r.workflowJob === id);
    out[id] = { result: aggregateResult(cells.map(conclusionOf)) ?? "success", outputs: mergeOutputs(cells) };
  }
  return out;
}

/** The short name and kind of a ref (`refs/heads/main` → main, branch). */
function refParts(ref: string): { name: string; type: "branch" | "tag" | "" } {
  if (ref.startsWith("refs/heads/")) return { name: ref.slice(11), type: "branch" };
  if (ref.startsWith("refs/tags/")) return { name: ref.slice(10), type: "tag" };
  return { name: ref.replace(/^refs\/[^/]+\//, ""), type: "" };
}

/**
 * GET /v1/runner/jobs/{job_id}: what to run. A v1 spec (planned before issue 29, or a workflow
 * using nothing new) answers `format: 1` with its strings expanded; a v2 spec answers `format: 2`
 * with templates and the contexts to evaluate them over (plan-29 §2.3). An agent that does not
 * say it runs format 2 gets a 409 for a v2 job, and the job fails saying to upgrade the runner.
 */
export async function describeJob(ctx: Ctx, actor: Principal, jobId: string, opts: { format?: number } = {}): Promise<JobDescription> {
  const job = await ownJob(ctx, actor, jobId);
  const facts = await jobCalls.runFacts(ctx.db.read, job.repoId, job.runId);
  if (!facts) throw new AppError("not_found", "job not found");
  const spec = job.spec as JobSpecV2;
  // A change from a fork: the commit is fetched from the fork (the job's token reads it alone).
  const fork = spec.checkoutRepoId ? await runs.repoWithOrg(ctx.db.read, spec.checkoutRepoId) : null;
  const base = {
    job_id: job.id,
    run_id: job.runId,
    key: job.key,
    repo: `${facts.org}/${facts.repo}`,
    clone_url: fork ? `${ctx.baseUrl}/${fork.orgName}/${fork.repo.name}.git` : `${ctx.baseUrl}/${facts.org}/${facts.repo}.git`,
    commit: facts.commit,
    ref: facts.ref,
    runs_on: job.runsOn,
    env: spec.env,
    timeout_s: spec.timeoutS,
    heartbeat_s: HEARTBEAT_INTERVAL_S,
    attempt: job.attempt,
    workflow: facts.workflow,
    event: facts.event,
    actor: facts.actor,
  };
  if (spec.v !== 2)
    return {
      ...base,
      format: 1,
      // The planned github fields (event_name as `on:` spells it, the workflow's name, a change's head/base): the agent's GITHUB_* read them.
      ...(spec.github
        ? { contexts: { github: withPlannedGithub({ event: { ref: facts.ref, after: facts.commit, repository: { full_name: base.repo } } }, spec.github) } }
        : {}),
      // A `uses` step is always in a v2 job; should one reach here (a format-1 description cannot carry it), it fails instead of running nothing.
      steps: spec.steps.map((s) => ({ name: s.name, run: s.run ?? `echo 'uses: ${s.uses} needs a format-2 job description' >&2; exit 1`, env: s.env })),
    };
  if ((opts.format ?? 1) < 2) {
    const error = "upgrade the runner: this job needs an svc runner that runs format-2 job descriptions (this server's version)";
    await ctx.db.transaction(async (tx) => {
      const now2 = await runs.jobById(tx, job.id);
      if (now2?.state === "running") await failJob(ctx, tx, now2, "failure", error, now());
    });
    throw Conflict(error);
  }
  const secrets = await secretsForJob(ctx, ctx.db.read, { orgId: job.orgId, repoId: job.repoId, trusted: facts.trusted, refs: spec.secretRefs ?? [] });
  if (!secrets.ok) {
    await ctx.db.transaction(async (tx) => {
      const now2 = await runs.jobById(tx, job.id);
      if (now2?.state === "running") await failJob(ctx, tx, now2, "failure", secrets.error, now());
    });
    throw Conflict(secrets.error);
  }
  rememberJobSecrets(ctx, job.id, Object.values(secrets.secrets));
  const vars = await variablesForJob(ctx.db.read, { orgId: job.orgId, repoId: job.repoId, trusted: facts.trusted });
  const needs = needsContext(await jobCalls.neededJobs(ctx.db.read, job.runId, job.attempt, job.needs), job.needs);
  const ref = refParts(facts.ref);
  const repository = `${facts.org}/${facts.repo}`;
  const inputs = facts.inputs ?? {};
  const event: Record<string, unknown> =
    facts.event === "workflow_dispatch"
      ? { inputs, ref: facts.ref, repository: { full_name: repository, name: facts.repo, owner: { login: facts.org } } }
      : { ref: facts.ref, after: facts.commit, repository: { full_name: repository, name: facts.repo, owner: { login: facts.org } } };
  const rowGithub = {
    sha: facts.commit,
    ref: facts.ref,
    ref_name: ref.name,
    ref_type: ref.type,
    repository,
    repository_owner: facts.org,
    event_name: facts.event,
    event,
    actor: facts.actor?.handle ?? "",
    run_id: job.runId,
    run_attempt: String(job.attempt),
    job: job.workflowJob || job.key,
    workflow: facts.workflow,
    server_url: ctx.baseUrl,
  };
  // The plan-time fields (event_name as `on:` spells it, the workflow's name, a change's head/base
  // and github.event.pull_request) over the run row's: github-context.ts.
  const github = withPlannedGithub(rowGithub, spec.github);
  // Why here and nowhere else: this answer is the one place a secret value leaves the server. The
  // request log holds no bodies, and the answer goes only to the job's own token over its call.
  return {
    ...base,
    format: 2,
    contexts: { github, needs, inputs, vars, matrix: spec.matrix ?? {}, strategy: {}, job: {} },
    secrets: secrets.secrets,
    mask: [],
    defaults: { shell: spec.defaults?.shell ?? null, working_directory: spec.defaults?.workingDirectory ?? null },
    outputs: spec.outputs ?? {},
    continue_on_error: spec.continueOnError ?? false,
    steps: spec.steps.map((s) => {
      const st = s as StepSpec & { uses?: string; with?: Record<string, string> };
      return {
        name: st.name,
        run: st.run ?? "",
        env: st.env ?? {},
        id: st.id ?? null,
        if: st.if ?? null,
        shell: st.shell ?? null,
        working_directory: st.workingDirectory ?? null,
        continue_on_error: st.continueOnError ?? false,
        timeout_s: st.timeoutS ?? null,
        uses: st.uses ?? null,
        with: st.with ?? {},
      };
    }),
  };
}

/** Keeps a job's secret values on this node for the log masking pass (dropped at the verdict; at most LOG_SECRET_JOBS jobs). */
function rememberJobSecrets(ctx: Ctx, jobId: string, values: string[]): void {
  const m = ctx.ci.logSecrets;
  m.delete(jobId);
  m.set(jobId, values);
  while (m.size > LOG_SECRET_JOBS) m.delete(m.keys().next().value as string);
}

/** Jobs whose secrets one node keeps for masking (the oldest forgotten first; a forgotten job's secrets are looked up again). */
const LOG_SECRET_JOBS = 4096;

/** Where one acknowledged log chunk is stored (a kind of stored file: services/ops/object-kinds.ts). */
export function logChunkKey(repoId: string, jobId: string, offset: number): string {
  return `repos/${repoId}/ci-logs/${jobId}/${String(offset).padStart(12, "0")}-${newId()}`;
}

/**
 * POST /v1/runner/jobs/{job_id}/logs `{ offset, text }` → `{ offset }`: idempotent at `offset`
 * (bytes of UTF-8). Text already stored is acknowledged again; a gap is a 409 carrying the offset
 * to resend from. The chunk is in the object store before the answer, so an acknowledged line
 * survives a crash.
 */
export async function appendLog(ctx: Ctx, actor: Principal, jobId: string, input: LogAppend): Promise<{ offset: number }> {
  const job = await ownJob(ctx, actor, jobId);
  const bytes = new TextEncoder().encode(input.text);
  if (bytes.byteLength > LOG_LIMITS.appendBytes) throw TooLarge(`at most ${LOG_LIMITS.appendBytes} bytes of log per call`);
  if (input.offset < job.logSize) return { offset: job.logSize };
  if (input.offset > job.logSize) throw Conflict(`the log is ${job.logSize} bytes long; send from there`, { offset: job.logSize });
  if (bytes.byteLength === 0) return { offset: job.logSize };
  if (job.logSize + bytes.byteLength > LOG_LIMITS.jobBytes) throw TooLarge(`a job's log may hold at most ${LOG_LIMITS.jobBytes} bytes`);
  // The second masking pass (the agent's is the first): what is stored is masked with the job's
  // secrets; the row keeps the agent's offset and size, and a changed chunk is marked to be served whole.
  const secrets = await jobSecretValues(ctx, job);
  const maskedText = secrets.length ? new Masker(secrets).mask(input.text) : input.text;
  const masked = maskedText !== input.text;
  // Files first, rows second: a crash between them leaves only an unreferenced object.
  const key = logChunkKey(job.repoId, job.id, input.offset);
  await ctx.store.put(key, masked ? new TextEncoder().encode(maskedText) : bytes);
  const stored = await ctx.db.transaction(async (tx) => {
    const ok = await runs.appendLogChunk(tx, job.id, input.offset, bytes.byteLength, key);
    if (ok && masked) await jobCalls.markChunkMasked(tx, job.id, input.offset);
    return ok;
  });
  if (!stored) {
    await ctx.store.delete(key);
    const now = await runs.jobById(ctx.db.read, job.id);
    return { offset: now?.logSize ?? job.logSize };
  }
  return { offset: input.offset + bytes.byteLength };
}

/** The secret values of a running job (this node's copy from its description, else looked up again); none for v1 jobs. */
async function jobSecretValues(ctx: Ctx, job: JobRow): Promise<readonly string[]> {
  const spec = job.spec as JobSpecV2;
  if (spec.v !== 2 || !spec.secretRefs?.length) return [];
  const known = ctx.ci.logSecrets.get(job.id);
  if (known) return known;
  const facts = await jobCalls.runFacts(ctx.db.read, job.repoId, job.runId);
  if (!facts) return [];
  const got = await secretsForJob(ctx, ctx.db.read, { orgId: job.orgId, repoId: job.repoId, trusted: facts.trusted, refs: spec.secretRefs });
  const values = got.ok ? Object.values(got.secrets) : [];
  rememberJobSecrets(ctx, job.id, values);
  return values;
}

/** POST /v1/runner/jobs/{job_id}/steps/{index} `{ state, exit_code? }`. */
export async function setStepState(ctx: Ctx, actor: Principal, jobId: string, index: number, input: StepUpdate): Promise<void> {
  await ownJob(ctx, actor, jobId);
  if (!STEP_STATES.includes(input.state as never)) throw Unprocessable(`state must be one of ${STEP_STATES.join(", ")}`);
  await ctx.db.transaction(async (tx) => {
    const job = await runs.jobById(tx, jobId);
    if (!job || job.state !== "running") return;
    if (!Number.isInteger(index) || index < 0 || index >= job.steps.length) throw Unprocessable(`no step ${index}: the job has ${job.steps.length} steps`);
    const steps: StepState[] = job.steps.map((s, i) =>
      i === index ? { ...s, state: input.state as StepState["state"], exit_code: input.exit_code ?? null } : s,
    );
    await runs.updateJob(tx, job.id, { steps });
  });
}

// Heartbeats, stamped in batches (as last_seen_at is): the timeout is two minutes, so a stamp a
// few seconds late changes nothing, and a write per heartbeat would empty the fact cache.
/** Writes every waiting heartbeat stamp (the sweeper calls this before looking for silent jobs). */
export async function flushHeartbeats(ctx: Ctx): Promise<void> {
  const m = ctx.buffers.heartbeats;
  if (m.pending.size === 0) return;
  const stamps = m.take(now());
  await ctx.db.transaction((tx) => runs.stampHeartbeats(tx, stamps));
}

/** POST /v1/runner/jobs/{job_id}/heartbeat → `{ cancel }`. */
export async function heartbeat(ctx: Ctx, actor: Principal, jobId: string): Promise<{ cancel: boolean }> {
  const job = await ownJob(ctx, actor, jobId);
  ctx.buffers.heartbeats.note(job.id, now());
  return { cancel: job.cancelReason !== null };
}

/** The error recorded with a verdict. */
export function verdictError(job: Pick<JobRow, "cancelReason" | "spec" | "steps">, verdict: (typeof VERDICTS)[number]): string | null {
  if (verdict === "success") return null;
  if (verdict === "cancelled") {
    if (job.cancelReason === "timeout") return `the job exceeded its timeout of ${minutes(job.spec.timeoutS)} minutes`;
    if (job.cancelReason === "cancel") return "cancelled";
    // A concurrency group's cancel (concurrency.ts) says why.
    if (job.cancelReason?.startsWith("cancelled: ")) return job.cancelReason;
    return "cancelled by the runner";
  }
  // A step under `continue-on-error: true` failed without failing the job: name the step that did
  // (the first other failed one; the last failed one when every one may continue, e.g. an expression).
  const failed = job.steps.flatMap((s, k) => (s.state === "failure" ? [k] : []));
  const i = failed.find((k) => (job.spec.steps[k] as { continueOnError?: unknown } | undefined)?.continueOnError !== true) ?? failed.at(-1) ?? -1;
  if (i < 0) return "the job failed";
  const code = job.steps[i]!.exit_code;
  // The name as shown (plan-time expressions expanded: step-names.ts), the spec's when the row has none.
  return `step ${JSON.stringify(job.steps[i]?.name || job.spec.steps[i]?.name || String(i))} failed${code === null ? "" : ` with exit code ${code}`}`;
}

/** Bounds on the outputs a verdict carries (plan-29 §2.3, like GitHub's 1 MB per job). */
export const OUTPUT_LIMITS = Object.freeze({ names: 50, bytes: 1024 * 1024 });
const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,99}$/;

/** The outputs to store: bounded (422 past the limits), without a value holding one of the job's secrets. */
function checkedOutputs(outputs: Record<string, string> | undefined, secrets: readonly string[]): Record<string, string> | null {
  if (!outputs) return null;
  const names = Object.keys(outputs);
  if (names.length > OUTPUT_LIMITS.names) throw Unprocessable(`at most ${OUTPUT_LIMITS.names} outputs`);
  let total = 0;
  for (const n of names) {
    if (!OUTPUT_NAME.test(n)) throw Unprocessable(`${JSON.stringify(n.slice(0, 100))} is not a valid output name`);
    total += Buffer.byteLength(n) + Buffer.byteLength(outputs[n]!);
  }
  // Why no value in the message: an output may carry anything the job printed.
  if (total > OUTPUT_LIMITS.bytes) throw Unprocessable(`the outputs are larger than ${OUTPUT_LIMITS.bytes} bytes`);
  const masker = secrets.length ? new Masker(secrets) : null;
  const out: Record<string, string> = {};
  // Why: the agent drops outputs holding a secret; one that still does is dropped here (needs.* would spread it).
  for (const n of names) if (!masker?.contains(outputs[n]!)) out[n] = outputs[n]!;
  return out;
}

/** POST /v1/runner/jobs/{job_id}/complete `{ verdict, outputs? }`: the job ends and its token is revoked. */
export async function completeJob(ctx: Ctx, actor: Principal, jobId: string, input: JobComplete): Promise<void> {
  const before = await runs.jobById(ctx.db.read, jobId);
  const secrets = before?.state === "running" && input.outputs ? await jobSecretValues(ctx, before) : [];
  // One read of the job, inside the transaction: the token check (401/404), then the verdict (422).
  await ctx.db.transaction(async (tx) => {
    const job = await runs.jobById(tx, jobId);
    enforce(decide({ caller: callerFacts(actor), orgRole: null }, { kind: "runner:job", jobTokenId: job?.state === "running" ? job.tokenId : null }));
    if (!VERDICTS.includes(input.verdict as never)) throw Unprocessable(`verdict must be one of ${VERDICTS.join(", ")}`);
    const verdict = input.verdict as (typeof VERDICTS)[number];
    const outputs = checkedOutputs(input.outputs, secrets);
    if (job!.runnerId) noteRunnerSeen(ctx, job!.runnerId);
    ctx.buffers.heartbeats.pending.delete(jobId);
    if (outputs) await runs.updateJob(tx, job!.id, { outputs });
    await failJob(ctx, tx, job!, verdict, verdictError(job!, verdict), now(), verdict);
  });
  ctx.ci.logSecrets.delete(jobId);
}
