// Comments and threads on changes (DECISIONS §5 "Reviews on changes"; issue 28 plan §3.1, §3.7).
// A comment is general (no path), on lines of one side of a patchset's diff, or a reply joining
// another comment's thread. Everything a comment needs from git (the side's blob, the hunk check,
// its anchor text) and its Markdown rendering is read before the transaction (`prepareComment`,
// which reviews use too); the transaction writes the row, the event and the thread activity.
import type { Repo } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { Forbidden, Invalid, NotFound, Unprocessable } from "../../errors.ts";
import { mergeBases } from "../../git/merge.ts";
import { parseTree } from "../../git/object.ts";
import { splitLines } from "../../git/line-diff.ts";
import type { ObjectReader, Oid } from "../../git/types.ts";
import { newId } from "../../util/ids.ts";
import { ThreadTaskError } from "../../util/thread-pool.ts";
import { personOf } from "../access/principal.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import type { NotifyReason } from "../events/types.ts";
import { treeOfCommit } from "../git/diff.ts";
import { parsePage, pageOf } from "../paging.ts";
import { hunkLines, mapRanges, rangeInHunks, type LineRange } from "./anchors.ts";
import {
  MAX_COMMENT_BODY,
  MAX_COMMENT_LINES,
  type Comment,
  type CommentCreate,
  type CommentList,
  type CommentListQuery,
  type CommentPatch,
} from "./comment-schemas.ts";
import { changeReader } from "./diff.ts";
import { collectRefs, type CrossRefs, linkRefs, repoKey } from "./refs.ts";
import { parseSuggestion } from "./suggestion.ts";
import * as store from "./store.ts";
import type { ChangeRow } from "./store.ts";
import * as cstore from "./store-comments.ts";
import * as rstore from "./store-reviews.ts";
import type { CommentRow } from "./store-comments.ts";
import { patchsetOf } from "./store-patchsets.ts";

/** Blobs up to this size get the hunk check and re-anchoring (as the diff API shows patches up to it). */
const MAX_DIFF_BLOB = 1024 * 1024;
/** A side's blob larger than this takes no line comments at all. */
const MAX_LINE_BLOB = 8 * 1024 * 1024;
/** Texts (both sides together) larger than this are diffed on a worker thread. */
const OFFLOAD_BYTES = 64 * 1024;
/** How long one thread diff may take. */
const THREAD_TIME_LIMIT_MS = 5_000;
/** Stored anchor and context text at most. */
const MAX_ANCHOR_TEXT = 64 * 1024;
/** Lines of context stored before the commented lines. */
const CONTEXT_LINES = 3;
/** The excerpt of a comment in its thread activity. */
const EXCERPT = 500;
/** Pending (draft) comments one person may hold on a change: as many as one review publishes. */
export const MAX_PENDING_COMMENTS = 100;
/**
 * Rendered-body version: bump to re-render stored comments lazily (2: inline HTML sanitized,
 * heading ids, task lists, highlighted fences — issue 33; 3: the fences' one-letter classes).
 */
export const RENDER_VERSION = 3;

const decoder = new TextDecoder("utf-8", { fatal: false });

/** A comment checked, anchored and rendered, ready to insert (no write done yet). */
export interface PreparedComment {
  row: CommentRow;
  /** People `@mentioned` in the body who exist (the fan-out checks that they may read the repository). */
  mentions: { id: string; handle: string }[];
}

// ── reading git ────────────────────────────────────────────────────────────────────────────────

/** The entry at `path` of commit `commit`'s tree, or null. */
async function fileAt(reader: ObjectReader, commit: Oid, path: string): Promise<{ mode: string; oid: Oid } | null> {
  let tree = await treeOfCommit(reader, commit);
  const parts = path.split("/");
  for (let i = 0; i < parts.length; i++) {
    const obj = await reader.read(tree);
    if (!obj || obj.type !== "tree") return null;
    const e = parseTree(obj.data).find((x) => x.name === parts[i]);
    if (!e) return null;
    if (i === parts.length - 1) return { mode: e.mode, oid: e.oid };
    if (e.mode !== "40000" && e.mode !== "040000") return null;
    tree = e.oid;
  }
  return null;
}

/** A blob's text, or why there is none (binary, or larger than `max`). */
async function textOf(reader: ObjectReader, oid: Oid, max: number): Promise<{ text: string } | { none: "binary" | "large" | "missing" }> {
  const h = await reader.readHeader(oid);
  if (!h) return { none: "missing" };
  if (h.size > max) return { none: "large" };
  const obj = await reader.read(oid);
  if (!obj) return { none: "missing" };
  if (obj.data.subarray(0, 8000).includes(0)) return { none: "binary" };
  return { text: decoder.decode(obj.data) };
}

const isFile = (mode: string) => mode === "100644" || mode === "100755" || mode === "100664" || mode === "120000";

/** The merge base a patchset's diff is computed from (as diffCommits does). */
async function mergeBaseOf(reader: ObjectReader, base: Oid, head: Oid): Promise<Oid> {
  return (await mergeBases(reader, base, head))[0] ?? base;
}

