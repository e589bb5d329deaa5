// One job's run on the agent (plan-29 part D): describe → checkout → each step → outputs →
// verdict. A format-2 description carries templates and the contexts to evaluate them over
// (github, needs, inputs, vars, matrix, strategy, job, secrets); the agent adds env, steps,
// runner and job.status as the job goes. Each step: its `if` (status functions over the steps
// before it; false → skipped), its name, env, script and options evaluated, its files
// ($GITHUB_OUTPUT, $GITHUB_ENV, $GITHUB_PATH, $GITHUB_STEP_SUMMARY), the GITHUB_*/RUNNER_*
// variables, its shell and working directory, `continue-on-error` and `timeout-minutes`. An
// expression error fails the step with the expression's text (never a value). Every line the job
// prints is masked with the job's secrets and `::add-mask::` values before it leaves (log.ts).
import type { ChildProcess } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { arch as osArch, platform } from "node:os";
import { delimiter, join } from "node:path";
import { ExprError, evaluateCondition, parseCondition, parseTemplate, renderTemplate, templateValue, truthy } from "../../src/services/ci/expr/index.ts";
import type { Contexts, EvalEnv, Value } from "../../src/services/ci/expr/index.ts";
import { Masker } from "../../src/services/ci/mask.ts";
import { ActionProblem, type ActionHost, type ActionResult, type PostPhase } from "./action-host.ts";
import { call, pause, say } from "./client.ts";
import { LogStream } from "./log.ts";
import { hashFiles, killGroup, readStepFiles, runProcess, shellOf, stepFiles, workingDirectory } from "./steps.ts";
import { runUses, usesCheckout } from "./uses.ts";

/** What the agent asks for: format 2 (templates and contexts). */
export const RUNNER_FORMAT = 2;

/** One step of a description (format 1: name, run, env only, all expanded). */
interface DescStep {
  name: string;
  run: string;
  env: Record<string, string>;
  id?: string | null;
  if?: string | null;
  shell?: string | null;
  working_directory?: string | null;
  continue_on_error?: boolean | string;
  timeout_s?: number | null;
  uses?: string | null;
  with?: Record<string, string>;
}

/** The job description (GET /v1/runner/jobs/{id}). */
interface Desc {
  job_id: string;
  run_id: string;
  key: string;
  repo: string;
  clone_url: string;
  commit: string;
  ref: string;
  env: Record<string, string>;
  steps: DescStep[];
  timeout_s: number;
  heartbeat_s: number;
  format?: number;
  attempt?: number;
  workflow?: string;
  event?: string;
  actor?: { id: string; handle: string } | null;
  contexts?: Record<string, Value>;
  secrets?: Record<string, string>;
  mask?: string[];
  defaults?: { shell: string | null; working_directory: string | null };
  outputs?: Record<string, string>;
}

/** What the agent loop shares with the running job: why it stops, and the step's process. */
export interface JobControl {
  cancelled: "cancel" | "timeout" | "stop" | null;
  child: ChildProcess | null;
}

/** An expression problem in a step: the step fails with this text (it names the expression, never a value). */
const StepProblem = ActionProblem;

/** RUNNER_OS / RUNNER_ARCH as GitHub names them. */
function runnerOs(): string {
  const p = platform();
  return p === "darwin" ? "macOS" : p === "win32" ? "Windows" : "Linux";
}
function runnerArch(): string {
  return osArch() === "arm64" ? "ARM64" : "X64";
}

/** The agent's environment for steps and git: without svc's own settings, nor GitHub's (a step must not believe it runs there). */
export function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("SVC_") && !k.startsWith("GITHUB_") && !k.startsWith("RUNNER_")) out[k] = v;
  return out;
}

/** Evaluates `text` as a template over `contexts` (format 2) or takes it as it is (format 1). */
function renderer(format: number, env: () => EvalEnv) {
  return (text: string, what: string): string => {
    if (format < 2) return text;
    return renderWith(text, what, env());
  };
}

