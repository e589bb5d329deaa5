// Composite actions (`runs.using: composite`): their steps run in the calling step, one after
// the other, with the `inputs` context (given or defaults), their own `steps` context, `github.
// action_path` and `$GITHUB_ACTION_PATH` (the action's directory). A run step names its shell
// (GitHub's rule); a uses step may name another action (composite ones nest at most
// COMPOSITE_MAX_DEPTH deep). Each step has id, name, if (success() over the composite's steps and
// the job), env, working-directory and continue-on-error; `$GITHUB_ENV` and `$GITHUB_PATH` apply
// to the later steps of the composite and of the job. The action's outputs are its `outputs.<x>.
// value` templates over its own steps. Everything is logged in the calling step's log.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { evaluateCondition, ExprError, parseCondition, parseTemplate, templateValue, truthy, type Value } from "../../../src/services/ci/expr/index.ts";
import { ActionProblem, type ActionHost, type ActionResult } from "../action-host.ts";
import { hashFiles, shellOf, workingDirectory } from "../steps.ts";
import { runUses } from "../uses.ts";
import type { ActionDef, CompositeStep } from "./action-yml.ts";
import { phaseEnv, phaseFiles, takePhaseFiles } from "./commands.ts";
import type { ActionRef } from "./inputs.ts";

/** How deep composite actions may nest (a composite in a composite in …): GitHub's own bound is 10. */
export const COMPOSITE_MAX_DEPTH = 10;

interface StepResult {
  outputs: Record<string, string>;
  outcome: "success" | "failure" | "skipped" | "cancelled";
  conclusion: "success" | "failure" | "skipped" | "cancelled";
}

/** Runs a composite action whose files are in `dir`. */
export async function runComposite(host: ActionHost, ref: ActionRef, def: ActionDef, dir: string, inputs: Record<string, string>): Promise<ActionResult> {
  if (def.runs.using !== "composite") throw new Error("not a composite action");
  const depth = host.nesting + 1;
  if (depth > COMPOSITE_MAX_DEPTH) throw new ActionProblem(`${ref.uses}: composite actions nest deeper than ${COMPOSITE_MAX_DEPTH} levels`);
  const steps: Record<string, StepResult> = {};
  let failed = false;
  const actionEnv: Record<string, string> = { ...ref.env, GITHUB_ACTION_PATH: dir };
  // The contexts of the composite's expressions: the job's, with its inputs, its own steps and github.action_path.
  const extra = (stepEnv: Record<string, string> = {}): Record<string, Value> => {
    const c = host.contexts();
    return {
      inputs,
      steps: steps as unknown as Value,
      github: {
        ...((c.github as Record<string, Value>) ?? {}),
        action_path: dir,
        action: actionEnv.GITHUB_ACTION ?? "",
        action_repository: actionEnv.GITHUB_ACTION_REPOSITORY ?? "",
        action_ref: actionEnv.GITHUB_ACTION_REF ?? "",
      },
      env: { ...((c.env as Record<string, Value>) ?? {}), ...stepEnv },
      // Why empty: an action's own file never reads the job's secrets (GitHub has no secrets context in action.yml); the workflow passes what an action needs as inputs.
      secrets: {},
    };
  };
  const render = (text: string, what: string, stepEnv?: Record<string, string>) => host.render(text, `${ref.uses} ${what}`, extra(stepEnv));
  const value = (text: string, what: string): Value => {
    try {
      return templateValue(parseTemplate(text), { contexts: { ...host.contexts(), ...extra() }, hashFiles: (p) => hashFiles(host.workspace, p) });
    } catch (e) {
      if (e instanceof ExprError) throw new ActionProblem(`${ref.uses} ${what} ${JSON.stringify(text.slice(0, 200))}: ${e.message}`);
      throw e;
    }
  };
  for (const [i, s] of def.runs.steps.entries()) {
    const at = `runs.steps[${i}]`;
    const record = (outcome: StepResult["outcome"], conclusion: StepResult["conclusion"], outputs: Record<string, string>) => {
      if (s.id) steps[s.id] = { outputs, outcome, conclusion };
    };
    let label = s.name ?? (s.run !== null ? s.run.split("\n")[0]!.slice(0, 80) : `Run ${s.uses}`);
    try {
      if (s.name) label = render(s.name, `${at}.name`);
    } catch {
      // the name as written
    }
    const st = host.status();
    const cancelled = host.cancelled();
    const status = { success: !failed && st === "success" && !cancelled, failure: failed || st === "failure", cancelled };
    let run: boolean;
    let continueOnError = false;
    let exit = 1;
    let outputs: Record<string, string> = {};
    try {
      const cond = s.if ?? "";
      run =
        cond === ""
          ? status.success
          : evaluateCondition(parseCondition(cond), { contexts: { ...host.contexts(), ...extra() }, hashFiles: (p) => hashFiles(host.workspace, p), status });
    } catch (e) {
      if (!(e instanceof ExprError)) throw e;
      host.log(`##[error] ${ref.uses} ${at}.if ${JSON.stringify((s.if ?? "").slice(0, 200))}: ${e.message}\n`);
      failed = true;
      record("failure", "failure", {});
      continue;
    }
    if (!run) {
      record("skipped", "skipped", {});
      continue;
    }
    host.log(`##[composite] ${label}\n`);
    try {
      if (typeof s.continueOnError === "boolean") continueOnError = s.continueOnError;
      else if (s.continueOnError) continueOnError = truthy(value(s.continueOnError, `${at}.continue-on-error`));
      const stepEnv: Record<string, string> = {};
      for (const [k, v] of Object.entries(s.env)) stepEnv[k] = render(v, `${at}.env.${k}`, stepEnv);
      ({ exit, outputs } =
        s.run !== null ? await runStep(host, s, at, stepEnv, { ...actionEnv }, render) : await usesStep(host, ref, s, at, stepEnv, depth, render));
    } catch (e) {
      if (!(e instanceof ActionProblem)) throw e;
      host.log(`##[error] ${e.message}\n`);
      exit = 1;
    }
    if (host.cancelled() && !cancelled) {
      record("cancelled", "cancelled", {});
      return { exit: 1, outputs: {}, error: `${ref.name} cancelled` };
    }
    if (exit !== 0) {
      host.log(`##[error] ${label} failed with exit code ${exit}${continueOnError ? " (continue-on-error: the action goes on)" : ""}\n`);
      if (!continueOnError) failed = true;
      record("failure", continueOnError ? "success" : "failure", outputs);
    } else record("success", "success", outputs);
  }
  const outputs: Record<string, string> = {};
  for (const [name, o] of Object.entries(def.outputs)) {
    if (o.value === null) continue;
    try {
      outputs[name] = render(o.value, `outputs.${name}.value`);
    } catch (e) {
      if (!(e instanceof ActionProblem)) throw e;
      host.log(`##[warning] ${e.message}\n`);
    }
  }
  if (failed) return { exit: 1, outputs, error: `${ref.name}: a step of the composite action ${ref.uses} failed` };
  return { exit: 0, outputs };
}

