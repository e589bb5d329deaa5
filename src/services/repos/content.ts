// Content reads over JSON: trees, raw blobs, history and single commits (DECISIONS §3).
import type { ObjectReader } from "../../git/types.ts";
import { isTreeMode, parseCommit, parseTag, parseTree, type Commit, type Signature, type TreeEntry } from "../../git/object.ts";
import { isOid } from "../../git/oid.ts";
import { findByPrefix, isAbbreviatedOid, MIN_ABBREV, parseRevision } from "../../git/rev-parse.ts";
import type { PackSet } from "../../git/pack-set.ts";
import type { Oid } from "../../git/types.ts";
import { Invalid, NotFound } from "../../errors.ts";
import type { Repo } from "../../db/schema/index.ts";
import { need, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { snapshotOf, type RepoSnapshot } from "../git/snapshot.ts";
import type { Principal } from "../access/principal.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import { blobHeader, readBlobOffloaded } from "./blob-read.ts";
import { splitPath } from "./commits.ts";
import type { ChangedPath, CommitDetail, CommitList, CommitSummary, Tree } from "./schemas.ts";
import * as store from "./store.ts";
import { checksOfCommits, checksState } from "../ci/checks.ts";
import type { CheckList } from "../ci/schemas.ts";

/**
 * Hex digits an abbreviated id needs from an anonymous caller. Why more than git's 4: every
 * anonymous lookup is free to repeat, and 16 bits of prefix enumerate a repository's ids in
 * 65,536 requests; 7 (git's default abbreviation) makes that 268 million. Signed-in callers may
 * use git's own minimum (MIN_ABBREV): they are accountable and throttled, and an abbreviation only
 * ever resolves to an object they may read anyway (see resolveRevision).
 */
export const ANONYMOUS_MIN_ABBREV = 7;

/** How a caller's revisions are read: the fewest hex digits of an abbreviated id they may use. */
export interface RevisionOptions {
  minAbbrev: number;
}

/** The revision rules for `actor` (anonymous callers need longer abbreviations). */
export function revisionOptions(actor: Principal): RevisionOptions {
  return { minAbbrev: actor.kind === "anonymous" ? ANONYMOUS_MIN_ABBREV : MIN_ABBREV };
}

/** The target's snapshot (one per request, shared by every read of it) once repo:read is allowed. */
async function readable(ctx: Ctx, t: RepoTarget): Promise<{ repo: Repo; snapshot: RepoSnapshot; opts: RevisionOptions }> {
  need(t, "repo:read");
  return { repo: t.repo, snapshot: await snapshotOf(ctx, t), opts: revisionOptions(t.actor) };
}

/** Peels tags until a commit; null when the object is missing or not a commit. */
async function peelToCommit(objects: PackSet, oid: Oid): Promise<{ oid: Oid; commit: Commit } | null> {
  for (let i = 0; i < 16; i++) {
    const obj = await objects.read(oid);
    if (!obj) return null;
    if (obj.type === "commit") return { oid, commit: parseCommit(obj.data) };
    if (obj.type !== "tag") return null;
    oid = parseTag(obj.data).object;
  }
  return null;
}

/** The index of what the snapshot's tips reach (a server snapshot always has one). */
async function reachOf(snapshot: RepoSnapshot) {
  if (!snapshot.reach) throw new Error("a content read needs a snapshot with its reachability index");
  return snapshot.reach();
}

/**
 * The object a hex id names, when the caller may read it through this repository: a full id the
 * tips reach (a tip itself costs nothing), or the one reachable commit or tag a `minAbbrev`+
 * digit abbreviation names. Everything else is the 404 of an id that does not exist, so whether
 * an unreachable object is stored here (a deleted branch, a fork's other work) never shows.
 */
async function resolveId(snapshot: RepoSnapshot, hex: string, opts: RevisionOptions, missing: string): Promise<Oid> {
  const notFound = () => NotFound(missing);
  if (hex.length === 40) {
    if (snapshot.refs.some((r) => r.oid === hex)) return hex;
    if ((await reachOf(snapshot)).contains(hex)) return hex;
    throw notFound();
  }
  if (hex.length < opts.minAbbrev) throw NotFound(`${missing}; abbreviated ids need at least ${opts.minAbbrev} hex digits when not signed in`);
  const index = await reachOf(snapshot);
  // Git's "committish" disambiguation: only commits and tags the tips reach count.
  const match = await findByPrefix(snapshot.objects.packs, hex, async (oid) => {
    if (!index.contains(oid)) return false;
    const type = (await snapshot.objects.readHeader(oid))?.type;
    return type === "commit" || type === "tag";
  });
  if (match.tooMany || match.found.length > 1) throw NotFound(`${JSON.stringify(hex)} is ambiguous: more than one object id starts with it; give more digits`);
  if (!match.found[0]) throw notFound();
  return match.found[0];
}

/**
 * Resolves a revision: a full ref, a branch, a tag, HEAD, a commit id or a unique abbreviation of
 * one (see resolveId for ids), followed by any `~N` / `^N` ancestry suffixes (git rev-parse). Names
 * are the repository's refs, so they need no reachability check, and neither do ancestors of a
 * reachable commit. 404 when unknown, unreachable or ambiguous.
 */
export async function resolveRevision(snapshot: RepoSnapshot, rev: string, opts: RevisionOptions): Promise<{ oid: Oid; commit: Commit }> {
  const parsed = parseRevision(rev);
  if (!parsed) throw NotFound(`no commit found for ${JSON.stringify(rev)}`);
  const { base, steps } = parsed;
  const byName = (n: string) => snapshot.refs.find((r) => r.name === n)?.oid;
  let oid: Oid | undefined;
  if (base === "HEAD") oid = snapshot.head ? byName(snapshot.head) : undefined;
  else if (base.startsWith("refs/")) oid = byName(base);
  else oid = byName(`refs/heads/${base}`) ?? byName(`refs/tags/${base}`);
  if (oid === undefined && isAbbreviatedOid(base)) oid = await resolveId(snapshot, base.toLowerCase(), opts, `no commit found for ${JSON.stringify(rev)}`);
  let found = oid ? await peelToCommit(snapshot.objects, oid) : null;
  for (const step of steps) {
    if (!found || step.parent === 0) continue;
    const parent = found.commit.parents[step.parent - 1];
    found = parent ? await peelToCommit(snapshot.objects, parent) : null;
  }
  if (!found) throw NotFound(`no commit found for ${JSON.stringify(rev)}`);
  return found;
}

/**
 * A commit named by its id: full, or a unique abbreviation, optionally with `~N` / `^N` suffixes;
 * only ids the repository's tips reach (resolveId). Branch and tag names and non-commit objects
 * are 404 here.
 */
export async function resolveCommitId(snapshot: RepoSnapshot, sha: string, opts: RevisionOptions): Promise<{ oid: Oid; commit: Commit }> {
  const parsed = parseRevision(sha);
  if (!parsed || !isAbbreviatedOid(parsed.base)) throw NotFound("commit not found");
  const oid = await resolveId(snapshot, parsed.base.toLowerCase(), opts, "commit not found");
  const head = await snapshot.objects.readHeader(oid);
  if (head?.type !== "commit") throw NotFound("commit not found");
  return resolveRevision(snapshot, `${oid}${sha.slice(parsed.base.length)}`, opts);
}

/**
 * 404 unless `sha` (a full id) names a commit the caller may read through the repository. Pages
 * at a full commit id check this before answering 304 to a validator: a commit that stopped being
 * reachable is gone for every later view, cached or not.
 */
export async function requireCommit(ctx: Ctx, t: RepoTarget, sha: string): Promise<Oid> {
  const { snapshot, opts } = await readable(ctx, t);
  return (await resolveCommitId(snapshot, sha, opts)).oid;
}

/** The tree entry at `parts` under `tree` (null when absent); an empty path is the root. */
export async function entryAt(objects: ObjectReader, tree: Oid, parts: string[]): Promise<{ mode: string; oid: Oid } | null> {
  let current: { mode: string; oid: Oid } = { mode: "40000", oid: tree };
  for (const part of parts) {
    if (!isTreeMode(current.mode)) return null;
    const obj = await objects.read(current.oid);
    if (!obj) return null;
    const e = parseTree(obj.data).find((x) => x.name === part);
    if (!e) return null;
    current = { mode: e.mode, oid: e.oid };
  }
  return current;
}

function pathParts(path: string | undefined): string[] {
  if (path === undefined || path === "" || path === "/") return [];
  return splitPath(path.replace(/^\/+|\/+$/g, ""));
}

function typeOfMode(mode: string): "tree" | "blob" | "commit" {
  return isTreeMode(mode) ? "tree" : mode === "160000" ? "commit" : "blob";
}

/** GET …/tree/{ref}?path= */
export async function getTree(ctx: Ctx, t: RepoTarget, ref: string, path: string | undefined): Promise<Tree> {
  const { snapshot, opts } = await readable(ctx, t);
  const { oid, commit } = await resolveRevision(snapshot, ref, opts);
  const parts = pathParts(path);
  const at = await entryAt(snapshot.objects, commit.tree, parts);
  if (!at) throw NotFound(`no path ${JSON.stringify(parts.join("/"))} at ${ref}`);
  if (!isTreeMode(at.mode)) throw NotFound(`${parts.join("/")} is a file, not a directory`);
  const obj = await snapshot.objects.read(at.oid);
  const entries = await Promise.all(
    parseTree(obj!.data).map(async (e: TreeEntry) => {
      const type = typeOfMode(e.mode);
      const size = type === "blob" ? ((await snapshot.objects.readHeader(e.oid))?.size ?? null) : null;
      return { name: e.name, path: [...parts, e.name].join("/"), type, mode: e.mode, oid: e.oid, size } satisfies Tree["entries"][number];
    }),
  );
  return { ref, commit: oid, path: parts.join("/"), entries };
}

/**
 * A window of a directory as people browse it: directories first, then files, each by name; sizes
 * are read only for the entries in [offset, offset + limit) (a 10,000-entry directory costs one
 * tree parse, not 10,000 object header reads). `total` counts every entry; `picked` holds the
 * blob entries named (case-insensitively) in `window.pick`, wherever they sort (a README).
 */
export async function getTreeWindow(
  ctx: Ctx,
  t: RepoTarget,
  ref: string,
  path: string | undefined,
  window: { offset: number; limit: number; pick?: readonly string[] },
): Promise<Tree & { total: number; picked: Tree["entries"] }> {
  const { snapshot, opts } = await readable(ctx, t);
  const { oid, commit } = await resolveRevision(snapshot, ref, opts);
  const parts = pathParts(path);
  const at = await entryAt(snapshot.objects, commit.tree, parts);
  if (!at) throw NotFound(`no path ${JSON.stringify(parts.join("/"))} at ${ref}`);
  if (!isTreeMode(at.mode)) throw NotFound(`${parts.join("/")} is a file, not a directory`);
  const obj = await snapshot.objects.read(at.oid);
  const all = parseTree(obj!.data).map((e) => ({ e, dir: isTreeMode(e.mode) }));
  all.sort((a, b) => (a.dir !== b.dir ? (a.dir ? -1 : 1) : a.e.name < b.e.name ? -1 : a.e.name > b.e.name ? 1 : 0));
  const slice = all.slice(Math.max(0, window.offset), Math.max(0, window.offset) + Math.max(0, window.limit));
  const body = async (e: TreeEntry) => {
    const type = typeOfMode(e.mode);
    const size = type === "blob" ? ((await snapshot.objects.readHeader(e.oid))?.size ?? null) : null;
    return { name: e.name, path: [...parts, e.name].join("/"), type, mode: e.mode, oid: e.oid, size } satisfies Tree["entries"][number];
  };
  const pick = new Set((window.pick ?? []).map((n) => n.toLowerCase()));
  const picked = pick.size ? await Promise.all(all.filter(({ e, dir }) => !dir && pick.has(e.name.toLowerCase())).map(({ e }) => body(e))) : [];
  return { ref, commit: oid, path: parts.join("/"), entries: await Promise.all(slice.map(({ e }) => body(e))), total: all.length, picked };
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  txt: "text/plain",
  md: "text/markdown",
  json: "application/json",
  js: "text/javascript",
  mjs: "text/javascript",
  ts: "text/plain",
  css: "text/css",
  html: "text/html",
  htm: "text/html",
  xml: "application/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  ico: "image/x-icon",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  wasm: "application/wasm",
  yml: "text/yaml",
  yaml: "text/yaml",
  csv: "text/csv",
  sh: "text/x-shellscript",
  py: "text/x-python",
  go: "text/plain",
  rs: "text/plain",
  c: "text/plain",
  h: "text/plain",
  java: "text/plain",
  toml: "text/plain",
};

/** A Content-Type from the extension, else text/plain for text and octet-stream for binary. */
export function guessContentType(name: string, data: Uint8Array): string {
  const ext = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1).toLowerCase() : "";
  const known = CONTENT_TYPES[ext];
  // Why: never let a stored file be rendered as active content on our origin.
  if (known === "text/html" || known === "image/svg+xml" || known === "application/xml") return "text/plain; charset=utf-8";
  if (known) return known.startsWith("text/") ? `${known}; charset=utf-8` : known;
  const sample = data.subarray(0, 8000);
  return sample.includes(0) ? "application/octet-stream" : "text/plain; charset=utf-8";
}