/** Evaluates `text` as a template over `env`; an expression error is an ActionProblem naming the expression. */
function renderWith(text: string, what: string, env: EvalEnv): string {
  if (!text.includes("${{")) return text;
  try {
    return renderTemplate(parseTemplate(text), env);
  } catch (e) {
    if (e instanceof ExprError) throw new StepProblem(`${what} ${JSON.stringify(text.slice(0, 200))}: ${e.message}`);
    throw e;
  }
}

/** The short name and kind of a ref. */
function refParts(ref: string): { name: string; type: string } {
  if (ref.startsWith("refs/heads/")) return { name: ref.slice(11), type: "branch" };
  if (ref.startsWith("refs/tags/")) return { name: ref.slice(10), type: "tag" };
  return { name: ref.replace(/^refs\/[^/]+\//, ""), type: "" };
}

/** Runs the claimed job `jobId` to its verdict. */
export async function runJob(o: {
  jobId: string;
  token: string;
  runnerUrl: string;
  workdir: string;
  runnerName: string;
  control: JobControl;
  stopped: AbortSignal;
}): Promise<void> {
  const { jobId, token, control } = o;
  const base = o.runnerUrl.replace(/\/+$/, "");
  const jobUrl = `${base}/v1/runner/jobs/${jobId}`;
  // A job's calls survive a stop of the agent only as long as needed to report it.
  const reportStop = new AbortController();
  const desc = await call(jobUrl, { token, stop: reportStop.signal, what: "job description", headers: { "x-svc-runner-format": String(RUNNER_FORMAT) } });
  if (desc.status !== 200) {
    say(`job ${jobId}: the server refused its description (${desc.status})${desc.body?.error ? `: ${desc.body.error}` : ""}; skipping`);
    return;
  }
  const job = desc.body as Desc;
  const format = job.format ?? 1;
  const tag = `job ${JSON.stringify(job.key)} (${job.job_id}) of ${job.repo}@${job.commit.slice(0, 7)}`;
  say(`${tag}: started`);
  control.cancelled = o.stopped.aborted ? "stop" : null;
  const secrets = job.secrets ?? {};
  // Why the token too: a step that prints its git config must not show the job's credential.
  const masker = new Masker([...Object.values(secrets), ...(job.mask ?? []), token]);
  const log = new LogStream(`${jobUrl}/logs`, token, reportStop.signal, masker);
  const started = Date.now();
  // Heartbeats: the answer may say cancel.
  let over = false;
  const beatStop = new AbortController();
  const beat = async () => {
    while (!over) {
      const res = await call(`${jobUrl}/heartbeat`, { token, method: "POST", attempts: 1, what: "heartbeat", timeoutMs: 10_000 }).catch(() => null);
      if (res?.status === 200 && res.body?.cancel && !control.cancelled) {
        control.cancelled = "cancel";
        say(`${tag}: cancel requested`);
        if (control.child) killGroup(control.child);
      }
      if (res?.status === 401 || res?.status === 404) {
        // The server ended the job (removed machine, timeout, silence): stop working on it.
        if (!control.cancelled) say(`${tag}: the server ended the job`);
        control.cancelled ??= "cancel";
        if (control.child) killGroup(control.child);
      }
      if (Date.now() - started > (job.timeout_s + 30) * 1000 && !control.cancelled) {
        control.cancelled = "timeout";
        say(`${tag}: timed out after ${job.timeout_s}s`);
        if (control.child) killGroup(control.child);
      }
      await pause(Math.max(1, job.heartbeat_s ?? 5) * 1000, beatStop.signal);
    }
  };
  const beating = beat();
  const ws = join(o.workdir, job.job_id);
  const temp = join(o.workdir, `${job.job_id}.temp`);
  let verdict: "success" | "failure" | "cancelled" = "success";
  let outputs: Record<string, string> | undefined;
  const steps = job.steps.length;
  const stepState = (i: number, state: string, exitCode: number | null = null) =>
    call(`${jobUrl}/steps/${i}`, { token, method: "POST", body: { state, exit_code: exitCode }, stop: reportStop.signal, what: `step ${i + 1} state` }).catch(
      () => null,
    );
  try {
    rmSync(ws, { recursive: true, force: true });
    rmSync(temp, { recursive: true, force: true });
    mkdirSync(ws, { recursive: true });
    mkdirSync(temp, { recursive: true });
    // A job with a built-in actions/checkout step starts with an empty workspace (as on GitHub): the step checks out.
    const implicit = !job.steps.some((s) => s.uses && usesCheckout(s.uses));
    if (implicit) log.write(`##[checkout] ${job.repo} at ${job.commit} (${job.ref})\n`);
    const gitEnv = {
      ...baseEnv(),
      GIT_TERMINAL_PROMPT: "0",
      // Why config by environment: the token stays out of argv (visible to other users) and out of .git/config.
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "http.extraHeader",
      GIT_CONFIG_VALUE_0: `Authorization: Bearer ${token}`,
    };
    const out = (s: string) => log.write(s);
    let code = implicit ? await runProcess("git", ["init", "-q", "."], { cwd: ws, env: gitEnv, out }) : 0;
    if (code === 0 && implicit)
      code = await runProcess("git", ["fetch", "-q", "--no-tags", "--depth", "1", job.clone_url, job.commit], {
        cwd: ws,
        env: gitEnv,
        out,
        onChild: (c) => (control.child = c),
      });
    if (code === 0 && implicit) code = await runProcess("git", ["checkout", "-q", "--detach", "FETCH_HEAD"], { cwd: ws, env: gitEnv, out });
    control.child = null;
    if (implicit) log.endStep();
    if (code !== 0) {
      log.write(`##[error] checkout failed (exit ${code})\n`);
      say(`${tag}: checkout failed`);
      verdict = control.cancelled ? "cancelled" : "failure";
      for (let i = 0; i < steps; i++) await stepState(i, "skipped");
    } else {
      const run = new StepRunner(job, format, { ws, temp, base, token, workdir: o.workdir, runnerName: o.runnerName, secrets, log, control, tag, stepState });
      verdict = await run.all();
      outputs = run.jobOutputs();
    }
  } catch (error) {
    log.write(`##[error] the runner failed: ${String(error)}\n`);
    verdict = "failure";
  }
  if (control.cancelled) verdict = "cancelled";
  await log.close();
  over = true;
  beatStop.abort();
  const body: { verdict: string; outputs?: Record<string, string> } = { verdict };
  if (outputs && Object.keys(outputs).length) body.outputs = outputs;
  const done = await call(`${jobUrl}/complete`, { token, method: "POST", body, stop: reportStop.signal, what: "verdict" }).catch(() => null);
  if (done && done.status !== 204 && done.status !== 401) say(`${tag}: verdict not recorded (${done.status}): ${done.body?.error ?? ""}`);
  await beating;
  rmSync(ws, { recursive: true, force: true });
  rmSync(temp, { recursive: true, force: true });
  say(`${tag}: finished: ${verdict}`);
}

/** A step's entry in the `steps` context. */
interface StepResult {
  outputs: Record<string, string>;
  outcome: "success" | "failure" | "cancelled" | "skipped";
  conclusion: "success" | "failure" | "cancelled" | "skipped";
}

/** The steps of one job, in order, with the state they share (env from $GITHUB_ENV, PATH additions, the steps context). */
class StepRunner {
  private failed = false;
  private readonly stepsCtx: Record<string, StepResult> = {};
  private readonly exported: Record<string, string> = {};
  private pathAdds: string[] = [];
  /** Post phases of the job's actions, in the order they were registered (run in reverse). */
  private readonly posts: PostPhase[] = [];
  private readonly github: Record<string, Value>;
  private readonly runner: Record<string, string>;
  private readonly fixedEnv: Record<string, string>;
  private readonly render: (text: string, what: string) => string;
  private envCtx: Record<string, string> = {};

  constructor(
    private readonly job: Desc,
    private readonly format: number,
    private readonly o: {
      ws: string;
      temp: string;
      base: string;
      token: string;
      workdir: string;
      runnerName: string;
      secrets: Record<string, string>;
      log: LogStream;
      control: JobControl;
      tag: string;
      stepState: (i: number, state: string, exitCode?: number | null) => Promise<unknown>;
    },
  ) {
    const ref = refParts(job.ref);
    const given = (job.contexts?.github ?? {}) as Record<string, Value>;
    const owner = job.repo.split("/")[0] ?? "";
    this.github = {
      sha: job.commit,
      ref: job.ref,
      ref_name: ref.name,
      ref_type: ref.type,
      repository: job.repo,
      repository_owner: owner,
      event_name: job.event ?? "push",
      event: { ref: job.ref, after: job.commit, repository: { full_name: job.repo } },
      actor: job.actor?.handle ?? "",
      run_id: job.run_id,
      run_attempt: String(job.attempt ?? 1),
      job: job.key,
      workflow: job.workflow ?? "",
      ...given,
      server_url: o.base,
      workspace: o.ws,
      // GitHub's GITHUB_TOKEN: here the job token (read of the job's repository; masked in the log).
      token: o.token,
    };
    const eventDir = join(o.temp, "_github_workflow");
    mkdirSync(eventDir, { recursive: true });
    const eventPath = join(eventDir, "event.json");
    writeFileSync(eventPath, JSON.stringify(this.github.event ?? {}));
    // The tool cache outlives the job (GitHub's RUNNER_TOOL_CACHE: setup-* actions keep downloaded tools there).
    const toolCache = join(o.workdir, "_tool");
    mkdirSync(toolCache, { recursive: true });
    this.runner = { os: runnerOs(), arch: runnerArch(), temp: o.temp, name: o.runnerName, tool_cache: toolCache };
    const g = (k: string) => String(this.github[k] ?? "");
    this.fixedEnv = {
      CI: "true",
      SVC_CI: "true",
      SVC_JOB_ID: job.job_id,
      SVC_RUN_ID: job.run_id,
      SVC_JOB_KEY: job.key,
      SVC_REPOSITORY: job.repo,
      SVC_SHA: job.commit,
      SVC_REF: job.ref,
      SVC_WORKSPACE: o.ws,
      GITHUB_SHA: g("sha"),
      GITHUB_REF: g("ref"),
      GITHUB_REF_NAME: g("ref_name"),
      GITHUB_REF_TYPE: g("ref_type"),
      GITHUB_REPOSITORY: g("repository"),
      GITHUB_REPOSITORY_OWNER: g("repository_owner"),
      GITHUB_WORKSPACE: o.ws,
      GITHUB_RUN_ID: g("run_id"),
      GITHUB_RUN_ATTEMPT: g("run_attempt"),
      GITHUB_EVENT_NAME: g("event_name"),
      // A change run's branch and target (empty for other events, as GitHub).
      GITHUB_HEAD_REF: g("head_ref"),
      GITHUB_BASE_REF: g("base_ref"),
      GITHUB_ACTOR: g("actor"),
      GITHUB_JOB: g("job"),
      GITHUB_WORKFLOW: g("workflow"),
      GITHUB_SERVER_URL: o.base,
      GITHUB_EVENT_PATH: eventPath,
      RUNNER_OS: this.runner.os!,
      RUNNER_ARCH: this.runner.arch!,
      RUNNER_TEMP: o.temp,
      RUNNER_NAME: o.runnerName,
      RUNNER_TOOL_CACHE: toolCache,
    };
    this.render = renderer(format, () => this.evalEnv());
  }

  /** What an expression is evaluated with: the contexts now, and hashFiles over the workspace. */
  private evalEnv(): EvalEnv {
    return { contexts: this.contexts(), hashFiles: (patterns) => hashFiles(this.o.ws, patterns) };
  }

  /** The contexts an expression reads now. */
  private contexts(): Contexts {
    const c = this.job.contexts ?? {};
    return {
      ...c,
      github: this.github,
      env: this.envCtx,
      steps: this.stepsCtx as unknown as Value,
      job: { ...((c.job as Record<string, Value>) ?? {}), status: this.status() },
      runner: this.runner,
      secrets: this.o.secrets,
    } as Contexts;
  }

  private status(): "success" | "failure" | "cancelled" {
    return this.o.control.cancelled ? "cancelled" : this.failed ? "failure" : "success";
  }

  /** Runs every step; answers the job's verdict. */
  async all(): Promise<"success" | "failure" | "cancelled"> {
    for (let i = 0; i < this.job.steps.length; i++) await this.step(i);
    await this.postPhases();
    return this.o.control.cancelled ? "cancelled" : this.failed ? "failure" : "success";
  }

  /** The actions' post phases after the last step, last registered first; `success` ones only while the job has not failed or been cancelled; a failing one fails the job. */
  private async postPhases(): Promise<void> {
    const { log, tag } = this.o;
    for (const phase of [...this.posts].reverse()) {
      if (phase.when === "success" && this.status() !== "success") {
        log.write(`##[skipped] Post ${phase.name} (the job did not succeed)\n`);
        continue;
      }
      log.write(`##[post] Post ${phase.name}\n`);
      try {
        this.envCtx = { ...this.jobEnvSafe(), ...this.exported };
        await phase.run();
      } catch (e) {
        log.write(`##[error] Post ${phase.name}: ${e instanceof Error ? e.message : String(e)}\n`);
        say(`${tag}: post phase ${JSON.stringify(phase.name)} failed`);
        this.failed = true;
      }
      this.o.control.child = null;
      log.endStep();
    }
  }

  /** The environment of a process the job starts now: the agent's, the job's env and $GITHUB_ENV, `stepEnv`, GITHUB_* and RUNNER_* variables, PATH with $GITHUB_PATH dirs first. */
  private processEnv(stepEnv: Record<string, string>): Record<string, string> {
    const env: Record<string, string> = { ...baseEnv(), ...this.envCtx, ...stepEnv, ...this.fixedEnv };
    if (this.pathAdds.length) env.PATH = [...this.pathAdds, env.PATH ?? ""].join(delimiter);
    return env;
  }

  /** What a `uses` step (or a post phase it registers) sees of the job. */
  private host(stepEnv: Record<string, string>, timedOut: () => boolean): ActionHost {
    const runner = this;
    const { control, log } = this.o;
    const host: ActionHost = {
      job: { job_id: this.job.job_id, run_id: this.job.run_id, repo: this.job.repo, clone_url: this.job.clone_url, commit: this.job.commit, ref: this.job.ref },
      base: this.o.base,
      token: this.o.token,
      workspace: this.o.ws,
      temp: this.o.temp,
      workdir: this.o.workdir,
      nesting: 0,
      child: null,
      log: (text) => log.write(text),
      render: (text, what, extra) =>
        renderWith(text, what, extra ? { ...runner.evalEnv(), contexts: { ...runner.contexts(), ...extra } as Contexts } : runner.evalEnv()),
      contexts: () => runner.contexts() as Record<string, Value>,
      env: () => runner.processEnv(stepEnv),
      mask: (value) => void log.masker.add(value),
      exec: (cmd, args, opts) =>
        runProcess(cmd, args, {
          cwd: opts.cwd,
          env: opts.env,
          out: (s) => {
            opts.out?.(s);
            log.write(s);
          },
          onChild: (c) => {
            control.child = c;
            host.child = c;
          },
        }).finally(() => {
          control.child = null;
          host.child = null;
        }),
      addPost: (phase) => void runner.posts.push(phase),
      status: () => runner.status(),
      // The step's own timeout stops the action too (a composite runs no further step).
      cancelled: () => control.cancelled !== null || timedOut(),
      exportEnv: (name, value) => {
        if (name.startsWith("GITHUB_") || name.startsWith("RUNNER_")) return;
        runner.exported[name] = value;
        runner.envCtx = { ...runner.envCtx, [name]: value };
      },
      addPath: (dir) => {
        runner.pathAdds = [dir, ...runner.pathAdds.filter((d) => d !== dir)];
      },
    };
    return host;
  }

  /** A `uses` step: `with:` and env evaluated, the action run through uses.ts, its result recorded like a run step's. */
  private async usesStep(
    i: number,
    step: DescStep,
    name: string,
    continueOnError: boolean,
    fail: (message: string, exit: number | null, continueOnError: boolean) => Promise<void>,
  ): Promise<void> {
    const { log, control, tag, stepState } = this.o;
    const n = this.job.steps.length;
    const stepEnv: Record<string, string> = {};
    const inputs: Record<string, string> = {};
    try {
      for (const [k, v] of Object.entries(step.env ?? {})) stepEnv[k] = this.render(v, `env.${k}`);
      this.envCtx = { ...this.envCtx, ...stepEnv };
      for (const [k, v] of Object.entries(step.with ?? {})) inputs[k] = this.render(v, `with.${k}`);
    } catch (e) {
      if (!(e instanceof StepProblem)) throw e;
      return await fail(e.message, null, continueOnError);
    }
    let timedOut = false;
    const host = this.host(stepEnv, () => timedOut);
    const t0 = Date.now();
    const cancelledBefore = control.cancelled !== null;
    const timer =
      step.timeout_s && step.timeout_s > 0
        ? setTimeout(() => {
            timedOut = true;
            if (control.child) killGroup(control.child);
          }, step.timeout_s * 1000)
        : null;
    let result: ActionResult;
    try {
      result = await runUses(host, { index: i, uses: step.uses!, inputs, id: step.id ?? null, name });
    } catch (e) {
      // An action's own problem fails the step with its message; anything else is reported as the action failing.
      result = { exit: 1, outputs: {}, error: e instanceof ActionProblem ? e.message : `${step.uses}: the action failed: ${String(e)}` };
    }
    if (timer) clearTimeout(timer);
    control.child = null;
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    if (control.cancelled && !cancelledBefore) {
      log.endStep();
      log.write(`##[cancelled] ${name}\n`);
      say(`${tag}: step ${i + 1}/${n} ${JSON.stringify(name)} cancelled after ${secs}s`);
      await stepState(i, "cancelled", result.exit);
      this.record(step, "cancelled", "cancelled", {});
      return;
    }
    if (timedOut) return await fail(`${name} timed out after ${+(step.timeout_s! / 60).toFixed(2)} minutes`, result.exit, continueOnError);
    if (result.exit !== 0) {
      log.endStep();
      log.write(
        `##[error] ${result.error ?? `${name} failed with exit code ${result.exit}`}${continueOnError ? " (continue-on-error: the job goes on)" : ""}\n`,
      );
      say(`${tag}: step ${i + 1}/${n} ${JSON.stringify(name)} failed (exit ${result.exit}) after ${secs}s`);
      await stepState(i, "failure", result.exit);
      if (!continueOnError) this.failed = true;
      this.record(step, "failure", continueOnError ? "success" : "failure", result.outputs);
      return;
    }
    log.endStep();
    say(`${tag}: step ${i + 1}/${n} ${JSON.stringify(name)} succeeded in ${secs}s`);
    await stepState(i, "success", 0);
    this.record(step, "success", "success", result.outputs);
  }

  /** The job's outputs: its templates over the steps, without any holding a secret (a warning in the log instead). */
  jobOutputs(): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.format < 2) return out;
    this.envCtx = { ...this.jobEnvSafe(), ...this.exported };
    for (const [name, text] of Object.entries(this.job.outputs ?? {})) {
      let value: string;
      try {
        value = this.render(text, `outputs.${name}`);
      } catch (e) {
        if (!(e instanceof StepProblem)) throw e;
        this.o.log.write(`##[warning] output ${name} skipped: ${e.message}\n`);
        continue;
      }
      if (this.o.log.masker.contains(value)) {
        this.o.log.write(`##[warning] output ${name} skipped: it contains a secret\n`);
        continue;
      }
      out[name] = value;
    }
    this.o.log.endStep();
    return out;
  }

  /** The job's env evaluated (an expression error leaves it out: the steps report it). */
  private jobEnvSafe(): Record<string, string> {
    try {
      return this.jobEnv();
    } catch {
      return {};
    }
  }

  private jobEnv(): Record<string, string> {
    this.envCtx = {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.job.env)) out[k] = this.render(v, `env.${k}`);
    return out;
  }

  /** Whether step `i` runs: its `if` (or success()) over the steps before it. */
  private shouldRun(step: DescStep): boolean {
    const cancelled = this.o.control.cancelled !== null;
    if (this.o.control.cancelled === "stop") return false;
    const status = { success: !this.failed && !cancelled, failure: this.failed, cancelled };
    if (this.format < 2 || step.if == null || step.if === "") return status.success;
    if (step.if === "true" || step.if === "false") return status.success && step.if === "true";
    try {
      return evaluateCondition(parseCondition(step.if), { ...this.evalEnv(), status });
    } catch (e) {
      if (e instanceof ExprError) throw new StepProblem(`if ${JSON.stringify(step.if.slice(0, 200))}: ${e.message}`);
      throw e;
    }
  }

  private async step(i: number): Promise<void> {
    const step = this.job.steps[i]!;
    const n = this.job.steps.length;
    const { log, control, tag, stepState } = this.o;
    let name = step.name;
    const fail = async (message: string, exit: number | null, continueOnError: boolean) => {
      log.write(`##[error] ${message}\n`);
      log.endStep();
      say(`${tag}: step ${i + 1}/${n} ${JSON.stringify(name)} failed${exit === null ? "" : ` (exit ${exit})`}`);
      await stepState(i, "failure", exit);
      if (!continueOnError) this.failed = true;
      this.record(step, "failure", continueOnError ? "success" : "failure", {});
    };
    // The env context first (the `if` and the name may read it).
    let jobEnv: Record<string, string>;
    let run: boolean;
    try {
      jobEnv = this.jobEnv();
      this.envCtx = { ...jobEnv, ...this.exported };
      run = this.shouldRun(step);
    } catch (e) {
      if (!(e instanceof StepProblem)) throw e;
      log.write(`##[step ${i + 1}/${n}] ${name}\n`);
      await stepState(i, "running");
      return fail(e.message, null, false);
    }
    if (!run) {
      const state = control.cancelled ? "cancelled" : "skipped";
      if (step.if && this.format >= 2 && !control.cancelled) log.write(`##[skipped] ${name} (if: ${step.if})\n`);
      await stepState(i, state);
      this.record(step, state, state, {});
      return;
    }
    try {
      name = this.render(step.name, "name");
    } catch {
      // the raw name stays; the step goes on (GitHub shows the name as written)
    }
    say(`${tag}: step ${i + 1}/${n} ${JSON.stringify(name)} running`);
    await stepState(i, "running");
    log.write(`##[step ${i + 1}/${n}] ${name}\n`);
    let continueOnError = false;
    let script: string;
    const stepEnv: Record<string, string> = {};
    let cwd: string;
    try {
      const coe = step.continue_on_error;
      if (typeof coe === "boolean") continueOnError = coe;
      else if (typeof coe === "string" && coe) {
        try {
          continueOnError = this.format < 2 ? coe === "true" : truthy(templateValue(parseTemplate(coe), this.evalEnv()));
        } catch (e) {
          if (e instanceof ExprError) throw new StepProblem(`continue-on-error ${JSON.stringify(coe.slice(0, 200))}: ${e.message}`);
          throw e;
        }
      }
      if (step.uses) return await this.usesStep(i, step, name, continueOnError, fail);
      for (const [k, v] of Object.entries(step.env ?? {})) stepEnv[k] = this.render(v, `env.${k}`);
      this.envCtx = { ...this.envCtx, ...stepEnv };
      script = this.render(step.run, "run");
      const dir = step.working_directory ?? this.job.defaults?.working_directory ?? null;
      const wd = workingDirectory(this.o.ws, dir ? this.render(dir, "working-directory") : null);
      if (!wd.ok) throw new StepProblem(wd.error);
      cwd = wd.path;
    } catch (e) {
      if (!(e instanceof StepProblem)) throw e;
      return await fail(e.message, null, continueOnError);
    }
    const files = stepFiles(this.o.temp, i);
    const env = this.processEnv({});
    env.GITHUB_OUTPUT = files.output;
    env.GITHUB_ENV = files.env;
    env.GITHUB_PATH = files.path;
    env.GITHUB_STEP_SUMMARY = files.summary;
    const shell = shellOf(step.shell ?? this.job.defaults?.shell ?? null, env.PATH, this.format);
    const scriptPath = join(this.o.temp, `step${i}${shell.ext ?? (shell.posix ? ".sh" : "")}`);
    // `exec 2>&1`: one stream, so the log keeps stdout and stderr in the order they were written.
    writeFileSync(scriptPath, shell.posix ? `exec 2>&1\n${script}\n` : `${script}\n`);
    const argv = shell.argv.map((a) => a.replaceAll("{0}", scriptPath));
    const t0 = Date.now();
    // A step that runs after a cancel (its `if` says always() or cancelled()) is judged by its own exit.
    const cancelledBefore = control.cancelled !== null;
    let timedOut = false;
    const timer =
      step.timeout_s && step.timeout_s > 0
        ? setTimeout(() => {
            timedOut = true;
            if (control.child) killGroup(control.child);
          }, step.timeout_s * 1000)
        : null;
    const exit = await runProcess(argv[0]!, argv.slice(1), { cwd, env, out: (s) => log.write(s), onChild: (c) => (control.child = c) });
    if (timer) clearTimeout(timer);
    control.child = null;
    rmSync(scriptPath, { force: true });
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    if (control.cancelled && !cancelledBefore) {
      log.endStep();
      log.write(`##[cancelled] ${name}\n`);
      say(`${tag}: step ${i + 1}/${n} ${JSON.stringify(name)} cancelled after ${secs}s`);
      await stepState(i, "cancelled", exit);
      this.record(step, "cancelled", "cancelled", {});
      return;
    }
    if (timedOut) return await fail(`${name} timed out after ${+(step.timeout_s! / 60).toFixed(2)} minutes`, exit, continueOnError);
    // The files: read even after a failure (GitHub keeps a failed step's outputs).
    const writes = readStepFiles(files);
    if (!writes.ok) return await fail(`${name}: ${writes.error}`, exit, continueOnError);
    for (const [k, v] of writes.env) if (!k.startsWith("GITHUB_") && !k.startsWith("RUNNER_")) this.exported[k] = v;
    if (writes.path.length) this.pathAdds = [...writes.path, ...this.pathAdds.filter((d) => !writes.path.includes(d))];
    const outputs = Object.fromEntries(writes.outputs);
    if (exit !== 0) {
      log.endStep();
      log.write(`##[error] ${name} failed with exit code ${exit}${continueOnError ? " (continue-on-error: the job goes on)" : ""}\n`);
      say(`${tag}: step ${i + 1}/${n} ${JSON.stringify(name)} failed (exit ${exit}) after ${secs}s`);
      await stepState(i, "failure", exit);
      if (!continueOnError) this.failed = true;
      this.record(step, "failure", continueOnError ? "success" : "failure", outputs);
      return;
    }
    log.endStep();
    say(`${tag}: step ${i + 1}/${n} ${JSON.stringify(name)} succeeded in ${secs}s`);
    await stepState(i, "success", 0);
    this.record(step, "success", "success", outputs);
  }

  private record(step: DescStep, outcome: StepResult["outcome"], conclusion: StepResult["conclusion"], outputs: Record<string, string>): void {
    if (step.id) this.stepsCtx[step.id] = { outputs, outcome, conclusion };
  }
}
