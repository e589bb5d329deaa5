// Workflow files: `.svc/workflows/*.yml`, a subset of the GitHub Actions form (DECISIONS §3):
//
//   name: CI                                  (optional)
//   on: push | change | [push, change] | { push: { branches: [main, "release/**"], branches-ignore: [...] }, change: ... }
//   env: { KEY: value }                       (workflow level; job and step env override it)
//   jobs:
//     <id>:
//       name: test                            (optional; the check key, default <id>)
//       runs-on: self-hosted | [self-hosted, linux, "${{ matrix.os }}"]
//       strategy: { matrix: { node: [18, 20], include: [...], exclude: [...] } }
//       env: { ... }
//       timeout-minutes: 30                   (default 360, at most 4320; fractions allowed, at least 0.05)
//       steps: [ { name?, run, env? } ]
//
// Issue 29 adds (docs/api.md "Workflows"): `needs` (a DAG, unknown jobs and cycles refused),
// `if` on jobs and steps, job `outputs`, `concurrency`, `defaults.run`, `continue-on-error`,
// step `id`, `shell`, `working-directory`, `timeout-minutes`, `run-name`, `on.push.tags|paths`,
// `on.workflow_dispatch.inputs`, `on.schedule`, `pull_request` (an alias of `change`).
//
// Expressions (src/services/ci/expr): every `${{ }}` and `if:` in the file is parsed here, with
// the contexts its site allows (plan-29 §3.B table); a syntax error or a context used outside its
// site is an error naming file, line and column; a file with an error becomes a failed run (it
// never breaks the push). Strings whose expressions read only `matrix.*` and `github.sha | ref |
// ref_name | repository | event_name` are expanded here as before (a v1 job spec); a job whose
// steps read anything else keeps its step strings as templates for the runner (spec `v: 2`,
// with its matrix cell). Job name, runs-on and timeout are evaluated here per cell. Pure: no I/O,
// so it runs on a worker thread (`ci.parseWorkflow` in src/thread-tasks.ts) with a time limit.
//
// Bounded before and while parsing (issue 25 rows 2 and 8): the file's size, its nesting (a scan
// before the YAML parser, workflow-scan.ts), and what expansion may produce: every string a run's
// jobs carry (keys, labels, env, step names and scripts) is charged to a budget per job and per
// run, checked before a string is built, so a matrix value referenced thousands of times is
// refused at the first expansion past the budget instead of becoming 100 MB of job specs.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Node, type Pair, type YAMLMap } from "yaml";
import type { JobSpec } from "../../db/schema/index.ts";
import { globMatch } from "../../util/glob.ts";
import { CronError, CRON_MAX_CHARS, parseCron } from "./cron.ts";
import { ExprError, parseCondition, parseTemplate, templateValue, toText, type Template, type Value } from "./expr/index.ts";
import { orderJobs } from "./workflow-graph.ts";
import { filterMatches, type BranchFilter, type InputSpec, type TriggerRef, type WorkflowOn } from "./workflow-on.ts";
import { WORKFLOW_MAX_DEPTH, yamlTooDeep } from "./workflow-scan.ts";

export type { BranchFilter, InputSpec, TriggerRef, WorkflowOn };

/** Limits on hostile input (STYLE "Hostile input"); docs/api.md "Workflows" lists them. */
export const WORKFLOW_LIMITS = {
  fileBytes: 256 * 1024,
  files: 20,
  jobsPerRun: 256,
  stepsPerJob: 100,
  matrixCells: 256,
  timeoutMinutes: 4320,
  defaultTimeoutMinutes: 360,
  /** Nesting of the YAML (checked before parsing). */
  depth: WORKFLOW_MAX_DEPTH,
  /** Bytes of strings one job may carry after expansion (its key, labels, env, steps). */
  jobSpecBytes: 256 * 1024,
  /** Bytes of strings all the jobs of one run (one workflow file) may carry after expansion. */
  runSpecBytes: 1024 * 1024,
  /** A job's key (the check name): its bytes at most. */
  keyBytes: 1024,
  /** How long parsing one file may take on its thread. */
  parseMs: 3000,
  /** Entries of one job's `needs`. */
  needsPerJob: 256,
  /** `${{ }}` templates and `if:` conditions in one file. */
  expressionsPerFile: 10_000,
  /** `workflow_dispatch` inputs (GitHub's limit). */
  inputs: 25,
  /** `on.schedule` entries. */
  schedules: 10,
  /** Entries of one job's `outputs`. */
  outputsPerJob: 50,
  /** Characters of one cron text. */
  cronChars: CRON_MAX_CHARS,
  /** Characters of a concurrency group once evaluated. */
  concurrencyGroupChars: 400,
} as const;

/** The JobSpec v2 fields (plan-29 §1.4); a v1 spec has none of them and its steps are already expanded. */
export type StepSpec = JobSpec["steps"][number] & {
  id?: string;
  if?: string;
  shell?: string;
  workingDirectory?: string;
  continueOnError?: boolean | string;
  timeoutS?: number;
};
export type JobSpecV2 = Omit<JobSpec, "steps"> & {
  v?: 2;
  defaults?: { shell?: string; workingDirectory?: string };
  continueOnError?: boolean | string;
  outputs?: Record<string, string>;
  secretRefs?: string[];
  varRefs?: string[];
  matrix?: Record<string, string>;
  steps: StepSpec[];
};

/** A concurrency group: evaluated at plan time, or (reading `needs`) a template left for the release. */
export interface Concurrency {
  group: string;
  cancelInProgress: boolean | string;
  /** The group is a template to evaluate when the job is released (it reads `needs`). */
  dynamic?: boolean;
}

/** One job of a run, ready to be queued. */
export interface PlannedJob {
  key: string;
  runsOn: string[];
  hosted: boolean;
  spec: JobSpecV2;
  /** The job's id under `jobs:` (several matrix cells share it). */
  workflowJob?: string;
  /** Ids of the jobs it needs (every cell of each). */
  needs?: string[];
  /** The job's `if:` as written (evaluated at release, with needs' results). */
  condition?: string;
  concurrency?: Concurrency;
}

/** The run a workflow plans beyond its jobs (data for the trigger; part C wires it). */
export interface PlannedRun {
  name: string | null;
  /** `run-name`, evaluated (github, inputs, vars). */
  runName: string | null;
  concurrency: Concurrency | null;
  /** Job id → ids it needs (the DAG), and the ids in a dependency order. */
  graph: Record<string, string[]>;
  order: string[];
  dispatch?: InputSpec[];
  schedules?: string[];
}

/** A parsed workflow, or why it is malformed. */
export type ParsedWorkflow = { ok: true; name: string | null; on: WorkflowOn; jobs: PlannedJob[]; run: PlannedRun } | { ok: false; error: string };

/** What `${{ github.* }}` reads (and, for a dispatch, `inputs.*`; `vars.*` when the caller has them). */
export interface TriggerContext {
  sha: string;
  ref: string;
  repository: string;
  event: "push" | "change" | "workflow_dispatch" | "schedule";
  inputs?: Record<string, string | boolean>;
  vars?: Record<string, string>;
}

class WorkflowError extends Error {
  constructor(
    readonly node: { range?: [number, number, number] | null } | null | undefined,
    message: string,
    /** Offset inside the scalar's value the problem is at (an expression's or cron's offset). */
    readonly valueOffset?: number,
  ) {
    super(message);
  }
}

