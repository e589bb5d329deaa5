// The commit walk beneath every reachability question: "commits reachable from these
// tips but not from those", newest first, stopping as soon as only uninteresting
// commits are left (git's limit_list in revision.c, with its date-based slop).
import { MemoryPacer } from "./buffer-pool.ts";
import { parseTag } from "./object.ts";
import { commitLinks } from "./object-links.ts";
import { GitError, type ObjectReader, type ObjectType, type Oid } from "./types.ts";

/** The facts of a commit the walks need. */
export interface CommitNode {
  oid: Oid;
  tree: Oid;
  parents: Oid[];
  /** Committer time, seconds since the epoch. */
  time: number;
}

/** What an id names once tags are peeled: the tag objects passed through and the final object. */
export interface Peeled {
  tags: Oid[];
  oid: Oid;
  type: ObjectType;
}

/** Parses each commit at most once per request; the shared memory of one walk session. */
export class CommitCache {
  private readonly nodes = new Map<Oid, CommitNode>();
  /** Each commit read is a buffer or two of garbage; a walk reads tens of thousands. */
  private readonly pacer = new MemoryPacer();

  constructor(readonly reader: ObjectReader) {}

  /** The commit, or null when absent; throws GitError when `oid` names another type. */
  async lookup(oid: Oid): Promise<CommitNode | null> {
    const known = this.nodes.get(oid);
    if (known) return known;
    this.pacer.tick();
    const obj = await this.reader.read(oid);
    if (!obj) return null;
    if (obj.type !== "commit") throw new GitError(`object ${oid} is a ${obj.type}, not a commit`);
    const node = { oid, ...commitLinks(obj.data) };
    this.nodes.set(oid, node);
    // Walks read parents next (all of a merge's): let object storage fetch them side by side.
    if (this.reader.prefetch && node.parents.length > 0) this.reader.prefetch(node.parents.filter((p) => !this.nodes.has(p)));
    return node;
  }

  /** The commit; throws GitError naming it when missing. */
  async get(oid: Oid): Promise<CommitNode> {
    const node = await this.lookup(oid);
    if (!node) throw new GitError(`missing commit ${oid}`, "missing");
    return node;
  }

  /** The already-parsed commit, if any (no I/O). */
  known(oid: Oid): CommitNode | undefined {
    return this.nodes.get(oid);
  }

  /** Follow tags down to a non-tag object; null when any link is missing. */
  async peel(oid: Oid): Promise<Peeled | null> {
    const tags: Oid[] = [];
    let cur = oid;
    for (let hops = 0; hops < 64; hops++) {
      if (this.nodes.has(cur)) return { tags, oid: cur, type: "commit" };
      const head = await this.reader.readHeader(cur);
      if (!head) return null;
      if (head.type !== "tag") return { tags, oid: cur, type: head.type };
      const obj = await this.reader.read(cur);
      if (!obj) return null;
      tags.push(cur);
      cur = parseTag(obj.data).object;
    }
    throw new GitError(`tag chain too deep at ${oid}`);
  }
}

/** Max-heap of commits by committer time; ties keep insertion order. */
export class CommitQueue {
  private heap: { node: CommitNode; seq: number }[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(node: CommitNode): void {
    const h = this.heap;
    h.push({ node, seq: this.seq++ });
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  peek(): CommitNode | undefined {
    return this.heap[0]?.node;
  }

  pop(): CommitNode | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0]!.node;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < h.length && this.before(l, best)) best = l;
        if (r < h.length && this.before(r, best)) best = r;
        if (best === i) break;
        [h[i], h[best]] = [h[best]!, h[i]!];
        i = best;
      }
    }
    return top;
  }

  private before(a: number, b: number): boolean {
    const x = this.heap[a]!;
    const y = this.heap[b]!;
    return x.node.time !== y.node.time ? x.node.time > y.node.time : x.seq < y.seq;
  }
}

/** Input of limitCommits; tags are peeled, tips that are not commits are ignored. */
export interface LimitRequest {
  interesting: Oid[];
  uninteresting: Oid[];
  /** Commits whose parents are not followed (the shallow boundary). */
  grafts?: ReadonlySet<Oid>;
  /** Drop commits older than this (rev-list --max-age, used by deepen-since). */
  maxAge?: number;
}