/** The blob entry at `path` of `ref` (404 for a directory, a submodule or nothing). */
async function blobEntry(ctx: Ctx, t: RepoTarget, ref: string, path: string | undefined): Promise<{ snapshot: RepoSnapshot; oid: Oid; name: string }> {
  const { snapshot, opts } = await readable(ctx, t);
  const { commit } = await resolveRevision(snapshot, ref, opts);
  const parts = pathParts(path);
  if (!parts.length) throw Invalid("path is required");
  const at = await entryAt(snapshot.objects, commit.tree, parts);
  if (at && isTreeMode(at.mode))
    throw NotFound(
      `${JSON.stringify(parts.join("/"))} is a directory at ${ref}; list it with GET /v1/orgs/${t.named.org}/repos/${t.named.repo}/tree/${ref}?path=${encodeURIComponent(parts.join("/"))}`,
    );
  if (!at || typeOfMode(at.mode) !== "blob") throw NotFound(`no file ${JSON.stringify(parts.join("/"))} at ${ref}`);
  return { snapshot, oid: at.oid, name: parts[parts.length - 1]! };
}

/** GET …/blob/{ref}?path= → the raw bytes with their id (the ETag). */
export async function getBlob(ctx: Ctx, t: RepoTarget, ref: string, path: string | undefined): Promise<{ oid: Oid; data: Uint8Array; contentType: string }> {
  const { snapshot, oid, name } = await blobEntry(ctx, t, ref, path);
  // Off the event loop when big or deep, like the pages' reads (issue 25 row 4).
  const obj = await readBlobOffloaded(ctx, snapshot.objects, oid);
  if (!obj) throw NotFound("blob missing");
  return { oid, data: obj.data, contentType: guessContentType(name, obj.data) };
}

