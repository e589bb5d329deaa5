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
//       timeout-minutes: 30                   (default 360, more is capped at 4320; fractions allowed, at least 0.05)
//       steps: [ { name?, run, env? } ]
//
// Issue 29 adds (docs/api.md "Workflows"): `needs` (a DAG, unknown jobs and cycles refused),
// `if` on jobs and steps, job `outputs`, `concurrency`, `defaults.run`, `continue-on-error`,
// step `id`, `shell`, `working-directory`, `timeout-minutes`, `run-name`, `on.push.tags|paths`,
// `on.workflow_dispatch.inputs`, `on.schedule`, `pull_request` (an alias of `change`).
// Part F (what real GitHub workflows need, bench/workflows.ts): `uses` steps with `with`, YAML
// aliases, matrix values that are mappings, GitHub's include rule, matrices from expressions,
// `runs-on: { group, labels }`, GitHub's shell names and input types; planned but refused when
// run (notRunYet): reusable workflow calls, `parallel:` step groups. Jobs whose
// matrix/name/runs-on/timeout read `needs` are one placeholder, planned at release (planJobAt).
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
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Node, type Pair, type YAMLMap } from "yaml";
import type { JobSpec } from "../../db/schema/index.ts";
import { globMatch } from "../../util/glob.ts";
import { CronError, CRON_MAX_CHARS, parseCron } from "./cron.ts";
import { plannedGithub, withPlannedGithub, type PlannedGithub, type PullRequestFacts } from "./github-context.ts";
import { ExprError, parseCondition, parseTemplate, templateValue, toText, truthy, type Template, type Value } from "./expr/index.ts";
import { orderJobs } from "./workflow-graph.ts";
import { filterMatches, type BranchFilter, type InputSpec, type TriggerRef, type WorkflowOn } from "./workflow-on.ts";
import { scanMessage, scanWorkflow, WORKFLOW_MAX_DEPTH } from "./workflow-scan.ts";

export type { BranchFilter, InputSpec, TriggerRef, WorkflowOn };

/** Limits on hostile input (STYLE "Hostile input"); docs/api.md "Workflows" lists them. */
export const WORKFLOW_LIMITS = {
  fileBytes: 512 * 1024,
  files: 20,
  jobsPerRun: 256,
  stepsPerJob: 100,
  matrixCells: 256,
  timeoutMinutes: 4320,
  defaultTimeoutMinutes: 360,
  /** Nesting of the YAML (checked before parsing). */
  depth: WORKFLOW_MAX_DEPTH,
  /**
   * Checked before parsing too (workflow-scan.ts), what the YAML parser's cost grows with: lines,
   * mapping keys and list items, anchors and aliases (the largest real file, 415 KiB, has 7,684
   * lines and 5,375 entries; the corpus's most anchors and aliases is 12). The keys under `jobs:`
   * are counted against `jobsPerRun` before parsing as well.
   */
  lines: 30_000,
  entries: 20_000,
  anchors: 1_000,
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
  /** The step is in the `parallel:` group written at this index of the job's steps (GitHub runs a group's steps side by side). */
  parallel?: number;
};
export type JobSpecV2 = Omit<JobSpec, "steps"> & {
  v?: 2;
  defaults?: { shell?: string; workingDirectory?: string };
  continueOnError?: boolean | string;
  outputs?: Record<string, string>;
  secretRefs?: string[];
  varRefs?: string[];
  matrix?: MatrixCell;
  steps: StepSpec[];
  /** A change from a fork: the repository the agent fetches the commit from (set by the trigger, never by the file; the job token reads it and nothing else). */
  checkoutRepoId?: string;
  /** The github fields fixed at plan time (event_name as `on:` spells it, workflow name, a change's head/base): github-context.ts. */
  github?: PlannedGithub;
};

/**
 * One matrix cell: dimension → value. Scalars are kept as their text (as before issue 29);
 * mappings and lists (`matrix: { target: [ { os: linux, rust: stable } ] }`) as JSON values.
 */
export type MatrixCell = Record<string, Value>;