/** Contexts each expression site may read (plan-29 §3.B "where each expression is evaluated"). */
const SITES = {
  workflow: new Set(["github", "inputs", "vars"]),
  workflowEnv: new Set(["github", "inputs", "vars", "secrets"]),
  jobPlan: new Set(["github", "inputs", "vars", "matrix", "needs"]),
  matrix: new Set(["github", "inputs", "vars", "needs"]),
  jobIf: new Set(["github", "inputs", "vars", "needs"]),
  agent: new Set(["github", "inputs", "vars", "matrix", "strategy", "needs", "job", "runner", "env", "steps", "secrets"]),
  agentNoSecrets: new Set(["github", "inputs", "vars", "matrix", "strategy", "needs", "job", "runner", "env", "steps"]),
} as const;
type Site = keyof typeof SITES;

const LABEL_RE = /^[A-Za-z0-9._-]{1,64}$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses one workflow file; errors name `path:line:column: problem`. */
export function parseWorkflow(path: string, text: string, trigger: TriggerContext): ParsedWorkflow {
  if (Buffer.byteLength(text) > WORKFLOW_LIMITS.fileBytes)
    return { ok: false, error: `${path}: the file is larger than ${WORKFLOW_LIMITS.fileBytes / 1024} KiB` };
  const deep = yamlTooDeep(text, WORKFLOW_LIMITS.depth);
  if (deep) return { ok: false, error: `${path}:${deep.line}:${deep.col}: the file nests deeper than ${WORKFLOW_LIMITS.depth} levels` };
  const lines = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: true });
  } catch (e) {
    // Why: hostile nesting may exhaust the parser; that is the file's problem, never the trigger's.
    return { ok: false, error: `${path}: the file could not be parsed (${e instanceof Error ? e.message : String(e)})` };
  }
  const at = (offset: number | undefined) => {
    if (offset === undefined) return path;
    const p = lines.linePos(offset);
    return `${path}:${p.line}:${p.col}`;
  };
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const pos = e.linePos?.[0];
    const message = e.message.split(/ at line \d+, column \d+/)[0]!.trim();
    return { ok: false, error: `${pos ? `${path}:${pos.line}:${pos.col}` : path}: ${message}` };
  }
  try {
    return { ok: true, ...readWorkflow(doc.contents as Node | null, trigger) };
  } catch (e) {
    if (e instanceof WorkflowError) {
      const start = e.node?.range?.[0];
      const offset = start !== undefined && e.valueOffset !== undefined ? offsetInFile(text, lines, e.node as Node, e.valueOffset) : start;
      return { ok: false, error: `${at(offset)}: ${e.message}` };
    }
    // Why: a hostile document may still exhaust the stack while being read; that is the file's problem.
    if (e instanceof RangeError) return { ok: false, error: `${path}: the file could not be read (${e.message})` };
    throw e;
  }
}

/**
 * The offset in the file of `offset` inside a scalar's value: exact for plain and quoted scalars
 * written on one line without escapes, and for literal block scalars (`|`); other scalars (folded,
 * escaped, multi-line flow) point at the scalar's start (plan-29 §3.B, Decided).
 */
function offsetInFile(text: string, lines: LineCounter, node: Node, offset: number): number {
  const [start, end] = node.range as [number, number, number];
  if (!isScalar(node) || typeof node.value !== "string") return start;
  const value = node.value;
  const source = text.slice(start, end);
  switch (node.type) {
    case Scalar.PLAIN:
      return source === value ? start + offset : start;
    case Scalar.QUOTE_SINGLE:
    case Scalar.QUOTE_DOUBLE:
      return source.slice(1, -1) === value && !value.includes("\n") ? start + 1 + offset : start;
    case Scalar.BLOCK_LITERAL: {
      // The value's line k is the k-th line after the header; its column past the block's indentation.
      const before = value.slice(0, offset);
      const k = before.split("\n").length - 1;
      const col = offset - (before.lastIndexOf("\n") + 1);
      const header = lines.linePos(start).line; // 1-based
      const starts = lines.lineStarts;
      let indent = -1;
      for (let l = header; l < starts.length && indent < 0; l++) {
        const ls = starts[l]!;
        const le = l + 1 < starts.length ? starts[l + 1]! - 1 : text.length;
        const lineText = text.slice(ls, le);
        if (lineText.trim() !== "") indent = lineText.length - lineText.trimStart().length;
      }
      const lineStart = starts[header + k];
      return lineStart === undefined || indent < 0 ? start : lineStart + indent + col;
    }
    default:
      return start;
  }
}

/** The input of the `ci.parseWorkflow` thread task. */
export interface ParseWorkflowInput {
  path: string;
  text: string;
  trigger: TriggerContext;
  /** Short branch name the trigger is for: the answer says whether the workflow runs for it. */
  branch: string;
  /** A tag push: `branch` is then the short tag name. */
  tag?: boolean;
  /** Paths the push changed (null or absent: unknown, path filters match). */
  paths?: string[] | null;
}

/** What the `ci.parseWorkflow` thread task answers: the parse, and whether its `on` matches the trigger. */
export type ParseWorkflowOutput = { ok: true; matches: boolean; jobs: PlannedJob[]; run?: PlannedRun } | { ok: false; error: string };

/** The `ci.parseWorkflow` thread task: parse, then match the trigger's event and branch (pure). */
export function parseWorkflowTask(input: ParseWorkflowInput): ParseWorkflowOutput {
  const parsed = parseWorkflow(input.path, input.text, input.trigger);
  if (!parsed.ok) return parsed;
  const event = input.trigger.event;
  const matches =
    event === "workflow_dispatch"
      ? parsed.on.workflowDispatch !== undefined
      : event === "schedule"
        ? parsed.on.schedule !== undefined
        : workflowMatches(parsed.on, event, input.branch, { tag: input.tag, paths: input.paths });
  // Jobs of a workflow that does not run stay on the thread (nothing to copy back).
  return { ok: true, matches, jobs: matches ? parsed.jobs : [], run: parsed.run };
}

/** Whether a parsed workflow runs for `event` on `branch` (a short branch or, with `tag`, tag name). */
export function workflowMatches(on: WorkflowOn, event: "push" | "change", branch: string, opts: { tag?: boolean; paths?: string[] | null } = {}): boolean {
  const f = on[event];
  if (!f) return false;
  return filterMatches(f, { kind: opts.tag ? "tag" : "branch", name: branch, paths: opts.paths ?? null });
}

/** GitHub-style branch globs: `*` any run of characters but `/`, `**` anything, `?` one character (src/util/glob.ts, linear time). */
export { globMatch };

// ---- reading the document ----

function entries(node: Node | null | undefined, what: string): Pair<Node, Node | null>[] {
  if (!isMap(node)) throw new WorkflowError(node, `${what} must be a mapping`);
  return (node as YAMLMap<Node, Node | null>).items;
}

function keyOf(pair: Pair<Node, Node | null>): string {
  const k = pair.key;
  if (!isScalar(k) || (typeof k.value !== "string" && typeof k.value !== "number")) throw new WorkflowError(k, "keys must be plain strings");
  return String(k.value);
}

function scalarString(node: Node | null | undefined, what: string): string {
  if (!isScalar(node) || node.value === null || typeof node.value === "object") throw new WorkflowError(node, `${what} must be a string`);
  return String(node.value);
}

function stringList(node: Node | null | undefined, what: string): { value: string; node: Node }[] {
  if (isScalar(node)) return [{ value: scalarString(node, what), node }];
  if (!isSeq(node)) throw new WorkflowError(node, `${what} must be a string or a list of strings`);
  return node.items.map((n) => ({ value: scalarString(n as Node, `each entry of ${what}`), node: n as Node }));
}

/**
 * What the strings of a run may still take (UTF-16 code units, which bound UTF-8 bytes within a
 * factor of 3; the limits are stated in bytes and charged in units, the stricter reading for
 * ASCII). One per run; `job` is reset for each job.
 */
class Budget {
  run = WORKFLOW_LIMITS.runSpecBytes;
  job = WORKFLOW_LIMITS.jobSpecBytes;

