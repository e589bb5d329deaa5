// From a push to runs: the event subscriber writes one durable `ci.trigger` job per moved branch
// inside the push's transaction; the job's worker reads `.svc/workflows/*.yml` at the new tip
// with the pure-TS engine and creates the runs and their jobs in one transaction. A malformed
// workflow becomes a failed run naming file, line and problem; nothing here can fail the push.
import { diffTrees } from "../../git/merge.ts";
import { parseCommit, parseTag, parseTree } from "../../git/object.ts";
import type { ObjectReader } from "../../git/types.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import { openSnapshot, type RepoSnapshot } from "../git/snapshot.ts";
import type { RepoEvent } from "../events/types.ts";
import { jobKind } from "../jobs/kind.ts";
import type { PullRequestFacts } from "./github-context.ts";
import { createRun, type PlannedWorkflow, type RunTrigger } from "./create-run.ts";
import { forkGroup } from "./fork-groups.ts";
import { variablesForJob } from "./job-secrets.ts";
import { refreshScheduleIndex } from "./schedule.ts";
import * as runs from "./store-runs.ts";
import { ThreadTaskError } from "../../util/thread-pool.ts";
import { notRunYet, WORKFLOW_LIMITS, type ParseWorkflowInput, type ParseWorkflowOutput } from "./workflow.ts";

/** The payload of a `ci.trigger` job. */
export interface TriggerPayload {
  repoId: string;
  orgId: string;
  ref: string;
  commit: string;
  event: "push" | "change" | "schedule";
  /** Who pushed (the push event's actor): the run's `actor_user_id`, told when it fails. Absent in jobs queued before it existed. */
  actorUserId?: string | null;
  /** push: the ref's tip before the push (null: a new ref); change: the target's tip. What path filters diff against. */
  before?: string | null;
  /** change: from a fork (the run is untrusted: its jobs get no secrets). */
  fork?: boolean;
  /** change from a fork: the fork, whose objects hold the commit (the run is still the target's, `repoId`). */
  sourceRepoId?: string;
  /** change: the change's number, title and target branch (github.event.pull_request; absent in triggers queued before it existed). */
  change?: { number: number; title: string; target: string };
  /** schedule: the one workflow file that fires, and its minute slot. */
  workflow?: string;
  scheduleSlot?: number;
}

/** Branches per push that start workflows (a push of thousands of branches starts the first ones). */
const MAX_REFS_PER_EVENT = 100;
/** Tags per push that start workflows: more, and none does (GitHub's rule). */
const MAX_TAGS_PER_EVENT = 3;
const WORKFLOW_DIR = [".svc", "workflows"] as const;

/**
 * Reading a pushed commit's workflows into runs; a branch's triggers run in push order. A change's
 * triggers fold per head: one pending row per change and commit (its open, its pushes, and the
 * runs a writer starts through POST …/changes/{number}/runs create the same runs).
 */
export const CI_TRIGGER = jobKind<TriggerPayload>("ci.trigger", {
  key: (p) => `ci:${p.repoId}:${p.ref}`,
  unique: (p) => (p.event === "change" && p.change ? `change:${p.repoId}:${p.change.number}:${p.commit}` : null),
  concurrency: 2,
});

/** The event subscriber: a `ci.trigger` job per branch or tag a push moved (inside the push's transaction). */
export async function enqueueTriggers(ctx: Ctx, tx: Tx, event: RepoEvent): Promise<void> {
  if (event.kind !== "push") return;
  // GitHub's rule: a push of more than three tags at once starts no tag workflow (a mirror's or an import's tags).
  const tags = event.moves.filter((m) => m.new !== null && m.ref.startsWith("refs/tags/")).length <= MAX_TAGS_PER_EVENT;
  let n = 0;
  for (const move of event.moves) {
    if (move.new === null || !(move.ref.startsWith("refs/heads/") || (tags && move.ref.startsWith("refs/tags/")))) continue;
    if (++n > MAX_REFS_PER_EVENT) break;
    const payload: TriggerPayload = {
      repoId: event.repoId,
      orgId: event.orgId,
      ref: move.ref,
      commit: move.new,
      event: "push",
      actorUserId: event.actorUserId,
      before: move.old,
    };
    await ctx.work.enqueue(tx, CI_TRIGGER, payload);
  }
}