/** Maps ranges between two texts: on the event loop for small texts, on a thread for big ones. */
async function mapRangesOffloaded(ctx: Ctx, input: { old: string; new: string; ranges: LineRange[] }): Promise<(LineRange | null)[]> {
  if (input.old.length + input.new.length <= OFFLOAD_BYTES) return mapRanges(input.old, input.new, input.ranges);
  return await ctx.threads.run("changes.mapRanges", input, { timeLimitMs: THREAD_TIME_LIMIT_MS });
}

/** `make()`, remembered in the context's anchor cache under `key` (a function of object ids: anchor-cache.ts). */
async function remembered<T extends Uint8Array | string | null>(ctx: Ctx, key: string, make: () => Promise<T>): Promise<T> {
  const hit = ctx.caches.anchors.get(key);
  if (hit !== undefined) return hit as T;
  const value = await make();
  ctx.caches.anchors.set(key, value);
  return value;
}

/** The commentable lines of one side of a file's diff (anchors.ts `hunkLines`), on a thread for big texts. */
async function hunkLinesOffloaded(ctx: Ctx, input: { old: string; new: string; side: "old" | "new" }): Promise<Uint8Array | null> {
  if (input.old.length + input.new.length <= OFFLOAD_BYTES) return hunkLines(input.old, input.new, input.side);
  return await ctx.threads.run("changes.hunkLines", input, { timeLimitMs: THREAD_TIME_LIMIT_MS });
}

// ── validation and rendering ─────────────────────────────────────────────────────────────────

/** Whether the caller opened `change` (its author may discuss it without a role here, e.g. from a fork). */
function isChangeAuthor(t: RepoTarget, change: Pick<ChangeRow, "authorUserId">): boolean {
  const me = personOf(t.actor);
  return me !== null && change.authorUserId !== null && change.authorUserId === me.id;
}

function checkBody(body: unknown): string {
  if (typeof body !== "string" || body.trim() === "") throw Unprocessable("body must not be empty");
  if (body.length > MAX_COMMENT_BODY) throw Unprocessable(`body must be at most ${MAX_COMMENT_BODY} characters`);
  if (body.includes("\0")) throw Unprocessable("body must not contain NUL");
  return body;
}

function checkPath(path: string): string {
  const parts = path.split("/");
  if (!path || path.length > 4096 || path.includes("\0") || parts.some((p) => p === "" || p === "." || p === ".."))
    throw Unprocessable("path must be a file path relative to the repository root, like src/app.ts");
  return path;
}

function checkLine(v: unknown, field: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 10_000_000) throw Unprocessable(`${field} must be a line number from 1`);
  return v;
}

function escapeText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A body as sanitized markup with `#N` and `@handle` linked, and the people mentioned. Rendered
 * on a worker thread (the `web.renderMarkdown` task; services hold no renderer of their own): a
 * body the thread cannot render in time is shown as text.
 */
export async function renderBody(
  ctx: Ctx,
  t: { org: { name: string }; repo: { name: string } },
  change: Pick<ChangeRow, "repoId" | "head" | "target">,
  body: string,
  path: string | null,
): Promise<{ html: string; mentions: { id: string; handle: string }[] }> {
  const repoPath = `/${encodeURIComponent(t.org.name)}/${encodeURIComponent(t.repo.name)}`;
  const dir = path?.includes("/") ? path.slice(0, path.lastIndexOf("/")).split("/").map(encodeURIComponent).join("/") : "";
  let html: string;
  try {
    html = await ctx.threads.run(
      "web.renderMarkdown",
      { source: body, base: { repo: repoPath, ref: change.head ?? change.target, dir } },
      { timeLimitMs: 2_000 },
    );
  } catch (e) {
    if (!(e instanceof ThreadTaskError)) throw e;
    return { html: `<pre>${escapeText(body)}</pre>`, mentions: [] };
  }
  const refs = collectRefs(html);
  const [numbers, issues, people, repos] = await Promise.all([
    cstore.existingChangeNumbers(ctx.db.read, change.repoId, refs.numbers),
    cstore.existingIssueNumbers(ctx.db.read, change.repoId, refs.numbers),
    cstore.usersByHandles(ctx.db.read, refs.handles),
    crossRefTargets(ctx, change.repoId, refs.repos),
  ]);
  return {
    html: linkRefs(html, { repoPath, changes: numbers, issues, people: new Map(people.map((p) => [p.handle.toLowerCase(), p.handle])), repos }),
    mentions: people,
  };
}

/**
 * What `org/repo#N` may link to: changes and issues that exist in a public repository or in the
 * comment's own. Rendered once for every reader, so a private repository's name stays text: a link
 * (or its absence beside other links) would tell a reader who cannot see it that it exists.
 */