  /** Takes `n` from the job and the run; throws naming `node` when either would go below zero. */
  charge(n: number, node: Node | null | undefined): void {
    if (n > this.job)
      throw new WorkflowError(node, `this job would carry more than ${WORKFLOW_LIMITS.jobSpecBytes / 1024} KiB of keys, labels, env and steps once expanded`);
    if (n > this.run)
      throw new WorkflowError(
        node,
        `this workflow's jobs would carry more than ${WORKFLOW_LIMITS.runSpecBytes / 1024 / 1024} MiB of keys, labels, env and steps once expanded`,
      );
    this.job -= n;
    this.run -= n;
  }
}

/** The value of one `${{ expr }}`. */
function expressionValue(expr: string, node: Node, matrix: Record<string, string>, trigger: TriggerContext): string {
  const m = /^matrix\.([A-Za-z0-9_-]+)$/.exec(expr);
  if (m) {
    const v = matrix[m[1]!];
    if (v === undefined) throw new WorkflowError(node, `unknown matrix value ${JSON.stringify(expr)}`);
    return v;
  }
  switch (expr) {
    case "github.sha":
      return trigger.sha;
    case "github.ref":
      return trigger.ref;
    case "github.ref_name":
      return trigger.ref.replace(/^refs\/(heads|tags)\//, "");
    case "github.repository":
      return trigger.repository;
    case "github.event_name":
      return trigger.event;
  }
  throw new WorkflowError(
    node,
    `unsupported expression \${{ ${expr.slice(0, 100)} }} (matrix.*, github.sha, github.ref, github.ref_name, github.repository, github.event_name)`,
  );
}

/**
 * Expands `${{ … }}` in a string (an expression runs to the first `}`, which must be doubled),
 * charging the result to `budget` before it is built. One pass: each search starts where the
 * last ended, and the next `}` is found once for all the openings before it.
 */
function expand(text: string, node: Node, matrix: Record<string, string>, trigger: TriggerContext, budget: Budget): string {
  const parts: string[] = [];
  let size = 0;
  let from = 0;
  let scan = 0;
  let brace = -2;
  for (;;) {
    const open = text.indexOf("${{", scan);
    if (open < 0) break;
    if (brace < open + 3) brace = text.indexOf("}", open + 3);
    if (brace < 0) break;
    if (text.charCodeAt(brace + 1) !== 0x7d) {
      scan = open + 1;
      continue;
    }
    const value = expressionValue(text.slice(open + 3, brace).trim(), node, matrix, trigger);
    parts.push(text.slice(from, open), value);
    size += open - from + value.length;
    // Why here: a value referenced thousands of times is refused before the string exists.
    if (size > budget.job || size > budget.run) budget.charge(size, node);
    from = scan = brace + 2;
  }
  if (from === 0) {
    budget.charge(text.length, node);
    return text;
  }
  parts.push(text.slice(from));
  size += text.length - from;
  budget.charge(size, node);
  return parts.join("");
}

/** A string taken as it is (no expressions), charged to the budget. */
function literal(text: string, node: Node | null | undefined, budget: Budget): string {
  budget.charge(text.length, node);
  return text;
}

function scalarText(node: Node | null | undefined, what: string): string {
  if (!isScalar(node) || node.value === null || typeof node.value === "object") throw new WorkflowError(node, `${what} must be a string, number or boolean`);
  return String(node.value);
}

/** The matrix cells of a job (one empty cell without a matrix). */
function readMatrix(strategy: Node | null | undefined): { cells: Record<string, string>[]; order: string[] } {
  if (strategy === undefined || strategy === null) return { cells: [{}], order: [] };
  let matrixNode: Node | null | undefined;
  for (const pair of entries(strategy, "strategy")) {
    const k = keyOf(pair);
    if (k === "matrix") matrixNode = pair.value;
    else if (k === "fail-fast" || k === "max-parallel") continue;
    else throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} under strategy (expected matrix)`);
  }
  if (matrixNode === undefined) return { cells: [{}], order: [] };
  const dims: { name: string; values: string[] }[] = [];
  let include: Record<string, string>[] = [];
  let exclude: Record<string, string>[] = [];
  const cellList = (node: Node | null | undefined, what: string) => {
    if (!isSeq(node)) throw new WorkflowError(node, `${what} must be a list of mappings`);
    return node.items.map((item) => {
      const cell: Record<string, string> = {};
      for (const p of entries(item as Node, `each entry of ${what}`)) cell[keyOf(p)] = scalarText(p.value, `${what} values`);
      return cell;
    });
  };
  for (const pair of entries(matrixNode, "strategy.matrix")) {
    const k = keyOf(pair);
    if (k === "include") include = cellList(pair.value, "matrix.include");
    else if (k === "exclude") exclude = cellList(pair.value, "matrix.exclude");
    else {
      if (!isSeq(pair.value) || pair.value.items.length === 0)
        throw new WorkflowError(pair.value ?? (pair.key as Node), `matrix.${k} must be a non-empty list`);
      dims.push({ name: k, values: pair.value.items.map((n) => scalarText(n as Node, `matrix.${k} values`)) });
    }
  }
  let cells: Record<string, string>[] = dims.length ? [{}] : [];
  for (const d of dims) {
    const next: Record<string, string>[] = [];
    for (const c of cells) for (const v of d.values) next.push({ ...c, [d.name]: v });
    cells = next;
    if (cells.length > WORKFLOW_LIMITS.matrixCells) throw new WorkflowError(matrixNode, `the matrix has more than ${WORKFLOW_LIMITS.matrixCells} cells`);
  }
  cells = cells.filter((c) => !exclude.some((x) => Object.entries(x).every(([k, v]) => c[k] === v)));
  const order = dims.map((d) => d.name);
  for (const inc of include) {
    for (const k of Object.keys(inc)) if (!order.includes(k)) order.push(k);
    cells.push(inc);
  }
  if (cells.length > WORKFLOW_LIMITS.matrixCells) throw new WorkflowError(matrixNode, `the matrix has more than ${WORKFLOW_LIMITS.matrixCells} cells`);
  if (!cells.length) throw new WorkflowError(matrixNode, "the matrix has no cells left");
  return { cells, order };
}

/** Per-file reading state: the trigger, the budget, and each scalar's parsed template (parsed once, reused by every matrix cell). */
class Reader {
  readonly budget = new Budget();
  private expressions = 0;
  private readonly templates = new WeakMap<Node, Template | null>();
  readonly github: Record<string, Value>;
  readonly inputs: Record<string, Value>;
  readonly vars: Record<string, Value>;

  constructor(readonly trigger: TriggerContext) {
    const refName = trigger.ref.replace(/^refs\/(heads|tags)\//, "");
    this.github = {
      sha: trigger.sha,
      ref: trigger.ref,
      ref_name: refName,
      ref_type: trigger.ref.startsWith("refs/tags/") ? "tag" : "branch",
      repository: trigger.repository,
      repository_owner: trigger.repository.split("/")[0] ?? "",
      event_name: trigger.event,
    };
    this.inputs = { ...(trigger.inputs ?? {}) };
    this.vars = { ...(trigger.vars ?? {}) };
  }

  private count(node: Node): void {
    if (++this.expressions > WORKFLOW_LIMITS.expressionsPerFile)
      throw new WorkflowError(node, `more than ${WORKFLOW_LIMITS.expressionsPerFile} expressions in one file`);
  }

  /** The scalar's template checked for `site` (null: no expression in it). Parsed once per node. */
  template(node: Node, text: string, site: Site): Template | null {
    const cached = this.templates.get(node);
    if (cached !== undefined) return cached;
    let t: Template | null = null;
    if (text.includes("${{")) {
      this.count(node);
      try {
        t = parseTemplate(text, { contexts: SITES[site] });
      } catch (e) {
        if (e instanceof ExprError) throw new WorkflowError(node, e.message, e.offset);
        throw e;
      }
    }
    this.templates.set(node, t);
    return t;
  }

  /** An `if:` checked for `site`; answers its text. */
  condition(node: Node | null | undefined, site: Site, what: string): string {
    if (isScalar(node) && typeof node.value === "boolean") return String(node.value);
    const text = scalarString(node, what);
    this.count(node as Node);
    try {
      parseCondition(text, { contexts: SITES[site] });
    } catch (e) {
      if (e instanceof ExprError) throw new WorkflowError(node, e.message, e.offset);
      throw e;
    }
    this.budget.charge(text.length, node);
    return text;
  }

  /** A plan-time value (job name, runs-on, timeout, concurrency, run-name) for one matrix cell. */
  value(node: Node, text: string, site: Site, cell: Record<string, string>): Value {
    const t = this.template(node, text, site);
    if (!t) return text;
    if (t.contexts.has("needs"))
      throw new WorkflowError(node, "a value read from needs here is evaluated when the job is released, which this server does not do yet");
    if (isV1(t)) return expand(text, node, cell, this.trigger, this.budget);
    let v: Value;
    try {
      v = templateValue(t, { contexts: { github: this.github, matrix: cell, inputs: this.inputs, vars: this.vars } });
    } catch (e) {
      if (e instanceof ExprError) throw new WorkflowError(node, e.message, e.offset);
      throw e;
    }
    if (typeof v === "string") this.budget.charge(v.length, node);
    return v;
  }
}

const V1_EXPR = /^\s*(matrix\.[A-Za-z0-9_-]+|github\.(sha|ref|ref_name|repository|event_name))\s*$/;

/** Whether every expression of a template is one the v1 planner expands by itself (matrix.*, five github fields). */
function isV1(t: Template): boolean {
  return t.parts.every((p) => typeof p === "string" || V1_EXPR.test(p.expr.source));
}

/** A template text kept for the runner (v2), checked and charged as written. */
function kept(r: Reader, node: Node, text: string, site: Site): string {
  r.template(node, text, site);
  r.budget.charge(text.length, node);
  return text;
}

const ID_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,99}$/;
/** An action input's name (`with:` keys): GitHub allows letters, digits, `-` and `_`. */
const INPUT_NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,99}$/;
const SHELLS: ReadonlySet<string> = new Set(["sh", "bash"]);

function isNull(node: Node | null | undefined): boolean {
  return node === null || node === undefined || (isScalar(node) && node.value === null);
}

function readWorkflow(root: Node | null, trigger: TriggerContext): { name: string | null; on: WorkflowOn; jobs: PlannedJob[]; run: PlannedRun } {
  if (root === null) throw new WorkflowError(null, "the file is empty");
  const r = new Reader(trigger);
  let name: string | null = null;
  let runName: { node: Node; text: string } | null = null;
  let on: WorkflowOn | null = null;
  let envNode: Node | null | undefined;
  let defaults: { shell?: string; workingDirectory?: string; v2?: boolean } = {};
  let concurrencyNode: Node | null | undefined;
  let jobsNode: Node | null | undefined;
  for (const pair of entries(root, "a workflow")) {
    const key = keyOf(pair);
    if (key === "name") name = scalarString(pair.value, "name");
    else if (key === "run-name") runName = { node: pair.value as Node, text: scalarString(pair.value, "run-name") };
    else if (key === "on") on = readOn(pair.value, r);
    else if (key === "env") envNode = pair.value;
    else if (key === "defaults") defaults = readDefaults(pair.value, "defaults", r);
    else if (key === "concurrency") concurrencyNode = pair.value;
    else if (key === "permissions") continue;
    else if (key === "jobs") jobsNode = pair.value ?? null;
    else
      throw new WorkflowError(
        pair.key as Node,
        `unknown key ${JSON.stringify(key)} (expected name, run-name, on, env, defaults, concurrency, permissions, jobs)`,
      );
  }
  if (!on) throw new WorkflowError(root, "missing `on` (push, change, or both)");
  if (jobsNode === undefined) throw new WorkflowError(root, "missing `jobs`");
  const env = readEnv(envNode, "env", null, r, "workflowEnv");
  // A workflow env that reads what only the runner knows (secrets, vars…) makes every job a v2 job.
  if (!envIsV1(envNode, r, "workflowEnv", "env")) defaults = { ...defaults, v2: true };
  const runNameValue = runName ? toText(r.value(runName.node, runName.text, "workflow", {})) : null;
  const concurrency = concurrencyNode === undefined ? null : readConcurrency(concurrencyNode, "concurrency", r, "workflow", {});
  const jobs: PlannedJob[] = [];
  const keys = new Set<string>();
  const graphJobs: { id: string; at: Node; needs: { id: string; at: Node }[] }[] = [];
  for (const pair of entries(jobsNode, "jobs")) {
    const id = keyOf(pair);
    const read = readJob(id, pair.value, env, defaults, r);
    graphJobs.push({ id, at: read.needsNode ?? (pair.key as Node), needs: read.needs });
    for (const job of read.jobs) {
      if (keys.has(job.key.toLowerCase())) throw new WorkflowError(pair.key as Node, `two jobs have the key ${JSON.stringify(job.key)}`);
      keys.add(job.key.toLowerCase());
      jobs.push(job);
      if (jobs.length > WORKFLOW_LIMITS.jobsPerRun) throw new WorkflowError(pair.key as Node, `more than ${WORKFLOW_LIMITS.jobsPerRun} jobs`);
    }
  }
  if (!jobs.length) throw new WorkflowError(jobsNode, "`jobs` is empty");
  const ordered = orderJobs(graphJobs);
  if (!ordered.ok) throw new WorkflowError(ordered.at, ordered.message);
  const graph: Record<string, string[]> = {};
  for (const g of graphJobs) graph[g.id] = [...new Set(g.needs.map((n) => n.id))];
  const run: PlannedRun = { name, runName: runNameValue, concurrency, graph, order: ordered.order };
  if (on.workflowDispatch) run.dispatch = on.workflowDispatch.inputs;
  if (on.schedule) run.schedules = on.schedule;
  return { name, on, jobs, run };
}

const FIRING: ReadonlySet<string> = new Set(["push", "change", "pull_request", "workflow_dispatch", "schedule"]);
/** GitHub's other events: accepted (files written for GitHub parse), never fired. */
const OTHER_EVENTS: ReadonlySet<string> = new Set([
  "branch_protection_rule",
  "check_run",
  "check_suite",
  "create",
  "delete",
  "deployment",
  "deployment_status",
  "discussion",
  "discussion_comment",
  "fork",
  "gollum",
  "issue_comment",
  "issues",
  "label",
  "merge_group",
  "milestone",
  "page_build",
  "public",
  "pull_request_review",
  "pull_request_review_comment",
  "pull_request_target",
  "registry_package",
  "release",
  "repository_dispatch",
  "status",
  "watch",
  "workflow_call",
  "workflow_run",
]);
const EVENTS_HINT = "expected push, change, pull_request, workflow_dispatch, schedule or another GitHub event";

function eventCheck(name: string, node: Node): void {
  if (!FIRING.has(name) && !OTHER_EVENTS.has(name)) throw new WorkflowError(node, `unsupported event ${JSON.stringify(name)} (${EVENTS_HINT})`);
}

function readOn(node: Node | null | undefined, r: Reader): WorkflowOn {
  const out: WorkflowOn = {};
  const setEvent = (event: string, filter: BranchFilter | null, valueNode: Node | null | undefined) => {
    if (event === "push") out.push = filter ?? { branches: null, ignore: null };
    else if (event === "change" || event === "pull_request") out.change = filter ?? { branches: null, ignore: null };
    else if (event === "workflow_dispatch") out.workflowDispatch = { inputs: readDispatch(valueNode) };
    else if (event === "schedule") out.schedule = readSchedules(valueNode);
    else (out.other ??= []).push(event);
  };
  if (isScalar(node) || isSeq(node)) {
    for (const e of stringList(node, "on")) {
      eventCheck(e.value, e.node);
      if (e.value === "schedule") throw new WorkflowError(e.node, "on.schedule needs a list of { cron } entries");
      setEvent(e.value, null, null);
    }
    return out;
  }
  for (const pair of entries(node, "on")) {
    const event = keyOf(pair);
    eventCheck(event, pair.key as Node);
    const v = pair.value;
    if (event === "push" || event === "change" || event === "pull_request") {
      const filter: BranchFilter = { branches: null, ignore: null };
      const allowed =
        event === "push"
          ? ["branches", "branches-ignore", "tags", "tags-ignore", "paths", "paths-ignore"]
          : ["branches", "branches-ignore", "paths", "paths-ignore", "types"];
      if (!isNull(v)) {
        for (const f of entries(v, `on.${event}`)) {
          const k = keyOf(f);
          if (!allowed.includes(k))
            throw new WorkflowError(f.key as Node, `unknown key ${JSON.stringify(k)} under on.${event} (expected ${allowed.join(", ")})`);
          if (k === "types") continue;
          const list = stringList(f.value, `on.${event}.${k}`).map((e) => e.value);
          if (k === "branches") filter.branches = list;
          else if (k === "branches-ignore") filter.ignore = list;
          else if (k === "tags") filter.tags = list;
          else if (k === "tags-ignore") filter.tagsIgnore = list;
          else if (k === "paths") filter.paths = list;
          else filter.pathsIgnore = list;
        }
      }
      setEvent(event, filter, v);
    } else setEvent(event, null, v);
  }
  return out;
}

const INPUT_TYPES: ReadonlySet<string> = new Set(["string", "boolean", "choice"]);

function readDispatch(node: Node | null | undefined): InputSpec[] {
  const out: InputSpec[] = [];
  if (isNull(node)) return out;
  for (const pair of entries(node, "on.workflow_dispatch")) {
    const k = keyOf(pair);
    if (k !== "inputs") throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} under on.workflow_dispatch (expected inputs)`);
    if (isNull(pair.value)) continue;
    for (const ip of entries(pair.value, "on.workflow_dispatch.inputs")) {
      const name = keyOf(ip);
      if (!ID_RE.test(name)) throw new WorkflowError(ip.key as Node, `invalid input name ${JSON.stringify(name)}`);
      if (out.length >= WORKFLOW_LIMITS.inputs) throw new WorkflowError(ip.key as Node, `more than ${WORKFLOW_LIMITS.inputs} inputs`);
      const what = `on.workflow_dispatch.inputs.${name}`;
      const spec: InputSpec = { name, description: null, required: false, type: "string", default: null, options: null };
      let defaultNode: Node | null | undefined;
      let optionsNode: Node | null | undefined;
      if (!isNull(ip.value)) {
        for (const f of entries(ip.value, what)) {
          const fk = keyOf(f);
          const v = f.value;
          if (fk === "description") spec.description = scalarText(v, `${what}.description`);
          else if (fk === "required") {
            if (!isScalar(v) || typeof v.value !== "boolean") throw new WorkflowError(v, `${what}.required must be true or false`);
            spec.required = v.value;
          } else if (fk === "type") {
            const t = scalarString(v, `${what}.type`);
            if (!INPUT_TYPES.has(t)) throw new WorkflowError(v, `${what}.type must be string, boolean or choice, not ${JSON.stringify(t)}`);
            spec.type = t as InputSpec["type"];
          } else if (fk === "default") defaultNode = v;
          else if (fk === "options") optionsNode = v;
          else if (fk === "deprecationMessage") continue;
          else throw new WorkflowError(f.key as Node, `unknown key ${JSON.stringify(fk)} in ${what} (expected description, required, type, default, options)`);
        }
      }
      if (optionsNode !== undefined) {
        if (spec.type !== "choice") throw new WorkflowError(optionsNode, `${what}.options is only for type: choice`);
        if (!isSeq(optionsNode) || optionsNode.items.length === 0) throw new WorkflowError(optionsNode, `${what}.options must be a non-empty list`);
        spec.options = optionsNode.items.map((n) => scalarText(n as Node, `${what}.options entries`));
      } else if (spec.type === "choice") throw new WorkflowError(ip.key as Node, `${what} is a choice without options`);
      if (defaultNode !== undefined && !isNull(defaultNode)) {
        if (spec.type === "boolean") {
          if (!isScalar(defaultNode) || typeof defaultNode.value !== "boolean") throw new WorkflowError(defaultNode, `${what}.default must be true or false`);
          spec.default = defaultNode.value;
        } else {
          const d = scalarText(defaultNode, `${what}.default`);
          if (spec.options && !spec.options.includes(d)) throw new WorkflowError(defaultNode, `${what}.default ${JSON.stringify(d)} is not one of its options`);
          spec.default = d;
        }
      }
      out.push(spec);
    }
  }
  return out;
}