/**
 * Queues the workflows of `commit` for `event` on `ref` (inside the caller's transaction); the
 * changes engine calls this with event `change` when a change's head moves.
 */
export async function enqueueWorkflowTrigger(ctx: Ctx, tx: Tx, payload: TriggerPayload): Promise<void> {
  await ctx.work.enqueue(tx, CI_TRIGGER, payload);
}

/** Whether a trigger of `event` created runs for `commit` on `ref` already (a change's head whose runs started is not triggered again). */
export function runsCreatedFor(q: Queryable, repoId: string, commit: string, ref: string, event: TriggerPayload["event"]): Promise<boolean> {
  return runs.anyRunOf(q, repoId, commit, ref, event);
}

type Planned = PlannedWorkflow;

/** A workflow file in `.svc/workflows` of a commit: its path, name and blob. */
export interface WorkflowFile {
  path: string;
  name: string;
  oid: string;
}

/** The `.svc/workflows/*.yml` (and `.yaml`) files of `commit`, by name, at most WORKFLOW_LIMITS.files; none when the commit or the folder is missing. */
export async function workflowFilesAt(snapshot: RepoSnapshot, commit: string): Promise<WorkflowFile[]> {
  const commitObj = await snapshot.objects.read(commit);
  if (!commitObj || commitObj.type !== "commit") return [];
  let tree = parseCommit(commitObj.data).tree;
  for (const part of WORKFLOW_DIR) {
    const obj = await snapshot.objects.read(tree);
    const entry = obj ? parseTree(obj.data).find((e) => e.name === part && e.mode === "40000") : undefined;
    if (!entry) return [];
    tree = entry.oid;
  }
  const dir = await snapshot.objects.read(tree);
  if (!dir) return [];
  return parseTree(dir.data)
    .filter((e) => /\.ya?ml$/.test(e.name) && (e.mode === "100644" || e.mode === "100755"))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .slice(0, WORKFLOW_LIMITS.files)
    .map((e) => ({ path: `${WORKFLOW_DIR.join("/")}/${e.name}`, name: e.name, oid: e.oid }));
}

/** A workflow file's text, or why it is not read (larger than the limit); null when its blob is missing. */
export async function readWorkflowText(snapshot: RepoSnapshot, f: WorkflowFile): Promise<{ text: string } | { error: string } | null> {
  const size = (await snapshot.objects.readHeader(f.oid))?.size ?? 0;
  if (size > WORKFLOW_LIMITS.fileBytes) return { error: `${f.path}: the file is larger than ${WORKFLOW_LIMITS.fileBytes / 1024} KiB` };
  const blob = await snapshot.objects.read(f.oid);
  if (!blob) return null;
  return { text: new TextDecoder().decode(blob.data) };
}

/** Changed paths past which a push counts as touching everything (path filters match). */
export const MAX_CHANGED_PATHS = 1000;

/**
 * The paths that differ from `before` to `commit` (GitHub's path filters), or null when unknown
 * (a new ref, a tag, a missing commit, more than MAX_CHANGED_PATHS: filters then match).
 */
async function changedPaths(objects: ObjectReader, before: string | null | undefined, commit: string): Promise<string[] | null> {
  if (!before || /^0+$/.test(before)) return null;
  const treeOf = async (oid: string) => {
    const obj = await objects.read(oid);
    return obj?.type === "commit" ? parseCommit(obj.data).tree : null;
  };
  const [a, b] = await Promise.all([treeOf(before), treeOf(commit)]);
  if (!a || !b) return null;
  try {
    const d = await diffTrees(objects, a, b, { limit: MAX_CHANGED_PATHS });
    return d.truncated ? null : d.changes.map((c) => c.path);
  } catch {
    // A missing tree (a shallow history): unknown, so the filters match.
    return null;
  }
}

/** What a trigger read at its commit: the commit (an annotated tag peeled), the workflows to run, and every well-formed file's crons (the schedule index). */
interface TriggerPlan {
  commit: string;
  planned: Planned[];
  schedules: { path: string; crons: string[] }[];
}

