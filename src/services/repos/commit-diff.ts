// One commit with its diff against its first parent (the empty tree for a root commit), for the
// commit page: the same engine and budgets as change diffs.
import { requireRepoFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { diffTreePair, treeOfCommit, type FileDiffs } from "../git/diff.ts";
import type { Ctx } from "../context.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { commitSummary, resolveCommitId, revisionOptions } from "./content.ts";
import type { CommitSummary } from "./schemas.ts";

/** A commit (by id or unique abbreviation, repo:read) and what it changed against its first parent. */
export async function commitDiff(ctx: Ctx, actor: Principal, orgName: string, repoName: string, sha: string): Promise<{ commit: CommitSummary; diff: FileDiffs }> {
  const { repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:read");
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  const { oid, commit } = await resolveCommitId(snapshot, sha, revisionOptions(actor));
  const parent = commit.parents[0];
  const fromTree = parent ? await treeOfCommit(snapshot.objects, parent) : null;
  return { commit: commitSummary(oid, commit), diff: await diffTreePair(snapshot.objects, fromTree, commit.tree) };
}
