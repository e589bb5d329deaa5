// A repository's git data: refs and the live pack list in SQLite, packs in object storage.
// Reads take one snapshot per request; writes publish a pack and move refs in one transaction.
import { PackSet } from "../../git/pack-set.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import type { ReachIndex } from "../../git/reachability.ts";
import type { Ref } from "../../git/types.ts";
import type { Repo } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import { openChangeHeads, snapshotRows, type PackRow } from "./store.ts";
import type { Ctx } from "../context.ts";
import type { RepoTarget } from "../access/target.ts";
import { AppError } from "../../errors.ts";
import { GitStore, isUnavailable, UNAVAILABLE } from "./git-store.ts";

export { GitStore, packKey } from "./git-store.ts";
export type { RepoSnapshot };

/** One consistent snapshot: refs and pack rows read together, packs opened from storage. */
export async function openSnapshot(q: Queryable, git: GitStore, repo: Repo): Promise<RepoSnapshot> {
  return snapshotFromRows(q, git, repo, await snapshotRows(q, repo.id));
}

/**
 * The rows of a target's snapshot, read once per request (plan §4 "resolve once"): a page that
 * lists the refs and then reads a file asks the database for the ref list once.
 */
function rowsOf(ctx: Ctx, t: RepoTarget): Promise<{ refs: Ref[]; packs: PackRow[] }> {
  return t.once("git:snapshot-rows", () => snapshotRows(ctx.db.read, t.repo.id));
}

/** The target's refs, by name, from the same read its snapshot is opened from. */
export async function refsOf(ctx: Ctx, t: RepoTarget): Promise<Ref[]> {
  return (await rowsOf(ctx, t)).refs;
}

/** The target's snapshot, opened once per request whatever number of services read it. */
export function snapshotOf(ctx: Ctx, t: RepoTarget): Promise<RepoSnapshot> {
  return t.once("git:snapshot", async () => snapshotFromRows(ctx.db.read, ctx.git, t.repo, await rowsOf(ctx, t)));
}

async function snapshotFromRows(q: Queryable, git: GitStore, repo: Repo, rows: { refs: Ref[]; packs: PackRow[] }): Promise<RepoSnapshot> {
  // Why 503: the store giving up is temporary; the client should retry, not report a broken repository.
  const opened = await Promise.all(rows.packs.map((row) => git.openPack(row))).catch((err: unknown) => {
    throw isUnavailable(err) ? new AppError("unavailable", UNAVAILABLE) : err;
  });
  const objects = new PackSet(opened, git.multiPackIndexes);
  let reach: Promise<ReachIndex> | null = null;
  return {
    refs: rows.refs,
    head: `refs/heads/${repo.defaultBranch}`,
    objects,
    peeled: git.peeled,
    // Built on first use: reads by ref name never ask. The open changes' heads are read then, so
    // a change opened after the refs were read is not in it (its reader retries after the fact).
    reach: () => (reach ??= (async () => git.reachIndex(repo.id, objects, [...rows.refs.map((r) => r.oid), ...(await openChangeHeads(q, repo.id))]))()),
  };
}

export { readRef, readRefs } from "./store.ts";
