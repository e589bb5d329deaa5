// Running a workflow by hand (issue 29, plan §3 C "Dispatch"; POST …/runs): the workflow file is
// read at the ref's commit and parsed on a worker thread; the caller's inputs are checked against
// the file's `workflow_dispatch.inputs` (typed: string, boolean, choice; required; defaults filled)
// and the run is created like any other (createRun) with event `workflow_dispatch`, the typed
// inputs stored, the caller as actor. Also: the workflows a writer may run this way (the web's
// "Run workflow" form).
import { AppError, NotFound, Unprocessable } from "../../errors.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { personOf } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { snapshotOf, type RepoSnapshot } from "../git/snapshot.ts";
import { createRun } from "./create-run.ts";
import { variablesForJob } from "./job-secrets.ts";
import { getRun } from "./runs.ts";
import type { Run } from "./schemas.ts";
import { parseOnThread, peelCommit, readWorkflowText, runnable, workflowFilesAt, type WorkflowFile } from "./trigger.ts";
import { WORKFLOW_LIMITS, type InputSpec, type ParseWorkflowOutput } from "./workflow.ts";
import { DispatchCache } from "./dispatch-cache.ts";
import { ThreadTaskError } from "../../util/thread-pool.ts";

/** Bounds on a dispatch request (hostile input): names looked at, and all values' characters together (GitHub's 65,535). */
export const DISPATCH_LIMITS = { inputNames: 100, inputChars: 65_535, workflowChars: 200, refChars: 1024 } as const;

/** A dispatch input's value as stored and handed to the job: booleans typed, the rest strings. */
export type InputValue = string | boolean | number;

/** What a dispatch asks for (POST …/runs). */
export interface DispatchInput {
  workflow: string;
  ref?: string;
  inputs?: Record<string, unknown>;
}

/** A workflow a writer may run by hand: its path, file name, display name and inputs. */
export interface DispatchableWorkflow {
  path: string;
  file: string;
  name: string | null;
  inputs: InputSpec[];
}

const WORKFLOW_NAME_RE = /^[A-Za-z0-9._-]+\.ya?ml$/;
const DIR = ".svc/workflows/";

/** The branch or tag `ref` names (a full ref, or a short name: branches first, then tags), with its commit; 404 when unknown. */
async function resolveRef(snapshot: RepoSnapshot, ref: string): Promise<{ ref: string; commit: string }> {
  const names = ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  for (const name of names) {
    if (!name.startsWith("refs/heads/") && !name.startsWith("refs/tags/")) continue;
    const hit = snapshot.refs.find((r) => r.name === name);
    if (!hit) continue;
    const commit = await peelCommit(snapshot, hit.oid);
    if (commit) return { ref: name, commit };
  }
  throw NotFound(`no branch or tag ${JSON.stringify(ref)}`);
}

/** The file `workflow` names (`ci.yml` or `.svc/workflows/ci.yml`) at `commit`; 404 when it is not there. */
async function findWorkflow(snapshot: RepoSnapshot, commit: string, workflow: string, ref: string): Promise<WorkflowFile> {
  const name = workflow.startsWith(DIR) ? workflow.slice(DIR.length) : workflow;
  const missing = () => NotFound(`no workflow ${JSON.stringify(workflow)} at ${ref}`);
  if (!WORKFLOW_NAME_RE.test(name)) throw missing();
  const f = (await workflowFilesAt(snapshot, commit)).find((e) => e.name === name);
  if (!f) throw missing();
  return f;
}

/**
 * Checks `given` against the workflow's input specs: every problem by input name (unknown input,
 * missing required input, wrong type, choice not among the options), else the typed inputs with
 * defaults filled (an unset input without a default: `""`, or false for a boolean).
 */