function readSchedules(node: Node | null | undefined): string[] {
  if (!isSeq(node) || node.items.length === 0) throw new WorkflowError(node, "on.schedule must be a non-empty list of { cron } entries");
  if (node.items.length > WORKFLOW_LIMITS.schedules) throw new WorkflowError(node, `more than ${WORKFLOW_LIMITS.schedules} schedules`);
  return node.items.map((item) => {
    let cron: string | null = null;
    for (const pair of entries(item as Node, "each entry of on.schedule")) {
      const k = keyOf(pair);
      if (k !== "cron") throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} in on.schedule (expected cron)`);
      cron = scalarString(pair.value, "on.schedule.cron");
      try {
        parseCron(cron);
      } catch (e) {
        if (e instanceof CronError) throw new WorkflowError(pair.value as Node, e.message, e.offset);
        throw e;
      }
    }
    if (cron === null) throw new WorkflowError(item as Node, "an on.schedule entry has no cron");
    return cron;
  });
}

function readDefaults(node: Node | null | undefined, what: string, r: Reader): { shell?: string; workingDirectory?: string } {
  const out: { shell?: string; workingDirectory?: string } = {};
  if (isNull(node)) return out;
  for (const pair of entries(node, what)) {
    const k = keyOf(pair);
    if (k !== "run") throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} under ${what} (expected run)`);
    if (isNull(pair.value)) continue;
    for (const f of entries(pair.value, `${what}.run`)) {
      const fk = keyOf(f);
      if (fk === "shell") out.shell = readShell(f.value, `${what}.run.shell`);
      else if (fk === "working-directory") out.workingDirectory = kept(r, f.value as Node, scalarString(f.value, `${what}.run.working-directory`), "agent");
      else throw new WorkflowError(f.key as Node, `unknown key ${JSON.stringify(fk)} under ${what}.run (expected shell, working-directory)`);
    }
  }
  return out;
}

