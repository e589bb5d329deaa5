// An action's inputs as it sees them: the `with:` values given (already evaluated), the declared
// defaults for the rest (templates evaluated now, e.g. `${{ github.token }}`), names matched
// case-insensitively as GitHub does; and their environment names (`INPUT_<NAME>`).
import type { ActionHost } from "../action-host.ts";
import { type ActionDef, inputEnvName } from "./action-yml.ts";

/** Which action runs, for logs and GITHUB_ACTION*: the reference as written, the step's name, and env the action's processes get. */
export interface ActionRef {
  /** The job step it runs in (0-based). */
  index: number;
  uses: string;
  name: string;
  /** GITHUB_ACTION, GITHUB_ACTION_REPOSITORY, GITHUB_ACTION_REF. */
  env: Record<string, string>;
}

/** The inputs an action runs with. */
export function resolveInputs(host: ActionHost, def: ActionDef, given: Record<string, string>, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  const byLower = new Map(Object.entries(given).map(([k, v]) => [k.toLowerCase(), v]));
  for (const [id, d] of Object.entries(def.inputs)) {
    const v = byLower.get(id.toLowerCase());
    if (v !== undefined) out[id] = v;
    // Why secrets empty: a default written by the action's author never reads the job's secrets (see composite.ts).
    else if (d.default !== null) out[id] = host.render(d.default, `${what} inputs.${id}.default`, { secrets: {} });
    else out[id] = "";
    byLower.delete(id.toLowerCase());
  }
  // Inputs the action does not declare are passed too (GitHub warns and passes them).
  for (const [k, v] of Object.entries(given)) if (byLower.has(k.toLowerCase())) out[k] = v;
  return out;
}

/** `INPUT_<NAME>` for each input. */
export function inputEnv(inputs: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [inputEnvName(k), v]));
}