/** A concurrency group: evaluated at plan time, or (reading `needs`) a template left for the release. */
export interface Concurrency {
  group: string;
  cancelInProgress: boolean | string;
  /** The group is a template to evaluate when the job is released (it reads `needs`). */
  dynamic?: boolean;
  /** A dynamic group's matrix cell (what `matrix.*` reads when it is evaluated at release). */
  matrix?: MatrixCell;
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
  /**
   * A placeholder for a job whose matrix (or name, runs-on, timeout) is only known once its needs
   * ended: the place that reads `needs` (`jobs.x.strategy.matrix`). Planned as this one row with
   * no labels and no steps; release.ts plans its cells once its needs ended (planJobAt over `source`).
   */
  dynamic?: string;
  /** A placeholder's workflow file, as parsed (what planJobAt reads again at release). */
  source?: string;
  /** A call of a reusable workflow (`jobs.x.uses`): planned, not run yet (notRunYet names it). */
  calls?: string;
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
  inputs?: Record<string, string | boolean | number>;
  vars?: Record<string, string>;
  /** A change run: the change, as GitHub's `github.event.pull_request` names it (github-context.ts). */
  change?: PullRequestFacts;
  /**
   * Planning one placeholder job at release (planJobAt): its id and the `needs` context (each need's
   * result and outputs). Only that job is read, and what reads `needs` is evaluated.
   */
  release?: { job: string; needs: Record<string, Value> };
  /** github.event_name when it is not `event` (`pull_request`: the `on:` key that matched a change run); set once `on` is read. */
  eventName?: string;
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
/** Environment names: GitHub also takes `-` and `.` (`cache-name:`), which the environment carries (shells cannot name them). */
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Parses one workflow file; errors name `path:line:column: problem`. */
export function parseWorkflow(path: string, text: string, trigger: TriggerContext): ParsedWorkflow {
  if (Buffer.byteLength(text) > WORKFLOW_LIMITS.fileBytes)
    return { ok: false, error: `${path}: the file is larger than ${WORKFLOW_LIMITS.fileBytes / 1024} KiB` };
  // Why before parseDocument: its cost grows with lines, entries and nesting (a 10,000-job file:
  // seconds of a thread, and past the time limit an answer that depends on the load); the scan
  // refuses in one pass, the same way every time. (The yaml package's maxAliasCount guards only
  // toJS, which is never called here: resolveAliases is linear and expansion is charged to Budget.)
  const scanned = scanWorkflow(text, {
    depth: WORKFLOW_LIMITS.depth,
    jobs: WORKFLOW_LIMITS.jobsPerRun,
    anchors: WORKFLOW_LIMITS.anchors,
    entries: WORKFLOW_LIMITS.entries,
    lines: WORKFLOW_LIMITS.lines,
  });
  if (scanned) return { ok: false, error: `${path}:${scanned.line}:${scanned.col}: ${scanMessage(scanned)}` };
  const lines = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    // Why uniqueKeys off: the yaml package's check is quadratic in a mapping's keys (20,000 keys took
    // seconds); entries() refuses a repeated key in linear time for every mapping the parser reads.
    doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false, prettyErrors: true });
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
    resolveAliases(doc);
    const out = readWorkflow(doc.contents as Node | null, trigger, path);
    // A placeholder carries its file, read again when it is released (planJobAt).
    for (const j of out.jobs) if (j.dynamic !== undefined && j.calls === undefined) j.source = text;
    return { ok: true, ...out };
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
 * YAML anchors and aliases (`steps: *common`, GitHub accepts them): each alias in the tree is
 * replaced by the node it names, in one pass over the document (the named node is not walked
 * again, so this is linear in the file). Reading may then meet a node several times; what that
 * produces is charged to the run's budget like any string, a matrix dimension is checked for
 * length before it is read, and matrix values are converted with a node count (`toValue`).
 */
