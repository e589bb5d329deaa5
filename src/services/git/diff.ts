// The tree diff: the files that differ between two trees, each with a Myers line diff of its
// text, within explicit budgets (files listed, blob bytes read, patch text). Pure over an object
// reader; the commit page (repos), change and compare diffs (changes) all use it.
import { countEdits, diffLines, splitLines, unifiedHunks } from "../../git/line-diff.ts";
import { diffTrees } from "../../git/merge.ts";
import { parseCommit } from "../../git/object.ts";
import type { ObjectReader, Oid } from "../../git/types.ts";
import { NotFound } from "../../errors.ts";
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
export async function diffTreePair(reader: ObjectReader, fromTree: Oid | null, headTree: Oid): Promise<FileDiffs> {
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
      const al = splitLines(decoder.decode(a));
      const bl = splitLines(decoder.decode(b));
      const edits = diffLines(al, bl);
      if (edits === null) {
        // Too different to diff line by line within the edit budget: counted as rewritten.
        file.additions = bl.length;
        file.deletions = al.length;
        file.patch_truncated = true;
      } else {
        Object.assign(file, countEdits(edits));
        if (wantPatch) file.text = unifiedHunks(al, bl, edits);
        else file.patch_truncated = true;
      }
    }
    return file;
  };
  // Files are read and diffed a batch at a time (object reads overlap); the patch budget is
  // then spent in path order, so what is cut is always the tail.
  const BATCH = 32;
  for (let i = 0; i < listed.changes.length; i += BATCH) {
    const batch = await Promise.all(listed.changes.slice(i, i + BATCH).map((c) => one(c, !budgetSpent)));
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
