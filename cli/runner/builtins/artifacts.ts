// Stub until its owner lands it (issue 30).
import type { ActionHost, ActionResult, ActionStep } from "../action-host.ts";

export async function uploadArtifact(_host: ActionHost, step: ActionStep): Promise<ActionResult> {
  return { exit: 1, outputs: {}, error: `${step.uses}: not built yet` };
}

export async function downloadArtifact(_host: ActionHost, step: ActionStep): Promise<ActionResult> {
  return { exit: 1, outputs: {}, error: `${step.uses}: not built yet` };
}
