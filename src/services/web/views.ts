// What each web page shows, gathered from the same services the API answers with (so a page can
// never show what the API would hide: every read goes through their access checks).
import { pointedObject, readPointedObject, type PointedObject } from "../lfs/lfs.ts";
import { MAX_POINTER_BYTES } from "../lfs/pointer.ts";
import { NotFound } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { getOrgProfile } from "../discovery/profiles.ts";
import type { WatchLevel } from "../discovery/watching.ts";
import { viewerFacts } from "./chrome.ts";
import type { OrgProfile } from "../discovery/schemas.ts";
import { allows, orgFacts } from "../access/access.ts";
import type { FileDiffs } from "../git/diff.ts";
import { commitDiff } from "../repos/commit-diff.ts";
import { checksOfCommits } from "../ci/checks.ts";
import type { Check } from "../ci/schemas.ts";
import { createRepo, getRepo, listRepos, openRepo, type RepoBody } from "../repos/repos.ts";
import { refsOf } from "../git/snapshot.ts";
import { need, spelledAs, type RepoTarget } from "../access/target.ts";
import { getTreeWindow, guessContentType, listCommits, statBlob } from "../repos/content.ts";
import type { CommitList, CommitSummary, Tree } from "../repos/schemas.ts";
import { openIssuesOf } from "./issues.ts";

/** The signed-in person a page is drawn for. */
export interface WebViewer {
  id: string;
  handle: string;
  name: string;
  /** Their uploaded picture's object key, or null (the identicon). */
  avatar: string | null;
}

/** The person behind a caller, as the page header shows them; null when anonymous. */
export function viewerOf(actor: Principal): WebViewer | null {
  const user = personOf(actor);
  return user ? { id: user.id, handle: user.handle, name: user.name, avatar: user.avatar } : null;
}

/** How many repositories one org lists on the home and org pages (the rest: a link to more). */
export const PAGE_REPOS = 100;

/** An org page: its public profile, the repositories the viewer may see (a page at a time), and whether they may create one. */
export async function orgView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  cursor: string | undefined,
): Promise<{ profile: OrgProfile; repos: RepoBody[]; next: string | null; canCreateRepo: boolean }> {
  const profile = await getOrgProfile(ctx, orgName);
  const list = await listRepos(ctx, actor, orgName, { limit: PAGE_REPOS, cursor });
  // The same decision createRepo enforces (quota aside: a refused private repository says why when submitted).
  const canCreateRepo = personOf(actor) !== null && allows((await orgFacts(ctx, actor, orgName)).facts, "org:create-repo");
  return { profile, repos: list.repos, next: list.next_cursor, canCreateRepo };
}

/** Creates a repository from the web form, through the API's service and its access rule. */
export async function createRepoFromForm(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  form: { name: string; description: string; public: boolean },
): Promise<RepoBody> {
  return createRepo(ctx, actor, orgName, { name: form.name.trim(), description: form.description.trim() || undefined, public: form.public });
}

/**
 * The repository a page is of, resolved once for the whole page (plan §4 "resolve once"): every
 * view below takes it. 401 anonymous / 404 otherwise when the viewer may not see it.
 */
export async function openRepoPage(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<RepoTarget> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  // Why: the pages' messages name the repository as stored (their reads always passed the stored name).
  return spelledAs(t, { org: orgName, repo: t.repo.name });
}

/** A repository as the API answers it. */
export async function repoView(ctx: Ctx, t: RepoTarget): Promise<RepoBody> {
  return getRepo(ctx, t);
}

/** A commit of the repository with its diff against its first parent. */
export async function commitView(ctx: Ctx, t: RepoTarget, sha: string): Promise<{ commit: CommitSummary; diff: FileDiffs }> {
  return commitDiff(ctx, t, sha);
}

/**
 * The check results of a commit by its full id (the commit page's checks box, and part of its
 * validator: a finished CI job changes the page). One query; the commit itself is proven by the page.
 */
export async function commitChecksView(ctx: Ctx, t: RepoTarget, sha: string): Promise<Check[]> {
  need(t, "repo:read");
  return (await checksOfCommits(ctx, t.repo.id, [sha])).get(sha) ?? [];
}

/**
 * What the one repository layout (http/web/repos/repo-layout.ts) draws above every repository
 * page: the repository and the nav's counts. A RepoFrame is one too.
 */
export interface RepoChrome {
  repo: RepoBody;
  /** Open issues (the nav's Issues count); absent or null: no count shown. */
  openIssues?: number | null;
  /** The viewer's watch level (Watch/Unwatch), null when not watching; absent: anonymous or not known (no button state). */
  watching?: WatchLevel | null;
  /** Whether the viewer may ask this mirror to sync (the layout's Sync now). */
  canSync?: boolean;
}