/** A run step of the composite: its script in its shell, its files read after. */
async function runStep(
  host: ActionHost,
  s: CompositeStep,
  at: string,
  stepEnv: Record<string, string>,
  actionEnv: Record<string, string>,
  render: (text: string, what: string, stepEnv?: Record<string, string>) => string,
): Promise<{ exit: number; outputs: Record<string, string> }> {
  const script = render(s.run!, `${at}.run`, stepEnv);
  const wdText = s.workingDirectory ? render(s.workingDirectory, `${at}.working-directory`, stepEnv) : null;
  const wd = workingDirectory(host.workspace, wdText);
  if (!wd.ok) throw new ActionProblem(wd.error);
  const files = phaseFiles(host.temp);
  const env = { ...host.env(), ...stepEnv, ...actionEnv, ...phaseEnv(files) };
  const shell = shellOf(render(s.shell!, `${at}.shell`, stepEnv), env.PATH, 2);
  const scriptPath = join(host.temp, `composite-${files.output.slice(-36)}${shell.ext ?? (shell.posix ? ".sh" : "")}`);
  writeFileSync(scriptPath, shell.posix ? `exec 2>&1\n${script}\n` : `${script}\n`);
  const argv = shell.argv.map((a) => a.replaceAll("{0}", scriptPath));
  let exit: number;
  try {
    exit = await host.exec(argv[0]!, argv.slice(1), { cwd: wd.path, env });
  } finally {
    rmSync(scriptPath, { force: true });
  }
  const got = await takePhaseFiles(host, files);
  return { exit, outputs: got.outputs };
}

/** A uses step of the composite: the nested action, one level deeper, with the step's env. */
async function usesStep(
  host: ActionHost,
  ref: ActionRef,
  s: CompositeStep,
  at: string,
  stepEnv: Record<string, string>,
  depth: number,
  render: (text: string, what: string, stepEnv?: Record<string, string>) => string,
): Promise<{ exit: number; outputs: Record<string, string> }> {
  const inputs: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.with)) inputs[k] = render(v, `${at}.with.${k}`, stepEnv);
  const nested: ActionHost = { ...host, nesting: depth, env: () => ({ ...host.env(), ...stepEnv }) };
  const r = await runUses(nested, { index: ref.index, uses: s.uses!, inputs, id: s.id, name: s.name ?? `Run ${s.uses}` });
  if (r.exit !== 0 && r.error) host.log(`##[error] ${r.error}\n`);
  return { exit: r.exit, outputs: r.outputs };
}
