// LFS locks as git enforces them (DECISIONS §5 "Git LFS"): a push that changes a path locked by
// someone else is refused for that ref, with a message naming the path, the lock and its owner.
// The locks are rows the LFS locking API edits (services/lfs/locks.ts); this file only reads and
// evaluates them, like branch protections (policy.ts), so the git service needs nothing above it.
//
// What "changes" means: the file at the locked path differs between the ref's old tree and its
// new tree (added, modified, deleted, renamed away or onto it, mode or type changed). Decided:
// - a new branch is compared with the default branch's tip (as GitHub and Gitea compare a new
//   branch), with nothing when the default branch does not exist yet or is the branch created;
// - deleting a ref and updating refs outside refs/heads/ are not checked: neither changes the
//   content of a branch, and a commit reaches a branch only through a push that is checked.
// The walk descends only into the directories that lead to a locked path and skips any subtree
// whose id did not change, so its cost is bounded by the locked paths, not by the size of the
// push: a push touching a million paths reads at most a few trees per locked directory.
import { isTreeMode, parseCommit, parseTree, type TreeEntry } from "../../git/object.ts";
import { hashObject } from "../../git/oid.ts";
import { ZERO_OID, type ObjectReader, type Oid, type RawObject, type Ref, type RefCommand } from "../../git/types.ts";
import type { Repo } from "../../db/schema/index.ts";
import type { Ctx } from "../context.ts";
import * as store from "./store.ts";
import type { LockedPath } from "./store.ts";

/** A node of the locked paths by segment: the lock on this exact path, and the paths below it. */
interface PathNode {
  lock: LockedPath | null;
  children: Map<string, PathNode>;
}

/** The locks as a tree of path segments (`a/b/c.psd` → a → b → c.psd). */
function pathTree(locks: readonly LockedPath[]): PathNode {
  const root: PathNode = { lock: null, children: new Map() };
  for (const lock of locks) {
    let node = root;
    for (const segment of lock.path.split("/")) {
      let next = node.children.get(segment);
      if (!next) {
        next = { lock: null, children: new Map() };
        node.children.set(segment, next);
      }
      node = next;
    }
    node.lock = lock;
  }
  return root;
}

const same = (x: TreeEntry | undefined, y: TreeEntry | undefined) =>
  x === undefined ? y === undefined : y !== undefined && x.mode === y.mode && x.oid === y.oid;

/** Tree reads in flight at most: sibling directories are read together, but never thousands at once. */
const READS_IN_FLIGHT = 16;

/** Reads trees once per push (several refs often share most of their trees), a bounded number at a time. */
class TreeReader {
  private readonly trees = new Map<Oid, Promise<Map<string, TreeEntry>>>();
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly objects: ObjectReader) {}

  entries(oid: Oid | null): Promise<Map<string, TreeEntry>> {
    if (oid === null) return Promise.resolve(new Map());
    let p = this.trees.get(oid);
    if (!p) {
      p = this.bounded(async () => {
        const obj = await this.objects.read(oid);
        const out = new Map<string, TreeEntry>();
        if (obj?.type === "tree") for (const e of parseTree(obj.data)) out.set(e.name, e);
        return out;
      });
      this.trees.set(oid, p);
    }
    return p;
  }

  private async bounded<T>(read: () => Promise<T>): Promise<T> {
    // A finished read hands its slot straight to the next waiting one.
    if (this.inFlight >= READS_IN_FLIGHT) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inFlight++;
    try {
      return await read();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }

  /** The root tree of commit `oid`, or null when it is not a commit (refused elsewhere). */
  async rootOf(oid: Oid | null): Promise<Oid | null> {
    if (oid === null) return null;
    const obj = await this.objects.read(oid);
    return obj?.type === "commit" ? parseCommit(obj.data).tree : null;
  }
}

/**
 * The locks whose path differs between trees `a` and `b` (null: empty), in path order. Sibling
 * directories are read concurrently: the reader fetches (and, on object storage, prefetches) them
 * together instead of one round trip at a time.
 */
