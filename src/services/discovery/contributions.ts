// The contribution graph (SPEC §2.9, §4.2, §8). Commits are recorded as they arrive: a push over
// git HTTP or SSH, the commit API or the ref API writes a `contributions.record` job in its own
// transaction (lander and mirror syncs do not count); the job walks the commits the push brought
// and credits each one to at most one person:
//   1. the live account that has proved the commit's author address, else
//   2. the person whose credential pushed it;
// a commit whose message carries a Co-Authored-By trailer counts for nobody. Proving an address
// later does not backfill: the graph is what was credited as commits arrived.
// Reads: the person's repositories (names and visibility now, a few hundred rows at most), the
// per-day, per-repository counts of the public ones (a key range scan, no join), and, for someone
// who opted in to private work, the per-day totals (one row a day, kept by triggers). Private work
// is only counted, never named. The answer is the same for every reader.
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
  // Why: private work is counted only for someone who opted in; only then are the totals read.
  const rows = await store.contributionGraphRows(ctx.db.read, user.id, range.from, range.to, user.contribPrivateOptin);
  // Public repositories ranked by (org, name) once, so a day's list sorts on numbers.
  const pub: { id: string; org: string; name: string }[] = [];
  for (const r of rows) {
    if (r[0] !== 0 || r[1] !== 1) continue;
    const slash = r[3].indexOf("/");
    pub.push({ id: r[2], org: r[3].slice(0, slash), name: r[3].slice(slash + 1) });
  }
  pub.sort((a, b) => (a.org < b.org ? -1 : a.org > b.org ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const rank = new Map(pub.map((r, i) => [r.id, i]));
  const detail: [number, string, number][] = [];
  const totals: [number, number][] | null = user.contribPrivateOptin ? [] : null;
  for (const r of rows) {
    if (r[0] === 2) detail.push([r[1], r[2], r[3]]);
    else if (r[0] === 1) totals!.push([r[1], r[3]]);
  }
  totals?.sort((a, b) => a[0] - b[0]);
  return graphOf(range, pub, rank, detail, totals);
}

/** How many repositories a sort key can rank: (commits, rank) pack into one number below 2^53. */
const RANK_SPACE = 2 ** 21;

/** Shapes the answer: public detail grouped by day (most commits first, then by org and name), counts from the totals when private work is included. */
export function graphOf(
  range: { from: number; to: number },
  pub: { org: string; name: string }[],
  rank: Map<string, number>,
  detail: [number, string, number][],
  totals: [number, number][] | null,
): ContributionGraph {
  // Per day, one number per repository: fewer commits sort later, then by (org, name) rank.
  const byDay = new Map<number, number[]>();
  const publicCount = new Map<number, number>();
  for (const [day, repoId, count] of detail) {
    const i = rank.get(repoId);
    if (i === undefined) continue;
    let keys = byDay.get(day);
    if (!keys) byDay.set(day, (keys = []));
    keys.push(-count * RANK_SPACE + i);
    publicCount.set(day, (publicCount.get(day) ?? 0) + count);
  }
  const dayOf = (day: number, count: number): ContributionGraph["days"][number] => {
    const keys = Float64Array.from(byDay.get(day) ?? []).sort();
    const repos = new Array<{ org: string; name: string; count: number }>(keys.length);
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!;
      const commits = -Math.floor(key / RANK_SPACE);
      const r = pub[key + commits * RANK_SPACE]!;
      repos[k] = { org: r.org, name: r.name, count: commits };
    }
    return { day: (((day + 4) % 7) + 7) % 7, date: formatDay(day), count, repos };
  };
  const days: ContributionGraph["days"] = [];
  let total = 0;
  let privateCounted = false;
  if (totals) {
    for (const [day, count] of totals) {
      if (count > (publicCount.get(day) ?? 0)) privateCounted = true;
      days.push(dayOf(day, count));
      total += count;
    }
  } else {
    for (const [day, count] of [...publicCount].sort((a, b) => a[0] - b[0])) {
      days.push(dayOf(day, count));
      total += count;
    }
  }
  return { from: formatDay(range.from), to: formatDay(range.to), total, private_included: privateCounted, days };
}
