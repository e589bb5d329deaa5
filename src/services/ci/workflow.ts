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
// Expressions: `${{ matrix.<name> }}` and `${{ github.sha | ref | ref_name | repository |
// event_name }}` inside strings. Anything else is an error naming file, line and column; a file
// with an error becomes a failed run (it never breaks the push). Pure: no I/O, so it runs on a
// worker thread (`ci.parseWorkflow` in src/thread-tasks.ts) with a time limit.
//
// Bounded before and while parsing (issue 25 rows 2 and 8): the file's size, its nesting (a scan
// before the YAML parser, workflow-scan.ts), and what expansion may produce: every string a run's
// jobs carry (keys, labels, env, step names and scripts) is charged to a budget per job and per
// run, checked before a string is built, so a matrix value referenced thousands of times is
// refused at the first expansion past the budget instead of becoming 100 MB of job specs.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair, type YAMLMap } from "yaml";
import type { JobSpec } from "../../db/schema/index.ts";
import { globMatch } from "../../util/glob.ts";
import { WORKFLOW_MAX_DEPTH, yamlTooDeep } from "./workflow-scan.ts";

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
} as const;

/** A branch filter of one event (null lists: no filter). */
export interface BranchFilter {
  branches: string[] | null;
  ignore: string[] | null;
}

/** One job of a run, ready to be queued. */
export interface PlannedJob {
  key: string;
  runsOn: string[];
  hosted: boolean;
  spec: JobSpec;
}

/** A parsed workflow, or why it is malformed. */
export type ParsedWorkflow =
  | { ok: true; name: string | null; on: { push?: BranchFilter; change?: BranchFilter }; jobs: PlannedJob[] }
  | { ok: false; error: string };

/** What `${{ github.* }}` reads. */
export interface TriggerContext {
  sha: string;
  ref: string;
  repository: string;
  event: "push" | "change";
}

class WorkflowError extends Error {
  constructor(
    readonly node: { range?: [number, number, number] | null } | null | undefined,
    message: string,
  ) {
    super(message);
  }
}

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
    if (e instanceof WorkflowError) return { ok: false, error: `${at(e.node?.range?.[0])}: ${e.message}` };
    // Why: a hostile document may still exhaust the stack while being read; that is the file's problem.
    if (e instanceof RangeError) return { ok: false, error: `${path}: the file could not be read (${e.message})` };
    throw e;
  }
}

/** The input of the `ci.parseWorkflow` thread task. */
export interface ParseWorkflowInput {
  path: string;
  text: string;
  trigger: TriggerContext;
  /** Short branch name the trigger is for: the answer says whether the workflow runs for it. */
  branch: string;
}

/** What the `ci.parseWorkflow` thread task answers: the parse, and whether its `on` matches the trigger. */
export type ParseWorkflowOutput = { ok: true; matches: boolean; jobs: PlannedJob[] } | { ok: false; error: string };

/** The `ci.parseWorkflow` thread task: parse, then match the trigger's event and branch (pure). */
export function parseWorkflowTask(input: ParseWorkflowInput): ParseWorkflowOutput {
  const parsed = parseWorkflow(input.path, input.text, input.trigger);
  if (!parsed.ok) return parsed;
  const matches = workflowMatches(parsed.on, input.trigger.event, input.branch);
  // Jobs of a workflow that does not run stay on the thread (nothing to copy back).
  return { ok: true, matches, jobs: matches ? parsed.jobs : [] };
}

