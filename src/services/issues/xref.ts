// Cross-references from code to issues (DECISIONS §5 "Issues"; issue 32): a commit pushed or a
// change opened or landed that mentions `#N` adds a `referenced` event to issue N, and
// `fixes|closes|resolves #N` (any form: fix, fixed, close, closed, resolve, resolved) closes it
// when the change lands on the default branch or a push brings the commit to it. The events'
// subscriber only enqueues a durable job in the event's transaction; the job reads git and writes
// the events (idempotent: each commit or change references an issue once, a closed issue stays).
import type { Tx } from "../../db/database.ts";
import { parseCommit } from "../../git/object.ts";
import { CommitCache, limitCommits } from "../../git/revision.ts";
import type { Oid } from "../../git/types.ts";
import { now, type Ctx } from "../context.ts";
import type { RepoEvent } from "../events/types.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { jobKind } from "../jobs/kind.ts";
import { repoForJob } from "../repos/repos.ts";
import { closeIssueIn, eventRow } from "./issues.ts";
import * as store from "./store.ts";

/** The most commits one push or landing is read for (the newest); a bound on the work a push can cause. */
const MAX_COMMITS = 1000;
/** Branches per push whose commits are read. */
const MAX_REFS = 20;
/** Issues one text may reference or close. */
const MAX_NUMBERS = 50;

/** What the job works on. */
export type XrefPayload =
  | { kind: "push"; repoId: string; orgId: string; via: string; actorUserId: string | null; moves: { ref: string; old: string | null; new: string }[] }
  | { kind: "change"; repoId: string; orgId: string; change: number; landed: boolean; commit: string | null; actorUserId: string | null };

/** Reading pushed commits and changes for issue references. */
export const ISSUES_XREF = jobKind<XrefPayload>("issues.xref");

