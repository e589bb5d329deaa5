// What a `uses:` step sees of the job it runs in (issue 30): the one interface between the step
// loop (job.ts) and the actions it runs: the built-ins (builtins/: checkout, artifacts, caches)
// and actions from repositories (actions/: composite and JavaScript actions). The step loop
// makes one host per `uses` step; an action never reaches into the loop's state otherwise.
import type { ChildProcess } from "node:child_process";
import type { Value } from "../../src/services/ci/expr/index.ts";

/** The job an action runs in (from the job description). */
export interface ActionJob {
  job_id: string;
  run_id: string;
  /** `org/repo` of the job's repository. */
  repo: string;
  /** Where the job's repository is fetched from (for a fork's change run: the fork). */
  clone_url: string;
  commit: string;
  ref: string;
}

/** A `uses` step as the action receives it: `with` already evaluated. */
export interface ActionStep {
  /** 0-based index of the step in the job. */
  index: number;
  /** The reference as written (`actions/checkout@v4`, `./.github/actions/x`, `org/repo/path@ref`). */
  uses: string;
  /** `with:` inputs, templates evaluated (strings, as GitHub passes them). */
  inputs: Record<string, string>;
  /** The step's `id`, if any. */
  id: string | null;
  /** The step's name as shown. */
  name: string;
}

/** A phase run after every step (GitHub's `post`), in reverse order of registration. */
export interface PostPhase {
  /** Shown as `Post <name>` in the log. */
  name: string;
  /** When it runs: always (`always()`), or only when the job has succeeded so far (`success()`). */
  when: "always" | "success";
  run(): Promise<void>;
}

/** What the action answers: its exit (0 = success), its outputs, and why it failed (a line for the log). */
export interface ActionResult {
  exit: number;
  outputs: Record<string, string>;
  /** Why it failed, shown as `##[error] …` (never a secret). */
  error?: string;
}

/** What the step loop lends an action. */
export interface ActionHost {
  readonly job: ActionJob;
  /** The server's base URL (no trailing slash) the job talks to. */
  readonly base: string;
  /** The per-job token (Bearer for the runner API and for git over HTTP; never put it in a URL or argv). */
  readonly token: string;
  /** The job's workspace ($GITHUB_WORKSPACE). */
  readonly workspace: string;
  /** The job's temp dir ($RUNNER_TEMP); an action's scratch files go under it. */
  readonly temp: string;
  /** The runner machine's work dir: what outlives a job (the per-commit action cache). */
  readonly workdir: string;
  /** Writes to the job's log (masked before it leaves). */
  log(text: string): void;
  /** Evaluates `text` as a template over the job's contexts now (plus `extra` contexts, e.g. `inputs` of a composite action). */
  render(text: string, what: string, extra?: Record<string, Value>): string;
  /** The contexts an expression reads now (github, env, steps, job, runner, secrets, matrix, needs, …). */
  contexts(): Record<string, Value>;
  /** The environment a process of this step starts with: the agent's, the job's and step's env, GITHUB_* and RUNNER_*. */
  env(): Record<string, string>;
  /** Adds a secret to the masker (an action's `::add-mask::` or a value it knows to be secret). */
  mask(value: string): void;
  /** Runs a command in its own process group with the log as its output (`out` also sees it raw, e.g. for workflow commands); cancel and timeout kill it. */
  exec(cmd: string, args: string[], opts: { cwd: string; env: Record<string, string>; out?: (text: string) => void }): Promise<number>;
  /** The step's process (so a cancel kills it); set by exec, cleared when it ends. */
  child: ChildProcess | null;
  /** Registers a post phase. */
  addPost(phase: PostPhase): void;
  /** The job's status so far. */
  status(): "success" | "failure" | "cancelled";
  /** Why the job stops, if it does (cancel, timeout, agent stop). */
  cancelled(): boolean;
  /** How deep in composite actions this step is (0: a step of the job itself); bounded by the actions runner. */
  readonly nesting: number;
  /** Sets an env variable for the later steps of the job (what a `$GITHUB_ENV` line does). */
  exportEnv(name: string, value: string): void;
  /** Puts a directory first on PATH for the later steps of the job (what a `$GITHUB_PATH` line does). */
  addPath(dir: string): void;
}

/** A problem an action reports by throwing (an expression error, a refused input): the step fails with this message (never a secret). */
export class ActionProblem extends Error {}
