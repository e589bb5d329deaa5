// Cross-references from code to issues (DECISIONS §5 "Issues"; issue 32): a commit pushed or a
// change opened or landed that mentions `#N` adds a `referenced` event to issue N, and
// `fixes|closes|resolves #N` (any form: fix, fixed, close, closed, resolve, resolved) closes it
// when the change lands on the default branch or a push brings the commit to it. The events'
// subscriber only enqueues a durable job in the event's transaction; the job reads git and writes
// the events (idempotent: each commit or change references an issue once, a closed issue stays).
//
// `org/repo#N` naming another repository's issue adds a `referenced` event there too, with the
// source repository in its data (`source`): the timeline shows it only to callers who may read
// the source (comments.ts), so a private repository's commit never reaches an outsider. Only
// repositories the actor may read are referenced (a push cannot write into timelines it cannot
// see), and `fixes org/repo#N` never closes another repository's issue (only `#N` closes).
import type { Tx } from "../../db/database.ts";
import { parseCommit } from "../../git/object.ts";
import { CommitCache, limitCommits } from "../../git/revision.ts";
import type { Oid } from "../../git/types.ts";
import { now, type Ctx } from "../context.ts";
import type { RepoEvent } from "../events/types.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { jobKind } from "../jobs/kind.ts";
import { readersAmong } from "../access/lookup.ts";
import { isNamespaceName, isRepoName } from "../names.ts";
import { repoForJob } from "../repos/repos.ts";
import { reposNamed } from "../changes/comments.ts";
import { closeIssueIn, eventRow } from "./issues.ts";
import * as store from "./store.ts";

/** The most commits one push or landing is read for (the newest); a bound on the work a push can cause. */
const MAX_COMMITS = 1000;
/** Branches per push whose commits are read. */
const MAX_REFS = 20;
/** Issues one text may reference or close. */
const MAX_NUMBERS = 50;
/** Other repositories one job may reference issues in (`org/repo#N`). */
const MAX_REPOS = 10;

/** What the job works on. */
export type XrefPayload =
  | { kind: "push"; repoId: string; orgId: string; via: string; actorUserId: string | null; moves: { ref: string; old: string | null; new: string }[] }
  | { kind: "change"; repoId: string; orgId: string; change: number; landed: boolean; commit: string | null; actorUserId: string | null };

/** Reading pushed commits and changes for issue references. */
export const ISSUES_XREF = jobKind<XrefPayload>("issues.xref");

const REF = /(^|[^\w&#/.@-])#([1-9][0-9]{0,8})(?![\w])/g;
const CLOSING = /(?:^|[^\w])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#([1-9][0-9]{0,8})(?![\w])/gi;

/** `org/repo#N` (the same boundaries and name bounds as the rendered links: changes/refs.ts). */
const CROSS = /(^|[^\w&#/.@-])([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})#([1-9][0-9]{0,8})(?![\w])/g;

/** The `org/repo#N` a text mentions (well-formed names only, at most MAX_NUMBERS). */
export function crossReferencesIn(text: string): { org: string; repo: string; number: number }[] {
  const out: { org: string; repo: string; number: number }[] = [];
  for (const m of text.matchAll(CROSS)) {
    if (out.length >= MAX_NUMBERS) break;
    const [org, repo, number] = [m[2]!, m[3]!, Number(m[4])];
    if (isNamespaceName(org) && isRepoName(repo)) out.push({ org, repo, number });
  }
  return out;
}

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
  const cross: { org: string; repo: string; number: number; data: Record<string, unknown>; dedupe: string }[] = [];

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
        for (const x of crossReferencesIn(message)) cross.push({ ...x, data: { commit: sha, message: subject }, dedupe: `commit:${sha}` });
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
      for (const x of crossReferencesIn(text)) cross.push({ ...x, data: { change: p.change, title: change.title }, dedupe: `change:${p.change}` });
      if (p.landed && change.target === repo.defaultBranch)
        for (const n of refs.closes) closing.push({ number: n, by: { kind: "change", number: p.change, commit: p.commit } });
    }
  }
  const elsewhere = await crossTargets(ctx, p, repo.orgId, cross, references);
  if (!references.length && !closing.length && !elsewhere.length) return;
  const issues = await store.issuesByNumbers(ctx.db.read, p.repoId, [...references.map((r) => r.number), ...closing.map((c) => c.number)]);
  const byNumber = new Map(issues.map((i) => [i.number, i]));
  if (!issues.length && !elsewhere.length) return;
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
    for (const { issue, data, dedupe } of elsewhere) {
      const inserted = await store.insertEvents(tx, [eventRow(issue, "referenced", p.actorUserId, data, at, dedupe)]);
      if (inserted.length) await store.touchIssue(tx, issue.id, at);
    }
    for (const c of closing) {
      const issue = byNumber.get(c.number);
      if (!issue) continue;
      await closeIssueIn(ctx, tx, { orgId: p.orgId }, issue, { actorUserId: p.actorUserId, reason: "completed", by: c.by, at });
    }
  });
}

/**
 * The issues of other repositories that `org/repo#N` references name: only in repositories the
 * actor may read (none for an unknown actor but public ones), at most MAX_REPOS of them, each
 * event carrying its source repository. A reference naming this repository joins `local`.
 */
async function crossTargets(
  ctx: Ctx,
  p: XrefPayload,
  sourceOrgId: string,
  cross: { org: string; repo: string; number: number; data: Record<string, unknown>; dedupe: string }[],
  local: { number: number; data: Record<string, unknown>; dedupe: string }[],
): Promise<{ issue: store.IssueRow; data: Record<string, unknown>; dedupe: string }[]> {
  if (!cross.length) return [];
  const names = new Map<string, { org: string; repo: string }>();
  for (const x of cross) if (names.size < MAX_REPOS) names.set(`${x.org.toLowerCase()}/${x.repo.toLowerCase()}`, { org: x.org, repo: x.repo });
  const found = await reposNamed(ctx, [...names.values()]);
  const source = await store.repoAndOrg(ctx.db.read, p.repoId);
  if (!source || source.org.id !== sourceOrgId) return [];
  const out: { issue: store.IssueRow; data: Record<string, unknown>; dedupe: string }[] = [];
  const seen = new Set<string>();
  for (const r of found) {
    const key = `${r.org.toLowerCase()}/${r.name.toLowerCase()}`;
    const mine = cross.filter((x) => `${x.org.toLowerCase()}/${x.repo.toLowerCase()}` === key);
    if (r.id === p.repoId) {
      for (const x of mine) local.push({ number: x.number, data: x.data, dedupe: x.dedupe });
      continue;
    }
    const target = await store.repoAndOrg(ctx.db.read, r.id);
    if (!target) continue;
    // Why the actor's read access: a push writes into the timelines of repositories its pusher can see, no others.
    const readable = p.actorUserId ? (await readersAmong(ctx, target.org, target.repo, [p.actorUserId])).has(p.actorUserId) : target.repo.public;
    if (!readable) continue;
    const issues = await store.issuesByNumbers(
      ctx.db.read,
      r.id,
      mine.map((x) => x.number),
    );
    const byNumber = new Map(issues.map((i) => [i.number, i]));
    for (const x of mine) {
      const issue = byNumber.get(x.number);
      const k = `${r.id}:${x.number}:${x.dedupe}`;
      if (!issue || seen.has(k)) continue;
      seen.add(k);
      out.push({
        issue,
        data: { ...x.data, source: { repo_id: source.repo.id, org: source.org.name, repo: source.repo.name } },
        dedupe: `${x.dedupe}@${source.repo.id}`,
      });
    }
  }
  return out;
}
