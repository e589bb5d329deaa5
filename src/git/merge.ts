// What the lander and reviewers need from history: merge bases, tree diffs and a three-way tree
// merge that refuses whenever both sides changed the same path (no line-level merging).
import { isTreeMode, parseTree, serializeTree, type TreeEntry } from "./object.ts";
import { hashObject } from "./oid.ts";
import { CommitCache, CommitQueue, type CommitNode } from "./revision.ts";
import { GitError, type ObjectReader, type Oid, type RawObject } from "./types.ts";

const P1 = 1;
const P2 = 2;
const STALE = 4;

/**
 * The best common ancestors of commits `a` and `b` (git merge-base --all): commits reachable
 * from both that are not ancestors of another such commit. Empty when the histories are
 * unrelated. Like git without a commit-graph, the walk is ordered by committer date.
 */
export async function mergeBases(reader: ObjectReader, a: Oid, b: Oid, cache = new CommitCache(reader)): Promise<Oid[]> {
  if (a === b) return [a];
  const flags = new Map<Oid, number>();
  const queued = new Map<Oid, number>();
  const queue = new CommitQueue();
  // Entries queued for commits not (yet) stale; flags only grow, so stale stays stale.
  let nonStale = 0;
  const push = (node: CommitNode) => {
    queue.push(node);
    queued.set(node.oid, (queued.get(node.oid) ?? 0) + 1);
    if (!((flags.get(node.oid) ?? 0) & STALE)) nonStale++;
  };
  const mark = (oid: Oid, f: number) => {
    const before = flags.get(oid) ?? 0;
    flags.set(oid, before | f);
    if (!(before & STALE) && f & STALE) nonStale -= queued.get(oid) ?? 0;
  };
  mark(a, P1);
  push(await cache.get(a));
  mark(b, P2);
  push(await cache.get(b));
  const found: Oid[] = [];
  // git's paint_down_to_common: walk newest first until only stale commits are queued.
  while (nonStale > 0) {
    const node = queue.pop()!;
    queued.set(node.oid, queued.get(node.oid)! - 1);
    let f = flags.get(node.oid)! & (P1 | P2 | STALE);
    if (!(f & STALE)) nonStale--;
    if (f === (P1 | P2)) {
      if (!found.includes(node.oid)) found.push(node.oid);
      f |= STALE;
    }
    for (const p of node.parents) {
      if (((flags.get(p) ?? 0) & f) === f) continue;
      mark(p, f);
      push(await cache.get(p));
    }
  }
  return removeRedundant(cache, found);
}

/** Drops every commit of `oids` that is an ancestor of another one. */
async function removeRedundant(cache: CommitCache, oids: Oid[]): Promise<Oid[]> {
  const unique = [...new Set(oids)];
  if (unique.length < 2) return unique;
  const keep: Oid[] = [];
  for (const c of unique) {
    let redundant = false;
    for (const other of unique) {
      if (other !== c && (await reaches(cache, other, c))) {
        redundant = true;
        break;
      }
    }
    if (!redundant) keep.push(c);
  }
  return keep;
}

/** Whether commit `to` is reachable from commit `from` (exact: dates order the walk, never prune it). */
export async function reaches(cache: CommitCache, from: Oid, to: Oid): Promise<boolean> {
  if (from === to) return true;
  const seen = new Set<Oid>([from]);
  const queue = new CommitQueue();
  queue.push(await cache.get(from));
  while (queue.size > 0) {
    const node: CommitNode = queue.pop()!;
    for (const p of node.parents) {
      if (p === to) return true;
      if (seen.has(p)) continue;
      seen.add(p);
      queue.push(await cache.get(p));
    }
  }
  return false;
}

/** One path that differs between two trees. Modes/oids are null on the side where it is absent. */
export interface TreeChange {
  path: string;
  status: "added" | "deleted" | "modified" | "type-changed";
  oldMode: string | null;
  newMode: string | null;
  oldOid: Oid | null;
  newOid: Oid | null;
}

async function readTree(reader: ObjectReader, oid: Oid | null): Promise<Map<string, TreeEntry>> {
  const out = new Map<string, TreeEntry>();
  if (oid === null) return out;
  const obj = await reader.read(oid);
  if (!obj || obj.type !== "tree") throw new GitError(`tree ${oid} is missing`, "missing");
  for (const e of parseTree(obj.data)) out.set(e.name, e);
  return out;
}

/** Git's order of paths in a diff: plain byte order of the full path. */
function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Every file (blob, symlink or gitlink) that differs between trees `a` and `b` (null: empty),
 * in path order, like `git diff-tree -r --no-renames`. Only differing subtrees are read. A
 * file replaced by a directory (or back) shows as a deletion plus additions.
 */
