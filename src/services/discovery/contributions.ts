// The contribution graph (SPEC §2.9, §4.2, §8). Commits are recorded as they arrive: a push over
// git HTTP or SSH, the commit API or the ref API writes a `contributions.record` job in its own
// transaction (lander and mirror syncs do not count); the job walks the commits the push brought
// and credits each one to at most one person:
//   1. the live account that has proved the commit's author address, else
//   2. the person whose credential pushed it;
// a commit whose message carries a Co-Authored-By trailer counts for nobody. Proving an address
// later does not backfill: the graph is what was credited as commits arrived.
// Reads are one range scan of per-day, per-repository counts; private work is only counted (never
// named), and only for someone who opted in. The answer is the same for every reader.
import { Invalid } from "../../errors.ts";
import { parseCommit } from "../../git/object.ts";
import { CommitCache, limitCommits } from "../../git/revision.ts";
import type { Tx } from "../../db/database.ts";
import { now, type Ctx } from "../context.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { repoById } from "../repos/store.ts";
import type { RepoEvent } from "../hooks/events.ts";
import { enqueueJob } from "../jobs/queue.ts";
import { requireLiveUser } from "./profiles.ts";
import type { ContributionGraph } from "./schemas.ts";
import * as store from "./store.ts";

const DAY_MS = 86_400_000;
/** SPEC §8: the longest range a graph may cover, in days. */
export const MAX_RANGE_DAYS = 3653;
/** The most commits one push credits (the newest); a bound on the work a hostile push can cause. */
export const MAX_COMMITS_PER_PUSH = 10_000;
/** Branches per push whose commits are credited. */
const MAX_REFS_PER_PUSH = 100;
/** The ways in that count (SPEC §4.2 rule; issue 16: lander and mirror syncs do not). */
const COUNTED_VIA = new Set(["git", "ssh", "api"]);

/** The payload of a `contributions.record` job. */
export interface RecordPayload {
  repoId: string;
  pusherUserId: string | null;
  moves: { ref: string; old: string | null; new: string }[];
}

/** The event subscriber: one job per counted push that moved branches forward (inside the push's transaction). */
export async function enqueueContributions(tx: Tx, event: RepoEvent): Promise<void> {
  if (event.kind !== "push" || !COUNTED_VIA.has(String(event.payload.via))) return;
  const moves = event.moves
    .filter((m): m is { ref: string; old: string | null; new: string } => m.new !== null && m.ref.startsWith("refs/heads/"))
    .slice(0, MAX_REFS_PER_PUSH);
  if (!moves.length) return;
  const payload: RecordPayload = { repoId: event.repoId, pusherUserId: event.actorUserId, moves };
  await enqueueJob(tx, "contributions.record", payload);
}

/** Whether a commit message carries a Co-Authored-By trailer (case-insensitive, in its last paragraph). */
export function hasCoAuthor(message: string): boolean {
  const paragraphs = message.trimEnd().split(/\n[ \t]*\n/);
  const last = paragraphs[paragraphs.length - 1] ?? "";
  return paragraphs.length > 1 && /^co-authored-by[ \t]*:/im.test(last);
}

/** The `contributions.record` worker: credits the commits the push brought (idempotent per person, repository and commit). */
export async function recordContributions(ctx: Ctx, p: RecordPayload): Promise<void> {
  const repo = await repoById(ctx.db.read, p.repoId);
  if (!repo) return;
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  const moved = new Set(p.moves.map((m) => m.ref));
  // New to the repository: reachable from the new tips, not from the old ones nor from other branches.
  const uninteresting = [...p.moves.flatMap((m) => (m.old ? [m.old] : [])), ...snapshot.refs.filter((r) => !moved.has(r.name)).map((r) => r.oid)];
  const cache = new CommitCache(snapshot.objects);
  const present: string[] = [];
  for (const m of p.moves) if (await cache.lookup(m.new).catch(() => null)) present.push(m.new);
  if (!present.length) return;
  const { commits } = await limitCommits(cache, { interesting: present, uninteresting });
  const credits: { sha: string; email: string; day: number }[] = [];
  for (const node of commits.slice(0, MAX_COMMITS_PER_PUSH)) {
    const obj = await snapshot.objects.read(node.oid);
    if (!obj || obj.type !== "commit") continue;
    const c = parseCommit(obj.data);
    if (hasCoAuthor(c.message)) continue;
    credits.push({ sha: node.oid, email: c.author.email.toLowerCase(), day: Math.floor(c.author.timestamp / 86_400) });
  }
  if (!credits.length) return;
  await ctx.db.transaction(async (tx) => {
    const owners = await store.provedOwners(tx, [...new Set(credits.map((c) => c.email))]);
    for (const c of credits) {
      const userId = owners.get(c.email) ?? p.pusherUserId;
      if (userId) await store.creditCommit(tx, { userId, repoId: p.repoId, sha: c.sha, day: c.day });
    }
  });
}

/** Days since 1970-01-01 of a `YYYY-MM-DD` date, or null when it is not a real date. */
export function parseDay(s: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return t / DAY_MS;
}

/** `YYYY-MM-DD` of a day number. */
export function formatDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** The inclusive day range of a query: default the year ending today (365 days); 400 for bad dates or ranges. */
export function rangeOf(q: { from?: string; to?: string }, today: number): { from: number; to: number } {
  const day = (name: string, v: string | undefined, fallback: () => number) => {
    if (v === undefined || v === "") return fallback();
    const d = parseDay(v);
    if (d === null) throw Invalid(`${name} must be a date as YYYY-MM-DD`);
    return d;
  };
  const to = day("to", q.to, () => today);
  const from = day("from", q.from, () => to - 364);
  if (to < from) throw Invalid("the range ends before it starts");
  if (to - from + 1 > MAX_RANGE_DAYS) throw Invalid(`a range covers at most ${MAX_RANGE_DAYS} days`);
  return { from, to };
}

/** GET /v1/users/{handle}/contributions: the same answer for every reader. */
export async function getContributions(ctx: Ctx, handle: string, q: { from?: string; to?: string }): Promise<ContributionGraph> {
  const user = await requireLiveUser(ctx, handle);
  const range = rangeOf(q, Math.floor(now() / DAY_MS));
  const rows = await store.contributionDays(ctx.db.read, user.id, range.from, range.to);
  const days: ContributionGraph["days"] = [];
  let total = 0;
  let privateCounted = false;
  let current: ContributionGraph["days"][number] | null = null;
  let currentDay = -Infinity;
  for (const r of rows) {
    // Why: private work is counted only for someone who opted in, and never named.
    if (!r.public && !user.contribPrivateOptin) continue;
    if (r.day !== currentDay) {
      current = { day: (((r.day + 4) % 7) + 7) % 7, date: formatDay(r.day), count: 0, repos: [] };
      currentDay = r.day;
      days.push(current);
    }
    current!.count += r.count;
    total += r.count;
    if (r.public) current!.repos.push({ org: r.org, name: r.name, count: r.count });
    else privateCounted = true;
  }
  return { from: formatDay(range.from), to: formatDay(range.to), total, private_included: privateCounted, days };
}