function readShell(node: Node | null | undefined, what: string): string {
  const v = scalarString(node, what);
  if (!SHELLS.has(v)) throw new WorkflowError(node, `${what} must be sh or bash, not ${JSON.stringify(v.slice(0, 100))}`);
  return v;
}

/** `concurrency:` as a group string or `{ group, cancel-in-progress }`, evaluated for one cell (or kept when it reads needs). */
function readConcurrency(node: Node | null | undefined, what: string, r: Reader, site: Site, cell: Record<string, string>): Concurrency {
  let groupNode: Node | null | undefined = node;
  let cancelNode: Node | null | undefined;
  if (isMap(node)) {
    groupNode = undefined;
    for (const pair of entries(node, what)) {
      const k = keyOf(pair);
      if (k === "group") groupNode = pair.value;
      else if (k === "cancel-in-progress") cancelNode = pair.value;
      else throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} under ${what} (expected group, cancel-in-progress)`);
    }
    if (groupNode === undefined) throw new WorkflowError(node, `${what} has no group`);
  }
  const text = scalarText(groupNode, `${what}.group`);
  const t = r.template(groupNode as Node, text, site);
  let out: Concurrency;
  if (t?.contexts.has("needs")) out = { group: literal(text, groupNode, r.budget), cancelInProgress: false, dynamic: true };
  else out = { group: toText(r.value(groupNode as Node, text, site, cell)), cancelInProgress: false };
  if (out.group.length > WORKFLOW_LIMITS.concurrencyGroupChars)
    throw new WorkflowError(groupNode, `the concurrency group is longer than ${WORKFLOW_LIMITS.concurrencyGroupChars} characters`);
  if (out.group === "") throw new WorkflowError(groupNode, "the concurrency group is empty");
  if (cancelNode !== undefined) {
    if (isScalar(cancelNode) && typeof cancelNode.value === "boolean") out.cancelInProgress = cancelNode.value;
    else {
      const c = scalarString(cancelNode, `${what}.cancel-in-progress`);
      const ct = r.template(cancelNode as Node, c, site);
      if (!ct) throw new WorkflowError(cancelNode, `${what}.cancel-in-progress must be true, false or an expression`);
      if (ct.contexts.has("needs")) out.cancelInProgress = literal(c, cancelNode, r.budget);
      else {
        const v = r.value(cancelNode as Node, c, site, cell);
        out.cancelInProgress = v === true || v === "true";
      }
    }
  }
  return out;
}

function readEnv(
  node: Node | null | undefined,
  what: string,
  expansion: { matrix: Record<string, string>; trigger: TriggerContext; budget: Budget } | null,
  r: Reader,
  site: Site,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (isNull(node)) return out;
  for (const pair of entries(node, what)) {
    const k = keyOf(pair);
    if (!ENV_NAME_RE.test(k)) throw new WorkflowError(pair.key as Node, `invalid environment variable name ${JSON.stringify(k)}`);
    const v = pair.value;
    if (!isScalar(v) || typeof v.value === "object") throw new WorkflowError(v ?? (pair.key as Node), `${what}.${k} must be a string, number or boolean`);
    const text = String(v.value ?? "");
    const t = r.template(v, text, site);
    if (expansion && (!t || isV1(t))) {
      expansion.budget.charge(k.length, pair.key as Node);
      out[k] = expand(text, v, expansion.matrix, expansion.trigger, expansion.budget);
    } else out[k] = text;
  }
  return out;
}

/** Whether an env mapping's templates are all v1 (expandable here). */
function envIsV1(node: Node | null | undefined, r: Reader, site: Site, what: string): boolean {
  if (isNull(node)) return true;
  for (const pair of entries(node, what)) {
    const v = pair.value;
    if (!isScalar(v) || typeof v.value === "object") continue;
    const t = r.template(v, String(v.value ?? ""), site);
    if (t && !isV1(t)) return false;
  }
  return true;
}

/** A step as read once (before matrix cells). */
interface RawStep {
  node: Node;
  what: string;
  index: number;
  name?: { node: Node; text: string };
  /** A `run` step's script, or (absent) a `uses` step. */
  run?: { node: Node; text: string };
  uses?: string;
  with?: Record<string, string>;
  envNode?: Node | null;
  id?: string;
  if?: string;
  shell?: string;
  workingDirectory?: string;
  continueOnError?: boolean | string;
  timeout?: { node: Node; text: string };
  v2: boolean;
}

function readStepRaw(node: Node, what: string, index: number, r: Reader): RawStep {
  let name: RawStep["name"];
  let run: RawStep["run"] | undefined;
  let usesNode: Node | undefined;
  let withNode: Pair<Node, Node | null> | undefined;
  const step: Partial<RawStep> = { node, what, index, v2: false };
  for (const pair of entries(node, what)) {
    const k = keyOf(pair);
    const v = pair.value as Node;
    if (k === "name") name = { node: v, text: scalarString(v, `${what}.name`) };
    else if (k === "run") run = { node: v, text: scalarString(v, `${what}.run`) };
    else if (k === "env") step.envNode = v;
    else if (k === "id") {
      const id = scalarString(v, `${what}.id`);
      if (!ID_RE.test(id)) throw new WorkflowError(v, `invalid step id ${JSON.stringify(id.slice(0, 100))}`);
      step.id = id;
    } else if (k === "if") step.if = r.condition(v, "agentNoSecrets", `${what}.if`);
    else if (k === "shell") step.shell = readShell(v, `${what}.shell`);
    else if (k === "working-directory") step.workingDirectory = kept(r, v, scalarString(v, `${what}.working-directory`), "agent");
    else if (k === "continue-on-error") step.continueOnError = readBoolOrExpr(v, `${what}.continue-on-error`, r);
    else if (k === "timeout-minutes") step.timeout = { node: v, text: scalarText(v, `${what}.timeout-minutes`) };
    else if (k === "uses") {
      usesNode = v;
      step.uses = readUses(v, `${what}.uses`);
    } else if (k === "with") withNode = pair;
    else
      throw new WorkflowError(
        pair.key as Node,
        `unknown key ${JSON.stringify(k)} in a step (expected id, name, if, run, uses, with, env, shell, working-directory, continue-on-error, timeout-minutes)`,
      );
  }
  if (run !== undefined && usesNode !== undefined) throw new WorkflowError(usesNode, `${what} has both run and uses; a step has one of them`);
  if (run === undefined && usesNode === undefined) throw new WorkflowError(node, `${what} has no run (or uses)`);
  if (withNode !== undefined) {
    if (usesNode === undefined) throw new WorkflowError(withNode.key as Node, `${what}.with goes with uses, and this step has none`);
    step.with = readWith(withNode.value, `${what}.with`, r);
  }
  if (usesNode !== undefined && (step.shell !== undefined || step.workingDirectory !== undefined))
    throw new WorkflowError(usesNode, `${what}: shell and working-directory go with run, not uses`);
  step.name = name;
  step.run = run;
  const runT = run ? r.template(run.node, run.text, "agent") : null;
  const nameT = name ? r.template(name.node, name.text, "agent") : null;
  step.v2 =
    step.uses !== undefined ||
    step.id !== undefined ||
    step.if !== undefined ||
    step.shell !== undefined ||
    step.workingDirectory !== undefined ||
    step.continueOnError !== undefined ||
    step.timeout !== undefined ||
    (runT !== null && !isV1(runT)) ||
    (nameT !== null && !isV1(nameT)) ||
    !envIsV1(step.envNode, r, "agent", `${what}.env`);
  return step as RawStep;
}

function readBoolOrExpr(node: Node | null | undefined, what: string, r: Reader): boolean | string {
  if (isScalar(node) && typeof node.value === "boolean") return node.value;
  const text = scalarString(node, what);
  if (!r.template(node as Node, text, "agent")) throw new WorkflowError(node, `${what} must be true, false or an expression`);
  r.budget.charge(text.length, node);
  return text;
}

/** Longest `uses:` reference accepted (characters). */
const USES_MAX = 400;
/** `owner/repo[/path]@ref` (GitHub's names: owner letters, digits and `-`; repo also `.` and `_`). */
const USES_REMOTE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.\-/]+)?@[A-Za-z0-9_.\-/+]+$/;
/** `./path` (an action in the repository itself). */
const USES_LOCAL_RE = /^\.\/[A-Za-z0-9_.\-/]*$/;

/**
 * A step's `uses:`: an action in the repository (`./path`) or on GitHub (`owner/repo[/path]@ref`),
 * kept as written for the runner. Docker actions (`docker://image`) are refused here: they need a
 * container runtime the runner does not have.
 */
function readUses(node: Node | null | undefined, what: string): string {
  const v = scalarString(node, what);
  if (v.startsWith("docker://")) throw new WorkflowError(node, `docker actions (${JSON.stringify(v.slice(0, 100))}) are not supported`);
  if (v.length > USES_MAX || !(USES_LOCAL_RE.test(v) || USES_REMOTE_RE.test(v)) || v.includes("/../") || v.includes("//"))
    throw new WorkflowError(node, `invalid action reference ${JSON.stringify(v.slice(0, 100))} (expected ./path or owner/repo[/path]@ref)`);
  return v;
}

/** A `uses` step's `with:` inputs: scalars as GitHub stringifies them (true, 3, ""), templates kept for the runner (charged per job by stepOf). */
function readWith(node: Node | null | undefined, what: string, r: Reader): Record<string, string> {
  const out: Record<string, string> = {};
  if (isNull(node)) return out;
  for (const pair of entries(node, what)) {
    const k = keyOf(pair);
    if (!INPUT_NAME_RE.test(k)) throw new WorkflowError(pair.key as Node, `invalid input name ${JSON.stringify(k.slice(0, 100))} in ${what}`);
    const v = pair.value;
    if (!isNull(v) && (!isScalar(v) || typeof v.value === "object"))
      throw new WorkflowError(v ?? (pair.key as Node), `${what}.${k} must be a string, number or boolean`);
    const text = isNull(v) ? "" : String((v as Scalar).value);
    if (!isNull(v)) r.template(v as Node, text, "agent");
    out[k] = text;
  }
  return out;
}

/** timeout-minutes from a number or a plan-time expression. */
function minutesOf(r: Reader, t: { node: Node; text: string }, cell: Record<string, string>, what: string): number {
  const v = isScalar(t.node) && typeof t.node.value === "number" ? t.node.value : Number(r.value(t.node, t.text, "jobPlan", cell));
  if (!(v >= 0.05) || v > WORKFLOW_LIMITS.timeoutMinutes)
    throw new WorkflowError(t.node, `${what} must be a number from 0.05 to ${WORKFLOW_LIMITS.timeoutMinutes}`);
  return v;
}

const JOB_KEYS = "name, needs, if, runs-on, strategy, env, defaults, outputs, timeout-minutes, continue-on-error, concurrency, permissions, environment, steps";

function readJob(
  id: string,
  node: Node | null | undefined,
  workflowEnv: Record<string, string>,
  workflowDefaults: { shell?: string; workingDirectory?: string; v2?: boolean },
  r: Reader,
): { jobs: PlannedJob[]; needs: { id: string; at: Node }[]; needsNode: Node | null } {
  if (!ID_RE.test(id)) throw new WorkflowError(node, `invalid job id ${JSON.stringify(id)}`);
  const trigger = r.trigger;
  const budget = r.budget;
  let name: { text: string; node: Node } | null = null;
  let runsOn: Node | null | undefined;
  let strategy: Node | null | undefined;
  let envNode: Node | null | undefined;
  let timeout: { node: Node; text: string } | null = null;
  let stepsNode: Node | null | undefined;
  let needs: { id: string; at: Node }[] = [];
  let needsNode: Node | null = null;
  let condition: string | undefined;
  let outputs: Record<string, string> | undefined;
  let continueOnError: boolean | string | undefined;
  let concurrencyNode: Node | null | undefined;
  let defaults: { shell?: string; workingDirectory?: string } | undefined;
  for (const pair of entries(node, `jobs.${id}`)) {
    const k = keyOf(pair);
    const v = pair.value as Node;
    if (k === "name") name = { text: scalarString(v, `jobs.${id}.name`), node: v };
    else if (k === "runs-on") runsOn = v;
    else if (k === "strategy") strategy = v;
    else if (k === "env") envNode = v;
    else if (k === "steps") stepsNode = v;
    else if (k === "timeout-minutes") {
      if (isScalar(v) && typeof v.value === "number") timeout = { node: v, text: String(v.value) };
      else if (isScalar(v) && typeof v.value === "string" && v.value.includes("${{")) timeout = { node: v, text: v.value };
      else throw new WorkflowError(v, `timeout-minutes must be a number from 0.05 to ${WORKFLOW_LIMITS.timeoutMinutes}`);
      if (typeof (v as Scalar).value === "number") minutesOf(r, timeout, {}, "timeout-minutes");
    } else if (k === "needs") {
      needsNode = v;
      needs = stringList(v, `jobs.${id}.needs`).map((e) => ({ id: e.value, at: e.node }));
      if (needs.length > WORKFLOW_LIMITS.needsPerJob) throw new WorkflowError(v, `jobs.${id}.needs names more than ${WORKFLOW_LIMITS.needsPerJob} jobs`);
    } else if (k === "if") condition = r.condition(v, "jobIf", `jobs.${id}.if`);
    else if (k === "outputs") {
      outputs = {};
      for (const o of entries(v, `jobs.${id}.outputs`)) {
        const on = keyOf(o);
        if (!ID_RE.test(on)) throw new WorkflowError(o.key as Node, `invalid output name ${JSON.stringify(on)}`);
        if (Object.keys(outputs).length >= WORKFLOW_LIMITS.outputsPerJob)
          throw new WorkflowError(o.key as Node, `more than ${WORKFLOW_LIMITS.outputsPerJob} outputs`);
        outputs[on] = kept(r, o.value as Node, scalarText(o.value, `jobs.${id}.outputs.${on}`), "agentNoSecrets");
      }
    } else if (k === "continue-on-error") continueOnError = readBoolOrExpr(v, `jobs.${id}.continue-on-error`, r);
    else if (k === "concurrency") concurrencyNode = v;
    else if (k === "defaults") defaults = readDefaults(v, `jobs.${id}.defaults`, r);
    else if (k === "permissions" || k === "environment") continue;
    else if (k === "container" || k === "services") throw new WorkflowError(pair.key as Node, "container jobs are not supported");
    else throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} in jobs.${id} (expected ${JOB_KEYS})`);
  }
  if (runsOn === undefined) throw new WorkflowError(node, `jobs.${id} is missing runs-on`);
  if (!isSeq(stepsNode) || stepsNode.items.length === 0) throw new WorkflowError(stepsNode ?? node, `jobs.${id}.steps must be a non-empty list`);
  if (stepsNode.items.length > WORKFLOW_LIMITS.stepsPerJob) throw new WorkflowError(stepsNode, `more than ${WORKFLOW_LIMITS.stepsPerJob} steps`);
  const raw = stepsNode.items.map((s, i) => readStepRaw(s as Node, `jobs.${id}.steps[${i}]`, i, r));
  const stepIds = new Set<string>();
  for (const s of raw) {
    if (s.id === undefined) continue;
    if (stepIds.has(s.id)) throw new WorkflowError(s.node, `two steps of jobs.${id} have the id ${JSON.stringify(s.id)}`);
    stepIds.add(s.id);
  }
  const { v2: workflowV2, ...workflowRun } = workflowDefaults;
  const mergedDefaults = { ...workflowRun, ...defaults };
  const v2 =
    workflowV2 === true ||
    raw.some((s) => s.v2) ||
    outputs !== undefined ||
    continueOnError !== undefined ||
    mergedDefaults.shell !== undefined ||
    mergedDefaults.workingDirectory !== undefined ||
    !envIsV1(envNode, r, "agent", `jobs.${id}.env`);
  const runsOnList = stringList(runsOn, `jobs.${id}.runs-on`);
  const { cells, order } = readMatrix(strategy);
  const workflowEnvSize = Object.entries(workflowEnv).reduce((n, [k, v]) => n + k.length + v.length, 0);
  const needIds = [...new Set(needs.map((n) => n.id))];
  const jobs = cells.map((cell): PlannedJob => {
    budget.job = WORKFLOW_LIMITS.jobSpecBytes;
    const base = name ? toText(r.value(name.node, name.text, "jobPlan", cell)) : literal(id, node, budget);
    const shown = order.filter((k) => cell[k] !== undefined).map((k) => `${k}=${cell[k]}`);
    const named = name && /\$\{\{\s*matrix\./.test(name.text);
    if (shown.length && !named)
      budget.charge(
        shown.reduce((n, s) => n + s.length + 2, 3),
        strategy,
      );
    const key = shown.length && !named ? `${base} (${shown.join(", ")})` : base;
    if (Buffer.byteLength(key) > WORKFLOW_LIMITS.keyBytes)
      throw new WorkflowError(
        name?.node ?? node,
        `the job key ${JSON.stringify(key.slice(0, 60) + "…")} is longer than ${WORKFLOW_LIMITS.keyBytes} bytes; give the job a shorter name`,
      );
    const labels = runsOnList.map((e) => {
      const v = toText(r.value(e.node, e.value, "jobPlan", cell)).toLowerCase();
      if (!LABEL_RE.test(v)) throw new WorkflowError(e.node, `invalid runner label ${JSON.stringify(v.slice(0, 100))}`);
      return v;
    });
    const runsOnLabels = [...new Set(labels)];
    if (!runsOnLabels.length) throw new WorkflowError(runsOn, `jobs.${id}.runs-on names no label`);
    // The workflow's env is copied into every job: each copy counts.
    budget.charge(workflowEnvSize, node);
    const env = { ...workflowEnv, ...readEnv(envNode, `jobs.${id}.env`, v2 ? null : { matrix: cell, trigger, budget }, r, "agent") };
    if (v2)
      budget.charge(
        Object.entries(env).reduce((n, [k, v]) => n + k.length + v.length, 0),
        envNode ?? node,
      );
    const steps = raw.map((s) => stepOf(s, v2, cell, r));
    const timeoutMinutes = timeout ? minutesOf(r, timeout, cell, "timeout-minutes") : WORKFLOW_LIMITS.defaultTimeoutMinutes;
    const spec: JobSpecV2 = { steps, env, timeoutS: Math.max(3, Math.round(timeoutMinutes * 60)) };
    if (v2) {
      spec.v = 2;
      if (mergedDefaults.shell !== undefined || mergedDefaults.workingDirectory !== undefined) spec.defaults = mergedDefaults;
      if (continueOnError !== undefined) spec.continueOnError = continueOnError;
      if (outputs !== undefined) spec.outputs = outputs;
      if (Object.keys(cell).length) spec.matrix = cell;
      const refs = referencedNames(spec);
      if (refs.secrets.length) spec.secretRefs = refs.secrets;
      if (refs.vars.length) spec.varRefs = refs.vars;
    }
    const job: PlannedJob = { key, runsOn: runsOnLabels, hosted: !runsOnLabels.includes("self-hosted"), spec, workflowJob: id, needs: needIds };
    if (condition !== undefined) job.condition = condition;
    if (concurrencyNode !== undefined) job.concurrency = readConcurrency(concurrencyNode, `jobs.${id}.concurrency`, r, "jobPlan", cell);
    return job;
  });
  return { jobs, needs, needsNode };
}

function stepOf(s: RawStep, v2: boolean, cell: Record<string, string>, r: Reader): StepSpec {
  const budget = r.budget;
  const trigger = r.trigger;
  let run: string | undefined;
  let name: string | null = null;
  let env: Record<string, string>;
  if (!s.run) {
    // A `uses` step (always in a v2 job): its reference and inputs, as written, in every job that carries them.
    if (s.name) name = literal(s.name.text, s.name.node, budget);
    budget.charge(s.uses!.length + Object.entries(s.with ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0), s.node);
    env = readEnv(s.envNode, `${s.what}.env`, null, r, "agent");
    budget.charge(
      Object.entries(env).reduce((n, [k, v]) => n + k.length + v.length, 0),
      s.envNode ?? s.node,
    );
  } else if (v2) {
    run = literal(s.run.text, s.run.node, budget);
    if (s.name) name = literal(s.name.text, s.name.node, budget);
    env = readEnv(s.envNode, `${s.what}.env`, null, r, "agent");
    budget.charge(
      Object.entries(env).reduce((n, [k, v]) => n + k.length + v.length, 0),
      s.envNode ?? s.node,
    );
  } else {
    run = expand(s.run.text, s.run.node, cell, trigger, budget);
    if (s.name) name = expand(s.name.text, s.name.node, cell, trigger, budget);
    env = readEnv(s.envNode, `${s.what}.env`, { matrix: cell, trigger, budget }, r, "agent");
  }
  const out: StepSpec =
    run === undefined
      ? { name: name ?? `Run ${s.uses!}`, uses: s.uses!, env }
      : { name: name ?? (run.split("\n")[0]!.slice(0, 80) || `step ${s.index + 1}`), run, env };
  if (s.with !== undefined) out.with = s.with;
  if (s.id !== undefined) out.id = s.id;
  if (s.if !== undefined) out.if = s.if;
  if (s.shell !== undefined) out.shell = s.shell;
  if (s.workingDirectory !== undefined) out.workingDirectory = s.workingDirectory;
  if (s.continueOnError !== undefined) out.continueOnError = s.continueOnError;
  if (s.timeout) out.timeoutS = Math.max(3, Math.round(minutesOf(r, s.timeout, cell, `${s.what}.timeout-minutes`) * 60));
  return out;
}

/** Names read as `secrets.NAME` / `vars.NAME` anywhere in a v2 job (only these are sent to its runner). */
function referencedNames(spec: JobSpecV2): { secrets: string[]; vars: string[] } {
  const secrets = new Set<string>();
  const vars = new Set<string>();
  const scan = (text: string | undefined) => {
    if (!text || !/secrets|vars/i.test(text)) return;
    for (const m of text.matchAll(/\b(secrets|vars)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/gi))
      (m[1]!.toLowerCase() === "secrets" ? secrets : vars).add(m[2]!.toUpperCase());
  };
  for (const v of Object.values(spec.env)) scan(v);
  for (const s of spec.steps) {
    scan(s.run);
    scan(s.name);
    scan(s.workingDirectory);
    scan(typeof s.continueOnError === "string" ? s.continueOnError : undefined);
    for (const v of Object.values(s.env)) scan(v);
    for (const v of Object.values(s.with ?? {})) scan(v);
  }
  return { secrets: [...secrets].sort(), vars: [...vars].sort() };
}

/**
 * Until the server runs them (issue 29 part C: release of dependent jobs, conditions,
 * concurrency; part D: the runner's v2 steps), a workflow using what is only parsed so far fails
 * its run with this message instead of running its jobs out of order, unconditionally, or with
 * unexpanded `${{ }}` in their scripts. Null when the workflow runs as before. Part C removes it.
 */
export function notRunYet(path: string, out: { jobs: PlannedJob[]; run?: PlannedRun }): string | null {
  const uses: string[] = [];
  for (const j of out.jobs) {
    const id = j.workflowJob ?? j.key;
    if (j.needs?.length) uses.push(`jobs.${id}.needs`);
    if (j.condition !== undefined) uses.push(`jobs.${id}.if`);
    // Job-level groups are admitted when the job starts with its run; a job with needs would need the release to admit it.
    if (j.concurrency && (j.needs?.length || j.concurrency.dynamic)) uses.push(`jobs.${id}.concurrency (on a job with needs)`);
    if (uses.length) break;
  }
  if (!uses.length) return null;
  return `${path}: ${uses[0]} is parsed but not run by this server yet; the run does not start`;
}