export async function crossRefTargets(
  ctx: Ctx,
  ownRepoId: string,
  refs: CrossRefs,
): Promise<Map<string, { repoPath: string; changes: Set<number>; issues: Set<number> }>> {
  const out = new Map<string, { repoPath: string; changes: Set<number>; issues: Set<number> }>();
  if (!refs.size) return out;
  const linkable = (await cstore.reposByFullNames(ctx.db.read, [...refs.values()])).filter((r) => r.public || r.id === ownRepoId);
  const numbers = linkable.flatMap((r) => refs.get(repoKey(r.org, r.name))?.numbers ?? []);
  const ids = linkable.map((r) => r.id);
  const [found, foundIssues] = await Promise.all([cstore.changeNumbersIn(ctx.db.read, ids, numbers), cstore.issueNumbersIn(ctx.db.read, ids, numbers)]);
  for (const r of linkable) {
    const wanted = new Set(refs.get(repoKey(r.org, r.name))?.numbers ?? []);
    const changes = new Set(found.filter((f) => f.repoId === r.id && wanted.has(f.number)).map((f) => f.number));
    const issues = new Set(foundIssues.filter((f) => f.repoId === r.id && wanted.has(f.number)).map((f) => f.number));
    if (changes.size || issues.size)
      out.set(repoKey(r.org, r.name), { repoPath: `/${encodeURIComponent(r.org)}/${encodeURIComponent(r.name)}`, changes, issues });
  }
  return out;
}

/** Repositories named `org/repo` (case-insensitively), with whether each is public (issue references read them too). */
export function reposNamed(ctx: Ctx, names: { org: string; repo: string }[]): Promise<{ id: string; org: string; name: string; public: boolean }[]> {
  return cstore.reposByFullNames(ctx.db.read, names);
}

/**
 * The people a Markdown text (a change's description) mentions with `@handle` outside code, who
 * exist: the thread's `mention` participants (the fan-out checks they may read the repository).
 */
export async function mentionsIn(ctx: Ctx, source: string): Promise<{ id: string; handle: string }[]> {
  if (!source.includes("@")) return [];
  let html: string;
  try {
    html = await ctx.threads.run("web.renderMarkdown", { source, base: { repo: "", ref: "", dir: "" } }, { timeLimitMs: 2_000 });
  } catch (e) {
    if (!(e instanceof ThreadTaskError)) throw e;
    return [];
  }
  return cstore.usersByHandles(ctx.db.read, collectRefs(html).handles);
}

/** The anchor of a line comment: the side's blob and lines, checked against the patchset's diff. */
async function anchorOf(ctx: Ctx, t: RepoTarget, change: ChangeRow, input: CommentCreate, patchset: number) {
  const path = checkPath(input.path!);
  if (input.line === undefined || input.line === null) throw Unprocessable("line is required with path");
  const line = checkLine(input.line, "line");
  const startLine = input.start_line === undefined || input.start_line === null ? null : checkLine(input.start_line, "start_line");
  if (startLine !== null && startLine > line) throw Unprocessable("start_line must not be after line");
  if (startLine !== null && line - startLine + 1 > MAX_COMMENT_LINES) throw Unprocessable(`a comment spans at most ${MAX_COMMENT_LINES} lines`);
  const side = input.side ?? "new";
  const ps = await patchsetOf(ctx.db.read, change.id, patchset);
  if (!ps) throw Unprocessable(`change #${change.number} has no patchset ${patchset}`);
  if (!ps.base) throw Unprocessable(`patchset ${patchset} has no base to comment against`);
  const reader = await t.once(`change-reader:${change.id}`, () => changeReader(ctx, t.repo, change));
  const mergeBase = await t.once(`merge-base:${ps.base}:${ps.head}`, () =>
    remembered(ctx, `base:${t.repo.id}:${ps.base}:${ps.head}`, () => mergeBaseOf(reader, ps.base!, ps.head)),
  );
  // Memoised on the request: a review's comments on one file read its blobs once.
  const entryAt = (commit: Oid) => t.once(`file:${commit}:${path}`, () => fileAt(reader, commit, path));
  const text = (oid: Oid, max: number) => t.once(`text:${oid}:${max}`, () => textOf(reader, oid, max));
  const [oldEntry, newEntry] = await Promise.all([entryAt(mergeBase), entryAt(ps.head)]);
  const notInDiff = () => Unprocessable(`${path} is not part of the diff of patchset ${patchset}`);
  if ((oldEntry?.oid ?? null) === (newEntry?.oid ?? null) && (oldEntry?.mode ?? null) === (newEntry?.mode ?? null)) throw notInDiff();
  // A directory or submodule is no file to comment on lines of.
  if (!(oldEntry && isFile(oldEntry.mode)) && !(newEntry && isFile(newEntry.mode))) throw notInDiff();
  const entry = side === "new" ? newEntry : oldEntry;
  if (!entry || !isFile(entry.mode))
    throw Unprocessable(`${path} has no ${side} side in patchset ${patchset} (it was ${side === "new" ? "deleted" : "added"}); comment on the other side`);
  const own = await text(entry.oid, MAX_LINE_BLOB);
  if ("none" in own) throw Unprocessable(own.none === "binary" ? `${path} is binary: comment on the change instead` : `${path} is too large for line comments`);
  const lines = splitLines(own.text);
  if (line > lines.length) throw Unprocessable(`line ${line} is outside ${path} (${lines.length} lines on the ${side} side)`);
  const start = startLine ?? line;
  // The hunk check: the lines must be ones a reviewer sees in the diff (changed, or within its context).
  const otherEntry = side === "new" ? oldEntry : newEntry;
  const other = otherEntry && isFile(otherEntry.mode) ? await text(otherEntry.oid, MAX_DIFF_BLOB) : { text: "" };
  if (own.text.length <= MAX_DIFF_BLOB && "text" in other) {
    const [oldText, newText] = side === "new" ? [other.text, own.text] : [own.text, other.text];
    let near: Uint8Array | null = null;
    try {
      // One diff per file and side for the whole request (a review's comments on one file).
      const key = `${otherEntry?.oid ?? "-"}:${entry.oid}:${side}`;
      near = await t.once(`hunks:${key}`, () =>
        remembered(ctx, `hunks:${t.repo.id}:${key}`, () => hunkLinesOffloaded(ctx, { old: oldText, new: newText, side })),
      );
    } catch (e) {
      if (!(e instanceof ThreadTaskError)) throw e;
    }
    const ok = rangeInHunks(near, lines.length, { start, end: line });
    if (!ok)
      throw Unprocessable(
        `line${start === line ? ` ${line}` : `s ${start}-${line}`} of ${path} ${start === line ? "is" : "are"} not part of the diff: comment on changed lines or the 3 lines around them`,
      );
  }
  const cut = (s: string) => (s.length > MAX_ANCHOR_TEXT ? s.slice(0, MAX_ANCHOR_TEXT) : s);
  return {
    path,
    side,
    line,
    startLine,
    commitOid: side === "new" ? ps.head : mergeBase,
    blobOid: entry.oid,
    anchorText: cut(lines.slice(start - 1, line).join("")),
    contextText: cut(lines.slice(Math.max(0, start - 1 - CONTEXT_LINES), start - 1).join("")),
    curLine: line,
    curStartLine: startLine,
  };
}

