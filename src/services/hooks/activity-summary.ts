// What a push brought, for activity feeds (issue 33): per moved ref, whether it was created,
// deleted or moved, how many commits are new on it (counted up to COUNT_CAP) and the first lines of
// the newest few. Worked out once, after the push commits, by a job the push's event queues (the
// event path's subscribers write rows only), and kept in the stored event's payload under `refs`
// beside what webhooks were sent (their body was fixed when they were queued, so it is not
// changed). A feed reads it with the event: no git work per page view.
import type { Tx } from "../../db/database.ts";
import { parseCommit } from "../../git/object.ts";
import { CommitCache, CommitQueue, type CommitNode } from "../../git/revision.ts";
import type { Ctx } from "../context.ts";
import type { RepoEvent, RefMove } from "../events/types.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { jobKind } from "../jobs/kind.ts";
import { repoForJob } from "../repos/repos.ts";
import { setEventRefs } from "./store-activity.ts";

/** Refs of one push summarised (the rest only counted: a mirror sync may move thousands). */
export const REFS_CAP = 10;
/** New commits counted per ref ("100+ commits" beyond). */
export const COUNT_CAP = 100;
/** Commits of a ref whose first lines are kept, newest first. */
export const HEAD_COMMITS = 3;
/** Commits the walks of one push may visit in all, new or old: a bound on the work any push can cause. */
export const WALK_CAP = 5000;
/** Characters of a commit's first line kept. */
const SUBJECT_CAP = 120;

/** One moved ref as a feed shows it. */
export interface PushedRef {
  ref: string;
  action: "created" | "deleted" | "updated";
  /** The ref's new target (its old one for a deletion). */
  sha: string;
  /** New commits on the ref (at most COUNT_CAP; `more` beyond). */
  commits: number;
  more: boolean;
  /** The newest new commits: id and first line. */
  head: { sha: string; subject: string }[];
}

/** What the job stores beside the event's payload. */
export interface PushSummary {
  refs: PushedRef[];
  refs_total: number;
}

/** The payload of an `activity.summarize` job. */
export interface SummarizePayload {
  eventId: string;
  repoId: string;
  moves: RefMove[];
  total: number;
}

/** Summarising one push's refs for the feeds. */
export const ACTIVITY_SUMMARIZE = jobKind<SummarizePayload>("activity.summarize", { concurrency: 4 });

/** The event subscriber: one job per push (inside the push's transaction). */
export async function enqueuePushSummary(ctx: Ctx, tx: Tx, event: RepoEvent): Promise<void> {
  if (event.kind !== "push" || event.moves.length === 0) return;
  await ctx.work.enqueue(tx, ACTIVITY_SUMMARIZE, { eventId: event.id, repoId: event.repoId, moves: event.moves.slice(0, REFS_CAP), total: event.moves.length });
}

/**
 * Commits reachable from `tip` and not from `stop`, newest first by committer time, at most
 * `cap + 1` (so the caller knows there are more), visiting at most `budget.left` commits (and
 * taking what it visited from it: one budget serves all the refs of a push). As git's
 * rev-list, by date: old commits are walked until they are older than every candidate, and a
 * candidate an old commit reaches after all is dropped (commits made in the same second, or with
 * skewed clocks, come out right).
 */
export async function newCommits(
  cache: CommitCache,
  tip: string,
  stop: readonly string[],
  cap: number,
  budget: { left: number } = { left: WALK_CAP },
): Promise<CommitNode[]> {
  const OLD = 1;
  const QUEUED = 2;
  const flags = new Map<string, number>();
  const queue = new CommitQueue();
  let queuedNew = 0;
  const enqueue = (node: CommitNode, old: boolean) => {
    flags.set(node.oid, (old ? OLD : 0) | QUEUED);
    if (!old) queuedNew++;
    queue.push(node);
  };
  for (const oid of stop) {
    const p = await cache.peel(oid).catch(() => null);
    if (p?.type !== "commit" || flags.has(p.oid)) continue;
    const node = await cache.lookup(p.oid);
    if (node) enqueue(node, true);
  }
  const start = await cache.peel(tip).catch(() => null);
  if (start?.type !== "commit" || flags.has(start.oid)) return [];
  const first = await cache.lookup(start.oid);
  if (!first) return [];
  enqueue(first, false);
  const out: CommitNode[] = [];
  let oldest = Number.POSITIVE_INFINITY;
  for (; budget.left > 0; budget.left--) {
    // Only old commits left: go on while one could still reach a candidate (not older than all of them).
    if (queuedNew === 0 && !((queue.peek()?.time ?? Number.NEGATIVE_INFINITY) >= oldest)) break;
    const node = queue.pop();
    if (!node) break;
    const f = flags.get(node.oid)!;
    flags.set(node.oid, f & ~QUEUED);
    const old = (f & OLD) !== 0;
    if (!old) {
      queuedNew--;
      out.push(node);
      oldest = Math.min(oldest, node.time);
      if (out.length > cap) break;
    }
    for (const parent of node.parents) {
      const pf = flags.get(parent);
      if (pf === undefined) {
        const p = await cache.lookup(parent).catch(() => null);
        if (p) enqueue(p, old);
      } else if (old && !(pf & OLD)) {
        // Reached from an old tip after all: not new. Still queued: it stops counting; already
        // taken: walked again as old, so its parents learn it too.
        if (pf & QUEUED) {
          flags.set(parent, pf | OLD);
          queuedNew--;
        } else {
          const known = cache.known(parent);
          if (known) enqueue(known, true);
        }
      }
    }
  }
  return out.filter((n) => !((flags.get(n.oid) ?? 0) & OLD));
}

function subjectOf(message: string): string {
  const line = message.trimStart().split("\n", 1)[0]!.trim();
  return line.length > SUBJECT_CAP ? `${line.slice(0, SUBJECT_CAP - 1)}…` : line;
}

/** The `activity.summarize` worker: what each moved ref brought, written into the event (idempotent). */
export async function summarizePush(ctx: Ctx, p: SummarizePayload): Promise<void> {
  const repo = await repoForJob(ctx, p.repoId);
  if (!repo) return;
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  const moved = new Set(p.moves.map((m) => m.ref));
  // A created branch's new commits are those no other branch has.
  const otherBranches = snapshot.refs.filter((r) => r.name.startsWith("refs/heads/") && !moved.has(r.name)).map((r) => r.oid);
  const cache = new CommitCache(snapshot.objects);
  const refs: PushedRef[] = [];
  const budget = { left: WALK_CAP };
  for (const m of p.moves) {
    const action = m.new === null ? "deleted" : m.old === null ? "created" : "updated";
    const entry: PushedRef = { ref: m.ref, action, sha: (m.new ?? m.old)!, commits: 0, more: false, head: [] };
    if (m.new !== null && m.ref.startsWith("refs/heads/")) {
      const found = await newCommits(cache, m.new, m.old ? [m.old] : otherBranches, COUNT_CAP, budget);
      entry.commits = Math.min(found.length, COUNT_CAP);
      // Past the cap, or the push's walking budget ran out: the count is a lower bound ("30+").
      entry.more = found.length > COUNT_CAP || budget.left <= 0;
      for (const c of found.slice(0, HEAD_COMMITS)) {
        const obj = await snapshot.objects.read(c.oid);
        if (obj?.type === "commit") entry.head.push({ sha: c.oid, subject: subjectOf(parseCommit(obj.data).message) });
      }
    }
    refs.push(entry);
  }
  const summary: PushSummary = { refs, refs_total: p.total };
  await ctx.db.transaction((tx) => setEventRefs(tx, p.eventId, summary));
}