export function checkInputs(
  specs: readonly InputSpec[],
  given: Record<string, unknown>,
): { ok: true; inputs: Record<string, InputValue> } | { ok: false; problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  const inputs: Record<string, InputValue> = {};
  const byName = new Map(specs.map((s) => [s.name, s]));
  const keys = Object.keys(given);
  for (const k of keys.slice(0, DISPATCH_LIMITS.inputNames)) if (!byName.has(k)) problems[k.slice(0, 100)] = "unknown input: the workflow does not declare it";
  let chars = 0;
  for (const s of specs) {
    const has = Object.hasOwn(given, s.name) && given[s.name] !== null && given[s.name] !== undefined;
    const v = has ? given[s.name] : undefined;
    if (!has) {
      if (s.default !== null)
        inputs[s.name] =
          s.type === "boolean" ? s.default === true || s.default === "true" : s.type === "number" ? (numberOf(s.default) ?? 0) : String(s.default);
      else if (s.required) problems[s.name] = "required: the workflow declares no default";
      else inputs[s.name] = s.type === "boolean" ? false : "";
      continue;
    }
    if (s.type === "boolean") {
      if (v === true || v === "true") inputs[s.name] = true;
      else if (v === false || v === "false") inputs[s.name] = false;
      else problems[s.name] = "must be a boolean (true or false)";
      continue;
    }
    if (s.type === "number") {
      // GitHub types a number input as a number in `inputs`; a form sends it as text.
      const n = numberOf(v);
      if (n === null) problems[s.name] = "must be a number";
      else inputs[s.name] = n;
      continue;
    }
    if (typeof v !== "string") {
      problems[s.name] = "must be a string";
      continue;
    }
    chars += v.length;
    if (s.type === "choice" && !(s.options ?? []).includes(v)) {
      problems[s.name] = `must be one of ${(s.options ?? []).map((o) => JSON.stringify(o)).join(", ")}`;
      continue;
    }
    if (s.required && v === "") {
      problems[s.name] = "required: may not be empty";
      continue;
    }
    inputs[s.name] = v;
  }
  if (chars > DISPATCH_LIMITS.inputChars)
    return { ok: false, problems: { ...problems, "*": `the inputs are longer than ${DISPATCH_LIMITS.inputChars} characters together` } };
  return Object.keys(problems).length ? { ok: false, problems } : { ok: true, inputs };
}

