// Diffs for reviewers: a change's diff (its head against the merge base with the target's tip
// recorded for the patchset) and compare (`base...head`, git's three-dot form), computed by the
// pure-TS engine: tree diff, then a Myers line diff per text file, within explicit budgets.
import { countEdits, diffLines, splitLines, unifiedHunks } from "../../git/line-diff.ts";
import { diffTrees, mergeBases } from "../../git/merge.ts";
import { parseCommit } from "../../git/object.ts";
import type { ObjectReader, Oid } from "../../git/types.ts";
import { Invalid, NotFound } from "../../errors.ts";
import { requireRepoFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { resolveRevision, revisionOptions } from "../repos/content.ts";
import type { Diff, DiffFile } from "./schemas.ts";
import type { Repo } from "../../db/schema/index.ts";
import * as store from "./store.ts";
import type { ChangeRow } from "./store.ts";

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

/** The tree of commit `c` (404 when it is missing or not a commit). */
export async function treeOfCommit(reader: ObjectReader, c: Oid): Promise<Oid> {
  const obj = await reader.read(c);
  if (!obj || obj.type !== "commit") throw NotFound(`commit ${c} not found`);
  return parseCommit(obj.data).tree;
}

/** The diff between commits `base` (three-dot: from their merge base) and `head`. */
export async function diffCommits(reader: ObjectReader, base: Oid, head: Oid): Promise<Diff> {
  const bases = await mergeBases(reader, base, head);
  const from = bases[0] ?? base;
  const [fromTree, headTree] = await Promise.all([treeOfCommit(reader, from), treeOfCommit(reader, head)]);
  return { base, head, merge_base: bases[0] ?? null, ...(await diffTreePair(reader, fromTree, headTree)) };
}

/** The files of a diff and their totals. */
export type FileDiffs = Pick<Diff, "files" | "additions" | "deletions" | "truncated" | "truncation">;

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
    const file: DiffFile & { text?: string } = { path: c.path, status: c.status, old_mode: c.oldMode, new_mode: c.newMode, old_oid: c.oldOid, new_oid: c.newOid, binary: false, additions: 0, deletions: 0, patch: null, patch_truncated: false };
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
  if (tooLarge) notes.push(readSpent ? `${tooLarge} file(s) over ${MAX_BLOB} bytes, or past the ${READ_BUDGET / 1024 / 1024} MiB one diff reads, are listed without counts or patch` : `${tooLarge} file(s) over ${MAX_BLOB} bytes are listed without counts or patch`);
  const truncated = notes.length > 0 || files.some((f) => f.patch_truncated);
  if (truncated && !notes.length) notes.push("some files are too large to show as a patch");
  return { files, additions, deletions, truncated, truncation: truncated ? `truncated: ${notes.join("; ")}` : null };
}

/** GET …/changes/{number}/diff (repo:read on the repository; a fork's change reads its source too). */
export async function changeDiff(ctx: Ctx, actor: Principal, orgName: string, repoName: string, number: number): Promise<Diff> {
  const { repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:read");
  const row = Number.isInteger(number) && number > 0 ? await store.changeByNumber(ctx.db.read, repo.id, number) : null;
  if (!row) throw NotFound("change not found");
  if (!row.head || !row.base) throw NotFound("change has no commits to compare");
  return diffCommits(await changeReader(ctx, repo, row), row.base, row.head);
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
export async function compare(ctx: Ctx, actor: Principal, orgName: string, repoName: string, spec: string): Promise<Diff> {
  const { repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:read");
  const at = spec.indexOf("...");
  if (at <= 0 || at + 3 >= spec.length || spec.length > 1024) throw Invalid("compare takes {base}...{head}, e.g. main...feature");
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  const opts = revisionOptions(actor);
  const base = await resolveRevision(snapshot, spec.slice(0, at), opts);
  const head = await resolveRevision(snapshot, spec.slice(at + 3), opts);
  return diffCommits(snapshot.objects, base.oid, head.oid);
}