/**
 * A blob as the web pages read it: its id and size first (no bytes read), then `read()` for
 * the bytes, resolved off the event loop when big or deep (blob-read.ts). A page decides from
 * the size whether to read at all (issue 25 row 4: a view of a 1 GiB blob read it whole first).
 */
export async function statBlob(
  ctx: Ctx,
  t: RepoTarget,
  ref: string,
  path: string | undefined,
): Promise<{ oid: Oid; size: number; name: string; read(): Promise<Uint8Array> }> {
  const { snapshot, oid, name } = await blobEntry(ctx, t, ref, path);
  const head = await blobHeader(snapshot.objects, oid);
  if (!head) throw NotFound("blob missing");
  return {
    oid,
    size: head.size,
    name,
    read: async () => {
      const obj = await readBlobOffloaded(ctx, snapshot.objects, oid);
      if (!obj) throw NotFound("blob missing");
      return obj.data;
    },
  };
}

function person(s: Signature) {
  return { name: s.name, email: s.email, date: s.timestamp * 1000, timezone: s.timezone };
}

export function commitSummary(oid: Oid, c: Commit): CommitSummary {
  return { sha: oid, message: c.message, author: person(c.author), committer: person(c.committer), parents: c.parents };
}

/**
 * A history position: the commit the walk started from and how many shown commits to skip. The
 * start is kept so later pages walk the same history even when the branch moves meanwhile.
 */