/** A finite number from a JSON number or its text ("3", "-1.5"); null otherwise. */
function numberOf(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v !== "string" || !/^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/.test(v)) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Parses a workflow file's text for a dispatch (on a worker thread); the malformed file is a 422 with its error. */
async function parseForDispatch(
  ctx: Ctx,
  t: RepoTarget,
  f: WorkflowFile,
  text: string,
  at: { ref: string; commit: string },
  inputs?: Record<string, InputValue>,
) {
  // Plan-time values read vars (plan-29 §3.B).
  const vars = await variablesForJob(ctx.db.read, { orgId: t.org.id, repoId: t.repo.id, trusted: true });
  const parsed: ParseWorkflowOutput = await parseOnThread(ctx, {
    path: f.path,
    text,
    trigger: { sha: at.commit, ref: at.ref, repository: `${t.org.name}/${t.repo.name}`, event: "workflow_dispatch", inputs, vars },
    branch: at.ref.replace(/^refs\/(heads|tags)\//, ""),
  });
  if (!parsed.ok) throw Unprocessable(parsed.error);
  return parsed;
}

/** POST /v1/orgs/{org}/repos/{repo}/runs: runs `workflow` at `ref` (default: the default branch) with `inputs`; 201 with the Run. */
export async function dispatchWorkflow(ctx: Ctx, t: RepoTarget, input: DispatchInput): Promise<Run> {
  need(t, "repo:write");
  if (typeof input.workflow !== "string" || !input.workflow || input.workflow.length > DISPATCH_LIMITS.workflowChars)
    throw Unprocessable(`workflow must be a workflow file name (ci.yml) or path (${DIR}ci.yml)`);
  const refName = input.ref ?? t.repo.defaultBranch;
  if (typeof refName !== "string" || !refName || refName.length > DISPATCH_LIMITS.refChars) throw Unprocessable("ref must be a branch, a tag or a full ref");
  if (input.inputs !== undefined && (typeof input.inputs !== "object" || input.inputs === null || Array.isArray(input.inputs)))
    throw Unprocessable("inputs must be an object of input names to values");
  const snapshot = await snapshotOf(ctx, t);
  const at = await resolveRef(snapshot, refName);
  const f = await findWorkflow(snapshot, at.commit, input.workflow, refName);
  const read = await readWorkflowText(snapshot, f);
  if (!read) throw NotFound(`no workflow ${JSON.stringify(input.workflow)} at ${refName}`);
  if ("error" in read) throw Unprocessable(read.error);
  let parsed = await parseForDispatch(ctx, t, f, read.text, at);
  const specs = parsed.run?.dispatch;
  if (!parsed.matches || !specs) throw Unprocessable(`${f.path} has no workflow_dispatch trigger`);
  const checked = checkInputs(specs, input.inputs ?? {});
  if (!checked.ok) throw new AppError("unprocessable", "the inputs do not match the workflow's workflow_dispatch inputs", { inputs: checked.problems });
  // Plan-time values (run-name, job names, runs-on, concurrency) may read the inputs: parsed again with them.
  if (specs.length) parsed = await parseForDispatch(ctx, t, f, read.text, at, checked.inputs);
  if (!parsed.matches) throw Unprocessable(`${f.path} has no workflow_dispatch trigger`);
  const planned = runnable(f.path, parsed);
  const made = await ctx.db.transaction((tx) =>
    createRun(ctx, tx, planned, {
      repoId: t.repo.id,
      orgId: t.org.id,
      orgName: t.org.name,
      ref: at.ref,
      commit: at.commit,
      event: "workflow_dispatch",
      actorUserId: personOf(t.actor)?.id ?? null,
      inputs: checked.inputs,
    }),
  );
  if (!made.created) throw new Error("a dispatch always creates a run");
  return getRun(ctx, t, made.runId);
}

/** What the runs list's "Run workflow" form offers: the dispatchable workflows, and the files that could not be read just now. */
export interface DispatchableList {
  ref: string;
  workflows: DispatchableWorkflow[];
  /** Paths of workflow files not read or parsed this time (a thread's time limit, a busy pool, storage): they may declare workflow_dispatch. */
  unreadable: string[];
}

/**
 * The workflows at the default branch's tip that declare `workflow_dispatch`, with their input
 * specs (each file parsed on a worker thread; malformed files are left out): what the web's "Run
 * workflow" form offers. Needs repo:write (only writers may dispatch). Remembered by repository,
 * ref and commit (ctx.caches.dispatchable), so the runs list parses the files once per commit.
 * Never fails for a file: one that cannot be read or parsed in time is named in `unreadable` (and
 * the answer is not remembered), so the runs list still draws.
 */
export async function dispatchableWorkflows(ctx: Ctx, t: RepoTarget): Promise<DispatchableList> {
  need(t, "repo:write");
  const ref = `refs/heads/${t.repo.defaultBranch}`;
  const snapshot = await snapshotOf(ctx, t);
  const tip = snapshot.refs.find((r) => r.name === ref);
  if (!tip) return { ref, workflows: [], unreadable: [] };
  const cache = ctx.caches.dispatchable;
  const key = DispatchCache.key(t.repo.id, ref, tip.oid);
  const known = cache.get(key);
  if (known) return { ref, workflows: [...known], unreadable: [] };
  const out: DispatchableWorkflow[] = [];
  const unreadable: string[] = [];
  let files: WorkflowFile[];
  try {
    files = await workflowFilesAt(snapshot, tip.oid);
  } catch (e) {
    ctx.log.warn("ci.dispatchable: the workflow files could not be listed", { repoId: t.repo.id, commit: tip.oid, error: String(e) });
    return { ref, workflows: [], unreadable: [DIR] };
  }
  for (const f of files) {
    try {
      const read = await readWorkflowText(snapshot, f);
      if (!read || "error" in read) continue;
      const parsed = await ctx.threads.run(
        "ci.parseWorkflow",
        {
          path: f.path,
          text: read.text,
          trigger: { sha: tip.oid, ref, repository: `${t.org.name}/${t.repo.name}`, event: "workflow_dispatch" },
          branch: t.repo.defaultBranch,
        },
        { timeLimitMs: WORKFLOW_LIMITS.parseMs },
      );
      if (!parsed.ok || !parsed.matches || !parsed.run?.dispatch) continue;
      out.push({ path: f.path, file: f.name, name: parsed.run.name, inputs: parsed.run.dispatch });
    } catch (e) {
      // A parser that broke on the file (kind "failed") is the file's problem, like a malformed one:
      // left out, and remembered. Anything else (time limit, busy pool, storage) may pass: retried next view.
      if (e instanceof ThreadTaskError && e.kind === "failed") continue;
      ctx.log.warn("ci.dispatchable: a workflow file could not be read", { repoId: t.repo.id, path: f.path, error: String(e) });
      unreadable.push(f.path);
    }
  }
  if (!unreadable.length) cache.set(key, out);
  return { ref, workflows: out, unreadable };
}