/**
 * The replacement text of a body's ```suggestion block, for a comment on lines of the new side
 * (a general comment or a reply keeps none: it has no lines to replace). 422 for two blocks, or
 * a suggestion on the old side (those lines are not in the change's files any more).
 */
function suggestionOf(body: string, side: "new" | "old" | null): string | null {
  const parsed = parseSuggestion(body);
  if (parsed === null) return null;
  if ("error" in parsed) throw Unprocessable(parsed.error);
  if (side === "old") throw Unprocessable("a suggestion replaces lines of the new side: comment on side new");
  return side === "new" ? parsed.text : null;
}

/** Options of `prepareComment`. */
export interface PrepareOptions {
  /** A review's comment: always on the current patchset (`patchset` refused). */
  inReview?: boolean;
  /** `draft` for the web page's pending review comments (listed to their author only). */
  state?: "draft" | "published";
}

/**
 * Checks, anchors and renders one comment of `change` for the caller (repo:discuss), reading
 * what it needs from git; writes nothing. 422 for everything the plan lists (path not in the
 * diff, lines outside the file or its hunks, a bad range, an empty or long body, a reply to
 * another change's comment).
 */
export async function prepareComment(ctx: Ctx, t: RepoTarget, change: ChangeRow, input: CommentCreate, opts: PrepareOptions = {}): Promise<PreparedComment> {
  need(t, { kind: "repo:discuss", changeAuthor: isChangeAuthor(t, change) });
  const author = personOf(t.actor)!;
  const body = checkBody(input.body);
  const id = newId();
  const at = now();
  const anchored = input.path !== undefined && input.path !== null;
  if (opts.inReview && input.patchset !== undefined && input.patchset !== null && input.patchset !== change.patchset)
    throw Unprocessable("a review's comments are on the current patchset: leave out patchset");
  if (opts.inReview && input.draft === true) throw Unprocessable("a review's comments are published with it: leave out draft");
  const patchset = input.patchset ?? change.patchset;
  if (!Number.isInteger(patchset) || patchset < 1 || patchset > change.patchset) throw Unprocessable(`change #${change.number} has no patchset ${patchset}`);
  let threadId = id;
  let inReplyTo: string | null = null;
  let anchor: Awaited<ReturnType<typeof anchorOf>> | null = null;
  if (input.in_reply_to !== undefined && input.in_reply_to !== null) {
    if (anchored || input.line != null || input.start_line != null || input.side != null)
      throw Unprocessable("a reply takes no path, line or side: it joins the thread of in_reply_to");
    const parent =
      typeof input.in_reply_to === "string" && input.in_reply_to.length <= 64 ? await cstore.commentById(ctx.db.read, change.id, input.in_reply_to) : null;
    if (!parent || (parent.state === "draft" && parent.authorUserId !== author.id))
      throw Unprocessable(`in_reply_to names no comment of change #${change.number}`);
    // A pending comment is its author's until the review publishes it: edit it rather than reply.
    if (parent.state === "draft") throw Unprocessable("in_reply_to names a pending comment: edit it, or reply once your review is submitted");
    threadId = parent.threadId;
    inReplyTo = parent.id;
  } else if (anchored) {
    anchor = await anchorOf(ctx, t, change, input, patchset);
  } else if (input.line != null || input.start_line != null || input.side != null) {
    throw Unprocessable("line, start_line and side need a path");
  }
  const suggestion = suggestionOf(body, anchor?.side ?? null);
  const rendered = await renderBody(ctx, t, change, body, anchor?.path ?? null);
  const row: CommentRow = {
    id,
    changeId: change.id,
    repoId: change.repoId,
    authorUserId: author.id,
    state: opts.state ?? "published",
    body,
    bodyHtml: rendered.html,
    renderVersion: RENDER_VERSION,
    threadId,
    inReplyTo,
    reviewId: null,
    patchset,
    path: anchor?.path ?? null,
    side: anchor?.side ?? null,
    line: anchor?.line ?? null,
    startLine: anchor?.startLine ?? null,
    commitOid: anchor?.commitOid ?? null,
    blobOid: anchor?.blobOid ?? null,
    anchorText: anchor?.anchorText ?? null,
    contextText: anchor?.contextText ?? null,
    outdated: false,
    anchoredPatchset: patchset,
    curLine: anchor?.curLine ?? null,
    curStartLine: anchor?.curStartLine ?? null,
    suggestion,
    appliedCommit: null,
    resolved: false,
    resolvedByUserId: null,
    resolvedAt: null,
    createdAt: at,
    updatedAt: at,
    editedAt: null,
  };
  return { row, mentions: rendered.mentions.filter((m) => m.id !== author.id) };
}

