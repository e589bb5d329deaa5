// The blame of one file on a worker thread (task "git.blame" in src/thread-tasks.ts). Why: a
// blame walks the history of the file and diffs every version of it, seconds of CPU for a long
// history; the thread opens the snapshot's packs through its own store and caches (as
// upload-thread.ts does) and runs the engine (src/git/blame.ts) without yielding.
//
//
// Stored blames (blame-store.ts): the path's stored entries are listed once; the commit's own
// entry answers without a walk; otherwise the walk takes the stored blame of any ancestor it
// reaches (exact: a commit's lines are blamed by its own history alone) and stops there. The
// finished blame is stored for the next node and the next commit.
//
// Pure function of its input plus what the thread builds for itself: importable on a thread, no ctx.
import { type BlameLimits, type BlameOutcome, blameFile } from "../../git/blame.ts";
import { loadBlame, saveBlame, storedBlames } from "./blame-store.ts";
import { PackSet } from "../../git/pack-set.ts";
import type { Oid } from "../../git/types.ts";
import type { PackRow } from "./store.ts";
import { type ThreadStoreConfig, threadGitStore } from "./upload-thread.ts";

/** Input of "git.blame": the snapshot's packs, the commit and path, the bounds. */
export interface BlameTaskInput {
  store: ThreadStoreConfig;
  /** The repository the stored blames belong to. */
  repoId: string;
  packs: PackRow[];
  commit: Oid;
  path: string[];
  limits: BlameLimits;
}

/** The task: the blame of `input.path` at `input.commit`. */
export async function blameTask(input: BlameTaskInput): Promise<BlameOutcome> {
  const git = await threadGitStore(input.store);
  const { repoId, commit, path } = input;
  const stored = await storedBlames(git.store, repoId, path);
  if (stored.commits.has(commit)) {
    const k = await loadBlame(git.store, repoId, commit, path);
    if (k) return { kind: "ok", lines: k.lines, ranges: k.ranges, commits: k.commits, truncated: false, walked: 0, stored: true };
  }
  const packs = await Promise.all(input.packs.map((row) => git.openPack(row)));
  const known = (c: string) => (stored.commits.has(c) ? loadBlame(git.store, repoId, c, path) : null);
  const outcome = await blameFile(new PackSet(packs, git.multiPackIndexes), commit, path, input.limits, undefined, known);
  if (!stored.full) await saveBlame(git.store, repoId, commit, path, outcome);
  return outcome;
}