/** Result of limitCommits. */
export interface LimitResult {
  /** Reachable from `interesting` and not from `uninteresting`, newest first. */
  commits: CommitNode[];
  /** Uninteresting commits that are parents of returned commits (the --objects edge). */
  edges: Oid[];
  /** Every commit found uninteresting during the walk. */
  uninteresting: Set<Oid>;
}

const UNINTERESTING = 1;
const SEEN = 2;
const QUEUED = 4;
/** Extra commits walked once only uninteresting ones are left, to survive clock skew (git's SLOP). */
const SLOP = 5;

/** Commits reachable from `interesting` but not from `uninteresting` (git rev-list A --not B). */
export async function limitCommits(cache: CommitCache, req: LimitRequest): Promise<LimitResult> {
  const grafts = req.grafts ?? new Set<Oid>();
  const flags = new Map<Oid, number>();
  const queue = new CommitQueue();
  let interestingQueued = 0;
  const limited = req.uninteresting.length > 0;
  const parentsOf = (n: CommitNode): Oid[] => (grafts.has(n.oid) ? [] : n.parents);

  const enqueue = (node: CommitNode, f: number): void => {
    flags.set(node.oid, f | SEEN | QUEUED);
    if (!(f & UNINTERESTING)) interestingQueued++;
    queue.push(node);
  };
  // Flag a commit and its already-parsed ancestry uninteresting (mark_parents_uninteresting).
  const markUninteresting = (oid: Oid): void => {
    const stack = [oid];
    while (stack.length > 0) {
      const cur = stack.pop()!;
      const f = flags.get(cur) ?? 0;
      if (f & UNINTERESTING) continue;
      flags.set(cur, f | UNINTERESTING);
      if (f & QUEUED) interestingQueued--;
      const node = cache.known(cur);
      if (node && f & SEEN) for (const p of parentsOf(node)) stack.push(p);
    }
  };

  for (const tip of req.uninteresting) {
    const p = await cache.peel(tip);
    if (p?.type !== "commit") continue;
    const node = await cache.get(p.oid);
    markUninteresting(node.oid);
    if (!((flags.get(node.oid) ?? 0) & SEEN)) enqueue(node, UNINTERESTING);
  }
  for (const tip of req.interesting) {
    const p = await cache.peel(tip);
    if (!p) throw new GitError(`missing object ${tip}`, "missing");
    if (p.type !== "commit") continue;
    const f = flags.get(p.oid) ?? 0;
    if (f & SEEN) continue;
    enqueue(await cache.get(p.oid), f);
  }

  const output: CommitNode[] = [];
  let lastDate = Number.POSITIVE_INFINITY;
  let slop = SLOP;
  while (queue.size > 0) {
    const node = queue.pop()!;
    let f = flags.get(node.oid)!;
    flags.set(node.oid, f & ~QUEUED);
    if (!(f & UNINTERESTING)) interestingQueued--;
    if (req.maxAge !== undefined && node.time < req.maxAge && !(f & UNINTERESTING)) {
      if (!limited) continue;
      markUninteresting(node.oid);
      f |= UNINTERESTING;
    }
    const parents = parentsOf(node);
    if (f & UNINTERESTING) {
      for (const p of parents) {
        markUninteresting(p);
        const pf = flags.get(p)!;
        if (pf & SEEN) continue;
        const pn = await cache.lookup(p);
        if (pn) enqueue(pn, pf);
        else flags.set(p, pf | SEEN);
      }
      // still_interesting(): stop once the queue holds only uninteresting commits older than the output.
      if (queue.size === 0) break;
      if (lastDate <= queue.peek()!.time || interestingQueued > 0) slop = SLOP;
      else if (--slop === 0) break;
      continue;
    }
    for (const p of parents) {
      const pf = flags.get(p) ?? 0;
      if (pf & SEEN) continue;
      enqueue(await cache.get(p), pf);
    }
    lastDate = node.time;
    output.push(node);
  }

  const uninteresting = new Set<Oid>();
  for (const [oid, f] of flags) if (f & UNINTERESTING) uninteresting.add(oid);
  const commits = output.filter((n) => !uninteresting.has(n.oid));
  const edges: Oid[] = [];
  const edgeSeen = new Set<Oid>();
  for (const n of commits) {
    for (const p of parentsOf(n)) {
      if (uninteresting.has(p) && !edgeSeen.has(p) && cache.known(p)) {
        edgeSeen.add(p);
        edges.push(p);
      }
    }
  }
  return { commits, edges, uninteresting };
}