/** Inserts prepared comments inside `tx` (a review passes its id; a lone comment null). Answers the rows as stored. */
export async function insertPreparedComments(tx: Tx, prepared: PreparedComment[], o: { reviewId: string | null }): Promise<CommentRow[]> {
  // Ids in the batch's order: a review's comments made in one millisecond list (by created_at, id) in
  // the order they were written, not in random id order. A root's thread is its own id.
  const ids = prepared.map(() => newId()).sort();
  const rows = prepared.map((p, i) => {
    const root = p.row.threadId === p.row.id;
    return { ...p.row, id: ids[i]!, threadId: root ? ids[i]! : p.row.threadId, reviewId: o.reviewId };
  });
  // A reply must still find its thread (its root may have been deleted since it was prepared).
  for (const r of rows) {
    if (r.inReplyTo && !rows.some((x) => x.id === r.threadId) && !(await cstore.commentById(tx, r.changeId, r.threadId)))
      throw Unprocessable("the comment replied to was deleted");
  }
  await cstore.insertComments(tx, rows);
  return rows;
}

/** The thread participants of prepared comments: the author as commenter, mentioned people as `mention`. */
export function commentParticipants(authorUserId: string, prepared: readonly Pick<PreparedComment, "mentions">[]): { userId: string; reason: NotifyReason }[] {
  const out: { userId: string; reason: NotifyReason }[] = [{ userId: authorUserId, reason: "comment" }];
  const seen = new Set([authorUserId]);
  for (const p of prepared)
    for (const m of p.mentions)
      if (!seen.has(m.id)) {
        seen.add(m.id);
        out.push({ userId: m.id, reason: "mention" });
      }
  return out;
}

/** A change number from the path (0: none, so 404). */
async function mustChange(q: Parameters<typeof store.changeByNumber>[0], repoId: string, number: number): Promise<ChangeRow> {
  const row = Number.isInteger(number) && number > 0 ? await store.changeByNumber(q, repoId, number) : null;
  if (!row) throw NotFound("change not found");
  return row;
}

/**
 * POST …/changes/{n}/comments (repo:discuss): one comment, its `change.commented` event and thread
 * activity. A draft (`draft: true`) is only written: it is its author's alone (no event, no
 * activity, no mention) until their next review publishes it.
 */
export async function postComment(ctx: Ctx, t: RepoTarget, number: number, input: CommentCreate): Promise<Comment> {
  need(t, "repo:read");
  const change = await mustChange(ctx.db.read, t.repo.id, number);
  need(t, { kind: "repo:discuss", changeAuthor: isChangeAuthor(t, change) });
  const draft = input.draft === true;
  const prepared = await prepareComment(ctx, t, change, input, draft ? { state: "draft" } : {});
  const author = personOf(t.actor)!;
  if (draft) {
    const [row] = await ctx.db.transaction(async (tx) => {
      if ((await cstore.draftCount(tx, change.id, author.id)) >= MAX_PENDING_COMMENTS)
        throw Unprocessable(`you have ${MAX_PENDING_COMMENTS} pending comments on change #${change.number}: submit your review first`);
      return await insertPreparedComments(tx, [prepared], { reviewId: null });
    });
    return (await commentBodies(ctx, [row!], { change, repo: t.repo }))[0]!;
  }
  const [row] = await ctx.db.transaction(async (tx) => {
    const cur = await mustChange(tx, t.repo.id, number);
    const rows = await insertPreparedComments(tx, [prepared], { reviewId: null });
    const r = rows[0]!;
    await ctx.events.record(tx, {
      repoId: cur.repoId,
      orgId: t.org.id,
      kind: "change.commented",
      payload: {
        change: cur.number,
        comment: { id: r.id, author: { user_id: author.id, handle: author.handle }, path: r.path, line: r.line, side: r.side, in_reply_to: r.inReplyTo },
      },
      actorUserId: author.id,
    });
    await ctx.events.emit(tx, {
      kind: "thread.activity",
      repoId: cur.repoId,
      orgId: t.org.id,
      subject: { kind: "change", id: cur.id, number: cur.number, title: cur.title },
      activity: "commented",
      actorUserId: author.id,
      participants: commentParticipants(author.id, [prepared]),
      summary: { excerpt: r.body!.slice(0, EXCERPT), comment_ids: [r.id] },
    });
    return rows;
  });
  return (await commentBodies(ctx, [row!], { change, repo: t.repo }))[0]!;
}

