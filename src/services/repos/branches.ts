// Branch and tag lists (DECISIONS §5 "GET …/branches, …/tags"): `{ branches|tags: [{ name,
// target, committed_at }] }` by name, a page at a time (`limit`, `cursor`, `next_cursor`: the
// paging of DECISIONS §1, additive). Also the branches page's overview: each branch's last
// commit and how far it is ahead of and behind the default branch, by a bounded walk.
import { Type, type Static } from "@sinclair/typebox";
import { parseCommit, parseTag, type Commit } from "../../git/object.ts";
import { CommitCache, CommitQueue, type CommitNode } from "../../git/revision.ts";
import type { Oid, Ref } from "../../git/types.ts";
import { Unprocessable } from "../../errors.ts";
import { need, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { snapshotOf, type RepoSnapshot } from "../git/snapshot.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import { NextCursor } from "../schemas.ts";
import { deleteRef } from "./refs.ts";

const EXAMPLE_SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8";
const EXAMPLE_TAG = "5b0e3f1c8a2d4e6f7a9b0c1d2e3f4a5b6c7d8e9f";

// ---- Schemas ------------------------------------------------------------------------------------

export const Branch = Type.Object(
  {
    name: Type.String({ description: "the branch's name without refs/heads/" }),
    target: Type.String({ description: "the commit it points at" }),
    committed_at: Type.Union([Type.Number(), Type.Null()], { description: "that commit's committer time (ms); null when it cannot be read" }),
    default: Type.Boolean({ description: "whether it is the repository's default branch" }),
  },
  { description: "a branch" },
);
export type Branch = Static<typeof Branch>;

export const BranchList = Type.Object(
  { branches: Type.Array(Branch), next_cursor: NextCursor },
  {
    description: "branches by name",
    examples: [{ branches: [{ name: "main", target: EXAMPLE_SHA, committed_at: 1764300000000, default: true }], next_cursor: null }],
  },
);
export type BranchList = Static<typeof BranchList>;

export const Tag = Type.Object(
  {
    name: Type.String({ description: "the tag's name without refs/tags/" }),
    target: Type.String({ description: "the object the ref names (an annotated tag's tag object, else the commit)" }),
    commit: Type.Union([Type.String(), Type.Null()], { description: "the commit it peels to; null when it names no commit" }),
    committed_at: Type.Union([Type.Number(), Type.Null()], { description: "that commit's committer time (ms); null without a commit" }),
  },
  { description: "a tag" },
);
export type Tag = Static<typeof Tag>;

export const TagList = Type.Object(
  { tags: Type.Array(Tag), next_cursor: NextCursor },
  {
    description: "tags by name",
    examples: [{ tags: [{ name: "v1.0", target: EXAMPLE_TAG, commit: EXAMPLE_SHA, committed_at: 1764300000000 }], next_cursor: null }],
  },
);
export type TagList = Static<typeof TagList>;

// ---- Lists ----------------------------------------------------------------------------------------

/** The refs under `prefix` (by name) after the page's cursor, `limit + 1` of them at most. */
function pageOfRefs(snapshot: RepoSnapshot, prefix: string, q: { limit?: string; cursor?: string }) {
  const page = parsePage(q);
  const all = snapshot.refs.filter((r) => r.name.startsWith(prefix));
  // The refs are sorted by full name; the cursor is the last short name shown.
  const start = page.after === null ? 0 : all.findIndex((r) => r.name.slice(prefix.length) > page.after!);
  const rows = start < 0 ? [] : all.slice(start, start + page.limit + 1);
  const more = rows.length > page.limit;
  const refs = more ? rows.slice(0, page.limit) : rows;
  return { refs, next: more ? encodeCursor(refs[refs.length - 1]!.name.slice(prefix.length)) : null };
}

/** Peels `oid` to a commit: the commit's id and parsed body, or null (a tag of a tree or blob, a missing object). */
async function commitOf(snapshot: RepoSnapshot, oid: Oid): Promise<{ oid: Oid; commit: Commit } | null> {
  for (let hops = 0; hops < 16; hops++) {
    const obj = await snapshot.objects.read(oid);
    if (!obj) return null;
    if (obj.type === "commit") return { oid, commit: parseCommit(obj.data) };
    if (obj.type !== "tag") return null;
    oid = parseTag(obj.data).object;
  }
  return null;
}

/** GET …/branches?limit=&cursor= */
export async function listBranches(ctx: Ctx, t: RepoTarget, q: { limit?: string; cursor?: string }): Promise<BranchList> {
  need(t, "repo:read");
  const snapshot = await snapshotOf(ctx, t);
  const { refs, next } = pageOfRefs(snapshot, "refs/heads/", q);
  const branches = await Promise.all(
    refs.map(async (r) => {
      const c = await commitOf(snapshot, r.oid);
      const name = r.name.slice(11);
      return { name, target: r.oid, committed_at: c ? c.commit.committer.timestamp * 1000 : null, default: name === t.repo.defaultBranch };
    }),
  );
  return { branches, next_cursor: next };
}

/** GET …/tags?limit=&cursor= */
export async function listTags(ctx: Ctx, t: RepoTarget, q: { limit?: string; cursor?: string }): Promise<TagList> {
  need(t, "repo:read");
  const snapshot = await snapshotOf(ctx, t);
  const { refs, next } = pageOfRefs(snapshot, "refs/tags/", q);
  const tags = await Promise.all(
    refs.map(async (r) => {
      const c = await commitOf(snapshot, r.oid);
      return { name: r.name.slice(10), target: r.oid, commit: c?.oid ?? null, committed_at: c ? c.commit.committer.timestamp * 1000 : null };
    }),
  );
  return { tags, next_cursor: next };
}

// ---- The branches page ----------------------------------------------------------------------------

/** Commits one ahead/behind walk visits at most; past it (or past AHEAD_BEHIND_CAP on a side) the count is "many" (null). */
export const AHEAD_BEHIND_CAP = 1000;
const WALK_LIMIT = 4 * AHEAD_BEHIND_CAP;

/** A branch as the branches page shows it. */
export interface BranchOverview {
  name: string;
  target: Oid;
  default: boolean;
  /** The last commit; null when it cannot be read. */
  commit: { sha: Oid; summary: string; author: string; authored_at: number; committed_at: number } | null;
  /** Commits on the branch not on the default branch, and the other way; null: more than AHEAD_BEHIND_CAP (or not walked). */
  ahead: number | null;
  behind: number | null;
}

/**
 * Commits reachable from `tip` and not `base` (ahead), and the other way (behind): a walk from
 * both, newest first, painting each commit with the sides that reach it (a commit whose paint
 * grows is walked again, so its parents get it too). It goes on while any queued commit is
 * reached from one side only, then while the queue holds commits at least as new as the oldest
 * one-sided commit: commits made in the same second (a script, a rebase) come out of a date
 * order in any order, and one of those may still paint a one-sided commit from the other side.
 * Null counts past the caps.
 */
export async function aheadBehind(cache: CommitCache, base: Oid, tip: Oid): Promise<{ ahead: number | null; behind: number | null }> {
  if (base === tip) return { ahead: 0, behind: 0 };
  const TIP = 1;
  const BASE = 2;
  const BOTH = 3;
  const flags = new Map<Oid, number>();
  const times = new Map<Oid, number>();
  const queued = new Set<Oid>();
  const queue = new CommitQueue();
  let live = 0;
  const enqueue = (node: CommitNode, now: number) => {
    times.set(node.oid, node.time);
    queue.push(node);
    queued.add(node.oid);
    if (now !== BOTH) live++;
  };
  /** Paints `oid` with `f`; a promise only when the commit must be read (the rows of a page share most of their walks). */
  const mark = (oid: Oid, f: number): Promise<void> | undefined => {
    const old = flags.get(oid) ?? 0;
    const now = old | f;
    if (now === old) return;
    flags.set(oid, now);
    if (queued.has(oid)) {
      if (now === BOTH) live--;
      return;
    }
    const known = cache.known(oid);
    if (known) {
      enqueue(known, now);
      return;
    }
    return cache.lookup(oid).then((node) => {
      if (node) enqueue(node, now);
    });
  };
  await mark(tip, TIP);
  await mark(base, BASE);
  let visited = 0;
  let oldestOneSided: number | null = null;
  for (;;) {
    if (live === 0) {
      // Once: the oldest commit reached from one side only (BOTH paint never makes new ones).
      if (oldestOneSided === null) {
        oldestOneSided = Infinity;
        for (const [oid, f] of flags) if (f !== BOTH) oldestOneSided = Math.min(oldestOneSided, times.get(oid) ?? Infinity);
      }
      const next = queue.peek();
      if (!next || next.time < oldestOneSided) break;
    }
    if (++visited > WALK_LIMIT) return { ahead: null, behind: null };
    const node = queue.pop()!;
    queued.delete(node.oid);
    const f = flags.get(node.oid)!;
    if (f !== BOTH) live--;
    for (const p of node.parents) {
      const reading = mark(p, f);
      if (reading) await reading;
    }
  }
  let ahead = 0;
  let behind = 0;
  for (const f of flags.values()) {
    if (f === TIP) ahead++;
    else if (f === BASE) behind++;
  }
  return { ahead: ahead > AHEAD_BEHIND_CAP ? null : ahead, behind: behind > AHEAD_BEHIND_CAP ? null : behind };
}

/**
 * A page of branches (by name, the default branch first on the first page) with each one's last
 * commit and its distance from the default branch; walks share one commit cache.
 */
export async function branchesOverview(
  ctx: Ctx,
  t: RepoTarget,
  q: { limit?: string; cursor?: string },
): Promise<{ branches: BranchOverview[]; next_cursor: string | null; defaultBranch: string }> {
  need(t, "repo:read");
  const snapshot = await snapshotOf(ctx, t);
  const defaultName = t.repo.defaultBranch;
  const defaultRef = snapshot.refs.find((r) => r.name === `refs/heads/${defaultName}`) ?? null;
  const { refs, next } = pageOfRefs(snapshot, "refs/heads/", q);
  const shown: Ref[] = refs.filter((r) => r !== defaultRef);
  if (defaultRef && !q.cursor) shown.unshift(defaultRef);
  const cache = new CommitCache(snapshot.objects);
  const base = defaultRef ? await commitOf(snapshot, defaultRef.oid) : null;
  const out: BranchOverview[] = [];
  for (const r of shown) {
    const c = await commitOf(snapshot, r.oid);
    const isDefault = r === defaultRef;
    const counts = c && base && !isDefault ? await aheadBehind(cache, base.oid, c.oid).catch(() => ({ ahead: null, behind: null })) : { ahead: 0, behind: 0 };
    out.push({
      name: r.name.slice(11),
      target: r.oid,
      default: isDefault,
      commit: c
        ? {
            sha: c.oid,
            summary: c.commit.message.split("\n")[0] ?? "",
            author: c.commit.author.name,
            authored_at: c.commit.author.timestamp * 1000,
            committed_at: c.commit.committer.timestamp * 1000,
          }
        : null,
      ahead: base ? counts.ahead : null,
      behind: base ? counts.behind : null,
    });
  }
  return { branches: out, next_cursor: next, defaultBranch: defaultName };
}

/**
 * Deletes a branch from the branches page: the ref API's delete (its access check, protections
 * and compare-and-swap on `expected`), except that the default branch is refused first (422), as
 * git refuses deleting the checked-out branch: clones would have nothing to check out.
 */
export async function deleteBranch(ctx: Ctx, t: RepoTarget, name: string, expected: Oid | undefined): Promise<void> {
  need(t, "repo:write");
  if (name === t.repo.defaultBranch) throw Unprocessable(`${name} is the default branch; make another branch the default before deleting it`);
  await deleteRef(ctx, t, `refs/heads/${name}`, expected);
}
