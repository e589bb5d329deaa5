// JavaScript actions (`runs.using: node16|node20|node24`): `node <dir>/<main>` with the inputs as
// `INPUT_<NAME>`, outputs through `$GITHUB_OUTPUT` (or `::set-output`), `$GITHUB_ENV` and
// `$GITHUB_PATH` for later steps, and `$GITHUB_STATE` (or `::save-state`) handed to later phases
// as `STATE_<name>`. `pre` (its `pre-if`, default always()) runs right before `main` (GitHub runs
// it at the job's start; an action cannot tell the difference but for the order of logs); `post`
// (its `post-if`, default always()) is a post phase of the job (ActionHost.addPost). The runner's
// own `node` runs every version: the agent needs it on PATH and says so when it is missing.
import { isAbsolute, relative, resolve, sep } from "node:path";
import { evaluateCondition, ExprError, parseCondition } from "../../../src/services/ci/expr/index.ts";
import { ActionProblem, type ActionHost, type ActionResult } from "../action-host.ts";
import { hashFiles, onPath } from "../steps.ts";
import type { ActionDef } from "./action-yml.ts";
import { phaseEnv, phaseFiles, StdoutCommands, takePhaseFiles } from "./commands.ts";
import { inputEnv, type ActionRef } from "./inputs.ts";

/** The message when node is missing (the test and the docs quote it). */
export const NODE_MISSING = "JavaScript actions need node on the runner's PATH";

/** A script of the action, inside its directory (`main: ../../x` refused). */
function scriptIn(dir: string, file: string, what: string): string {
  const p = resolve(dir, file);
  const rel = relative(dir, p);
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new ActionProblem(`${what}: ${JSON.stringify(file.slice(0, 100))} is outside the action's directory`);
  return p;
}

/** Evaluates a `pre-if`/`post-if` over the job's contexts and status now. */
export function phaseCondition(host: ActionHost, text: string, what: string): boolean {
  const s = host.status();
  try {
    return evaluateCondition(parseCondition(text), {
      contexts: host.contexts(),
      hashFiles: (patterns) => hashFiles(host.workspace, patterns),
      status: { success: s === "success", failure: s === "failure", cancelled: s === "cancelled" },
    });
  } catch (e) {
    if (e instanceof ExprError) throw new ActionProblem(`${what} ${JSON.stringify(text.slice(0, 200))}: ${e.message}`);
    throw e;
  }
}

/** Runs a JavaScript action whose files are in `dir`. */
export async function runNode(host: ActionHost, ref: ActionRef, def: ActionDef, dir: string, inputs: Record<string, string>): Promise<ActionResult> {
  if (def.runs.using !== "node") throw new Error("not a node action");
  const runs = def.runs;
  const base = host.env();
  if (!onPath("node", base.PATH)) throw new ActionProblem(`${ref.uses}: ${NODE_MISSING}`);
  const env0 = { ...base, ...inputEnv(inputs), ...ref.env, GITHUB_ACTION_PATH: dir };
  const state: Record<string, string> = {};
  const phase = async (file: string, label: string): Promise<{ exit: number; outputs: Record<string, string> }> => {
    const script = scriptIn(dir, file, `${ref.uses} runs.${label}`);
    const files = phaseFiles(host.temp);
    const cmds = new StdoutCommands();
    const stateEnv = Object.fromEntries(Object.entries(state).map(([k, v]) => [`STATE_${k}`, v]));
    const env = { ...env0, ...stateEnv, ...phaseEnv(files) };
    const exit = await host.exec("node", [script], { cwd: host.workspace, env, out: (s) => cmds.push(s) });
    cmds.end();
    const got = await takePhaseFiles(host, files);
    Object.assign(state, cmds.state, got.state);
    return { exit, outputs: { ...cmds.outputs, ...got.outputs } };
  };
  if (runs.pre && phaseCondition(host, runs.preIf ?? "always()", `${ref.uses} runs.pre-if`)) {
    host.log(`##[pre] Pre ${ref.uses}\n`);
    const pre = await phase(runs.pre, "pre");
    if (pre.exit !== 0) return { exit: pre.exit, outputs: {}, error: `${ref.uses}: its pre script failed with exit code ${pre.exit}` };
  }
  const main = await phase(runs.main, "main");
  if (runs.post) {
    const postIf = runs.postIf ?? "always()";
    const post = runs.post;
    host.addPost({
      name: ref.name,
      when: postIf.replace(/\s/g, "") === "success()" ? "success" : "always",
      run: async () => {
        if (!phaseCondition(host, postIf, `${ref.uses} runs.post-if`)) {
          host.log(`post-if ${postIf} was false: skipped\n`);
          return;
        }
        const r = await phase(post, "post");
        if (r.exit !== 0) throw new ActionProblem(`${ref.uses}: its post script failed with exit code ${r.exit}`);
      },
    });
  }
  if (main.exit !== 0) return { exit: main.exit, outputs: main.outputs, error: `${ref.name} failed with exit code ${main.exit}` };
  return { exit: 0, outputs: main.outputs };
}