function resolveAliases(doc: ReturnType<typeof parseDocument>): void {
  // Why not Alias.resolve: without a context it walks the whole document for every alias (and,
  // once aliases are replaced, every shared subtree: exponential on nested aliases); with one it
  // builds JS values. Here: one pre-order walk in document order, each anchor recorded as met
  // (YAML names an anchor before its aliases; the last one before an alias wins), each alias
  // replaced by the node its anchor names, never walked into.
  const anchors = new Map<string, unknown>();
  const resolve = (n: unknown): unknown => {
    const target = anchors.get((n as { source: string }).source);
    if (!target) throw new WorkflowError(n as unknown as Node, `unknown anchor ${JSON.stringify(String((n as { source: string }).source).slice(0, 100))}`);
    return target;
  };
  // Each stack entry is a slot: the node at `node()`, replaced through `put` when it is an alias. An
  // alias is resolved when its slot is popped, so every anchor before it in the document (an
  // earlier sibling's too: `[&a x, *a]`) has been met.
  type Slot = { node: () => unknown; put: (v: unknown) => void };
  const stack: Slot[] = [{ node: () => doc.contents, put: (v) => (doc.contents = v as typeof doc.contents) }];
  while (stack.length) {
    const slot = stack.pop()!;
    const n = slot.node();
    if (isAlias(n)) {
      slot.put(resolve(n));
      continue;
    }
    const anchor = (n as { anchor?: string } | null)?.anchor;
    if (anchor) anchors.set(anchor, n);
    const children: Slot[] = [];
    if (isMap(n)) {
      for (const pair of n.items) {
        children.push({ node: () => pair.key, put: (v) => (pair.key = v) });
        children.push({ node: () => pair.value, put: (v) => (pair.value = v as Node) });
      }
    } else if (isSeq(n)) {
      const items = n.items;
      for (let i = 0; i < items.length; i++) children.push({ node: () => items[i], put: (v) => (items[i] = v) });
    }
    // Children in document order: the stack takes them reversed.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
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
  const items = (node as YAMLMap<Node, Node | null>).items;
  if (items.length > 1) {
    const seen = new Set<unknown>();
    for (const p of items) {
      const k = isScalar(p.key) ? p.key.value : p.key;
      if (seen.has(k)) throw new WorkflowError(p.key as Node, "Map keys must be unique");
      seen.add(k);
    }
  }
  return items;
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
function expressionValue(expr: string, node: Node, matrix: MatrixCell, trigger: TriggerContext): string {
  const m = /^matrix\.([A-Za-z0-9_-]+)$/.exec(expr);
  if (m) {
    // GitHub's reading: a value the cell does not have (an include adding it to other cells) is null, the empty string.
    const v = matrix[m[1]!];
    return v === undefined ? "" : toText(v);
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
      return trigger.eventName ?? trigger.event;
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
function expand(text: string, node: Node, matrix: MatrixCell, trigger: TriggerContext, budget: Budget): string {
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

/** Nodes of matrix values converted per file (mappings and lists, aliases counted each time they are met). */
const MATRIX_VALUE_NODES = 20_000;

/** A matrix value as JSON: scalars at the top as their text (as before), nested ones as YAML typed them. */
function matrixValue(node: Node | null | undefined, what: string, r: Reader, top: boolean): Value {
  if (++r.matrixNodes > MATRIX_VALUE_NODES) throw new WorkflowError(node, `the matrices of this file hold more than ${MATRIX_VALUE_NODES} values`);
  if (isNull(node)) return top ? "" : null;
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return top ? String(v) : v;
    throw new WorkflowError(node, `${what} must be a string, number, boolean, mapping or list`);
  }
  if (isSeq(node)) return node.items.map((n) => matrixValue(n as Node, what, r, false));
  const out: Record<string, Value> = {};
  for (const p of entries(node, what)) out[keyOf(p)] = matrixValue(p.value, what, r, false);
  return out;
}

/** A value computed by an expression, made a matrix value (scalars as text at the top). */
function topValue(v: Value): Value {
  return typeof v === "number" || typeof v === "boolean" ? String(v) : v;
}

const sameValue = (a: Value | undefined, b: Value | undefined) => a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);

/**
 * The matrix cells of a job (one empty cell without a matrix), by GitHub's rules: the product of
 * the dimensions, minus the cells an `exclude` entry matches (partially), then each `include`
 * entry is added to every cell whose original dimensions it does not overwrite, or becomes a
 * cell of its own when there is none. A matrix, dimension or list given as an expression is
 * evaluated here (github, inputs, vars); one that reads `needs` is known only once the run is
 * under way: `dynamic`.
 */
function readMatrix(strategy: Node | null | undefined, r: Reader): { cells: MatrixCell[]; order: string[] } | { dynamic: true } {
  if (strategy === undefined || isNull(strategy)) return { cells: [{}], order: [] };
  let matrixNode: Node | null | undefined;
  for (const pair of entries(strategy, "strategy")) {
    const k = keyOf(pair);
    if (k === "matrix") matrixNode = pair.value;
    // Accepted and ignored (docs/api.md "Workflows"): every cell is queued, and a failed cell does not cancel the others.
    else if (k === "fail-fast" || k === "max-parallel") scalarText(pair.value, `strategy.${k}`);
    else throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} under strategy (expected matrix, fail-fast, max-parallel)`);
  }
  if (matrixNode === undefined || isNull(matrixNode)) return { cells: [{}], order: [] };
  /** An expression in place of a mapping or list: its value, or null when it reads needs. */
  const computed = (node: Node, what: string): Value | undefined => {
    if (!isScalar(node) || typeof node.value !== "string" || !node.value.includes("${{")) return undefined;
    const t = r.template(node, node.value, "matrix");
    if (t?.contexts.has("needs") && !r.needs) return null;
    return r.value(node, node.value, "matrix", {});
  };
  let source: { key: string; node: Node | null | undefined; value?: Value }[];
  const whole = matrixNode ? computed(matrixNode, "strategy.matrix") : undefined;
  if (whole === null) return { dynamic: true };
  if (whole !== undefined) {
    if (typeof whole !== "object" || whole === null || Array.isArray(whole)) throw new WorkflowError(matrixNode, "strategy.matrix must evaluate to a mapping");
    source = Object.entries(whole).map(([key, value]) => ({ key, node: matrixNode, value }));
  } else source = entries(matrixNode, "strategy.matrix").map((p) => ({ key: keyOf(p), node: p.value }));
  const dims: { name: string; values: Value[] }[] = [];
  let include: Value[] = [];
  let exclude: Value[] = [];
  for (const { key, node, value } of source) {
    let list: Value | undefined = value;
    if (list === undefined && node) {
      const c = computed(node, `matrix.${key}`);
      if (c === null) return { dynamic: true };
      list = c;
    }
    if (list === undefined) {
      if (!isSeq(node))
        throw new WorkflowError(
          node ?? matrixNode,
          `matrix.${key} must be a ${key === "include" || key === "exclude" ? "list of mappings" : "non-empty list"}`,
        );
      if (key !== "include" && key !== "exclude" && node.items.length > WORKFLOW_LIMITS.matrixCells)
        throw new WorkflowError(node, `the matrix has more than ${WORKFLOW_LIMITS.matrixCells} cells`);
      const values: Value[] = [];
      for (const n of node.items) {
        // A value written as an expression (`- ${{ github.repository == 'a/b' && 'big' || 'small' }}`) is evaluated here.
        const c = computed(n as Node, `matrix.${key} values`);
        if (c === null) return { dynamic: true };
        values.push(c === undefined ? matrixValue(n as Node, `matrix.${key} values`, r, true) : topValue(c));
      }
      list = values;
    } else if (value !== undefined || (isScalar(node) && typeof node.value === "string")) {
      if (!Array.isArray(list)) throw new WorkflowError(node, `matrix.${key} must evaluate to a list`);
      list = list.map(topValue);
    }
    const items = list as Value[];
    if (key === "include" || key === "exclude") {
      for (const item of items)
        if (typeof item !== "object" || item === null || Array.isArray(item)) throw new WorkflowError(node, `matrix.${key} must be a list of mappings`);
      // An entry's values are the cells' values: scalars as text.
      const cellsOf = items.map((item) => Object.fromEntries(Object.entries(item as Record<string, Value>).map(([k, v]) => [k, topValue(v)])));
      if (key === "include") include = cellsOf;
      else exclude = cellsOf;
    } else {
      if (items.length === 0) throw new WorkflowError(node ?? matrixNode, `matrix.${key} must be a non-empty list`);
      dims.push({ name: key, values: items });
    }
  }
  let cells: MatrixCell[] = dims.length ? [{}] : [];
  for (const d of dims) {
    if (cells.length * d.values.length > WORKFLOW_LIMITS.matrixCells * 16)
      throw new WorkflowError(matrixNode, `the matrix has more than ${WORKFLOW_LIMITS.matrixCells} cells`);
    const next: MatrixCell[] = [];
    for (const c of cells) for (const v of d.values) next.push({ ...c, [d.name]: v });
    cells = next;
  }
  cells = cells.filter((c) => !exclude.some((x) => Object.entries(x as Record<string, Value>).every(([k, v]) => sameValue(c[k], v))));
  if (cells.length > WORKFLOW_LIMITS.matrixCells) throw new WorkflowError(matrixNode, `the matrix has more than ${WORKFLOW_LIMITS.matrixCells} cells`);
  const order = dims.map((d) => d.name);
  const original = new Set(order);
  const extended = cells.map((c) => ({ ...c }));
  for (const inc of include as Record<string, Value>[]) {
    const entriesOf = Object.entries(inc);
    for (const [k] of entriesOf) if (!original.has(k) && !order.includes(k)) order.push(k);
    let merged = false;
    for (let i = 0; i < cells.length; i++) {
      if (entriesOf.every(([k, v]) => !original.has(k) || sameValue(cells[i]![k], v))) {
        for (const [k, v] of entriesOf) extended[i]![k] = v;
        merged = true;
      }
    }
    if (!merged) {
      extended.push(Object.fromEntries(entriesOf));
      if (extended.length > WORKFLOW_LIMITS.matrixCells) throw new WorkflowError(matrixNode, `the matrix has more than ${WORKFLOW_LIMITS.matrixCells} cells`);
    }
  }
  if (!extended.length) throw new WorkflowError(matrixNode, "the matrix has no cells left");
  return { cells: extended, order };
}

/** Per-file reading state: the trigger, the budget, and each scalar's parsed template (parsed once, reused by every matrix cell). */
class Reader {
  readonly budget = new Budget();
  /** Matrix value nodes converted so far (MATRIX_VALUE_NODES). */
  matrixNodes = 0;
  private expressions = 0;
  private readonly templates = new WeakMap<Node, Template | null>();
  readonly github: Record<string, Value>;
  readonly inputs: Record<string, Value>;
  readonly vars: Record<string, Value>;
  /** The `needs` context when a placeholder is planned at release; absent at plan time. */
  readonly needs: Record<string, Value> | undefined;

  constructor(public trigger: TriggerContext) {
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
    this.needs = trigger.release?.needs;
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
  value(node: Node, text: string, site: Site, cell: MatrixCell): Value {
    const t = this.template(node, text, site);
    if (!t) return text;
    if (t.contexts.has("needs") && !this.needs)
      throw new WorkflowError(node, "a value read from needs here is evaluated when the job is released, which this server does not do yet");
    if (isV1(t)) return expand(text, node, cell, this.trigger, this.budget);
    let v: Value;
    try {
      v = templateValue(t, { contexts: { github: this.github, matrix: cell, inputs: this.inputs, vars: this.vars, needs: this.needs ?? {} } });
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
/** Shells the runner runs. */
const SHELLS: ReadonlySet<string> = new Set(["sh", "bash"]);
/** GitHub's other shell names: parsed (files written for GitHub plan), not run (notRunYet names them). */
const OTHER_SHELLS: ReadonlySet<string> = new Set(["pwsh", "powershell", "python", "cmd"]);
/** A custom shell (`perl {0}`): a command with `{0}` where the script's path goes. */
const CUSTOM_SHELL_RE = /^[^\n]{0,200}\{0\}[^\n]{0,200}$/;

function isNull(node: Node | null | undefined): boolean {
  return node === null || node === undefined || (isScalar(node) && node.value === null);
}

function readWorkflow(root: Node | null, trigger: TriggerContext, path: string): { name: string | null; on: WorkflowOn; jobs: PlannedJob[]; run: PlannedRun } {
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
  // GitHub's github.workflow (the workflow's name, or its file's path without one), event_name as
  // `on:` spells it and a change's head/base: what every plan-time expression below reads, and
  // what each job's spec carries for the release and the job description (github-context.ts).
  const planned = plannedGithub(name, trigger.event, on.changeKey, trigger.change);
  Object.assign(r.github, withPlannedGithub({ ...r.github, workflow: path }, planned));
  // A v1 string's ${{ github.event_name }} (expanded here) reads it too.
  if (planned?.event_name) r.trigger = { ...trigger, eventName: planned.event_name };
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
    // At release (planJobAt) only the placeholder's job is planned; the graph was checked when the run was.
    if (trigger.release && id !== trigger.release.job) continue;
    const read = readJob(id, pair.value, env, defaults, r);
    graphJobs.push({ id, at: read.needsNode ?? (pair.key as Node), needs: read.needs });
    for (const job of read.jobs) {
      if (keys.has(job.key.toLowerCase())) throw new WorkflowError(pair.key as Node, `two jobs have the key ${JSON.stringify(job.key)}`);
      keys.add(job.key.toLowerCase());
      jobs.push(job);
      if (jobs.length > WORKFLOW_LIMITS.jobsPerRun) throw new WorkflowError(pair.key as Node, `more than ${WORKFLOW_LIMITS.jobsPerRun} jobs`);
    }
  }
  if (!jobs.length) throw new WorkflowError(jobsNode, trigger.release ? `jobs.${trigger.release.job} is gone from the file` : "`jobs` is empty");
  if (planned) for (const job of jobs) job.spec.github = planned;
  if (trigger.release) return { name, on, jobs, run: { name, runName: runNameValue, concurrency, graph: {}, order: [] } };
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
    else if (event === "change" || event === "pull_request") {
      out.change = filter ?? { branches: null, ignore: null };
      if (event === "pull_request") out.changeKey = event;
      else delete out.changeKey;
    } else if (event === "workflow_dispatch") out.workflowDispatch = { inputs: readDispatch(valueNode) };
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

/** GitHub's input types: `environment` names a deployment environment (a string here), `number` a number (its text). */
const INPUT_TYPES: ReadonlySet<string> = new Set(["string", "boolean", "choice", "number", "environment"]);

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
            if (!INPUT_TYPES.has(t))
              throw new WorkflowError(v, `${what}.type must be string, boolean, choice, number or environment, not ${JSON.stringify(t.slice(0, 100))}`);
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
          if (spec.type === "number" && (d.trim() === "" || !Number.isFinite(Number(d))))
            throw new WorkflowError(defaultNode, `${what}.default must be a number`);
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
  if (!SHELLS.has(v) && !OTHER_SHELLS.has(v) && !CUSTOM_SHELL_RE.test(v))
    throw new WorkflowError(node, `${what} must be sh, bash, pwsh, powershell, python, cmd or a command with {0}, not ${JSON.stringify(v.slice(0, 100))}`);
  return v;
}

/** `concurrency:` as a group string or `{ group, cancel-in-progress }`, evaluated for one cell (or kept when it reads needs). */
function readConcurrency(node: Node | null | undefined, what: string, r: Reader, site: Site, cell: MatrixCell): Concurrency {
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
  if (t?.contexts.has("needs") && !r.needs) out = { group: literal(text, groupNode, r.budget), cancelInProgress: false, dynamic: true };
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
      if (ct.contexts.has("needs") && !r.needs) out.cancelInProgress = literal(c, cancelNode, r.budget);
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
  expansion: { matrix: MatrixCell; trigger: TriggerContext; budget: Budget } | null,
  r: Reader,
  site: Site,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (isNull(node)) return out;
  for (const pair of entries(node, what)) {
    const k = keyOf(pair);
    if (!ENV_NAME_RE.test(k)) throw new WorkflowError(pair.key as Node, `invalid environment variable name ${JSON.stringify(k)}`);
    const v = pair.value;
    // `KEY:` with no value is the empty string (GitHub's reading).
    if (isNull(v)) {
      expansion?.budget.charge(k.length, pair.key as Node);
      out[k] = "";
      continue;
    }
    if (!isScalar(v) || typeof v.value === "object") throw new WorkflowError(v ?? (pair.key as Node), `${what}.${k} must be a string, number or boolean`);
    const text = String(v.value);
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
  /** Index (in `steps`) of the `parallel:` group the step belongs to. */
  parallel?: number;
  v2: boolean;
}

/** A `parallel:` group (GitHub's steps that run side by side): its steps, or null for a plain step. */
function parallelGroup(node: Node, what: string): Node[] | null {
  if (!isMap(node) || !node.items.some((p) => isScalar(p.key) && p.key.value === "parallel")) return null;
  if (node.items.length !== 1) throw new WorkflowError(node, `${what} is a parallel group: it holds only parallel`);
  const list = node.items[0]!.value as Node | null;
  if (!isSeq(list) || list.items.length === 0) throw new WorkflowError(list ?? node, `${what}.parallel must be a non-empty list of steps`);
  for (const s of list.items)
    if (parallelGroup(s as Node, `${what}.parallel`)) throw new WorkflowError(s as Node, `${what}.parallel holds another parallel group`);
  return list.items as Node[];
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

/**
 * A job's `continue-on-error`: true, false, or a template of plan-time contexts (github, inputs,
 * vars, matrix: `${{ matrix.experimental }}`), evaluated per matrix cell (continuesOf).
 */
function readJobContinueOnError(node: Node | null | undefined, what: string, r: Reader): boolean | { node: Node; text: string } {
  if (isScalar(node) && typeof node.value === "boolean") return node.value;
  const text = scalarString(node, what);
  if (!r.template(node as Node, text, "jobPlan")) throw new WorkflowError(node, `${what} must be true, false or an expression`);
  return { node: node as Node, text };
}

/** A plan-time value as a job's continue-on-error: matrix scalars are text, so "true"/"false" are read as the booleans they were written as. */
export function continuesOf(v: Value): boolean {
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (s === "true") return true;
    if (s === "false" || s === "" || s === "0") return false;
  }
  return truthy(v);
}

/** Longest `uses:` reference accepted (characters). */
const USES_MAX = 400;
/** `owner/repo[/path]@ref` (GitHub's names: owner letters, digits and `-`; repo also `.` and `_`). */
const USES_REMOTE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.\-/]+)?@[A-Za-z0-9_.\-/+]+$/;
/** `./path` (an action in the checked-out repository), or `$/path` (the form vite's workflows use for an action of the workflow's own repository). */
const USES_LOCAL_RE = /^[.$]\/[A-Za-z0-9_.\-/]*$/;

/**
 * A step's `uses:`: an action in the repository (`./path`), a built-in of the agent
 * (`actions/checkout@v4`, …) or a repository on this server (`owner/repo[/path]@ref`), kept as
 * written for the runner, which runs it (cli/runner/uses.ts). Docker actions (`docker://image`)
 * are refused here: they need a container runtime the runner does not have.
 */
function readUses(node: Node | null | undefined, what: string): string {
  const v = scalarString(node, what);
  if (v.startsWith("docker://")) throw new WorkflowError(node, `docker actions (${JSON.stringify(v.slice(0, 100))}) are not supported`);
  if (v.length > USES_MAX || !(USES_LOCAL_RE.test(v) || USES_REMOTE_RE.test(v)) || v.includes("/../") || v.includes("//"))
    throw new WorkflowError(node, `invalid action reference ${JSON.stringify(v.slice(0, 100))} (expected ./path, $/path or owner/repo[/path]@ref)`);
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

/** Charges a mapping's keys and values to the run's budget (read again for every job an alias shares it with). */
function chargeAll(m: Record<string, string>, node: Node, r: Reader): void {
  r.budget.charge(
    Object.entries(m).reduce((n, [k, v]) => n + k.length + v.length, 0),
    node,
  );
}

/** timeout-minutes from a number or a plan-time expression. */
function minutesOf(r: Reader, t: { node: Node; text: string }, cell: MatrixCell, what: string): number {
  const v = isScalar(t.node) && typeof t.node.value === "number" ? t.node.value : Number(r.value(t.node, t.text, "jobPlan", cell));
  if (!(v >= 0.05)) throw new WorkflowError(t.node, `${what} must be a number from 0.05 to ${WORKFLOW_LIMITS.timeoutMinutes}`);
  // A longer timeout is capped, as GitHub caps it at its own limit (docs/api.md "Workflows").
  return Math.min(v, WORKFLOW_LIMITS.timeoutMinutes);
}

const JOB_KEYS =
  "name, needs, if, runs-on, strategy, env, defaults, outputs, timeout-minutes, continue-on-error, concurrency, permissions, environment, steps, uses, with, secrets";
/** A reusable workflow: `./.github/workflows/x.yml` or `owner/repo/.github/workflows/x.yml@ref`. */
const CALL_RE =
  /^([.$]\/\.github\/workflows\/[A-Za-z0-9_.-]+\.ya?ml|[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]+\/\.github\/workflows\/[A-Za-z0-9_.-]+\.ya?ml@[A-Za-z0-9_.\-/+]+)$/;
/** What a job calling a reusable workflow may hold besides `uses` (GitHub's list). */
const CALL_KEYS: ReadonlySet<string> = new Set(["name", "needs", "if", "strategy", "permissions", "concurrency", "uses", "with", "secrets"]);

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
  // What this job's keys charge while read (a reusable call's with/secrets) is this job's.
  budget.job = WORKFLOW_LIMITS.jobSpecBytes;
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
  let continueOnError: boolean | { node: Node; text: string } | undefined;
  let concurrencyNode: Node | null | undefined;
  let defaults: { shell?: string; workingDirectory?: string } | undefined;
  let calls: { node: Node; ref: string } | undefined;
  const keysSeen: { key: string; node: Node }[] = [];
  for (const pair of entries(node, `jobs.${id}`)) {
    const k = keyOf(pair);
    const v = pair.value as Node;
    keysSeen.push({ key: k, node: pair.key as Node });
    if (k === "uses") {
      const ref = scalarString(v, `jobs.${id}.uses`);
      if (ref.length > USES_MAX || !CALL_RE.test(ref) || ref.includes("/../"))
        throw new WorkflowError(
          v,
          `invalid reusable workflow ${JSON.stringify(ref.slice(0, 100))} (expected ./.github/workflows/<file>.yml, $/.github/workflows/<file>.yml or owner/repo/.github/workflows/<file>.yml@ref)`,
        );
      calls = { node: v, ref };
    } else if (k === "with") chargeAll(readWith(v, `jobs.${id}.with`, r), v, r);
    else if (k === "secrets") {
      if (!(isScalar(v) && v.value === "inherit")) chargeAll(readWith(v, `jobs.${id}.secrets`, r), v, r);
    } else if (k === "name") name = { text: scalarString(v, `jobs.${id}.name`), node: v };
    else if (k === "runs-on") runsOn = v;
    else if (k === "strategy") strategy = v;
    else if (k === "env") envNode = v;
    else if (k === "steps") stepsNode = v;
    else if (k === "timeout-minutes") {
      if (isScalar(v) && typeof v.value === "number") timeout = { node: v, text: String(v.value) };
      else if (isScalar(v) && typeof v.value === "string" && v.value.includes("${{")) timeout = { node: v, text: v.value };
      else if (isScalar(v) && typeof v.value === "string" && v.value.trim() !== "" && Number.isFinite(Number(v.value))) {
        timeout = { node: v, text: v.value };
        minutesOf(r, timeout, {}, "timeout-minutes");
      } else throw new WorkflowError(v, `timeout-minutes must be a number from 0.05 to ${WORKFLOW_LIMITS.timeoutMinutes}`);
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
    } else if (k === "continue-on-error") continueOnError = readJobContinueOnError(v, `jobs.${id}.continue-on-error`, r);
    else if (k === "concurrency") concurrencyNode = v;
    else if (k === "defaults") defaults = readDefaults(v, `jobs.${id}.defaults`, r);
    else if (k === "permissions" || k === "environment") continue;
    else if (k === "container" || k === "services") throw new WorkflowError(pair.key as Node, "container jobs are not supported");
    else throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} in jobs.${id} (expected ${JOB_KEYS})`);
  }
  const needIds = [...new Set(needs.map((n) => n.id))];
  if (calls) {
    // A call of a reusable workflow: planned (graph, matrix, conditions) but not run yet (notRunYet names it).
    for (const k of keysSeen)
      if (!CALL_KEYS.has(k.key)) throw new WorkflowError(k.node, `jobs.${id} calls a reusable workflow (uses) and cannot have ${k.key}`);
    const m = readMatrix(strategy, r);
    const cells = "dynamic" in m ? [{}] : m.cells;
    return {
      jobs: cells.map((cell, i) => {
        const key = cells.length > 1 ? `${id} (${i + 1})` : id;
        budget.charge(key.length + calls.ref.length, calls.node);
        const job = placeholder(id, key, needIds, condition);
        job.calls = calls.ref;
        if ("dynamic" in m) job.dynamic = `jobs.${id}.strategy.matrix`;
        else if (Object.keys(cell).length) job.spec.matrix = cell;
        return job;
      }),
      needs,
      needsNode,
    };
  }
  for (const k of keysSeen)
    if (k.key === "with" || k.key === "secrets")
      throw new WorkflowError(k.node, `jobs.${id}.${k.key} goes with uses (a reusable workflow), and this job has none`);
  if (runsOn === undefined) throw new WorkflowError(node, `jobs.${id} is missing runs-on`);
  if (!isSeq(stepsNode) || stepsNode.items.length === 0) throw new WorkflowError(stepsNode ?? node, `jobs.${id}.steps must be a non-empty list`);
  if (stepsNode.items.length > WORKFLOW_LIMITS.stepsPerJob) throw new WorkflowError(stepsNode, `more than ${WORKFLOW_LIMITS.stepsPerJob} steps`);
  const raw: RawStep[] = [];
  for (const [i, s] of stepsNode.items.entries()) {
    const group = parallelGroup(s as Node, `jobs.${id}.steps[${i}]`);
    if (!group) raw.push(readStepRaw(s as Node, `jobs.${id}.steps[${i}]`, raw.length, r));
    else if (raw.length + group.length > WORKFLOW_LIMITS.stepsPerJob) throw new WorkflowError(s as Node, `more than ${WORKFLOW_LIMITS.stepsPerJob} steps`);
    else
      for (const [k, g] of group.entries()) {
        const step = readStepRaw(g as Node, `jobs.${id}.steps[${i}].parallel[${k}]`, raw.length, r);
        step.parallel = i;
        raw.push(step);
      }
    if (raw.length > WORKFLOW_LIMITS.stepsPerJob) throw new WorkflowError(stepsNode, `more than ${WORKFLOW_LIMITS.stepsPerJob} steps`);
  }
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
  const runsOnList = readRunsOn(runsOn, `jobs.${id}.runs-on`);
  const matrix = readMatrix(strategy, r);
  // A job whose matrix, name, runs-on or timeout reads needs is known only once its needs ended: one placeholder row.
  const readsNeeds = (n: { node: Node; text: string } | null) =>
    n !== null && !r.needs && r.template(n.node, n.text, "jobPlan")?.contexts.has("needs") === true;
  const dynamic =
    "dynamic" in matrix
      ? `jobs.${id}.strategy.matrix`
      : readsNeeds(name)
        ? `jobs.${id}.name`
        : runsOnList.some((e) => readsNeeds({ node: e.node, text: e.value }))
          ? `jobs.${id}.runs-on`
          : readsNeeds(timeout)
            ? `jobs.${id}.timeout-minutes`
            : null;
  if (dynamic !== null) {
    budget.charge(id.length, node);
    const job = placeholder(id, id, needIds, condition);
    job.dynamic = dynamic;
    return { jobs: [job], needs, needsNode };
  }
  const { cells, order } = matrix as { cells: MatrixCell[]; order: string[] };
  const workflowEnvSize = Object.entries(workflowEnv).reduce((n, [k, v]) => n + k.length + v.length, 0);
  const jobs = cells.map((cell): PlannedJob => {
    budget.job = WORKFLOW_LIMITS.jobSpecBytes;
    const base = name ? toText(r.value(name.node, name.text, "jobPlan", cell)) : literal(id, node, budget);
    const shown = order.filter((k) => cell[k] !== undefined).map((k) => `${k}=${shownValue(cell[k]!)}`);
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
    const labels = runsOnList.flatMap((e) => {
      const value = r.value(e.node, e.value, "jobPlan", cell);
      // An expression may give a list of labels (`runs-on: ${{ matrix.runner }}` with runner: [self-hosted, linux]).
      return (Array.isArray(value) ? value : [value]).map((one) => {
        const v = toText(one).toLowerCase();
        if (!LABEL_RE.test(v)) throw new WorkflowError(e.node, `invalid runner label ${JSON.stringify(v.slice(0, 100))}`);
        return v;
      });
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
      // Job-level continue-on-error is the server's (finish.ts, release.ts): decided here per cell, a boolean in the spec.
      if (continueOnError !== undefined)
        spec.continueOnError =
          typeof continueOnError === "boolean" ? continueOnError : continuesOf(r.value(continueOnError.node, continueOnError.text, "jobPlan", cell));
      if (outputs !== undefined) spec.outputs = outputs;
      if (Object.keys(cell).length) spec.matrix = cell;
      const refs = referencedNames(spec);
      if (refs.secrets.length) spec.secretRefs = refs.secrets;
      if (refs.vars.length) spec.varRefs = refs.vars;
    }
    if (spec.matrix && Object.values(spec.matrix).some((v) => typeof v === "object")) budget.charge(JSON.stringify(spec.matrix).length, strategy);
    const job: PlannedJob = { key, runsOn: runsOnLabels, hosted: !runsOnLabels.includes("self-hosted"), spec, workflowJob: id, needs: needIds };
    if (condition !== undefined) job.condition = condition;
    if (concurrencyNode !== undefined) job.concurrency = readConcurrency(concurrencyNode, `jobs.${id}.concurrency`, r, "jobPlan", cell);
    if (job.concurrency?.dynamic && Object.keys(cell).length) job.concurrency.matrix = cell;
    return job;
  });
  return { jobs, needs, needsNode };
}

/** A matrix value in a job key: scalars as they are, a mapping or list by its values (`x86_64, ubuntu-latest`), as GitHub shows them. */
function shownValue(v: Value): string {
  if (typeof v !== "object" || v === null) return toText(v);
  const leaves: string[] = [];
  const walk = (x: Value) => {
    if (leaves.length >= 16) return;
    if (typeof x !== "object" || x === null) leaves.push(toText(x));
    else for (const y of Array.isArray(x) ? x : Object.values(x)) walk(y);
  };
  walk(v);
  return leaves.join(", ");
}

/** A job that is planned (graph, condition) but not run as it is: a dynamic part, or a reusable workflow call. */
function placeholder(id: string, key: string, needs: string[], condition: string | undefined): PlannedJob {
  const job: PlannedJob = {
    key,
    runsOn: [],
    hosted: false,
    spec: { v: 2, env: {}, timeoutS: WORKFLOW_LIMITS.defaultTimeoutMinutes * 60, steps: [] },
    workflowJob: id,
    needs,
  };
  if (condition !== undefined) job.condition = condition;
  return job;
}

/**
 * `runs-on`: a label, a list of labels, or GitHub's `{ group, labels }` (svc routes by labels; a
 * group names a runner group on GitHub, which svc's runner policy decides instead: docs/api.md).
 */
function readRunsOn(node: Node | null | undefined, what: string): { value: string; node: Node }[] {
  if (!isMap(node)) return stringList(node, what);
  let labels: { value: string; node: Node }[] = [];
  let group: { value: string; node: Node } | null = null;
  for (const pair of entries(node, what)) {
    const k = keyOf(pair);
    if (k === "labels") labels = stringList(pair.value, `${what}.labels`);
    else if (k === "group") group = { value: scalarString(pair.value, `${what}.group`), node: pair.value as Node };
    else throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} under ${what} (expected group, labels)`);
  }
  if (!labels.length && group) throw new WorkflowError(group.node, `${what} names only a group; svc routes jobs by labels: add labels`);
  return labels;
}

function stepOf(s: RawStep, v2: boolean, cell: MatrixCell, r: Reader): StepSpec {
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
  if (s.parallel !== undefined) out.parallel = s.parallel;
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
 * The jobs (one a matrix cell) of placeholder job `job` of the workflow `text`, planned once its
 * needs ended (release.ts): the file is read again with the `needs` context, only that job is
 * planned, under the same limits (256 cells, the budgets); what reads `needs` is evaluated now. An
 * error (a bad `fromJSON`, too many cells) names the file, line and column and quotes the
 * expression, never a value. Pure.
 */
export function planJobAt(path: string, text: string, job: string, trigger: TriggerContext, needs: Record<string, Value>): ParsedWorkflow {
  return parseWorkflow(path, text, { ...trigger, release: { job, needs } });
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
    // Part F (corpus): planned so files written for GitHub parse, run by no part of this issue.
    if (j.calls !== undefined) uses.push(`jobs.${id} (a call of the reusable workflow ${j.calls})`);
    // A placeholder's cells are planned by release.ts once its needs ended (planJobAt); a reusable call's is not run.
    if (j.dynamic !== undefined && j.calls !== undefined) uses.push(`${j.dynamic} (it reads needs, so the job is planned once its needs ended)`);
    else if (j.dynamic !== undefined && !j.needs?.length) uses.push(`${j.dynamic} (it reads needs, and jobs.${id} has no needs)`);
    const grouped = j.spec.steps.find((s) => s.parallel !== undefined);
    if (grouped) uses.push(`jobs.${id}.steps[${grouped.parallel}].parallel (steps side by side)`);
    // A job with needs joins its group when release.ts releases it (a group reading needs evaluated then); one without needs has no needs to read.
    if (j.concurrency?.dynamic && !j.needs?.length) uses.push(`jobs.${id}.concurrency (a group that reads needs on a job without needs)`);
    if (uses.length) break;
  }
  if (!uses.length) return null;
  return `${path}: ${uses[0]} is parsed but not run by this server yet; the run does not start`;
}