async function touchedLocks(trees: TreeReader, a: Oid | null, b: Oid | null, node: PathNode): Promise<LockedPath[]> {
  if (a === b) return [];
  const [left, right] = await Promise.all([trees.entries(a), trees.entries(b)]);
  const names = [...node.children.keys()].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
  const subtree = (e: TreeEntry | undefined) => (e && isTreeMode(e.mode) ? e.oid : null);
  const found = await Promise.all(
    names.map(async (name) => {
      const child = node.children.get(name)!;
      const l = left.get(name);
      const r = right.get(name);
      if (same(l, r)) return [];
      const below = child.children.size ? await touchedLocks(trees, subtree(l), subtree(r), child) : [];
      return child.lock ? [child.lock, ...below] : below;
    }),
  );
  return found.flat();
}

/**
 * The locks whose path differs between trees `from` and `to` (null: empty), in path order: the
 * walk of one ref update, exposed for the differential test against a full tree comparison.
 */
export async function locksTouched(objects: ObjectReader, from: Oid | null, to: Oid | null, locks: readonly LockedPath[]): Promise<LockedPath[]> {
  return touchedLocks(new TreeReader(objects), from, to, pathTree(locks));
}

/** The reason git shows for a ref whose update touches `touched` (others' locks). */
function refusalOf(touched: readonly LockedPath[]): string {
  const [first] = touched as [LockedPath];
  const more = touched.length > 1 ? ` (and ${touched.length - 1} more locked path${touched.length > 2 ? "s" : ""}: git lfs locks lists them)` : "";
  return `${first.path} is locked by ${first.ownerName} (LFS lock ${first.id}); ask them to unlock it, or an admin to unlock it with --force${more}`;
}

/**
 * The refusal of each update in `commands` that changes a path locked by someone other than
 * `pusherId` (null, a token or deploy key of no person: every lock counts). `refs` are the
 * repository's refs as the push found them (the default branch's tip for new branches);
 * `objects` reads the repository with the pushed pack. Empty at once when no one else holds a lock.
 */
export async function lockRefusals(
  ctx: Ctx,
  repo: Pick<Repo, "id" | "defaultBranch">,
  refs: readonly Ref[],
  objects: ObjectReader,
  commands: readonly RefCommand[],
  pusherId: string | null,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const checked = commands.filter((c) => c.newOid !== ZERO_OID && c.ref.startsWith("refs/heads/"));
  if (!checked.length) return out;
  const locks = await store.lockedPathsOf(ctx.db.read, repo.id, pusherId);
  if (!locks.length) return out;
  const root = pathTree(locks);
  const trees = new TreeReader(objects);
  const defaultRef = `refs/heads/${repo.defaultBranch}`;
  const defaultTip = refs.find((r) => r.name === defaultRef)?.oid ?? null;
  for (const c of checked) {
    const base = c.oldOid !== ZERO_OID ? c.oldOid : c.ref === defaultRef ? null : defaultTip;
    const [from, to] = await Promise.all([trees.rootOf(base), trees.rootOf(c.newOid)]);
    // Not a commit: receive-pack refuses a branch naming anything else on its own.
    if (to === null) continue;
    const touched = await touchedLocks(trees, from, to, root);
    if (touched.length) out.set(c.ref, refusalOf(touched));
  }
  return out;
}

/** `reader` with `extra` objects made in memory in front (a commit the API builds before it is stored). */
export function withObjects(reader: ObjectReader, extra: readonly RawObject[]): ObjectReader {
  const made = new Map<Oid, RawObject>(extra.map((o) => [hashObject(o.type, o.data), o]));
  return {
    has: async (oid) => made.has(oid) || reader.has(oid),
    read: async (oid) => made.get(oid) ?? reader.read(oid),
    readHeader: async (oid) => {
      const o = made.get(oid);
      return o ? { type: o.type, size: o.data.length } : reader.readHeader(oid);
    },
  };
}
