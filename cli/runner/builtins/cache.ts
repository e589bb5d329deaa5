// Stub until its owner lands it (issue 30).
import type { ActionHost, ActionResult, ActionStep } from "../action-host.ts";

export async function cache(_host: ActionHost, step: ActionStep): Promise<ActionResult> {
  return { exit: 1, outputs: {}, error: `${step.uses}: not built yet` };
}

export async function restoreCache(_host: ActionHost, step: ActionStep): Promise<ActionResult> {
  return { exit: 1, outputs: {}, error: `${step.uses}: not built yet` };
}

export async function saveCache(_host: ActionHost, step: ActionStep): Promise<ActionResult> {
  return { exit: 1, outputs: {}, error: `${step.uses}: not built yet` };
}
