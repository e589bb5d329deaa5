// `on:` of a workflow (issue 29): events and their filters as data for the trigger, manual
// dispatch inputs and schedules. Pure; the reading (with positions) is in workflow.ts.
import { compileGlob } from "../../util/glob.ts";

/** A push/change filter (null lists: no filter). `branches`/`ignore` are the v1 fields. */
export interface BranchFilter {
  branches: string[] | null;
  ignore: string[] | null;
  /** push only: tag filters; a push filter with only branch filters ignores tags, and vice versa (GitHub's rule). */
  tags?: string[] | null;
  tagsIgnore?: string[] | null;
  /** push only: path filters over the pushed range's changed paths (`!` negates, in order). */
  paths?: string[] | null;
  pathsIgnore?: string[] | null;
}

/** One `workflow_dispatch` input. */
export interface InputSpec {
  name: string;
  description: string | null;
  required: boolean;
  /** GitHub's types; `environment` is a string naming an environment, `number` is given as a number. */
  type: "string" | "boolean" | "choice" | "number" | "environment";
  default: string | boolean | null;
  options: string[] | null;
}

/** What `on:` holds. Events other than push/change/pull_request/workflow_dispatch/schedule are kept by name and never fire. */
export interface WorkflowOn {
  push?: BranchFilter;
  change?: BranchFilter;
  /** `pull_request` when that key (GitHub's name) gave `change`: a change run's github.event_name (absent: `change`). */
  changeKey?: "pull_request";
  workflowDispatch?: { inputs: InputSpec[] };
  /** Cron texts, already checked (src/services/ci/cron.ts). */
  schedule?: string[];
  /** Other GitHub events, accepted so files written for GitHub parse. */
  other?: string[];
}

/** The ref a trigger is for: a branch or a tag (short name), and the changed paths when known (null: unknown, matches). */
export interface TriggerRef {
  kind: "branch" | "tag";
  name: string;
  paths?: string[] | null;
}

/** GitHub's path filter: the last matching pattern decides; `!` negates. */
function pathPatternsMatch(patterns: string[], path: string): boolean {
  let hit = false;
  for (const p of patterns) {
    if (p.startsWith("!")) {
      if (hit && compileGlob(p.slice(1)).match(path)) hit = false;
    } else if (!hit && compileGlob(p).match(path)) hit = true;
  }
  return hit;
}

function listMatches(patterns: string[], name: string): boolean {
  return pathPatternsMatch(patterns, name);
}

/** Whether a filter lets `ref` (and its changed paths) through. */
export function filterMatches(f: BranchFilter, ref: TriggerRef): boolean {
  const hasBranch = f.branches != null || f.ignore != null;
  const hasTag = f.tags != null || f.tagsIgnore != null;
  if (ref.kind === "tag") {
    // Tags start push workflows only when tags (or tags-ignore) are given.
    if (!hasTag) return false;
    if (f.tags && !listMatches(f.tags, ref.name)) return false;
    if (f.tagsIgnore && listMatches(f.tagsIgnore, ref.name)) return false;
  } else {
    if (hasTag && !hasBranch) return false;
    if (f.branches && !listMatches(f.branches, ref.name)) return false;
    if (f.ignore && listMatches(f.ignore, ref.name)) return false;
  }
  const paths = ref.paths;
  if (paths == null) return true;
  if (f.paths && !paths.some((p) => pathPatternsMatch(f.paths!, p))) return false;
  // paths-ignore: runs unless every changed path is ignored.
  if (f.pathsIgnore && paths.length && paths.every((p) => pathPatternsMatch(f.pathsIgnore!, p))) return false;
  return true;
}
