// The tree diff: the files that differ between two trees, each with a Myers line diff of its
// text, within explicit budgets (files listed, blob bytes read, patch text). Pure over an object
// reader; the commit page (repos), change and compare diffs (changes) all use it.
//
// The event loop (plan 28 §5: never blocked > 50 ms by a diff): the work between two yields is
// at most SLICE_MS plus one small file's line diff; a file whose two sides together exceed
// THREAD_MIN_BYTES is diffed on a worker thread (`git.lineDiff`) when the caller passes the pool.
// With `cache`, the answer is remembered per node by (repository, from tree, to tree)
// (services/git/diff-cache.ts): the same bytes either way.
import { countEdits, diffLines, diffTexts, unifiedHunks, type TextDiff } from "../../git/line-diff.ts";
import { diffTrees } from "../../git/merge.ts";
import { parseCommit } from "../../git/object.ts";
import type { ObjectReader, Oid } from "../../git/types.ts";
import { NotFound } from "../../errors.ts";
import type { Threads } from "../../threads.ts";
import { ThreadTaskError } from "../../util/thread-pool.ts";
import { type DiffCache, diffKey } from "./diff-cache.ts";
import type { DiffFile } from "./schemas.ts";

/** Files listed at most; beyond, the answer says it was truncated. */
export const MAX_FILES = 3000;
/** Blobs larger than this get counts only when small enough to count, and no patch. */
const MAX_BLOB = 1024 * 1024;
/** The patch text of one answer, in total. */
const PATCH_BUDGET = 4 * 1024 * 1024;
/** One file's patch at most. */
const MAX_FILE_PATCH = 512 * 1024;
/**
 * Blob bytes one diff reads in all; later files are listed without counts. Why: 3,000 files of
 * up to 1 MiB each could make one page read 3 GB (issue 25 row 4: pages never read without a bound).
 */
const READ_BUDGET = 32 * 1024 * 1024;

const decoder = new TextDecoder("utf-8", { fatal: false });

/** Work on the event loop between two yields (about: one inline file's diff is not cut). */
export const SLICE_MS = 8;
/** A file whose two sides together are larger than this is diffed on a thread (when a pool is given). */
export const THREAD_MIN_BYTES = 64 * 1024;
/** One file's diff on a thread at most; past it the file is counted as rewritten, without a patch. */
const LINE_DIFF_TIME_LIMIT_MS = 10_000;

/** What a diff may use beyond its reader: the thread pool for big files, and a node's cache. */
export interface DiffEnv {
  threads?: Threads;
  /** Remember the answer in `diffs` under repository `repoId` (the trees are the rest of the key). */
  cache?: { diffs: DiffCache; repoId: string };
  /** Work between two yields (default SLICE_MS; tests use 0 to yield after every file). */
  sliceMs?: number;
}

