// Applying suggestions (issue 28; DECISIONS §5 "Reviews on changes"): the ```suggestion blocks of
// line comments, written into the change's branch as one commit by the caller. Each comment's lines
// are found where they sit on the current head (mapped through the pushes since it was made); the
// text there must still be exactly what the reviewer commented on, else 409 naming the comment.
// The commit goes through the commit API's machinery (commitOperations) with the head as expected
// parent, so a push in between answers 409 too; the comments are marked applied and their threads
// resolved in the transaction that moves the branch (exactly once with the commit).
import { isTreeMode } from "../../git/object.ts";
import type { Oid } from "../../git/types.ts";
import { AppError, Conflict, Forbidden, NotFound, Unprocessable } from "../../errors.ts";
import { openRepoTarget, need, type RepoTarget } from "../access/target.ts";
import { personOf } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { treeOfCommit } from "../git/diff.ts";
import { readBlobOffloaded } from "../repos/blob-read.ts";
import { commitOperations, gitIdentName } from "../repos/commits.ts";
import { entryAt } from "../repos/content.ts";
import type { PackSet } from "../../git/pack-set.ts";
import * as store from "./store.ts";
import { currentAnchors, type CurrentAnchor } from "./comments.ts";
import * as sstore from "./store-suggestions.ts";
import type { SuggestionCommentRow } from "./store-suggestions.ts";
import { sameLines, spliceLines, textLines, type LineEdit } from "./suggestion.ts";
import { MAX_APPLY_COMMENTS, type SuggestionApply, type SuggestionApplied } from "./suggestion-schemas.ts";

/** The largest file suggestions are applied to (read whole, split into lines, written back). */
export const MAX_APPLY_FILE_BYTES = 8 * 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A comment to apply, with where its lines are on the head. */
interface Planned {
  row: SuggestionCommentRow;
  path: string;
  start: number;
  end: number;
  text: string;
}