const REF = /(^|[^\w&#/.@-])#([1-9][0-9]{0,8})(?![\w])/g;
const CLOSING = /(?:^|[^\w])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#([1-9][0-9]{0,8})(?![\w])/gi;

/** The `#N` numbers a text mentions, and those it closes (`fixes #N`). */
export function referencesIn(text: string): { mentioned: number[]; closes: number[] } {
  const mentioned = new Set<number>();
  const closes = new Set<number>();
  for (const m of text.matchAll(REF)) if (mentioned.size < MAX_NUMBERS) mentioned.add(Number(m[2]));
  for (const m of text.matchAll(CLOSING)) if (closes.size < MAX_NUMBERS) closes.add(Number(m[1]));
  for (const n of closes) mentioned.add(n);
  return { mentioned: [...mentioned], closes: [...closes] };
}

/** The event subscriber: one job per push that moved branches (not a mirror's: its numbers are its origin's), change opened or landed. */
export async function enqueueXrefs(ctx: Ctx, tx: Tx, event: RepoEvent): Promise<void> {
  if (event.kind === "push") {
    const via = String(event.payload.via ?? "");
    if (via === "mirror") return;
    const moves = event.moves
      .filter((m): m is { ref: string; old: string | null; new: string } => m.new !== null && m.ref.startsWith("refs/heads/"))
      .slice(0, MAX_REFS);
    if (!moves.length) return;
    await ctx.work.enqueue(tx, ISSUES_XREF, { kind: "push", repoId: event.repoId, orgId: event.orgId, via, actorUserId: event.actorUserId, moves });
    return;
  }
  if (event.kind === "change.opened" || event.kind === "change.landed") {
    const change = event.payload.change;
    if (typeof change !== "number") return;
    await ctx.work.enqueue(tx, ISSUES_XREF, {
      kind: "change",
      repoId: event.repoId,
      orgId: event.orgId,
      change,
      landed: event.kind === "change.landed",
      commit: typeof event.payload.commit === "string" ? event.payload.commit : null,
      actorUserId: event.actorUserId,
    });
  }
}

/** One commit's message, or null. */
async function messageOf(objects: { read(oid: Oid): Promise<{ type: string; data: Uint8Array } | null> }, oid: Oid): Promise<string | null> {
  const obj = await objects.read(oid).catch(() => null);
  if (!obj || obj.type !== "commit") return null;
  return parseCommit(obj.data).message;
}

/** The `issues.xref` handler. */
export async function runXref(ctx: Ctx, p: XrefPayload): Promise<void> {
  const repo = await repoForJob(ctx, p.repoId);
  if (!repo) return;
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  const cache = new CommitCache(snapshot.objects);
  const defaultRef = `refs/heads/${repo.defaultBranch}`;
  /** Commits reachable from `tip` and not from `not`, newest first, at most MAX_COMMITS. */
  const walk = async (tip: Oid, not: Oid[]): Promise<Oid[]> => {
    if (!(await cache.lookup(tip).catch(() => null))) return [];
    const present: Oid[] = [];
    for (const o of not) if (await cache.lookup(o).catch(() => null)) present.push(o);
    const { commits } = await limitCommits(cache, { interesting: [tip], uninteresting: present });
    return commits.slice(0, MAX_COMMITS).map((c) => c.oid);
  };
  const references: { number: number; data: Record<string, unknown>; dedupe: string }[] = [];
  const closing: { number: number; by: Record<string, unknown> }[] = [];

  if (p.kind === "push") {
    const moved = new Set(p.moves.map((m) => m.ref));
    const others = snapshot.refs.filter((r) => !moved.has(r.name)).map((r) => r.oid);
    for (const m of p.moves) {
      const toDefault = m.ref === defaultRef;
      // The default branch: every commit it gained (one pushed to another branch earlier closes
      // its issues only now). Another branch: only commits new to the repository.
      const commits = await walk(m.new, toDefault ? (m.old ? [m.old] : []) : [...(m.old ? [m.old] : []), ...others]);
      for (const sha of commits) {
        const message = await messageOf(snapshot.objects, sha);
        if (!message) continue;
        const refs = referencesIn(message);
        const subject = message.split("\n", 1)[0]!.slice(0, 200);
        for (const n of refs.mentioned) references.push({ number: n, data: { commit: sha, message: subject }, dedupe: `commit:${sha}` });
        // A landing is closed by its change.landed job, which names the change.
        if (toDefault && p.via !== "lander") for (const n of refs.closes) closing.push({ number: n, by: { kind: "commit", sha } });
      }
    }
  } else {
    const change = await store.changeText(ctx.db.read, p.repoId, p.change);
    if (!change) return;
    const texts = [change.title, change.description ?? ""];
    if (p.landed && p.commit) {
      // The commits the landing brought: reachable from the landed commit, not from the target's tip before it.
      const parents = (await cache.lookup(p.commit).catch(() => null))?.parents ?? [];
      for (const sha of await walk(p.commit, parents.slice(0, 1))) {
        const message = await messageOf(snapshot.objects, sha);
        if (message) texts.push(message);
      }
    }
    for (const text of texts) {
      const refs = referencesIn(text);
      for (const n of refs.mentioned)
        if (n !== p.change) references.push({ number: n, data: { change: p.change, title: change.title }, dedupe: `change:${p.change}` });
      if (p.landed && change.target === repo.defaultBranch)
        for (const n of refs.closes) closing.push({ number: n, by: { kind: "change", number: p.change, commit: p.commit } });
    }
  }
  if (!references.length && !closing.length) return;
  const issues = await store.issuesByNumbers(ctx.db.read, p.repoId, [...references.map((r) => r.number), ...closing.map((c) => c.number)]);
  if (!issues.length) return;
  const byNumber = new Map(issues.map((i) => [i.number, i]));
  await ctx.db.transaction(async (tx) => {
    const at = now();
    const seen = new Set<string>();
    for (const r of references) {
      const issue = byNumber.get(r.number);
      const key = `${r.number}:${r.dedupe}`;
      if (!issue || seen.has(key)) continue;
      seen.add(key);
      const inserted = await store.insertEvents(tx, [eventRow(issue, "referenced", p.actorUserId, r.data, at, r.dedupe)]);
      if (inserted.length) await store.touchIssue(tx, issue.id, at);
    }
    for (const c of closing) {
      const issue = byNumber.get(c.number);
      if (!issue) continue;
      await closeIssueIn(ctx, tx, { orgId: p.orgId }, issue, { actorUserId: p.actorUserId, reason: "completed", by: c.by, at });
    }
  });
}
