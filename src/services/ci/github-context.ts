// The github context's fields fixed when a run is planned (issue 29, compatibility): the event as
// the workflow's `on:` spells it, the workflow's name, and for a change run GitHub's pull-request
// fields. The trigger computes them once; each job's spec carries them (`spec.github`), and every
// place that builds the github context — the parse (run-name, job names, concurrency), the
// release (job `if`), step names, the job description — lays them over the run row's. Pure.

/** A change as GitHub's `github.event.pull_request` names it (the fields this server gives). */
export interface PullRequestFacts {
  number: number;
  title: string;
  head: { ref: string; sha: string; repo: { full_name: string; fork: boolean } };
  base: { ref: string; sha: string; repo: { full_name: string } };
}

/** What a job's spec carries of the github context (absent in specs planned before it existed). */
export interface PlannedGithub {
  /** The event as the workflow's `on:` spells it: `pull_request` for a change run of a file saying `pull_request`. */
  event_name?: string;
  /** The workflow's `name:`, or its file's path without one (GitHub's github.workflow). */
  workflow?: string;
  /** Change runs: the change's branch and target (GitHub's head_ref / base_ref). */
  head_ref?: string;
  base_ref?: string;
  /** Change runs: GitHub's `github.event.number` and `github.event.pull_request`. */
  event?: { number: number; pull_request: PullRequestFacts };
}

/**
 * The planned github fields of a run, only those that differ from what the run row gives (a
 * spec carries no more than it must): the workflow's `name:` (the row has the path), event_name
 * `pull_request` when that `on:` key matched a change run, and the change's fields.
 */
export function plannedGithub(
  name: string | null,
  event: string,
  onKey: string | null | undefined,
  change: PullRequestFacts | null | undefined,
): PlannedGithub | null {
  const out: PlannedGithub = {};
  if (name !== null) out.workflow = name;
  if (event === "change" && onKey === "pull_request") out.event_name = onKey;
  if (event === "change" && change) {
    out.head_ref = change.head.ref;
    out.base_ref = change.base.ref;
    out.event = { number: change.number, pull_request: change };
  }
  return Object.keys(out).length ? out : null;
}

/**
 * `github` with the planned fields laid over it (`event` merged, so the run's own event fields
 * stay). head_ref and base_ref are always present: empty outside change runs, as on GitHub.
 */
export function withPlannedGithub<T extends Record<string, unknown>>(github: T, planned: PlannedGithub | null | undefined): T & Record<string, unknown> {
  const out: Record<string, unknown> = { ...github, head_ref: "", base_ref: "" };
  if (!planned) return out as T;
  for (const k of ["event_name", "workflow", "head_ref", "base_ref"] as const) if (planned[k] !== undefined) out[k] = planned[k];
  if (planned.event) out.event = { ...((github.event as Record<string, unknown> | undefined) ?? {}), ...planned.event };
  return out as T;
}

/** The planned string fields (what step names expanded at plan time may read): head_ref and base_ref always, empty outside change runs. */
export function plannedStrings(planned: PlannedGithub | null | undefined): Record<string, string> {
  const out: Record<string, string> = { head_ref: planned?.head_ref ?? "", base_ref: planned?.base_ref ?? "" };
  if (planned?.event_name !== undefined) out.event_name = planned.event_name;
  if (planned?.workflow !== undefined) out.workflow = planned.workflow;
  return out;
}
