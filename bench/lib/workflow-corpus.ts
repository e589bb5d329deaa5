// The corpus check of issue 29 part F (bench/workflows.ts, and its fixtures test): one GitHub
// workflow file is classified (excluded: a docker action, or a job with `services`/`container`,
// which need a container runtime), parsed and planned with the real parser
// (src/services/ci/workflow.ts), and compared with a reference computed here independently from
// the raw YAML (the `yaml` package, a plain walk): job ids, `needs` edges, and matrix cells per
// job following GitHub's documented rules (product of the dimensions, `exclude` by partial match,
// then each `include` entry extends every cell it does not overwrite an original value of, or
// else becomes a cell of its own). A matrix computed from an expression (`fromJSON(...)`) is
// "dynamic": one placeholder on both sides.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { parseWorkflow, type TriggerContext } from "../../src/services/ci/workflow.ts";

/** A job as both sides see it: the ids it needs and its matrix cell count ("dynamic": decided when the run is under way). */
export interface GraphJob {
  needs: string[];
  /** "computed": a matrix from an expression over github/inputs/vars (evaluated when planned; any count ≥ 1 is taken). */
  cells: number | "dynamic" | "computed";
}
export type Graph = Record<string, GraphJob>;

export type FileResult =
  | { kind: "excluded"; reason: string }
  | { kind: "failed"; error: string }
  | { kind: "different"; detail: string }
  | { kind: "equal"; jobs: number; cells: number; uses: Uses };

/** What in a planned file is parsed but not run yet (the run fails naming it): actions, and part F's constructs. */
export interface Uses {
  actions: boolean;
  reusable: boolean;
  placeholder: boolean;
  otherShell: boolean;
  parallel: boolean;
}

type Y = unknown;
const isObj = (v: Y): v is Record<string, Y> => typeof v === "object" && v !== null && !Array.isArray(v);
const isExpr = (v: Y) => typeof v === "string" && /^\s*\$\{\{[\s\S]*\}\}\s*$/.test(v);
/** An expression's kind: reading needs (known once the run is under way) or computed when planned. */
const exprKind = (v: Y): "dynamic" | "computed" => (/\bneeds\s*\./.test(String(v)) ? "dynamic" : "computed");

/** Why a workflow is out of the corpus (it needs containers), or null. */
export function excludedBecause(doc: Y): string | null {
  if (!isObj(doc) || !isObj(doc.jobs)) return null;
  for (const [id, job] of Object.entries(doc.jobs)) {
    if (!isObj(job)) continue;
    if (job.services !== undefined) return `jobs.${id}.services`;
    if (job.container !== undefined) return `jobs.${id}.container`;
    if (Array.isArray(job.steps))
      for (const s of job.steps) if (isObj(s) && typeof s.uses === "string" && s.uses.startsWith("docker://")) return `jobs.${id}: a docker:// action`;
  }
  return null;
}

