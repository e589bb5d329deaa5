// A repository's git data: refs and the live pack list in SQLite, packs in object storage.
// Reads take one snapshot per request; writes publish a pack and move refs in one transaction.
import { PackSet } from "../../git/pack-set.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import type { ReachIndex } from "../../git/reachability.ts";
import type { Repo } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import { openChangeHeads, snapshotRows } from "./store.ts";
import { AppError } from "../../errors.ts";
import { GitStore, isUnavailable, UNAVAILABLE } from "./git-store.ts";

export { GitStore, packKey } from "./git-store.ts";
export type { RepoSnapshot };

/** One consistent snapshot: refs and pack rows read together, packs opened from storage. */
export async function openSnapshot(q: Queryable, git: GitStore, repo: Repo): Promise<RepoSnapshot> {
  const rows = await snapshotRows(q, repo.id);
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