/** The commit `oid` names: itself, or what an annotated tag (a few levels at most) points to; null when it is not a commit. */
export async function peelCommit(snapshot: RepoSnapshot, oid: string): Promise<string | null> {
  for (let i = 0; i < 8; i++) {
    const obj = await snapshot.objects.read(oid);
    if (!obj) return null;
    if (obj.type === "commit") return oid;
    if (obj.type !== "tag") return null;
    oid = parseTag(obj.data).object;
  }
  return null;
}

/** Objects read from `first`, else from `then` (a fork's change head against its target's tip). */
function eitherObjects(first: ObjectReader, then: ObjectReader): ObjectReader {
  return {
    has: async (oid) => (await first.has(oid)) || then.has(oid),
    read: async (oid) => (await first.read(oid)) ?? then.read(oid),
    readHeader: async (oid) => (await first.readHeader(oid)) ?? then.readHeader(oid),
  };
}

/**
 * Reads and parses the workflows at `commit`; only those whose `on` matches the event and ref are
 * planned. `source`: a change from a fork, whose workflows and commit are read from the fork's
 * objects (the target's tip, what path filters diff against, from the target's).
 */
async function planWorkflows(
  ctx: Ctx,
  p: TriggerPayload,
  repoFullName: string,
  repoRow: Parameters<typeof openSnapshot>[2],
  source: Parameters<typeof openSnapshot>[2] | null,
  change: PullRequestFacts | null,
): Promise<TriggerPlan> {
  const target = await openSnapshot(ctx.db.read, ctx.git, repoRow);
  const snapshot = source ? await openSnapshot(ctx.db.read, ctx.git, source) : target;
  const commit = await peelCommit(snapshot, p.commit);
  if (!commit) return { commit: p.commit, planned: [], schedules: [] };
  const tag = p.ref.startsWith("refs/tags/");
  const name = p.ref.replace(/^refs\/(heads|tags)\//, "");
  // GitHub evaluates no path filter for a tag push.
  const objects = source ? eitherObjects(snapshot.objects, target.objects) : snapshot.objects;
  const paths = p.event === "schedule" || tag ? null : await changedPaths(objects, p.before, commit);
  // Plan-time values (run-name, job names, runs-on, concurrency, continue-on-error) read vars (plan-29 §3.B).
  const vars = await variablesForJob(ctx.db.read, { orgId: p.orgId, repoId: p.repoId, trusted: !p.fork });
  const out: TriggerPlan = { commit, planned: [], schedules: [] };
  for (const f of await workflowFilesAt(snapshot, commit)) {
    if (p.event === "schedule" && f.path !== p.workflow) continue;
    const read = await readWorkflowText(snapshot, f);
    if (!read) continue;
    if ("error" in read) {
      if (p.event !== "schedule") out.planned.push({ path: f.path, error: read.error });
      continue;
    }
    const parsed = await parseOnThread(ctx, {
      path: f.path,
      text: read.text,
      trigger: {
        sha: commit,
        ref: p.ref,
        repository: repoFullName,
        event: p.event,
        vars,
        ...(change ? { change: { ...change, head: { ...change.head, sha: commit } } } : {}),
      },
      branch: name,
      tag,
      paths,
    });
    if (!parsed.ok) {
      if (p.event !== "schedule") out.planned.push({ path: f.path, error: parsed.error });
      continue;
    }
    if (parsed.run?.schedules?.length) out.schedules.push({ path: f.path, crons: parsed.run.schedules });
    if (parsed.matches) out.planned.push(runnable(f.path, parsed));
  }
  return out;
}

/** A parsed workflow that matches, as createRun takes it: what is parsed but not yet run (issue 29) fails the run instead of running wrongly. */
export function runnable(path: string, parsed: Extract<ParseWorkflowOutput, { ok: true }>): Planned {
  const unsupported = notRunYet(path, parsed);
  return unsupported ? { path, error: unsupported } : { path, jobs: parsed.jobs, run: parsed.run };
}

/**
 * Parses a workflow on a worker thread within its time limit (issue 25 row 8: YAML parsing of
 * hostile files took seconds of the event loop). A file past the limit, or one that breaks the
 * parser, is that file's failed run; a pool too busy to take it fails the trigger job, which the
 * job queue retries.
 */
export function parseOnThread(ctx: Ctx, input: ParseWorkflowInput): Promise<ParseWorkflowOutput> {
  return parserAnswer(input.path, () => ctx.threads.run("ci.parseWorkflow", input, { timeLimitMs: WORKFLOW_LIMITS.parseMs }));
}

/**
 * The answer of a parse of the file at `path` on a thread (`parse`, run within WORKFLOW_LIMITS.parseMs):
 * a time limit or a broken parser is the file's error; a busy, closed or aborted pool throws.
 */
export async function parserAnswer<T>(path: string, parse: () => Promise<T>): Promise<T | { ok: false; error: string }> {
  try {
    return await parse();
  } catch (e) {
    if (!(e instanceof ThreadTaskError) || e.kind === "busy" || e.kind === "closed" || e.kind === "aborted") throw e;
    if (e.kind === "time_limit") return { ok: false, error: `${path}: parsing took longer than ${WORKFLOW_LIMITS.parseMs / 1000} s; simplify the file` };
    return { ok: false, error: `${path}: the file could not be parsed (${e.message.slice(0, 200)})` };
  }
}

/**
 * A fork's planned workflow as it runs here: each job fetches from the fork (`checkoutRepoId`),
 * and every concurrency group, the run's and the jobs', is confined to the fork's own runs
 * (fork-groups.ts).
 */
export function fromFork(w: PlannedWorkflow, forkId: string): PlannedWorkflow {
  if (!("jobs" in w)) return w;
  return {
    ...w,
    ...(w.run ? { run: { ...w.run, concurrency: forkGroup(w.run.concurrency, forkId) } } : {}),
    jobs: w.jobs.map((j) => ({ ...j, concurrency: forkGroup(j.concurrency, forkId), spec: { ...j.spec, checkoutRepoId: forkId } })),
  };
}

/** A change run's github.event.pull_request (GitHub's names): the change's branch in the fork or here, its target here. */
function changeFacts(p: TriggerPayload, full: string, source: { orgName: string; repo: { name: string } } | null): PullRequestFacts | null {
  if (p.event !== "change" || !p.change) return null;
  return {
    number: p.change.number,
    title: p.change.title,
    head: {
      ref: p.ref.replace(/^refs\/heads\//, ""),
      sha: p.commit,
      repo: { full_name: source ? `${source.orgName}/${source.repo.name}` : full, fork: !!source },
    },
    base: { ref: p.change.target, sha: p.before ?? "", repo: { full_name: full } },
  };
}

/** The `ci.trigger` worker: creates the runs of one moved ref (idempotent: a run per workflow, commit, ref and event; a scheduled run per slot). */
export async function runTrigger(ctx: Ctx, p: TriggerPayload): Promise<void> {
  const place = await runs.repoWithOrg(ctx.db.read, p.repoId);
  if (!place) return;
  // A change from a fork: its commit is in the fork's objects. A fork deleted meanwhile runs nothing.
  const source = p.fork && p.sourceRepoId ? await runs.repoWithOrg(ctx.db.read, p.sourceRepoId) : null;
  if (p.fork && !source) return;
  const full = `${place.orgName}/${place.repo.name}`;
  const { commit, planned: plannedHere, schedules } = await planWorkflows(ctx, p, full, place.repo, source?.repo ?? null, changeFacts(p, full, source));
  // Why in the spec: the claim binds the job's token to the repository the agent fetches from,
  // and the job's description names it; a fork run's token reads the fork and nothing else.
  const planned = source ? plannedHere.map((w) => fromFork(w, source.repo.id)) : plannedHere;
  // A push of the default branch refreshes the repository's schedule index.
  const indexes = p.event === "push" && p.ref === `refs/heads/${place.repo.defaultBranch}`;
  if (!planned.length && !indexes) return;
  const trigger: RunTrigger = {
    repoId: p.repoId,
    orgId: p.orgId,
    orgName: place.orgName,
    ref: p.ref,
    commit,
    event: p.event,
    actorUserId: p.actorUserId ?? null,
    scheduleSlot: p.event === "schedule" ? (p.scheduleSlot ?? null) : null,
    // Why: a change from a fork runs code its author controls; its jobs get no secrets.
    trusted: !p.fork,
  };
  await ctx.db.transaction(async (tx) => {
    if (indexes) await refreshScheduleIndex(tx, p.repoId, commit, schedules);
    for (const w of planned) await createRun(ctx, tx, w, trigger);
  });
}