const deepEqual = (a: Y, b: Y): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Matrix cells of one job by GitHub's rules (docs "Using a matrix for your jobs"). */
function referenceCells(strategy: Y): GraphJob["cells"] {
  if (!isObj(strategy)) return isExpr(strategy) ? exprKind(strategy) : 1;
  const matrix = strategy.matrix;
  if (matrix === undefined || matrix === null) return 1;
  if (!isObj(matrix)) return exprKind(matrix);
  // A value anywhere in the matrix read from needs: the cells are known only once the run is under way.
  if (/\$\{\{[^}]*\bneeds\s*\./.test(JSON.stringify(matrix))) return "dynamic";
  const dims: [string, Y[]][] = [];
  let include: Y[] = [];
  let exclude: Y[] = [];
  for (const [k, v] of Object.entries(matrix)) {
    if (k === "include" || k === "exclude") {
      if (isExpr(v)) return exprKind(v);
      if (k === "include") include = Array.isArray(v) ? v : [];
      else exclude = Array.isArray(v) ? v : [];
    } else if (Array.isArray(v)) dims.push([k, v]);
    else return exprKind(v);
  }
  let cells: Record<string, Y>[] = dims.length ? [{}] : [];
  for (const [k, values] of dims) cells = cells.flatMap((c) => values.map((v) => ({ ...c, [k]: v })));
  cells = cells.filter((c) => !exclude.some((x) => isObj(x) && Object.entries(x).every(([k, v]) => deepEqual(c[k], v))));
  const original = new Set(dims.map(([k]) => k));
  const extended: Record<string, Y>[] = cells.map((c) => ({ ...c }));
  const added: Record<string, Y>[] = [];
  for (const inc of include) {
    if (!isObj(inc)) continue;
    let merged = false;
    for (let i = 0; i < cells.length; i++) {
      const orig = cells[i]!;
      if (Object.entries(inc).every(([k, v]) => !original.has(k) || deepEqual(orig[k], v))) {
        Object.assign(extended[i]!, inc);
        merged = true;
      }
    }
    if (!merged) added.push(inc);
  }
  return extended.length + added.length;
}

/** The reference graph of a workflow from its raw YAML. */
export function referenceGraph(doc: Y): Graph | { error: string } {
  if (!isObj(doc) || !isObj(doc.jobs)) return { error: "no jobs mapping" };
  const out: Graph = {};
  for (const [id, job] of Object.entries(doc.jobs)) {
    if (!isObj(job)) return { error: `jobs.${id} is not a mapping` };
    const needs = job.needs === undefined ? [] : Array.isArray(job.needs) ? job.needs.map(String) : [String(job.needs)];
    out[id] = { needs: [...new Set(needs)].sort(), cells: referenceCells(job.strategy) };
  }
  return out;
}

/** The event to plan the file for: a push on the default branch when it has one, else its own first firing event. */
export function eventOf(doc: Y): TriggerContext["event"] {
  const on = isObj(doc) ? (doc.on ?? (doc as Record<string, Y>)[true as unknown as string]) : undefined;
  const names = typeof on === "string" ? [on] : Array.isArray(on) ? on.map(String) : isObj(on) ? Object.keys(on) : [];
  if (names.includes("push") || names.length === 0) return "push";
  if (names.includes("pull_request") || names.includes("change")) return "change";
  if (names.includes("workflow_dispatch")) return "workflow_dispatch";
  if (names.includes("schedule")) return "schedule";
  return "push";
}

/** Default inputs of a dispatch (what a form would submit untouched). */
export function dispatchInputs(doc: Y): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  const on = isObj(doc) ? doc.on : undefined;
  const wd = isObj(on) ? on.workflow_dispatch : undefined;
  const inputs = isObj(wd) ? wd.inputs : undefined;
  if (isObj(inputs))
    for (const [k, v] of Object.entries(inputs)) {
      const d = isObj(v) ? v.default : undefined;
      out[k] = typeof d === "boolean" ? d : d === undefined || d === null ? "" : String(d);
    }
  return out;
}

/** The graph the real parser plans (`.svc/workflows/<name>`). */
export function plannedGraph(name: string, text: string, doc: Y, defaultBranch: string): { graph: Graph; uses: Uses } | { error: string } {
  const event = eventOf(doc);
  const trigger: TriggerContext = {
    sha: "0123456789abcdef0123456789abcdef01234567",
    ref: `refs/heads/${defaultBranch}`,
    repository: "corpus/repo",
    event,
  };
  if (event === "workflow_dispatch") trigger.inputs = dispatchInputs(doc);
  const parsed = parseWorkflow(`.svc/workflows/${name}`, text, trigger);
  if (!parsed.ok) return { error: parsed.error };
  const out: Graph = {};
  const uses: Uses = {
    actions: parsed.jobs.some((j) => j.spec.steps.some((s) => s.uses !== undefined)),
    reusable: parsed.jobs.some((j) => j.calls !== undefined),
    placeholder: parsed.jobs.some((j) => j.dynamic !== undefined),
    otherShell: parsed.jobs.some((j) => [j.spec.defaults?.shell, ...j.spec.steps.map((s) => s.shell)].some((x) => x && x !== "sh" && x !== "bash")),
    parallel: parsed.jobs.some((j) => j.spec.steps.some((s) => s.parallel !== undefined)),
  };
  for (const [id, needs] of Object.entries(parsed.run.graph)) out[id] = { needs: [...needs].sort(), cells: 0 };
  for (const j of parsed.jobs) {
    const g = out[j.workflowJob ?? j.key];
    if (!g) return { error: `a planned job ${j.key} outside the graph` };
    if (j.dynamic?.endsWith(".strategy.matrix")) g.cells = "dynamic";
    else if (typeof g.cells === "number") g.cells++;
  }
  return { graph: out, uses };
}