/** Whether a parsed workflow runs for `event` on `branch` (a short branch name). */
export function workflowMatches(on: { push?: BranchFilter; change?: BranchFilter }, event: "push" | "change", branch: string): boolean {
  const f = on[event];
  if (!f) return false;
  if (f.branches && !f.branches.some((p) => globMatch(p, branch))) return false;
  if (f.ignore && f.ignore.some((p) => globMatch(p, branch))) return false;
  return true;
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

function readWorkflow(
  root: Node | null,
  trigger: TriggerContext,
): { name: string | null; on: { push?: BranchFilter; change?: BranchFilter }; jobs: PlannedJob[] } {
  if (root === null) throw new WorkflowError(null, "the file is empty");
  let name: string | null = null;
  let on: { push?: BranchFilter; change?: BranchFilter } | null = null;
  let env: Record<string, string> = {};
  let jobsNode: Node | null | undefined;
  for (const pair of entries(root, "a workflow")) {
    const key = keyOf(pair);
    if (key === "name") name = scalarString(pair.value, "name");
    else if (key === "on") on = readOn(pair.value);
    else if (key === "env") env = readEnv(pair.value, "env", null);
    else if (key === "jobs") jobsNode = pair.value ?? null;
    else throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(key)} (expected name, on, env, jobs)`);
  }
  if (!on) throw new WorkflowError(root, "missing `on` (push, change, or both)");
  if (jobsNode === undefined) throw new WorkflowError(root, "missing `jobs`");
  const jobs: PlannedJob[] = [];
  const keys = new Set<string>();
  const budget = new Budget();
  for (const pair of entries(jobsNode, "jobs")) {
    for (const job of readJob(keyOf(pair), pair.value, env, trigger, budget)) {
      if (keys.has(job.key.toLowerCase())) throw new WorkflowError(pair.key as Node, `two jobs have the key ${JSON.stringify(job.key)}`);
      keys.add(job.key.toLowerCase());
      jobs.push(job);
      if (jobs.length > WORKFLOW_LIMITS.jobsPerRun) throw new WorkflowError(pair.key as Node, `more than ${WORKFLOW_LIMITS.jobsPerRun} jobs`);
    }
  }
  if (!jobs.length) throw new WorkflowError(jobsNode, "`jobs` is empty");
  return { name, on, jobs };
}

const EVENTS: ReadonlySet<string> = new Set(["push", "change"]);

function readOn(node: Node | null | undefined): { push?: BranchFilter; change?: BranchFilter } {
  const out: { push?: BranchFilter; change?: BranchFilter } = {};
  const all = { branches: null, ignore: null };
  if (isScalar(node) || isSeq(node)) {
    for (const e of stringList(node, "on")) {
      if (!EVENTS.has(e.value)) throw new WorkflowError(e.node, `unsupported event ${JSON.stringify(e.value)} (expected push or change)`);
      out[e.value as "push" | "change"] = all;
    }
    return out;
  }
  for (const pair of entries(node, "on")) {
    const event = keyOf(pair);
    if (!EVENTS.has(event)) throw new WorkflowError(pair.key as Node, `unsupported event ${JSON.stringify(event)} (expected push or change)`);
    const filter: BranchFilter = { branches: null, ignore: null };
    const v = pair.value;
    if (v !== null && !(isScalar(v) && v.value === null)) {
      for (const f of entries(v, `on.${event}`)) {
        const k = keyOf(f);
        if (k === "branches") filter.branches = stringList(f.value, `on.${event}.branches`).map((e) => e.value);
        else if (k === "branches-ignore") filter.ignore = stringList(f.value, `on.${event}.branches-ignore`).map((e) => e.value);
        else throw new WorkflowError(f.key as Node, `unknown key ${JSON.stringify(k)} under on.${event} (expected branches, branches-ignore)`);
      }
    }
    out[event as "push" | "change"] = filter;
  }
  return out;
}

function readEnv(
  node: Node | null | undefined,
  what: string,
  expansion: { matrix: Record<string, string>; trigger: TriggerContext; budget: Budget } | null,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) return out;
  for (const pair of entries(node, what)) {
    const k = keyOf(pair);
    if (!ENV_NAME_RE.test(k)) throw new WorkflowError(pair.key as Node, `invalid environment variable name ${JSON.stringify(k)}`);
    const v = pair.value;
    if (!isScalar(v) || typeof v.value === "object") throw new WorkflowError(v ?? (pair.key as Node), `${what}.${k} must be a string, number or boolean`);
    const text = String(v.value ?? "");
    if (expansion) {
      expansion.budget.charge(k.length, pair.key as Node);
      out[k] = expand(text, v, expansion.matrix, expansion.trigger, expansion.budget);
    } else out[k] = text;
  }
  return out;
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

function readJob(id: string, node: Node | null | undefined, workflowEnv: Record<string, string>, trigger: TriggerContext, budget: Budget): PlannedJob[] {
  if (!/^[A-Za-z_][A-Za-z0-9_-]{0,99}$/.test(id)) throw new WorkflowError(node, `invalid job id ${JSON.stringify(id)}`);
  let name: { text: string; node: Node } | null = null;
  let runsOn: Node | null | undefined;
  let strategy: Node | null | undefined;
  let envNode: Node | null | undefined;
  let timeout: number = WORKFLOW_LIMITS.defaultTimeoutMinutes;
  let stepsNode: Node | null | undefined;
  for (const pair of entries(node, `jobs.${id}`)) {
    const k = keyOf(pair);
    if (k === "name") name = { text: scalarString(pair.value, `jobs.${id}.name`), node: pair.value as Node };
    else if (k === "runs-on") runsOn = pair.value;
    else if (k === "strategy") strategy = pair.value;
    else if (k === "env") envNode = pair.value;
    else if (k === "steps") stepsNode = pair.value;
    else if (k === "timeout-minutes") {
      const v = pair.value;
      if (!isScalar(v) || typeof v.value !== "number" || !(v.value >= 0.05) || v.value > WORKFLOW_LIMITS.timeoutMinutes) {
        throw new WorkflowError(v, `timeout-minutes must be a number from 0.05 to ${WORKFLOW_LIMITS.timeoutMinutes}`);
      }
      timeout = v.value;
    } else
      throw new WorkflowError(
        pair.key as Node,
        `unknown key ${JSON.stringify(k)} in jobs.${id} (expected name, runs-on, strategy, env, timeout-minutes, steps)`,
      );
  }
  if (runsOn === undefined) throw new WorkflowError(node, `jobs.${id} is missing runs-on`);
  if (!isSeq(stepsNode) || stepsNode.items.length === 0) throw new WorkflowError(stepsNode ?? node, `jobs.${id}.steps must be a non-empty list`);
  if (stepsNode.items.length > WORKFLOW_LIMITS.stepsPerJob) throw new WorkflowError(stepsNode, `more than ${WORKFLOW_LIMITS.stepsPerJob} steps`);
  const { cells, order } = readMatrix(strategy);
  const workflowEnvSize = Object.entries(workflowEnv).reduce((n, [k, v]) => n + k.length + v.length, 0);
  return cells.map((cell) => {
    budget.job = WORKFLOW_LIMITS.jobSpecBytes;
    const base = name ? expand(name.text, name.node, cell, trigger, budget) : literal(id, node, budget);
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
    const labels = stringList(runsOn, `jobs.${id}.runs-on`).map((e) => {
      const v = expand(e.value, e.node, cell, trigger, budget).toLowerCase();
      if (!LABEL_RE.test(v)) throw new WorkflowError(e.node, `invalid runner label ${JSON.stringify(v.slice(0, 100))}`);
      return v;
    });
    const runsOnLabels = [...new Set(labels)];
    if (!runsOnLabels.length) throw new WorkflowError(runsOn, `jobs.${id}.runs-on names no label`);
    // The workflow's env is copied into every job: each copy counts.
    budget.charge(workflowEnvSize, node);
    const env = { ...workflowEnv, ...readEnv(envNode, `jobs.${id}.env`, { matrix: cell, trigger, budget }) };
    const steps = (stepsNode as { items: unknown[] }).items.map((s, i) => readStep(s as Node, `jobs.${id}.steps[${i}]`, i, cell, trigger, budget));
    return { key, runsOn: runsOnLabels, hosted: !runsOnLabels.includes("self-hosted"), spec: { steps, env, timeoutS: Math.max(3, Math.round(timeout * 60)) } };
  });
}

function readStep(node: Node, what: string, index: number, matrix: Record<string, string>, trigger: TriggerContext, budget: Budget): JobSpec["steps"][number] {
  let name: string | null = null;
  let run: string | null = null;
  let env: Record<string, string> = {};
  for (const pair of entries(node, what)) {
    const k = keyOf(pair);
    if (k === "name") name = expand(scalarString(pair.value, `${what}.name`), pair.value as Node, matrix, trigger, budget);
    else if (k === "run") run = expand(scalarString(pair.value, `${what}.run`), pair.value as Node, matrix, trigger, budget);
    else if (k === "env") env = readEnv(pair.value, `${what}.env`, { matrix, trigger, budget });
    else if (k === "uses") throw new WorkflowError(pair.key as Node, "`uses` is not supported: write a `run` step (the repository is already checked out)");
    else throw new WorkflowError(pair.key as Node, `unknown key ${JSON.stringify(k)} in a step (expected name, run, env)`);
  }
  if (run === null) throw new WorkflowError(node, `${what} has no run`);
  return { name: name ?? (run.split("\n")[0]!.slice(0, 80) || `step ${index + 1}`), run, env };
}