/** POST …/changes/{n}/suggestions/apply → the commit on the change's branch. */
export async function applySuggestions(ctx: Ctx, t: RepoTarget, number: number, input: SuggestionApply): Promise<SuggestionApplied> {
  need(t, "repo:read");
  const { repo, actor } = t;
  const ids = [...new Set(input.comment_ids)];
  if (!ids.length || ids.length > MAX_APPLY_COMMENTS) throw Unprocessable(`comment_ids must hold 1 to ${MAX_APPLY_COMMENTS} ids`);
  const change = Number.isInteger(number) && number > 0 ? await store.changeByNumber(ctx.db.read, repo.id, number) : null;
  if (!change) throw NotFound("change not found");

  // The branch lives here, or in the fork the change comes from: write access there is what counts.
  const branchTarget = await branchRepoTarget(ctx, t, change.sourceRepoId);
  if (change.state === "landed" || change.state === "closed") throw Conflict(`change #${number} is ${change.state}; suggestions apply to open changes`);
  const head = change.head;
  if (!head) throw Conflict(`change #${number} has no head`);
  if (input.head !== undefined && input.head !== head) throw Conflict(`change #${number} moved: its head is now ${head}`, { current: head });

  const rows = await sstore.commentsOfChange(ctx.db.read, change.id, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const wanted: SuggestionCommentRow[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    // Why drafts read as missing: they are their author's alone until published (to whom 422 says why).
    if (row?.state === "draft" && row.authorUserId !== null && row.authorUserId === personOf(actor)?.id)
      throw Unprocessable(`comment ${id} is pending: submit your review to publish it, then apply it`);
    if (!row || row.state !== "published") throw Unprocessable(`comment ${JSON.stringify(id)} is not a comment of change #${number}`);
    if (row.suggestion === null || row.path === null || row.line === null || row.side !== "new")
      throw Unprocessable(`comment ${id} is not a suggestion on the new side of a line range`);
    if (row.appliedCommit !== null) throw Unprocessable(`comment ${id} was already applied in ${row.appliedCommit}`);
    wanted.push(row);
  }

  const snapshot = await openSnapshot(ctx.db.read, ctx.git, branchTarget.repo);
  const objects = snapshot.objects;
  const headTree = await treeOfCommit(objects, head);
  const byPath = new Map<string, SuggestionCommentRow[]>();
  for (const row of wanted) {
    const list = byPath.get(row.path!) ?? [];
    list.push(row);
    byPath.set(row.path!, list);
  }

  // DECISIONS §5: "409 when those lines changed since" — outdated, mapped away, or different text alike.
  const changedSince = (row: SuggestionCommentRow) =>
    Conflict(`the lines of comment ${row.id} in ${row.path} changed since it was made`, { current: head, comment_id: row.id, path: row.path });
  // Positions on the current patchset: stored once the re-anchor job reached it, else mapped now as a read does.
  const anchors = await currentAnchors(ctx, t.repo, change, wanted, true);
  const operations: { op: "put"; path: string; content: string }[] = [];
  for (const [path, list] of byPath) {
    const entry = await entryAt(objects, headTree, path.split("/"));
    if (!entry || isTreeMode(entry.mode) || entry.mode === "160000") throw changedSince(list[0]!);
    // What the file is now decides first (a file turned binary is 422 whether or not the re-anchor
    // job has marked its comments outdated yet), then whether the lines are still there (409).
    if (entry.mode === "120000") throw Unprocessable(`${path} is a symbolic link; suggestions apply to text files`);
    const text = await readText(ctx, objects, entry.oid, path);
    const outdated = list.find((r) => r.outdated);
    if (outdated) throw changedSince(outdated);
    const planned: Planned[] = [];
    for (const row of list) {
      const range = rangeOnHead(row, anchors.get(row.id));
      if (!range) throw changedSince(row);
      planned.push({ row, path, start: range.start, end: range.end, text: row.suggestion! });
    }
    planned.sort((a, b) => a.start - b.start);
    for (let i = 1; i < planned.length; i++) {
      const [a, b] = [planned[i - 1]!, planned[i]!];
      if (b.start <= a.end) throw Unprocessable(`comments ${a.row.id} and ${b.row.id} suggest changes to overlapping lines of ${path}`);
    }
    const lines = textLines(text);
    for (const p of planned) {
      const current = lines.slice(p.start - 1, p.end).join("");
      // The guard that keeps a wrong mapping from ever corrupting a file: the text must be the reviewer's, byte for byte.
      if (p.end > lines.length || !sameLines(current, p.row.anchorText ?? "")) throw changedSince(p.row);
    }
    const edits: LineEdit[] = planned.map((p) => ({ start: p.start, end: p.end, text: p.text }));
    const next = spliceLines(text, edits);
    if (next !== text) operations.push({ op: "put", path, content: next });
  }
  if (!operations.length) throw Unprocessable("these suggestions change nothing: the lines already read as suggested");

  const message = await commitMessage(ctx, wanted, personOf(actor)?.id ?? null, input.message);
  const threadIds = [...new Set(wanted.map((r) => r.threadId))];
  const applied = ids;
  const made = await commitOperations(
    ctx,
    branchTarget,
    { branch: change.branch, expected_parent: head, message, operations },
    {
      also: async (tx, { commit }) => {
        // Exactly once with the commit: a concurrent apply of the same comment loses here (and its ref move rolls back).
        if ((await sstore.appliedAmong(tx, applied)) > 0) throw Conflict("some of these suggestions were applied meanwhile", { current: null });
        await sstore.markApplied(tx, applied, threadIds, commit, personOf(actor)?.id ?? null, now());
      },
    },
  );
  return { commit: made.commit, branch: made.branch, applied };
}

/**
 * The target to commit through: the change's repository with repo:write, or for a change from a
 * fork, the fork with repo:write (403 naming the fork otherwise; anonymous stays 401).
 */
async function branchRepoTarget(ctx: Ctx, t: RepoTarget, sourceRepoId: string | null): Promise<RepoTarget> {
  if (!sourceRepoId || sourceRepoId === t.repo.id) {
    need(t, "repo:write");
    return t;
  }
  const source = await store.repoWithOrg(ctx.db.read, sourceRepoId);
  if (!source) throw Conflict("the fork this change comes from no longer exists");
  try {
    return await openRepoTarget(ctx, t.actor, source.org.name, source.repo.name, "repo:write");
  } catch (e) {
    if (e instanceof AppError && e.code === "unauthenticated") throw e;
    // Why one message whether the fork is hidden or read-only: the change already names its source.
    if (e instanceof AppError && (e.code === "forbidden" || e.code === "not_found"))
      throw Forbidden(`applying suggestions to this change needs write access to ${source.org.name}/${source.repo.name}, where its branch lives`);
    throw e;
  }
}

/** A blob as text: 422 for a binary file (a NUL in its first 8,000 bytes, as git decides, or not UTF-8) or one too large. */
async function readText(ctx: Ctx, objects: PackSet, oid: Oid, path: string): Promise<string> {
  const header = await objects.readHeader(oid);
  if (!header) throw new Error(`blob ${oid} of ${path} is missing`);
  if (header.size > MAX_APPLY_FILE_BYTES) throw Unprocessable(`${path} is larger than ${MAX_APPLY_FILE_BYTES} bytes; apply its suggestions by hand`);
  const obj = await readBlobOffloaded(ctx, objects, oid);
  if (!obj) throw new Error(`blob ${oid} of ${path} is missing`);
  if (obj.data.subarray(0, 8000).includes(0)) throw Unprocessable(`${path} is a binary file; suggestions apply to text files`);
  try {
    return utf8.decode(obj.data);
  } catch {
    throw Unprocessable(`${path} is not UTF-8 text; suggestions apply to text files`);
  }
}

/**
 * Where a comment's lines are on the change's head: as mapped now (`anchor`, for a comment the
 * re-anchor job has not brought to the current patchset yet), else as stored. Null when outdated.
 */
function rangeOnHead(row: SuggestionCommentRow, anchor: CurrentAnchor | undefined): { start: number; end: number } | null {
  const at = anchor ?? { outdated: row.outdated, curLine: row.curLine, curStartLine: row.curStartLine };
  if (at.outdated || at.curLine === null) return null;
  return { start: at.curStartLine ?? at.curLine, end: at.curLine };
}

/**
 * The commit message: the caller's, or `Apply suggestion from @handle` for one suggester's single
 * suggestion and `Apply suggestions from code review` otherwise; then a Co-authored-by trailer per
 * distinct suggester other than the caller (a private sign-in address shows as
 * `{handle}@users.noreply.{host}`).
 */
async function commitMessage(ctx: Ctx, rows: SuggestionCommentRow[], callerId: string | null, given: string | undefined): Promise<string> {
  const authorIds = [...new Set(rows.map((r) => r.authorUserId).filter((x): x is string => x !== null))];
  const people = await sstore.suggesters(ctx.db.read, authorIds);
  const byId = new Map(people.map((p) => [p.id, p]));
  let subject = given?.trim();
  if (!subject) {
    const only = rows.length === 1 && rows[0]!.authorUserId ? byId.get(rows[0]!.authorUserId) : undefined;
    subject = only ? `Apply suggestion from @${only.handle}` : "Apply suggestions from code review";
  }
  const host = new URL(ctx.baseUrl).hostname;
  const trailers = authorIds
    .filter((id) => id !== callerId && byId.has(id))
    .map((id) => {
      const p = byId.get(id)!;
      const email = p.emailPrivate ? `${p.handle}@users.noreply.${host}` : p.email;
      return `Co-authored-by: ${gitIdentName(p.name, p.handle)} <${email.replace(/[<>\s]/g, "")}>`;
    });
  return trailers.length ? `${subject}\n\n${trailers.join("\n")}\n` : `${subject}\n`;
}
