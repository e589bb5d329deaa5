// The contribution graph (SPEC §2.9, §4.2, §8). Commits are recorded as they arrive: a push over
// git HTTP or SSH, the commit API or the ref API writes a `contributions.record` job in its own
// transaction (lander and mirror syncs do not count); the job walks the commits the push brought
// and credits each one to at most one person:
//   1. the live account that has proved the commit's author address, else
//   2. the person whose credential pushed it;
// a commit whose message carries a Co-Authored-By trailer counts for nobody. Proving an address
// later does not backfill: the graph is what was credited as commits arrived.
// Reads: one statement gives the person's repositories (slot, visibility and place now, a few
// hundred rows at most), their contribution version and one blob per active day of the range
// (graph.ts); the answer is written as UTF-8 JSON and kept in a per-database cache stamped with
// what it was written from. Private work is only counted, never named. The answer is the same for
// every reader.
import { Invalid } from "../../errors.ts";
import { parseCommit } from "../../git/object.ts";
import { CommitCache, limitCommits } from "../../git/revision.ts";
import type { Tx } from "../../db/database.ts";
import { now, type Ctx } from "../context.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { repoForJob } from "../repos/repos.ts";
import type { RepoEvent } from "../events/types.ts";
import { jobKind } from "../jobs/kind.ts";
import { requireLiveUser } from "./profiles.ts";
import { formatDay, GraphCache, graphJson } from "./graph.ts";
import * as store from "./store.ts";
import type { ContributionGraph } from "./schemas.ts";

const DAY_MS = 86_400_000;
/** SPEC §8: the longest range a graph may cover, in days. */
export const MAX_RANGE_DAYS = 3653;
/** The most commits one push credits (the newest); a bound on the work a hostile push can cause. */
export const MAX_COMMITS_PER_PUSH = 10_000;
/** Branches per push whose commits are credited. */
const MAX_REFS_PER_PUSH = 100;
/** The ways in that count (SPEC §4.2 rule; issue 16: lander and mirror syncs do not). */
const COUNTED_VIA: ReadonlySet<string> = new Set(["git", "ssh", "api"]);

/** The payload of a `contributions.record` job. */
export interface RecordPayload {
  repoId: string;
  pusherUserId: string | null;
  moves: { ref: string; old: string | null; new: string }[];
}

/** Crediting a counted push's commits to their authors. */
export const CONTRIBUTIONS_RECORD = jobKind<RecordPayload>("contributions.record");

/** The event subscriber: one job per counted push that moved branches forward (inside the push's transaction). */
export async function enqueueContributions(ctx: Ctx, tx: Tx, event: RepoEvent): Promise<void> {
  if (event.kind !== "push" || !COUNTED_VIA.has(String(event.payload.via))) return;
  const moves = event.moves
    .filter((m): m is { ref: string; old: string | null; new: string } => m.new !== null && m.ref.startsWith("refs/heads/"))
    .slice(0, MAX_REFS_PER_PUSH);
  if (!moves.length) return;
  const payload: RecordPayload = { repoId: event.repoId, pusherUserId: event.actorUserId, moves };
  await ctx.work.enqueue(tx, CONTRIBUTIONS_RECORD, payload);
}

/** Whether a commit message carries a Co-Authored-By trailer (case-insensitive, in its last paragraph). */
export function hasCoAuthor(message: string): boolean {
  const paragraphs = message.trimEnd().split(/\n[ \t]*\n/);
  const last = paragraphs[paragraphs.length - 1] ?? "";
  return paragraphs.length > 1 && /^co-authored-by[ \t]*:/im.test(last);
}

/** The `contributions.record` worker: credits the commits the push brought (idempotent per person, repository and commit). */
export async function recordContributions(ctx: Ctx, p: RecordPayload): Promise<void> {
  const repo = await repoForJob(ctx, p.repoId);
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
    const credited: { userId: string; sha: string; day: number }[] = [];
    for (const c of credits) {
      const userId = owners.get(c.email) ?? p.pusherUserId;
      if (userId) credited.push({ userId, sha: c.sha, day: c.day });
    }
    await store.creditCommits(tx, p.repoId, credited);
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

/** `YYYY-MM-DD` of a day number (from graph.ts). */
export { formatDay };

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

/** Bytes of written answers each database's cache keeps (a busy year is 1.4 MB). */
const CACHE_BYTES = 32 * 1024 * 1024;
/** The written-answer cache of a context (`ctx.caches.contributions`), so contexts opened side by side never share answers. */
export function contributionCache(): GraphCache {
  return new GraphCache(CACHE_BYTES);
}

/**
 * GET /v1/users/{handle}/contributions: the answer (a ContributionGraph) as UTF-8 JSON, the same
 * for every reader. Read in one statement, then written (graph.ts) unless the cache holds the
 * answer written from the same version and repositories. Callers must not change the bytes.
 */
export async function contributionGraphJson(ctx: Ctx, handle: string, q: { from?: string; to?: string }): Promise<Uint8Array<ArrayBuffer>> {
  const user = await requireLiveUser(ctx, handle);
  const range = rangeOf(q, Math.floor(now() / DAY_MS));
  // Why: private work is counted only for someone who opted in (never named either way).
  const withPrivate = user.contribPrivateOptin;
  const rows = await store.contributionGraphRows(ctx.db.read, user.id, range.from, range.to);
  const cache = ctx.caches.contributions;
  const key = `${user.id}|${range.from}|${range.to}|${withPrivate ? 1 : 0}`;
  // Length-delimited, so two different lists of repositories never give the same stamp.
  let stamp = String(rows.version);
  for (const r of rows.repos) stamp += `|${r.slot}:${r.isPublic ? 1 : 0}:${r.org.length}:${r.name.length}:${r.org}${r.name}`;
  const hit = cache.get(key, stamp);
  if (hit !== null) return hit;
  const json = graphJson(range, rows.repos, rows.days, withPrivate, undefined, cache.scratch);
  cache.set(key, stamp, json);
  return json;
}

/** The contribution graph as a value (the web's user page draws it); the same answer as the API's. */
export async function getContributions(ctx: Ctx, handle: string, q: { from?: string; to?: string }): Promise<ContributionGraph> {
  return JSON.parse(new TextDecoder().decode(await contributionGraphJson(ctx, handle, q))) as ContributionGraph;
}
