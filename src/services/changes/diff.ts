// Diffs for reviewers: a change's diff (its head against the merge base with the target's tip
// recorded for the patchset) and compare (`base...head`, git's three-dot form), computed by the
// pure-TS engine: the tree diff of services/git/diff.ts (a Myers line diff per text file, within
// explicit budgets) from the merge base.
import { mergeBases } from "../../git/merge.ts";
import { parseCommit } from "../../git/object.ts";
import { CommitCache, limitCommits } from "../../git/revision.ts";
import { SlicedPackSet } from "../../git/time-slice.ts";
import type { ObjectReader, Oid } from "../../git/types.ts";
import { Invalid, NotFound } from "../../errors.ts";
import { need, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { openSnapshot, snapshotOf } from "../git/snapshot.ts";
import { diffTreePair, treeOfCommit, type DiffEnv } from "../git/diff.ts";
import { commitSummary, resolveRevision, revisionOptions } from "../repos/content.ts";
import type { CommitSummary } from "../repos/schemas.ts";
import { COMPARE_COMMITS, type Comparison, type Diff } from "./schemas.ts";
import type { Repo } from "../../db/schema/index.ts";
import * as store from "./store.ts";
import type { ChangeRow } from "./store.ts";

/** Reads from the first reader that has the object (a fork's change reads the fork, then the target). */
function chain(readers: ObjectReader[]): ObjectReader {
  if (readers.length === 1) return readers[0]!;
  return {
    has: async (oid) => {
      for (const r of readers) if (await r.has(oid)) return true;
      return false;
    },
    read: async (oid) => {
      for (const r of readers) {
        const o = await r.read(oid);
        if (o) return o;
      }
      return null;
    },
    readHeader: async (oid) => {
      for (const r of readers) {
        const h = await r.readHeader(oid);
        if (h) return h;
      }
      return null;
    },
  };
}

/** What a diff of `repo` uses: the thread pool for big files and the node's diff cache. */
export function diffEnv(ctx: Ctx, repo: Repo): DiffEnv {
  return { threads: ctx.threads, cache: { diffs: ctx.caches.diffs, repoId: repo.id } };
}

/** The diff between commits `base` (three-dot: from their merge base) and `head`. */
export async function diffCommits(reader: ObjectReader, base: Oid, head: Oid, env: DiffEnv = {}): Promise<Diff> {
  const bases = await mergeBases(reader, base, head);
  const from = bases[0] ?? base;
  const [fromTree, headTree] = await Promise.all([treeOfCommit(reader, from), treeOfCommit(reader, head)]);
  return { base, head, merge_base: bases[0] ?? null, ...(await diffTreePair(reader, fromTree, headTree, env)) };
}

/** GET …/changes/{number}/diff (repo:read on the repository; a fork's change reads its source too). */
export async function changeDiff(ctx: Ctx, t: RepoTarget, number: number): Promise<Diff> {
  need(t, "repo:read");
  const { repo } = t;
  const row = Number.isInteger(number) && number > 0 ? await store.changeByNumber(ctx.db.read, repo.id, number) : null;
  if (!row) throw NotFound("change not found");
  if (!row.head || !row.base) throw NotFound("change has no commits to compare");
  return diffCommits(await changeReader(ctx, repo, row), row.base, row.head, diffEnv(ctx, repo));
}

/** The objects a change's commits are read from: its repository, and first its fork when it comes from one. */
export async function changeReader(ctx: Ctx, repo: Repo, row: ChangeRow): Promise<ObjectReader> {
  const readers: ObjectReader[] = [(await openSnapshot(ctx.db.read, ctx.git, repo)).objects];
  if (row.sourceRepoId) {
    const source = await store.repoWithOrg(ctx.db.read, row.sourceRepoId);
    if (source) readers.unshift((await openSnapshot(ctx.db.read, ctx.git, source.repo)).objects);
  }
  return chain(readers);
}

/** GET …/compare/{base}...{head} (repo:read): revisions resolved like the content API. */
export async function compare(ctx: Ctx, t: RepoTarget, spec: string): Promise<Comparison> {
  need(t, "repo:read");
  const { repo, actor } = t;
  const at = spec.indexOf("...");
  if (at <= 0 || at + 3 >= spec.length || spec.length > 1024) throw Invalid("compare takes {base}...{head}, e.g. main...feature");
  // The request's one snapshot: a page that lists the refs beside the comparison shows the same ones.
  const snapshot = await snapshotOf(ctx, t);
  const opts = revisionOptions(actor);
  const base = await resolveRevision(snapshot, spec.slice(0, at), opts);
  const head = await resolveRevision(snapshot, spec.slice(at + 3), opts);
  // Why sliced: the walks read every commit of both sides (all of them for unrelated histories)
  // from packs read synchronously; reads that yield every few milliseconds keep the loop free.
  const objects = new SlicedPackSet(snapshot.objects.packs, ctx.git.multiPackIndexes);
  return compareCommits(objects, base.oid, head.oid, diffEnv(ctx, repo));
}

/**
 * Commits `base` and `head` compared: their merge base, how far each is ahead of the other, the
 * head's commits (the newest COMPARE_COMMITS, oldest first) and the diff from the merge base. One
 * commit cache serves the three walks, so each commit of the range is parsed once.
 */
export async function compareCommits(reader: ObjectReader, base: Oid, head: Oid, env: DiffEnv = {}): Promise<Comparison> {
  const cache = new CommitCache(reader);
  const bases = await mergeBases(reader, base, head, cache);
  // git rev-list base..head and head..base: what the merge base reaches is left out of both.
  const ahead = base === head ? [] : (await limitCommits(cache, { interesting: [head], uninteresting: [base] })).commits;
  const behind = base === head ? 0 : (await limitCommits(cache, { interesting: [base], uninteresting: [head] })).commits.length;
  const from = bases[0] ?? base;
  const [fromTree, headTree] = [(await cache.get(from)).tree, (await cache.get(head)).tree];
  const shown = ahead.slice(0, COMPARE_COMMITS).reverse();
  const commits: CommitSummary[] = [];
  for (const node of shown) {
    const obj = await reader.read(node.oid);
    if (!obj || obj.type !== "commit") throw NotFound(`commit ${node.oid} not found`);
    commits.push(commitSummary(node.oid, parseCommit(obj.data)));
  }
  const diff = await diffTreePair(reader, fromTree, headTree, env);
  return { base, head, merge_base: bases[0] ?? null, ...diff, ahead: ahead.length, behind, commits };
}