type HistoryKey = [start: Oid, skip: number];

function isHistoryKey(key: unknown): key is HistoryKey {
  return Array.isArray(key) && key.length === 2 && isOid(key[0]) && Number.isSafeInteger(key[1]) && (key[1] as number) >= 0;
}

/**
 * GET …/commits?ref=&path=&limit=&cursor= : newest first by committer date. With a path, git's
 * default history simplification: a commit is shown when it differs from every parent at that
 * path, and a merge that kept one parent's version follows only that parent.
 */
export async function listCommits(ctx: Ctx, t: RepoTarget, q: { ref?: string; path?: string; limit?: string; cursor?: string }): Promise<CommitList> {
  const { repo, snapshot, opts } = await readable(ctx, t);
  const { limit, after } = parsePage(q, isHistoryKey);
  const parts = pathParts(q.path);
  let start: Oid;
  let skip = 0;
  if (after) {
    [start, skip] = after;
    // Why: a cursor is the caller's text; one naming any stored commit would list history the
    // tips no longer reach (a deleted branch, a fork's other work), so it is held to the same rule.
    await resolveId(snapshot, start, opts, "the history this cursor continues is no longer in the repository; start again without a cursor");
  } else {
    const rev = q.ref ?? repo.defaultBranch;
    const head = await resolveRevision(snapshot, rev, opts).catch((e) => {
      if (!q.ref && e instanceof Error) return null; // an empty repository has no history
      throw e;
    });
    if (!head) return { commits: [], next_cursor: null };
    start = head.oid;
  }
  const cache = new Map<Oid, Commit>();
  const load = async (oid: Oid) => {
    let c = cache.get(oid);
    if (!c) {
      const obj = await snapshot.objects.read(oid);
      if (!obj || obj.type !== "commit") throw NotFound(`commit ${oid} not found`);
      c = parseCommit(obj.data);
      cache.set(oid, c);
    }
    return c;
  };
  // A priority queue by committer time (newest first), ties in insertion order.
  const queue: { oid: Oid; time: number; seq: number }[] = [];
  const seen = new Set<Oid>();
  let seq = 0;
  const push = async (oid: Oid) => {
    if (seen.has(oid)) return;
    seen.add(oid);
    const time = (await load(oid)).committer.timestamp;
    const item = { oid, time, seq: seq++ };
    let lo = 0;
    let hi = queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (queue[mid]!.time > time || (queue[mid]!.time === time && queue[mid]!.seq < item.seq)) lo = mid + 1;
      else hi = mid;
    }
    queue.splice(lo, 0, item);
  };
  await push(start);
  const out: CommitSummary[] = [];
  let shown = 0;
  let more = false;
  while (queue.length) {
    const { oid } = queue.shift()!;
    const c = cache.get(oid)!;
    let show = true;
    let follow = c.parents;
    if (parts.length) {
      const mine = (await entryAt(snapshot.objects, c.tree, parts))?.oid ?? null;
      if (!c.parents.length) show = mine !== null;
      else {
        for (const p of c.parents) {
          const theirs = (await entryAt(snapshot.objects, (await load(p)).tree, parts))?.oid ?? null;
          if (theirs === mine) {
            show = false;
            follow = [p];
            break;
          }
        }
      }
    }
    for (const p of follow) await push(p);
    if (!show) continue;
    if (shown >= skip + limit) {
      more = true;
      break;
    }
    if (shown >= skip) out.push(commitSummary(oid, c));
    shown++;
  }
  // One query for the page's check rollups (issue 28).
  const checks = await checksOfCommits(
    ctx,
    repo.id,
    out.map((c) => c.sha),
  );
  return { commits: out.map((c) => ({ ...c, checks_state: checksState(checks.get(c.sha)) })), next_cursor: more ? encodeCursor([start, skip + limit]) : null };
}

