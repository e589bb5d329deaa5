// The actions built into the agent (issue 30, DECISIONS §5 "Actions"): `actions/checkout`,
// `actions/upload-artifact`, `actions/download-artifact`, `actions/cache` and
// `actions/cache/restore|save`, at any version tag (`@v4`, `@main`, a sha): the agent runs its own
// code for them and never fetches the repository the name would point at.
import type { ActionHost, ActionResult, ActionStep } from "../action-host.ts";
import { downloadArtifact, uploadArtifact } from "./artifacts.ts";
import { cache, restoreCache, saveCache } from "./cache.ts";
import { checkout } from "./checkout.ts";

/** A built-in action. */
export type Builtin = (host: ActionHost, step: ActionStep) => Promise<ActionResult>;

/** By the reference without its version: `actions/checkout@v4` → "actions/checkout". */
const BUILTINS: ReadonlyMap<string, Builtin> = new Map<string, Builtin>([
  ["actions/checkout", checkout],
  ["actions/upload-artifact", uploadArtifact],
  ["actions/download-artifact", downloadArtifact],
  ["actions/cache", cache],
  ["actions/cache/restore", restoreCache],
  ["actions/cache/save", saveCache],
]);

/** The built-in `uses` names, or null when the agent has no built-in of that name (GitHub's names are case-insensitive). */
export function builtinFor(uses: string): Builtin | null {
  const at = uses.lastIndexOf("@");
  if (at <= 0) return null;
  return BUILTINS.get(uses.slice(0, at).toLowerCase()) ?? null;
}
