// An action's metadata file (GitHub's `action.yml` / `action.yaml`, "Metadata syntax for GitHub
// Actions"): what the agent reads of it.
//
//   name, description              (shown, optional)
//   inputs:  { <id>: { description?, required?, default? } }     default may be a template
//   outputs: { <id>: { description?, value? } }                  value: a template (composite)
//   runs:
//     using: composite             steps: [ { run + shell | uses (+ with), id?, name?, if?, env?,
//                                  working-directory?, continue-on-error? } ]
//     using: node16|node20|node24  main, pre?, pre-if?, post?, post-if?
//     using: docker                refused (the agent has no container runtime)
//
// Hostile input (STYLE 10): the file is bounded in bytes, then scanned for nesting, entries,
// anchors and aliases (workflow-scan.ts, the workflow parser's scan) before the YAML parser sees
// it, and aliases are bounded again when the document becomes data. Errors name the file, never
// a value of it beyond the first characters of a bad field.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { scanMessage, scanWorkflow } from "../../../src/services/ci/workflow-scan.ts";
import { ActionProblem } from "../action-host.ts";

/** Bounds on an action's metadata file. */
export const ACTION_FILE_LIMITS = Object.freeze({
  /** Bytes of action.yml (real ones are under 10 KiB; actions/cache's is 3 KiB). */
  bytes: 256 * 1024,
  /** Nesting levels. */
  depth: 24,
  /** Anchors and aliases together. */
  anchors: 64,
  /** Mapping keys and list items. */
  entries: 20_000,
  /** Lines. */
  lines: 20_000,
  /** Steps of a composite action. */
  steps: 200,
  /** Inputs or outputs. */
  io: 500,
});

/** One input as declared. */
export interface ActionInput {
  required: boolean;
  /** The default as written (a template is evaluated when the action runs). */
  default: string | null;
}

/** One step of a composite action. */
export interface CompositeStep {
  id: string | null;
  name: string | null;
  if: string | null;
  run: string | null;
  shell: string | null;
  uses: string | null;
  with: Record<string, string>;
  env: Record<string, string>;
  workingDirectory: string | null;
  continueOnError: boolean | string;
}

/** How the action runs. */
export type ActionRuns =
  | { using: "composite"; steps: CompositeStep[] }
  | { using: "node"; version: string; main: string; pre: string | null; preIf: string | null; post: string | null; postIf: string | null }
  | { using: "docker"; image: string };

/** An action's metadata. */
export interface ActionDef {
  name: string;
  inputs: Record<string, ActionInput>;
  outputs: Record<string, { value: string | null }>;
  runs: ActionRuns;
}

/** Finds `action.yml` or `action.yaml` in `dir`; null when neither is there. */
export function actionFileIn(dir: string): string | null {
  for (const name of ["action.yml", "action.yaml"]) {
    const p = join(dir, name);
    if (existsSync(p) && statSync(p).isFile()) return p;
  }
  return null;
}

/** Reads an action's metadata from the directory `dir` (`what` names it in errors); throws ActionProblem. */
export async function readActionDir(dir: string, what: string): Promise<ActionDef> {
  const file = actionFileIn(dir);
  if (!file) {
    if (existsSync(join(dir, "Dockerfile")))
      throw new ActionProblem(`${what}: docker actions are not supported by the svc runner (it has no container runtime)`);
    throw new ActionProblem(`${what}: no action.yml or action.yaml in the action's directory`);
  }
  const size = statSync(file).size;
  if (size > ACTION_FILE_LIMITS.bytes) throw new ActionProblem(`${what}: its action.yml is larger than ${ACTION_FILE_LIMITS.bytes / 1024} KiB`);
  return parseActionYml(await Bun.file(file).text(), what);
}

/** A problem in the file, named. */
function bad(what: string, problem: string): ActionProblem {
  return new ActionProblem(`${what}: action.yml: ${problem}`);
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isMap = (v: Json | undefined): v is { [k: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);

/** A scalar as GitHub stringifies it (true, 3, ""). */
function scalar(v: Json | undefined, what: string, field: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "object") throw bad(what, `${field} must be a string`);
  return String(v);
}

/** A mapping of strings (env, with). */
function strings(v: Json | undefined, what: string, field: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isMap(v)) throw bad(what, `${field} must be a mapping`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) out[k] = scalar(x, what, `${field}.${k}`) ?? "";
  return out;
}

