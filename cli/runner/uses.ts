// A `uses:` step (issue 30, DECISIONS §5 "Actions"): which action it names and how it runs.
//
//   actions/checkout@v4, actions/cache@…   a built-in of the agent (builtins/index.ts), any version
//   ./path  ($/path)                       an action in the job's workspace (checked out by an
//                                          earlier step, as on GitHub)
//   org/repo[/path]@ref                    an action in a repository on this server (a mirror of
//                                          a public action is the normal way to have one),
//                                          resolved by the server with the job token's rights,
//                                          fetched once per machine and commit (actions/fetch.ts)
//   docker://image, runs.using: docker     refused: the agent has no container runtime
//
// What the action's metadata says then runs it: composite (actions/composite.ts) or JavaScript
// (actions/node.ts).
import { isAbsolute, relative, resolve, sep } from "node:path";
import { realpathSync, existsSync } from "node:fs";
import { ActionProblem, type ActionHost, type ActionResult, type ActionStep } from "./action-host.ts";
import { readActionDir } from "./actions/action-yml.ts";
import { runComposite } from "./actions/composite.ts";
import { fetchAction } from "./actions/fetch.ts";
import { resolveInputs, type ActionRef } from "./actions/inputs.ts";
import { runNode } from "./actions/node.ts";
import { builtinFor } from "./builtins/index.ts";

/** Whether `uses` is the built-in checkout (a job with one starts with an empty workspace). */
export function usesCheckout(uses: string): boolean {
  const at = uses.lastIndexOf("@");
  return at > 0 && uses.slice(0, at).toLowerCase() === "actions/checkout";
}

/** The message for docker actions. */
export const DOCKER_REFUSED =
  "docker actions are not supported by the svc runner (it has no container runtime); use a composite or JavaScript action, or run the tool in a run: step";

/** An action's directory in the workspace (`./path`), refused when it leaves it. */
function localDir(host: ActionHost, uses: string): string {
  const rel = uses.replace(/^[.$]\//, "");
  const dir = resolve(host.workspace, rel);
  const inside = (root: string, p: string) => {
    const r = relative(root, p);
    return r === "" || (r !== ".." && !r.startsWith(`..${sep}`) && !isAbsolute(r));
  };
  if (!inside(host.workspace, dir)) throw new ActionProblem(`${uses}: the path leaves the workspace`);
  if (!existsSync(dir))
    throw new ActionProblem(
      `${uses}: no such directory in the workspace (a local action needs the repository checked out first, e.g. uses: actions/checkout@v4)`,
    );
  if (!inside(realpathSync(host.workspace), realpathSync(dir))) throw new ActionProblem(`${uses}: the path leaves the workspace (through a symbolic link)`);
  return dir;
}

/** Runs the action a `uses` step names; throws ActionProblem for what the step fails with. */
export async function runUses(host: ActionHost, step: ActionStep): Promise<ActionResult> {
  const uses = step.uses;
  if (uses.startsWith("docker://")) throw new ActionProblem(`${uses.slice(0, 120)}: ${DOCKER_REFUSED}`);
  const builtin = builtinFor(uses);
  if (builtin) return await builtin(host, step);
  let dir: string;
  const env: Record<string, string> = { GITHUB_ACTION: step.id ?? `__${uses.replace(/[^A-Za-z0-9]+/g, "_").slice(0, 60)}` };
  if (uses.startsWith("./") || uses.startsWith("$/")) {
    dir = localDir(host, uses);
  } else {
    const fetched = await fetchAction(host, uses);
    dir = fetched.dir;
    env.GITHUB_ACTION_REPOSITORY = fetched.repo;
    env.GITHUB_ACTION_REF = uses.slice(uses.lastIndexOf("@") + 1);
  }
  const def = await readActionDir(dir, uses);
  if (def.runs.using === "docker") throw new ActionProblem(`${uses}: ${DOCKER_REFUSED}`);
  const ref: ActionRef = { index: step.index, uses, name: step.name, env };
  const inputs = resolveInputs(host, def, step.inputs, uses);
  if (def.runs.using === "node") return await runNode(host, ref, def, dir, inputs);
  return await runComposite(host, ref, def, dir, inputs);
}
