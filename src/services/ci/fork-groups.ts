// A change from a fork's concurrency groups (trigger.ts fromFork, release.ts for jobs planned at
// release): confined to the fork's own runs. Why: the fork's author writes its workflow; a group
// named like the target's (`deploy`, with cancel-in-progress) would otherwise cancel or hold the
// target's own runs.
import type { Concurrency } from "./workflow.ts";

/** `c` with its group confined to fork `forkId` (`fork:{id}/{group}`; a template stays a template). */
export function forkGroup<C extends Concurrency | null | undefined>(c: C, forkId: string): C {
  return c ? { ...c, group: `fork:${forkId}/${c.group}` } : c;
}