/** A function that yields to the event loop (a macrotask turn) once SLICE_MS of work has passed since the last yield. */
export function slicer(sliceMs = SLICE_MS): () => Promise<void> {
  let start = performance.now();
  return async () => {
    if (performance.now() - start < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    start = performance.now();
  };
}

/** Lines of a text, counted as splitLines would. */
function lineCount(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/** The line diff of one file's two sides: on a thread when big and a pool is given, else here. */
export async function diffFileTexts(a: string, b: string, wantPatch: boolean, threads?: Threads): Promise<TextDiff> {
  if (threads && a.length + b.length > THREAD_MIN_BYTES) {
    try {
      return await threads.run("git.lineDiff", { a, b, wantPatch }, { timeLimitMs: LINE_DIFF_TIME_LIMIT_MS });
    } catch (e) {
      if (!(e instanceof ThreadTaskError)) throw e;
      // Too slow even on a thread: counted as rewritten, as when the edit budget runs out.
      if (e.kind === "time_limit") return { additions: lineCount(b), deletions: lineCount(a), rewritten: true, text: null };
      if (e.kind !== "busy" && e.kind !== "closed") throw e;
      // No thread to be had: done here, as before the pool.
    }
  }
  return diffTexts(a, b, wantPatch);
}

/** Whether bytes look binary the way git decides: a NUL in the first 8,000 bytes. */
function isBinary(data: Uint8Array): boolean {
  return data.subarray(0, 8000).includes(0);
}

/** The tree of commit `c` (404 when it is missing or not a commit). */
export async function treeOfCommit(reader: ObjectReader, c: Oid): Promise<Oid> {
  const obj = await reader.read(c);
  if (!obj || obj.type !== "commit") throw NotFound(`commit ${c} not found`);
  return parseCommit(obj.data).tree;
}

/** The files of a diff and their totals. */
export interface FileDiffs {
  files: DiffFile[];
  additions: number;
  deletions: number;
  truncated: boolean;
  truncation: string | null;
}

/** Two-dot: the files that differ from tree `fromTree` (null: the empty tree) to `headTree`, within the budgets. */
export async function diffTreePair(reader: ObjectReader, fromTree: Oid | null, headTree: Oid, env: DiffEnv = {}): Promise<FileDiffs> {
  const { cache } = env;
  if (!cache) return computeTreePair(reader, fromTree, headTree, env);
  return cache.diffs.get(diffKey(cache.repoId, fromTree, headTree), () => computeTreePair(reader, fromTree, headTree, env));
}

async function computeTreePair(reader: ObjectReader, fromTree: Oid | null, headTree: Oid, env: DiffEnv): Promise<FileDiffs> {
  const { threads } = env;
  const tick = slicer(env.sliceMs);
  const listed = await diffTrees(reader, fromTree, headTree, { limit: MAX_FILES });
  const files: DiffFile[] = [];
  let budget = PATCH_BUDGET;
  let budgetSpent = false;
  let additions = 0;
  let deletions = 0;
  let tooLarge = 0;
  let readLeft = READ_BUDGET;
  let readSpent = false;
  const blob = async (oid: Oid | null, mode: string | null): Promise<Uint8Array | null> => {
    if (oid === null || mode === "160000") return new Uint8Array(0);
    const h = await reader.readHeader(oid);
    if (!h || h.size > MAX_BLOB) return null;
    // Sizes come first: the budget is taken before a byte is read.
    if (h.size > readLeft) {
      readSpent = true;
      return null;
    }
    readLeft -= h.size;
    return (await reader.read(oid))?.data ?? null;
  };
  // One file: counts always, the hunk text while the budget may still take it.
  const one = async (c: (typeof listed.changes)[number], wantPatch: boolean): Promise<DiffFile & { text?: string }> => {
    const file: DiffFile & { text?: string } = {
      path: c.path,
      status: c.status,
      old_mode: c.oldMode,
      new_mode: c.newMode,
      old_oid: c.oldOid,
      new_oid: c.newOid,
      binary: false,
      additions: 0,
      deletions: 0,
      patch: null,
      patch_truncated: false,
    };
    if (c.oldMode === "160000" || c.newMode === "160000") {
      // A submodule moved: one line each side, as git shows "Subproject commit".
      const sub = (oid: Oid | null) => (oid ? [`Subproject commit ${oid}\n`] : []);
      const a = c.oldMode === "160000" ? sub(c.oldOid) : [];
      const b = c.newMode === "160000" ? sub(c.newOid) : [];
      const edits = diffLines(a, b)!;
      Object.assign(file, countEdits(edits));
      file.text = unifiedHunks(a, b, edits);
      return file;
    }
    const [a, b] = await Promise.all([blob(c.oldOid, c.oldMode), blob(c.newOid, c.newMode)]);
    if (a === null || b === null) {
      file.patch_truncated = true;
      tooLarge++;
    } else if (isBinary(a) || isBinary(b)) {
      file.binary = true;
    } else {
      await tick();
      const d = await diffFileTexts(decoder.decode(a), decoder.decode(b), wantPatch, threads);
      // Too different to diff line by line within the edit budget: counted as rewritten.
      file.additions = d.additions;
      file.deletions = d.deletions;
      if (d.rewritten || !wantPatch) file.patch_truncated = true;
      else file.text = d.text ?? "";
    }
    return file;
  };
  // Files are read and diffed a batch at a time (object reads overlap); the patch budget is
  // then spent in path order, so what is cut is always the tail.
  const BATCH = 32;
  for (let i = 0; i < listed.changes.length; i += BATCH) {
    const batch = await Promise.all(listed.changes.slice(i, i + BATCH).map((c) => one(c, !budgetSpent)));
    await tick();
    for (const file of batch) {
      const text = file.text;
      delete file.text;
      if (text !== undefined) {
        if (text.length > MAX_FILE_PATCH) file.patch_truncated = true;
        else if (budgetSpent || text.length > budget) {
          budgetSpent = true;
          file.patch_truncated = true;
        } else {
          budget -= text.length;
          file.patch = text;
        }
      }
      additions += file.additions;
      deletions += file.deletions;
      files.push(file);
    }
  }
  const notes: string[] = [];
  if (listed.truncated) notes.push(`only the first ${MAX_FILES} changed files are listed`);
  if (budgetSpent) notes.push(`patches stop after ${PATCH_BUDGET} bytes of diff text; later files carry counts only`);
  if (tooLarge)
    notes.push(
      readSpent
        ? `${tooLarge} file(s) over ${MAX_BLOB} bytes, or past the ${READ_BUDGET / 1024 / 1024} MiB one diff reads, are listed without counts or patch`
        : `${tooLarge} file(s) over ${MAX_BLOB} bytes are listed without counts or patch`,
    );
  const truncated = notes.length > 0 || files.some((f) => f.patch_truncated);
  if (truncated && !notes.length) notes.push("some files are too large to show as a patch");
  return { files, additions, deletions, truncated, truncation: truncated ? `truncated: ${notes.join("; ")}` : null };
}