export async function diffTrees(
  reader: ObjectReader,
  a: Oid | null,
  b: Oid | null,
  opts: { limit?: number } = {},
): Promise<{ changes: TreeChange[]; truncated: boolean }> {
  const limit = opts.limit ?? Infinity;
  const out: TreeChange[] = [];
  let truncated = false;
  const walk = async (x: Oid | null, y: Oid | null, prefix: string): Promise<void> => {
    if (x === y) return;
    const [ex, ey] = await Promise.all([readTree(reader, x), readTree(reader, y)]);
    const names = [...new Set([...ex.keys(), ...ey.keys()])];
    // Sort as git does for a recursive diff: directories compare as name + "/".
    const key = (n: string) => {
      const e = ex.get(n) ?? ey.get(n)!;
      const both = ex.get(n) && ey.get(n);
      return both && isTreeMode(ex.get(n)!.mode) !== isTreeMode(ey.get(n)!.mode) ? n : isTreeMode(e.mode) ? `${n}/` : n;
    };
    names.sort((p, q) => byPath(key(p), key(q)));
    for (const name of names) {
      if (out.length >= limit) {
        truncated = true;
        return;
      }
      const path = prefix + name;
      const l = ex.get(name) ?? null;
      const r = ey.get(name) ?? null;
      if (l && r && l.mode === r.mode && l.oid === r.oid) continue;
      const lt = l !== null && isTreeMode(l.mode);
      const rt = r !== null && isTreeMode(r.mode);
      if (lt && rt) {
        await walk(l.oid, r.oid, `${path}/`);
        continue;
      }
      if (lt) {
        await walk(l.oid, null, `${path}/`);
        if (r) out.push({ path, status: "added", oldMode: null, newMode: r.mode, oldOid: null, newOid: r.oid });
        continue;
      }
      if (rt) {
        if (l) out.push({ path, status: "deleted", oldMode: l.mode, newMode: null, oldOid: l.oid, newOid: null });
        await walk(null, r.oid, `${path}/`);
        continue;
      }
      if (!l) out.push({ path, status: "added", oldMode: null, newMode: r!.mode, oldOid: null, newOid: r!.oid });
      else if (!r) out.push({ path, status: "deleted", oldMode: l.mode, newMode: null, oldOid: l.oid, newOid: null });
      else {
        const kind = (m: string) => (m === "120000" ? "link" : m === "160000" ? "gitlink" : "file");
        out.push({ path, status: kind(l.mode) === kind(r.mode) ? "modified" : "type-changed", oldMode: l.mode, newMode: r.mode, oldOid: l.oid, newOid: r.oid });
      }
    }
  };
  await walk(a, b, "");
  return { changes: out, truncated };
}

/** The result of a three-way tree merge. */
export type TreeMerge = { kind: "clean"; tree: Oid; objects: RawObject[] } | { kind: "conflict"; paths: string[] };

const same = (x: TreeEntry | null, y: TreeEntry | null) => (x === null ? y === null : y !== null && x.mode === y.mode && x.oid === y.oid);

/**
 * Merges trees `ours` and `theirs` against their common `base` (null: empty). A path takes the
 * side that changed it; a path both sides changed differently is a conflict, even when the
 * edits are in different lines (the lander lands nothing it would have to guess). Conflicting
 * paths are reported sorted, at most `maxConflicts`.
 */
export async function mergeTrees(reader: ObjectReader, base: Oid | null, ours: Oid | null, theirs: Oid | null, maxConflicts = 100): Promise<TreeMerge> {
  const conflicts: string[] = [];
  const created = new Map<Oid, RawObject>();
  const merge = async (b: Oid | null, o: Oid | null, t: Oid | null, prefix: string): Promise<Oid | null> => {
    if (o === t) return o;
    if (b === o) return t;
    if (b === t) return o;
    const [eb, eo, et] = await Promise.all([readTree(reader, b), readTree(reader, o), readTree(reader, t)]);
    const entries: TreeEntry[] = [];
    const names = [...new Set([...eb.keys(), ...eo.keys(), ...et.keys()])].sort();
    for (const name of names) {
      if (conflicts.length >= maxConflicts) break;
      const xb = eb.get(name) ?? null;
      const xo = eo.get(name) ?? null;
      const xt = et.get(name) ?? null;
      let pick: TreeEntry | null;
      if (same(xo, xt)) pick = xo;
      else if (same(xb, xo)) pick = xt;
      else if (same(xb, xt)) pick = xo;
      else if (xo && xt && isTreeMode(xo.mode) && isTreeMode(xt.mode)) {
        const sub = await merge(xb && isTreeMode(xb.mode) ? xb.oid : null, xo.oid, xt.oid, `${prefix}${name}/`);
        pick = sub === null ? null : { mode: "40000", name, oid: sub };
      } else {
        conflicts.push(prefix + name);
        continue;
      }
      if (pick) entries.push({ mode: pick.mode, name, oid: pick.oid });
    }
    // Git stores no empty trees below the root: a directory both sides emptied disappears.
    if (entries.length === 0 && prefix !== "") return null;
    const data = serializeTree(entries);
    const oid = hashObject("tree", data);
    created.set(oid, { type: "tree", data });
    return oid;
  };
  let tree = await merge(base, ours, theirs, "");
  if (conflicts.length) return { kind: "conflict", paths: conflicts.sort() };
  if (tree === null) {
    const data = serializeTree([]);
    tree = hashObject("tree", data);
    created.set(tree, { type: "tree", data });
  }
  return { kind: "clean", tree, objects: [...created.values()] };
}