/** Paths that differ between two trees (recursively), with added / modified / deleted. */
async function diffTrees(objects: PackSet, a: Oid | null, b: Oid | null, prefix: string, out: ChangedPath[]) {
  const read = async (oid: Oid | null) => (oid ? parseTree((await objects.read(oid))!.data) : []);
  const left = new Map((await read(a)).map((e) => [e.name, e]));
  const right = new Map((await read(b)).map((e) => [e.name, e]));
  const names = [...new Set([...left.keys(), ...right.keys()])].sort();
  for (const name of names) {
    const l = left.get(name);
    const r = right.get(name);
    if (l && r && l.oid === r.oid && l.mode === r.mode) continue;
    const path = prefix + name;
    const lt = l && isTreeMode(l.mode);
    const rt = r && isTreeMode(r.mode);
    if (lt || rt) {
      await diffTrees(objects, lt ? l!.oid : null, rt ? r!.oid : null, `${path}/`, out);
      if (l && !lt) out.push({ path, status: "deleted" });
      if (r && !rt) out.push({ path, status: "added" });
    } else out.push({ path, status: !l ? "added" : !r ? "deleted" : "modified" });
  }
}

/** GET …/commits/{sha}: the commit, its context (API commits) and the paths it changed. */
/**
 * GET …/commits/{rev}/checks: the check results of the commit any revision the content API
 * resolves names (a branch, a tag, a full or abbreviated id), by key; 404 when unknown.
 */
export async function commitChecks(ctx: Ctx, t: RepoTarget, rev: string): Promise<CheckList> {
  const { repo, snapshot, opts } = await readable(ctx, t);
  const { oid } = await resolveRevision(snapshot, rev, opts);
  return { checks: (await checksOfCommits(ctx, repo.id, [oid])).get(oid) ?? [] };
}

export async function getCommit(ctx: Ctx, t: RepoTarget, sha: string): Promise<CommitDetail> {
  const { repo, snapshot, opts } = await readable(ctx, t);
  const { oid: resolved, commit: c } = await resolveCommitId(snapshot, sha, opts);
  sha = resolved;
  let parentTree: Oid | null = null;
  if (c.parents.length) {
    const p = await snapshot.objects.read(c.parents[0]!);
    if (p) parentTree = parseCommit(p.data).tree;
  }
  const changed: ChangedPath[] = [];
  await diffTrees(snapshot.objects, parentTree, c.tree, "", changed);
  const context = await store.commitContext(ctx.db.read, repo.id, sha);
  return { ...commitSummary(sha, c), tree: c.tree, context: context === null ? null : JSON.parse(context), changed_paths: changed };
}
