// One commit with its diff against its first parent (the empty tree for a root commit), for the
// commit page: the same engine and budgets as change diffs.
import { need, type RepoTarget } from "../access/target.ts";
import { diffTreePair, treeOfCommit, type FileDiffs } from "../git/diff.ts";
import type { Ctx } from "../context.ts";
import { snapshotOf } from "../git/snapshot.ts";
import { commitSummary, resolveCommitId, revisionOptions } from "./content.ts";
import type { CommitSummary } from "./schemas.ts";

/** A commit (by id or unique abbreviation, repo:read) and what it changed against its first parent. */
export async function commitDiff(ctx: Ctx, t: RepoTarget, sha: string): Promise<{ commit: CommitSummary; diff: FileDiffs }> {
  need(t, "repo:read");
  const snapshot = await snapshotOf(ctx, t);
  const { oid, commit } = await resolveCommitId(snapshot, sha, revisionOptions(t.actor));
  const parent = commit.parents[0];
  const fromTree = parent ? await treeOfCommit(snapshot.objects, parent) : null;
  const env = { threads: ctx.threads, cache: { diffs: ctx.caches.diffs, repoId: t.repo.id } };
  return { commit: commitSummary(oid, commit), diff: await diffTreePair(snapshot.objects, fromTree, commit.tree, env) };
}
