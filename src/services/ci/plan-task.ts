// Planning a released placeholder's jobs off the event loop (release.ts): the `ci.planJobAt`
// thread task (src/thread-tasks.ts) re-parses the placeholder's workflow file with the needs'
// results and outputs (workflow.ts planJobAt). Why a thread: the file is parsed whole, and a
// large one (415 KiB in the corpus) took up to 330 ms of the event loop inside the verdict's
// write transaction (bench/README.md §44). Pure: imports the parser and nothing of the database.
import type { Value } from "./expr/index.ts";
import { planJobAt, type ParsedWorkflow, type TriggerContext } from "./workflow.ts";

/** What planJobAt reads: the placeholder's file, its job id, the run's trigger and its `needs` context. */
export interface PlanJobAtInput {
  path: string;
  text: string;
  job: string;
  trigger: TriggerContext;
  needs: Record<string, Value>;
}

/**
 * What the plan depends on besides the file (which the placeholder's row holds and never
 * changes): the trigger (with the variables read at release) and the needs. A plan made from
 * one key is used in a transaction only where the same key is read again.
 */
export function planKey(input: Pick<PlanJobAtInput, "trigger" | "needs">): string {
  return JSON.stringify([input.trigger, input.needs]);
}

/** The `ci.planJobAt` thread task. */
export function planJobAtTask(input: PlanJobAtInput): ParsedWorkflow {
  return planJobAt(input.path, input.text, input.job, input.trigger, input.needs);
}