function firstDifference(ref: Graph, got: Graph): string | null {
  const a = Object.keys(ref).sort();
  const b = Object.keys(got).sort();
  if (!deepEqual(a, b)) return `job ids: reference ${a.join(",")} / planned ${b.join(",")}`;
  for (const id of a) {
    if (!deepEqual(ref[id]!.needs, got[id]!.needs)) return `jobs.${id}.needs: reference [${ref[id]!.needs}] / planned [${got[id]!.needs}]`;
    const computed = ref[id]!.cells === "computed" && typeof got[id]!.cells === "number" && got[id]!.cells >= 1;
    if (!computed && ref[id]!.cells !== got[id]!.cells) return `jobs.${id} cells: reference ${ref[id]!.cells} / planned ${got[id]!.cells}`;
  }
  return null;
}

/** Classifies, plans and compares one workflow file. */
export function checkWorkflow(name: string, text: string, defaultBranch: string): FileResult {
  let doc: Y;
  try {
    doc = parseYaml(text, { maxAliasCount: -1 });
  } catch (e) {
    return { kind: "failed", error: `the reference could not read it: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` };
  }
  const excluded = excludedBecause(doc);
  if (excluded) return { kind: "excluded", reason: excluded };
  const ref = referenceGraph(doc);
  if ("error" in ref) return { kind: "failed", error: `reference: ${ref.error}` };
  const planned = plannedGraph(name, text, doc, defaultBranch);
  if ("error" in planned) return { kind: "failed", error: planned.error };
  const got = planned.graph;
  const diff = firstDifference(ref, got);
  if (diff) return { kind: "different", detail: diff };
  const cells = Object.values(got).reduce((n, j) => n + (typeof j.cells === "number" ? j.cells : 1), 0);
  return { kind: "equal", jobs: Object.keys(got).length, cells, uses: planned.uses };
}

/** One file of the corpus and what became of it. */
export interface CorpusRow {
  repo: string;
  file: string;
  result: FileResult;
}

/** The fixtures (test/fixtures/workflows/<owner>+<name>+<file>.yml, copied from the corpus), planned for a push to main. */
export function fixtureRows(dir = join(import.meta.dir, "..", "..", "test", "fixtures", "workflows")): CorpusRow[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => ({ repo: "fixtures", file: f, result: checkWorkflow(f, readFileSync(join(dir, f), "utf8"), "main") }));
}

/** Files, excluded, parsed, graph-equal and the share of the files not excluded that plan the reference graph. */
export function corpusSummary(rows: CorpusRow[]) {
  const excluded = rows.filter((r) => r.result.kind === "excluded").length;
  const parsed = rows.filter((r) => r.result.kind === "equal" || r.result.kind === "different").length;
  const equal = rows.filter((r) => r.result.kind === "equal").length;
  const considered = rows.length - excluded;
  const count = (k: keyof Uses) => rows.filter((r) => r.result.kind === "equal" && r.result.uses[k]).length;
  return {
    files: rows.length,
    excluded,
    parsed,
    graphEqual: equal,
    percent: considered ? +((100 * equal) / considered).toFixed(1) : 100,
    /** Of the graph-equal files, how many hold what is parsed but not run yet. */
    holding: {
      actions: count("actions"),
      reusable: count("reusable"),
      placeholder: count("placeholder"),
      otherShell: count("otherShell"),
      parallel: count("parallel"),
    },
  };
}
