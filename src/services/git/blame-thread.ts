// The blame of one file on a worker thread (task "git.blame" in src/thread-tasks.ts). Why: a
// blame walks the history of the file and diffs every version of it, seconds of CPU for a long
// history; the thread opens the snapshot's packs through its own store and caches (as
// upload-thread.ts does) and runs the engine (src/git/blame.ts) without yielding.
//
// Pure function of its input plus what the thread builds for itself: importable on a thread, no ctx.
import { type BlameLimits, type BlameOutcome, blameFile } from "../../git/blame.ts";
import { PackSet } from "../../git/pack-set.ts";
import type { Oid } from "../../git/types.ts";
import type { PackRow } from "./store.ts";
import { type ThreadStoreConfig, threadGitStore } from "./upload-thread.ts";

/** Input of "git.blame": the snapshot's packs, the commit and path, the bounds. */
export interface BlameTaskInput {
  store: ThreadStoreConfig;
  packs: PackRow[];
  commit: Oid;
  path: string[];
  limits: BlameLimits;
}

/** The task: the blame of `input.path` at `input.commit`. */
export async function blameTask(input: BlameTaskInput): Promise<BlameOutcome> {
  const git = await threadGitStore(input.store);
  const packs = await Promise.all(input.packs.map((row) => git.openPack(row)));
  return blameFile(new PackSet(packs, git.multiPackIndexes), input.commit, input.path, input.limits);
}
