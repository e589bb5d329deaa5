// Runs and jobs as people read them (DECISIONS §3): list, get, a job's log as text, cancel.
import { Conflict, NotFound } from "../../errors.ts";
import type { Queryable } from "../../db/database.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import { pageOf, parsePage } from "../paging.ts";
import { failJob } from "./finish.ts";
import type { Run } from "./schemas.ts";
import { userHandles } from "./store-concurrency.ts";
import * as runs from "./store-runs.ts";
import type { JobShown, RunRow } from "./store-runs.ts";
import { waitingMessages } from "./waiting.ts";

/** A job's steps as lists show them: name, state, exit code (from the `steps` column, never the spec). */
export function shownSteps(job: JobShown): { name: string; state: string; exit_code: number | null }[] {
  return job.steps.map((s, i) => ({ name: s.name || `step ${i + 1}`, state: s.state, exit_code: s.exit_code }));
}

async function runBodies(q: Queryable, repoName: string, rows: RunRow[]): Promise<Run[]> {
  const jobs = await runs.shownJobsOfRuns(
    q,
    rows.map((r) => r.id),
  );
  const waiting = await waitingMessages(q, jobs);
  const handles = await userHandles(q, [...new Set(rows.flatMap((r) => (r.actorUserId ? [r.actorUserId] : [])))]);
  const byRun = new Map<string, JobShown[]>();
  for (const j of jobs) {
    let list = byRun.get(j.runId);
    if (!list) byRun.set(j.runId, (list = []));
    list.push(j);
  }
  return rows.map((r) => ({
    id: r.id,
    repo: repoName,
    workflow: r.workflow,
    commit: r.commit,
    ref: r.ref,
    event: r.event,
    state: r.state,
    error: r.error,
    actor: r.actorUserId && handles.has(r.actorUserId) ? { id: r.actorUserId, handle: handles.get(r.actorUserId)! } : null,
    inputs: r.inputs ?? null,
    concurrency_group: r.concurrencyGroup,
    waiting: r.waiting,
    created_at: r.createdAt,
    finished_at: r.finishedAt,
    jobs: (byRun.get(r.id) ?? []).map((j) => ({
      id: j.id,
      key: j.key,
      runs_on: j.runsOn,
      state: j.state,
      verdict: j.verdict,
      error: j.error,
      waiting: waiting.get(j.id) ?? null,
      runner: j.runnerId ? { id: j.runnerId, name: j.runnerName ?? "" } : null,
      started_at: j.startedAt,
      finished_at: j.finishedAt,
      steps: shownSteps(j),
    })),
  }));
}

const isRunCursor = (k: unknown): k is [number, string] => Array.isArray(k) && k.length === 2 && typeof k[0] === "number" && typeof k[1] === "string";

/** GET /v1/orgs/{org}/repos/{repo}/runs: newest first, a page at a time. */
export async function listRuns(ctx: Ctx, t: RepoTarget, q: { limit?: unknown; cursor?: unknown }): Promise<{ runs: Run[]; next_cursor: string | null }> {
  need(t, "repo:read");
  const { repo } = t;
  const page = parsePage(q, isRunCursor);
  const rows = await runs.listRuns(ctx.db.read, repo.id, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor } = pageOf(rows, page, (r) => [r.createdAt, r.id]);
  return { runs: await runBodies(ctx.db.read, repo.name, items), next_cursor };
}

/** GET /v1/orgs/{org}/repos/{repo}/runs/{id}. */
export async function getRun(ctx: Ctx, t: RepoTarget, runId: string): Promise<Run> {
  need(t, "repo:read");
  const { repo } = t;
  const run = await runs.runOfRepo(ctx.db.read, repo.id, runId);
  if (!run) throw NotFound("run not found");
  return (await runBodies(ctx.db.read, repo.name, [run]))[0]!;
}

/** The job `jobId` of run `runId` in the repository, after repo:read (the log routes' one check); 404 for any other job. */
export async function requireJob(ctx: Ctx, t: RepoTarget, runId: string, jobId: string): Promise<JobShown> {
  need(t, "repo:read");
  const { repo } = t;
  const job = await runs.shownJobById(ctx.db.read, jobId);
  if (!job || job.runId !== runId || job.repoId !== repo.id) throw NotFound("job not found");
  return job;
}

/** GET …/runs/{id}/jobs/{job_id}/logs: the acknowledged log, streamed chunk by chunk from the object store. */
export async function jobLog(ctx: Ctx, t: RepoTarget, runId: string, jobId: string): Promise<ReadableStream<Uint8Array>> {
  const job = await requireJob(ctx, t, runId, jobId);
  const chunks = await runs.logChunks(ctx.db.read, job.id);
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const c = chunks[i++];
      if (!c) return controller.close();
      const bytes = await ctx.store.get(c.key);
      if (!bytes) return controller.error(new Error(`log chunk ${c.key} is missing`));
      controller.enqueue(bytes);
    },
  });
}

/** POST …/runs/{id}/cancel: queued jobs end now; running ones are told to stop at their next heartbeat. */
export async function cancelRun(ctx: Ctx, t: RepoTarget, runId: string): Promise<Run> {
  need(t, "repo:write");
  const { repo } = t;
  await ctx.db.transaction(async (tx) => {
    const run = await runs.runOfRepo(tx, repo.id, runId);
    if (!run) throw NotFound("run not found");
    const open = await runs.unfinishedJobsOfRun(tx, run.id);
    if (!open.length) throw Conflict(`the run already finished (${run.state})`);
    const at = now();
    for (const job of open) {
      if (job.state === "queued") await failJob(ctx, tx, job, "cancelled", "cancelled", at);
      else if (job.cancelReason === null) await runs.updateJob(tx, job.id, { cancelReason: "cancel" });
    }
  });
  return getRun(ctx, t, runId);
}

/**
 * A job as it is now and its log from byte `from` on (at most about `max` bytes, whole chunks
 * but the first), with the same check as the log route: what the web page's live log reads.
 */
export async function jobLogSince(
  ctx: Ctx,
  t: RepoTarget,
  runId: string,
  jobId: string,
  from: number,
  max: number,
): Promise<{ job: JobShown; bytes: Uint8Array; next: number }> {
  const job = await requireJob(ctx, t, runId, jobId);
  const start = Math.max(0, Math.min(from, job.logSize));
  const parts: Uint8Array[] = [];
  let next = start;
  for (const c of await runs.logChunksFrom(ctx.db.read, job.id, start, 64)) {
    if (next - start >= max || c.offset > next) break;
    // A chunk the server's masking pass changed holds other bytes than its offset/size say: it is
    // served whole (also to a reader starting inside it: no reader ever got part of it), and
    // `next` moves to its end in the agent's bytes.
    const bytes = await ctx.store.get(c.key);
    if (!bytes) throw new Error(`log chunk ${c.key} is missing`);
    const part = c.masked ? bytes : bytes.subarray(next - c.offset);
    parts.push(part);
    next = c.masked ? c.offset + c.size : next + part.byteLength;
  }
  return { job, bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), next };
}