// ── reading ──────────────────────────────────────────────────────────────────────────────────

/** Where line comments sit on the change's current patchset. */
export interface CurrentAnchor {
  outdated: boolean;
  curLine: number | null;
  curStartLine: number | null;
}

/**
 * The positions on `change`'s current patchset of its line comments in `rows` that are still
 * anchored behind it (the `change.reanchor` job's work, and what a read right after a push shows
 * before the job ran): each maps from the blob it was made on to the current one (anchors.ts).
 * A comment once outdated stays outdated. `strict`: a thread failure throws (the job retries)
 * instead of leaving the row out (the read path then shows what is stored).
 */
export async function currentAnchors(ctx: Ctx, repo: Repo, change: ChangeRow, rows: CommentRow[], strict = false): Promise<Map<string, CurrentAnchor>> {
  const out = new Map<string, CurrentAnchor>();
  const behind = rows.filter((r) => r.path !== null && r.line !== null && r.anchoredPatchset < change.patchset);
  if (!behind.length || !change.head || !change.base) return out;
  const todo: CommentRow[] = [];
  for (const r of behind) {
    if (r.outdated) out.set(r.id, { outdated: true, curLine: null, curStartLine: null });
    else todo.push(r);
  }
  if (!todo.length) return out;
  const reader = await changeReader(ctx, repo, change);
  let oldCommit: Oid | null = null;
  const commitOf = async (side: string | null) => (side === "old" ? (oldCommit ??= await mergeBaseOf(reader, change.base!, change.head!)) : change.head!);
  const groups = new Map<string, CommentRow[]>();
  for (const r of todo) {
    const k = `${r.side}\0${r.path}\0${r.blobOid}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const gone = (list: CommentRow[]) => {
    for (const r of list) out.set(r.id, { outdated: true, curLine: null, curStartLine: null });
  };
  for (const list of groups.values()) {
    const first = list[0]!;
    const entry = await fileAt(reader, await commitOf(first.side), first.path!);
    if (!entry || !isFile(entry.mode) || !first.blobOid) {
      gone(list);
      continue;
    }
    if (entry.oid === first.blobOid) {
      for (const r of list) out.set(r.id, { outdated: false, curLine: r.line, curStartLine: r.startLine });
      continue;
    }
    const [a, b] = await Promise.all([textOf(reader, first.blobOid, MAX_DIFF_BLOB), textOf(reader, entry.oid, MAX_DIFF_BLOB)]);
    if ("none" in a || "none" in b) {
      gone(list);
      continue;
    }
    let mapped: (LineRange | null)[];
    try {
      mapped = await mapRangesOffloaded(ctx, {
        old: a.text,
        new: b.text,
        ranges: list.map((r) => ({ start: r.startLine ?? r.line!, end: r.line! })),
      });
    } catch (e) {
      if (strict || !(e instanceof ThreadTaskError)) throw e;
      continue;
    }
    list.forEach((r, i) => {
      const m = mapped[i];
      out.set(
        r.id,
        m ? { outdated: false, curLine: m.end, curStartLine: r.startLine === null ? null : m.start } : { outdated: true, curLine: null, curStartLine: null },
      );
    });
  }
  return out;
}

/** A stored rendered body: a comment's (with its path, for relative links) or a review's. */
interface StoredBody {
  id: string;
  changeId: string;
  body: string | null;
  bodyHtml: string | null;
  renderVersion: number;
  path?: string | null;
}

/** Bodies rendered again at once (each on a worker thread). */
const RERENDER_BATCH = 8;

/**
 * The html of rows rendered by an older renderer (render_version < RENDER_VERSION), rendered again
 * as at write time → id → html (rows already current are not in the map). So raising
 * RENDER_VERSION needs no migration: each body is re-rendered the first time it is read. The
 * fresh html is written back after the read, in a transaction of its own that the read does not
 * wait for (its failure is logged; the next read renders again); the write keeps a row whose
 * body was edited or deleted meanwhile as it is. A body the thread cannot render in time is
 * shown and stored as text, as at write time (so a hostile body costs its time limit once, not
 * on every read).
 */
export async function rerenderStale(
  ctx: Ctx,
  rows: readonly StoredBody[],
  kind: "comment" | "review",
  o: { change?: ChangeRow } = {},
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const stale = rows.filter((r) => r.body !== null && r.renderVersion < RENDER_VERSION);
  if (!stale.length) return out;
  const fresh: { id: string; body: string; html: string }[] = [];
  for (const changeId of new Set(stale.map((r) => r.changeId))) {
    const change = o.change?.id === changeId ? o.change : await cstore.changeById(ctx.db.read, changeId);
    const where = change ? await store.repoWithOrg(ctx.db.read, change.repoId) : null;
    if (!change || !where) continue;
    const mine = stale.filter((r) => r.changeId === changeId);
    for (let i = 0; i < mine.length; i += RERENDER_BATCH) {
      const batch = mine.slice(i, i + RERENDER_BATCH);
      const rendered = await Promise.all(batch.map((r) => renderBody(ctx, where, change, r.body!, r.path ?? null)));
      batch.forEach((r, j) => {
        out.set(r.id, rendered[j]!.html);
        fresh.push({ id: r.id, body: r.body!, html: rendered[j]!.html });
      });
    }
  }
  if (fresh.length)
    void ctx.db
      .transaction(async (tx) => {
        for (const f of fresh)
          if (kind === "comment") await cstore.writeRendered(tx, f.id, f.body, f.html, RENDER_VERSION);
          else await rstore.writeRendered(tx, f.id, f.body, f.html, RENDER_VERSION);
      })
      .catch((error: unknown) => ctx.log.warn("re-rendered bodies not stored", { kind, rows: fresh.length, error: String(error) }));
  return out;
}

/**
 * The API shapes of comment rows: authors' handles in one query, replies' resolved flag from
 * their roots, and positions on the current patchset (mapped in memory for rows the re-anchor
 * job has not reached). `change`/`repo` when the caller has them (else loaded per change).
 */
export async function commentBodies(ctx: Ctx, rows: CommentRow[], o: { change?: ChangeRow; repo?: Repo } = {}): Promise<Comment[]> {
  if (!rows.length) return [];
  const handles = await store.handlesOf(
    ctx.db.read,
    rows.map((r) => r.authorUserId).filter((x): x is string => x !== null),
  );
  const missingRoots = rows.filter((r) => r.threadId !== r.id && !rows.some((x) => x.id === r.threadId)).map((r) => r.threadId);
  const roots = new Map([...rows, ...(await cstore.commentsByIds(ctx.db.read, missingRoots))].map((r) => [r.id, r]));
  const rerendered = await rerenderStale(ctx, rows, "comment", o);
  const positions = new Map<string, CurrentAnchor>();
  for (const changeId of new Set(rows.map((r) => r.changeId))) {
    const mine = rows.filter((r) => r.changeId === changeId);
    const change = o.change?.id === changeId ? o.change : await cstore.changeById(ctx.db.read, changeId);
    if (!change) continue;
    if (!mine.some((r) => r.path !== null && r.anchoredPatchset < change.patchset)) continue;
    const repo = o.repo?.id === change.repoId ? o.repo : (await store.repoWithOrg(ctx.db.read, change.repoId))?.repo;
    if (!repo) continue;
    for (const [id, p] of await currentAnchors(ctx, repo, change, mine)) positions.set(id, p);
  }
  return rows.map((r) => {
    const pos = positions.get(r.id) ?? { outdated: r.outdated, curLine: r.curLine, curStartLine: r.curStartLine };
    const line = r.path !== null;
    return {
      id: r.id,
      author: r.authorUserId && handles.has(r.authorUserId) ? { user_id: r.authorUserId, handle: handles.get(r.authorUserId)! } : null,
      body: r.body,
      body_html: rerendered.get(r.id) ?? r.bodyHtml,
      path: r.path,
      line: r.line,
      start_line: r.startLine,
      side: r.side,
      patchset: r.patchset,
      in_reply_to: r.inReplyTo,
      thread_id: r.threadId,
      review_id: r.reviewId,
      resolved: roots.get(r.threadId)?.resolved ?? r.resolved,
      outdated: line ? pos.outdated : false,
      current_line: line && !pos.outdated ? pos.curLine : null,
      current_start_line: line && !pos.outdated ? pos.curStartLine : null,
      anchor_text: r.anchorText,
      context_text: r.contextText,
      suggestion:
        r.suggestion === null || r.body === null
          ? null
          : { text: r.suggestion, applicable: r.appliedCommit === null && !(line && pos.outdated) && r.state === "published", applied_commit: r.appliedCommit },
      draft: r.state === "draft",
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      edited_at: r.editedAt,
    };
  });
}

function parsePatchsetFilter(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!/^[1-9][0-9]{0,9}$/.test(raw)) throw Invalid("patchset must be a patchset number");
  return Number(raw);
}

const isKey = (k: unknown): k is [number, string] => Array.isArray(k) && k.length === 2 && typeof k[0] === "number" && typeof k[1] === "string";

/** GET …/changes/{n}/comments (repo:read): oldest first; other people's drafts never. */
export async function listComments(ctx: Ctx, t: RepoTarget, number: number, q: CommentListQuery): Promise<CommentList> {
  need(t, "repo:read");
  const change = await mustChange(ctx.db.read, t.repo.id, number);
  const page = parsePage<[number, string]>(q, isKey);
  const patchset = parsePatchsetFilter(q.patchset);
  if (q.path !== undefined && q.path.length > 4096) throw Invalid("path is too long");
  const rows = await cstore.listComments(
    ctx.db.read,
    change.id,
    { patchset, path: q.path || undefined, viewerUserId: personOf(t.actor)?.id ?? null, after: page.after },
    page.limit + 1,
  );
  const { items, next_cursor } = pageOf(rows, page, (r) => [r.createdAt, r.id]);
  return { comments: await commentBodies(ctx, items, { change, repo: t.repo }), next_cursor };
}

/** A comment of the change the caller may see (another person's draft is 404, like a missing one). */
async function visibleComment(ctx: Ctx, t: RepoTarget, change: ChangeRow, id: string): Promise<CommentRow> {
  const row = id.length <= 64 ? await cstore.commentById(ctx.db.read, change.id, id) : null;
  if (!row || (row.state === "draft" && row.authorUserId !== personOf(t.actor)?.id)) throw NotFound("comment not found");
  return row;
}

/** PATCH …/changes/{n}/comments/{id}: the body (its author), `resolved` (writers or the change's author; on the thread's root). */
export async function patchComment(ctx: Ctx, t: RepoTarget, number: number, id: string, input: CommentPatch): Promise<Comment> {
  need(t, "repo:read");
  const change = await mustChange(ctx.db.read, t.repo.id, number);
  const row = await visibleComment(ctx, t, change, id);
  need(t, { kind: "repo:discuss", changeAuthor: isChangeAuthor(t, change) });
  const me = personOf(t.actor)!;
  if (input.body === undefined && input.resolved === undefined) throw Unprocessable("nothing to change: send body or resolved");
  let rendered: { html: string } | null = null;
  let body: string | null = null;
  let suggestion: string | null = null;
  if (input.body !== undefined) {
    if (row.authorUserId !== me.id) throw Forbidden("only its author can edit a comment");
    if (row.body === null) throw Unprocessable("this comment was deleted");
    body = checkBody(input.body);
    suggestion = suggestionOf(body, row.path === null ? null : row.side);
    rendered = await renderBody(ctx, t, change, body, row.path);
  }
  if (input.resolved !== undefined) {
    need(t, { kind: "thread:resolve", changeAuthor: change.authorUserId !== null && change.authorUserId === me.id });
    if (row.state === "draft") throw Unprocessable("a pending comment has no conversation to resolve until your review is submitted");
  }
  await ctx.db.transaction(async (tx) => {
    const cur = await cstore.commentById(tx, change.id, id);
    if (!cur) throw NotFound("comment not found");
    const at = now();
    if (body !== null && rendered)
      // A pending comment is not shown as edited: nobody else saw it before.
      await cstore.updateComment(tx, id, {
        body,
        bodyHtml: rendered.html,
        renderVersion: RENDER_VERSION,
        suggestion,
        editedAt: cur.state === "draft" ? null : at,
        updatedAt: at,
      });
    if (input.resolved !== undefined) {
      const root = cur.threadId === cur.id ? cur : await cstore.commentById(tx, change.id, cur.threadId);
      if (root && root.resolved !== input.resolved)
        await cstore.updateComment(tx, root.id, {
          resolved: input.resolved,
          resolvedByUserId: input.resolved ? me.id : null,
          resolvedAt: input.resolved ? at : null,
          updatedAt: at,
        });
    }
  });
  const fresh = await cstore.commentById(ctx.db.read, change.id, id);
  if (!fresh) throw NotFound("comment not found");
  return (await commentBodies(ctx, [fresh], { change, repo: t.repo }))[0]!;
}

/** DELETE …/changes/{n}/comments/{id}: its author or a repo admin. A root with replies stays as a tombstone (body null). */
export async function deleteComment(ctx: Ctx, t: RepoTarget, number: number, id: string): Promise<void> {
  need(t, "repo:read");
  const change = await mustChange(ctx.db.read, t.repo.id, number);
  const row = await visibleComment(ctx, t, change, id);
  need(t, { kind: "comment:delete", author: row.authorUserId !== null && row.authorUserId === personOf(t.actor)?.id, changeAuthor: isChangeAuthor(t, change) });
  await ctx.db.transaction(async (tx) => {
    const cur = await cstore.commentById(tx, change.id, id);
    if (!cur) return;
    const at = now();
    if (cur.threadId === cur.id && (await cstore.repliesOf(tx, cur.id)) > 0) {
      await cstore.updateComment(tx, cur.id, { body: null, bodyHtml: null, suggestion: null, updatedAt: at });
      return;
    }
    await cstore.deleteCommentRow(tx, cur.id);
    // The last reply of a deleted root takes the tombstone with it.
    if (cur.threadId !== cur.id) {
      const root = await cstore.commentById(tx, change.id, cur.threadId);
      if (root && root.body === null && (await cstore.repliesOf(tx, root.id)) === 0) await cstore.deleteCommentRow(tx, root.id);
    }
  });
}