/** The layout's facts for a page that has no RepoFrame (runs, changes, settings, compare…). */
export async function repoChrome(ctx: Ctx, t: RepoTarget): Promise<RepoChrome> {
  const [repo, openIssues, viewer] = await Promise.all([getRepo(ctx, t), openIssuesOf(ctx, t), viewerFacts(ctx, t)]);
  return { repo, openIssues, ...viewer };
}

/** A branch or tag as the switcher lists it. */
export interface RefChoice {
  kind: "branch" | "tag";
  name: string;
}

/** A ref the page is showing: the short name for URLs and titles, the full one for the services. */
export interface ShownRef {
  short: string;
  full: string;
}

/**
 * Splits `main/src/app.ts` or `release/1.0/README.md` into the ref and the path: the longest
 * leading run of segments that names a branch (then a tag) wins, else the first segment (a commit).
 */
export function splitRefPath(choices: RefChoice[], segments: string[]): { ref: ShownRef; path: string } {
  for (let n = segments.length; n > 0; n--) {
    const name = segments.slice(0, n).join("/");
    for (const kind of ["branch", "tag"] as const) {
      if (choices.some((c) => c.kind === kind && c.name === name)) {
        return { ref: { short: name, full: `refs/${kind === "branch" ? "heads" : "tags"}/${name}` }, path: segments.slice(n).join("/") };
      }
    }
  }
  const first = segments[0] ?? "";
  return { ref: { short: first, full: first }, path: segments.slice(1).join("/") };
}

/** The repository, its branches and tags, and where in it the page is. */
export interface RepoFrame {
  repo: RepoBody;
  choices: RefChoice[];
  ref: ShownRef;
  path: string;
  /** A sentence the page shows above its content (the default branch is missing), or null. */
  notice?: string | null;
  /** Open issues (the nav's Issues count); absent or null: no count shown. */
  openIssues?: number | null;
  /** The viewer's watch level (see RepoChrome). */
  watching?: WatchLevel | null;
  /** Whether the viewer may ask this mirror to sync (the layout's Sync now). */
  canSync?: boolean;
}

/**
 * The ref a page without one shows: the default branch, or when that does not exist (a repository
 * whose first push predates DECISIONS §5, or whose default was deleted) an existing branch
 * (`main`, `master`, then the first by name), else the first tag. Null: show the default (the
 * repository is empty, or the default exists).
 */
export function fallbackRef(choices: RefChoice[], defaultBranch: string): RefChoice | null {
  const branches = choices.filter((c) => c.kind === "branch");
  if (!choices.length || branches.some((b) => b.name === defaultBranch)) return null;
  return branches.find((b) => b.name === "main") ?? branches.find((b) => b.name === "master") ?? branches[0] ?? choices[0]!;
}

/** Resolves the frame of a repository page; `rest` is the ref and path segments (none: the default branch root). */
export async function repoFrame(ctx: Ctx, t: RepoTarget, rest: string[]): Promise<RepoFrame> {
  const [repo, openIssues, viewer] = await Promise.all([getRepo(ctx, t), openIssuesOf(ctx, t), viewerFacts(ctx, t)]);
  const frame = await frameOf(ctx, t, repo, rest);
  return { ...frame, openIssues, ...viewer };
}

async function frameOf(ctx: Ctx, t: RepoTarget, repo: RepoBody, rest: string[]): Promise<RepoFrame> {
  // The refs of the snapshot the page's content is read from: one ref list per page.
  const refs = await refsOf(ctx, t);
  const choices: RefChoice[] = [];
  for (const r of refs) {
    if (r.name.startsWith("refs/heads/")) choices.push({ kind: "branch", name: r.name.slice(11) });
    else if (r.name.startsWith("refs/tags/")) choices.push({ kind: "tag", name: r.name.slice(10) });
  }
  if (rest.length) return { repo, choices, ...splitRefPath(choices, rest), notice: null };
  // Never a 404 for a repository that has content: a missing default falls back, and says so.
  const fallback = fallbackRef(choices, repo.default_branch);
  if (!fallback) return { repo, choices, ref: { short: repo.default_branch, full: `refs/heads/${repo.default_branch}` }, path: "", notice: null };
  return {
    repo,
    choices,
    ref: { short: fallback.name, full: `refs/${fallback.kind === "branch" ? "heads" : "tags"}/${fallback.name}` },
    path: "",
    notice: `The default branch ${repo.default_branch} does not exist; showing ${fallback.kind} ${fallback.name}.${repo.viewer_admin ? ` Push ${repo.default_branch}, or make ${fallback.name} the default (PATCH /v1/orgs/${repo.org}/repos/${repo.name} {"default_branch":"${fallback.name}"}).` : ""}`,
  };
}