/** Parses the text of an action.yml (pure; `what` names the action in errors). */
export function parseActionYml(text: string, what: string): ActionDef {
  if (Buffer.byteLength(text) > ACTION_FILE_LIMITS.bytes) throw bad(what, `larger than ${ACTION_FILE_LIMITS.bytes / 1024} KiB`);
  // Why before parseDocument: the parser's cost grows with nesting and entries, not bytes (workflow-scan.ts).
  const scanned = scanWorkflow(text, {
    depth: ACTION_FILE_LIMITS.depth,
    jobs: Number.MAX_SAFE_INTEGER,
    anchors: ACTION_FILE_LIMITS.anchors,
    entries: ACTION_FILE_LIMITS.entries,
    lines: ACTION_FILE_LIMITS.lines,
  });
  if (scanned) throw bad(what, `line ${scanned.line}: ${scanMessage(scanned)}`);
  let data: Json;
  try {
    const doc = parseDocument(text, { uniqueKeys: false });
    if (doc.errors.length) throw bad(what, doc.errors[0]!.message.split("\n")[0]!);
    // Why maxAliasCount: an alias expands to a copy of what it names; bounded so a few aliases cannot make gigabytes.
    data = doc.toJS({ maxAliasCount: ACTION_FILE_LIMITS.anchors }) as Json;
  } catch (e) {
    if (e instanceof ActionProblem) throw e;
    throw bad(what, `could not be parsed (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`);
  }
  if (!isMap(data)) throw bad(what, "expected a mapping at the top");
  const inputs: Record<string, ActionInput> = {};
  if (data.inputs != null) {
    if (!isMap(data.inputs)) throw bad(what, "inputs must be a mapping");
    const list = Object.entries(data.inputs);
    if (list.length > ACTION_FILE_LIMITS.io) throw bad(what, `more than ${ACTION_FILE_LIMITS.io} inputs`);
    for (const [id, d] of list) {
      const m = isMap(d) ? d : {};
      inputs[id] = { required: m.required === true || m.required === "true", default: scalar(m.default, what, `inputs.${id}.default`) };
    }
  }
  const outputs: Record<string, { value: string | null }> = {};
  if (data.outputs != null) {
    if (!isMap(data.outputs)) throw bad(what, "outputs must be a mapping");
    const list = Object.entries(data.outputs);
    if (list.length > ACTION_FILE_LIMITS.io) throw bad(what, `more than ${ACTION_FILE_LIMITS.io} outputs`);
    for (const [id, d] of list) outputs[id] = { value: isMap(d) ? scalar(d.value, what, `outputs.${id}.value`) : null };
  }
  const runs = data.runs;
  if (!isMap(runs)) throw bad(what, "runs is missing (expected runs.using)");
  const using = scalar(runs.using, what, "runs.using") ?? "";
  const name = scalar(data.name, what, "name") ?? "";
  if (using === "docker") return { name, inputs, outputs, runs: { using: "docker", image: scalar(runs.image, what, "runs.image") ?? "" } };
  const node = /^node(\d+)$/.exec(using);
  if (node) {
    if (!["16", "20", "24", "12"].includes(node[1]!)) throw bad(what, `runs.using ${JSON.stringify(using)} is not supported (node16, node20 or node24)`);
    const main = scalar(runs.main, what, "runs.main");
    if (!main) throw bad(what, `runs.main is missing (a ${using} action names its script)`);
    return {
      name,
      inputs,
      outputs,
      runs: {
        using: "node",
        version: node[1]!,
        main,
        pre: scalar(runs.pre, what, "runs.pre"),
        preIf: scalar(runs["pre-if"], what, "runs.pre-if"),
        post: scalar(runs.post, what, "runs.post"),
        postIf: scalar(runs["post-if"], what, "runs.post-if"),
      },
    };
  }
  if (using !== "composite") throw bad(what, `runs.using ${JSON.stringify(using.slice(0, 40))} is not supported (composite, node16, node20, node24)`);
  const rawSteps = runs.steps;
  if (!Array.isArray(rawSteps)) throw bad(what, "runs.steps must be a list (a composite action has steps)");
  if (rawSteps.length > ACTION_FILE_LIMITS.steps) throw bad(what, `more than ${ACTION_FILE_LIMITS.steps} steps`);
  const steps = rawSteps.map((raw, i): CompositeStep => {
    const at = `runs.steps[${i}]`;
    if (!isMap(raw)) throw bad(what, `${at} must be a mapping`);
    const run = scalar(raw.run, what, `${at}.run`);
    const uses = scalar(raw.uses, what, `${at}.uses`);
    if (run === null && uses === null) throw bad(what, `${at} has no run (or uses)`);
    if (run !== null && uses !== null) throw bad(what, `${at} has both run and uses`);
    const shell = scalar(raw.shell, what, `${at}.shell`);
    // GitHub's rule: a composite's run step names its shell.
    if (run !== null && !shell) throw bad(what, `${at}.shell is required for a run step of a composite action`);
    const coe = raw["continue-on-error"];
    return {
      id: scalar(raw.id, what, `${at}.id`),
      name: scalar(raw.name, what, `${at}.name`),
      if: scalar(raw.if, what, `${at}.if`),
      run,
      shell,
      uses,
      with: strings(raw.with, what, `${at}.with`),
      env: strings(raw.env, what, `${at}.env`),
      workingDirectory: scalar(raw["working-directory"], what, `${at}.working-directory`),
      continueOnError: typeof coe === "boolean" ? coe : (scalar(coe, what, `${at}.continue-on-error`) ?? false),
    };
  });
  return { name, inputs, outputs, runs: { using: "composite", steps } };
}

/** GitHub's environment name of an input: `INPUT_` and the name upper-cased, spaces to `_` (`fetch-depth` → `INPUT_FETCH-DEPTH`). */
export function inputEnvName(name: string): string {
  return `INPUT_${name.replace(/ /g, "_").toUpperCase()}`;
}