/** README names looked for in a directory, in order. */
const README_NAMES = ["readme.md", "readme.markdown", "readme", "readme.txt"] as const;

/** The largest file a page shows inline (larger: a link to the raw file). */
export const INLINE_FILE_LIMIT = 1024 * 1024;

/**
 * The most lines a page draws (the file page, the blame page). Why a line limit beside the byte
 * limit: a mebibyte of empty lines is a million table rows, a page of ~90 MB drawn on the event
 * loop (every request waited over a second behind it); 20,000 rows are a page of a few MB.
 */
export const INLINE_LINE_LIMIT = 20_000;

/** Lines of `text` as the pages number them (a final newline ends the last line), counted without splitting. */
export function lineCount(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/** Entries one directory page lists (GitHub stops at 1,000; the rest are on the next pages). */
export const PAGE_ENTRIES = 1000;

/** A directory page: a window of its entries (directories first), how many there are, and its README. Null tree for an empty repository. */
export async function treeView(
  ctx: Ctx,
  t: RepoTarget,
  frame: RepoFrame,
  offset = 0,
): Promise<{ tree: (Tree & { total: number; offset: number }) | null; readme: { path: string; text: string; oid: string } | null }> {
  if (!frame.choices.length && frame.path === "") return { tree: null, readme: null };
  const tree = await getTreeWindow(ctx, t, frame.ref.full, frame.path, { offset, limit: PAGE_ENTRIES, pick: README_NAMES });
  let readme: { path: string; text: string; oid: string } | null = null;
  for (const name of README_NAMES) {
    const e = tree.picked.find((x) => x.name.toLowerCase() === name);
    if (!e) continue;
    // The size comes from the listing: a README too big to show is never read.
    if ((e.size ?? 0) > INLINE_FILE_LIMIT) break;
    const blob = await statBlob(ctx, t, tree.commit, e.path);
    if (blob.size > INLINE_FILE_LIMIT) break;
    readme = { path: e.path, text: new TextDecoder().decode(await blob.read()), oid: blob.oid };
    break;
  }
  return { tree: { ...tree, offset }, readme };
}

/** A file: its size, and its text when it is text small enough to show (a bigger file is never read). */
export async function fileView(
  ctx: Ctx,
  t: RepoTarget,
  frame: RepoFrame,
): Promise<{ oid: string; size: number; text: string | null; lines?: number; contentType: string; lfs?: PointedObject }> {
  if (!frame.path) throw NotFound("no file named");
  const blob = await statBlob(ctx, t, frame.ref.full, frame.path);
  // A Git LFS pointer: the page is the object's (its real size, its text when small), marked as stored with LFS.
  if (blob.size <= MAX_POINTER_BYTES) {
    const lfs = await pointedObject(ctx, t.repo, await blob.read());
    if (lfs) {
      const data = lfs.stored && lfs.size <= INLINE_FILE_LIMIT ? await readPointedObject(ctx, t.repo, lfs.oid) : null;
      return { oid: blob.oid, size: lfs.size, ...shownText(data), contentType: guessContentType(blob.name, data ?? new Uint8Array(0)), lfs };
    }
  }
  // Why size first: a view of a 1 GiB blob read it whole before deciding not to show it (issue 25 row 4).
  if (blob.size > INLINE_FILE_LIMIT) return { oid: blob.oid, size: blob.size, text: null, contentType: guessContentType(blob.name, new Uint8Array(0)) };
  const data = await blob.read();
  return { oid: blob.oid, size: data.byteLength, ...shownText(data), contentType: guessContentType(blob.name, data) };
}

/** The text a page shows of `data`: null when absent, binary, or longer than INLINE_LINE_LIMIT lines (then `lines` says how many). */
function shownText(data: Uint8Array | null): { text: string | null; lines?: number } {
  if (!data || data.subarray(0, 8000).includes(0)) return { text: null };
  const text = new TextDecoder().decode(data);
  const lines = lineCount(text);
  return lines > INLINE_LINE_LIMIT ? { text: null, lines } : { text };
}

/** History at the frame's ref, filtered by its path when it has one. */
export async function historyView(ctx: Ctx, t: RepoTarget, frame: RepoFrame, cursor: string | undefined): Promise<CommitList> {
  if (!frame.choices.length) return { commits: [], next_cursor: null };
  return listCommits(ctx, t, { ref: frame.ref.full, path: frame.path || undefined, cursor, limit: "50" });
}
