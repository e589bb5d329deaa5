// Shallow boundaries for deepen, deepen-relative, deepen-since and deepen-not.
//
// From gitprotocol-pack(5):
//
//   The server will calculate the set of commits which are no deeper than
//   the desired depth. The set of commits start at the client's wants.
//   The server writes 'shallow' lines for each commit whose parents will not
//   be sent as a result. The server writes an 'unshallow' line for each commit
//   which the client has indicated is shallow, but is no longer shallow at the
//   currently requested depth (that is, its parents will now be sent).
//
//   "deepen-since" ... equivalent to "git rev-list --max-age=<timestamp>";
//   "deepen-not" ... equivalent of doing "git rev-list --not <rev>".
//   With "deepen-relative" the depth is counted from the client's current
//   shallow commits instead of from the wants (git's get_shallow_commits(depth + 1)).
import { type CommitCache, limitCommits } from "./revision.ts";
import { GitError, type Oid } from "./types.ts";

/** `deepen 2147483647` (git fetch --unshallow): everything the client lacks. */
export const INFINITE_DEPTH = 0x7fffffff;

/** The outcome of a shallow request. */
export interface ShallowPlan {
  /** New shallow commits to announce ("shallow <oid>"). */
  shallow: Oid[];
  /** Client shallow commits whose parents will now be sent ("unshallow <oid>"). */
  unshallow: Oid[];
  /** Commits whose parents the pack walk must not follow (new boundary and the client's). */
  grafts: Set<Oid>;
  /** Parents of unshallowed commits: extra wants of the pack walk. */
  extraWants: Oid[];
}

/** Boundary of a depth-limited walk from `heads`: commits at distance depth-1 (get_shallow_commits). */
async function depthBoundary(cache: CommitCache, heads: Oid[], depth: number): Promise<{ boundary: Set<Oid>; notShallow: Set<Oid> }> {
  const distance = new Map<Oid, number>();
  const boundary = new Set<Oid>();
  const notShallow = new Set<Oid>();
  let level = [...new Set(heads)];
  for (const h of level) distance.set(h, 0);
  for (let d = 0; level.length > 0; d++) {
    const next: Oid[] = [];
    for (const oid of level) {
      const node = await cache.get(oid);
      if (d + 1 >= depth) {
        boundary.add(oid);
        continue;
      }
      notShallow.add(oid);
      for (const p of node.parents) {
        if (distance.has(p)) continue;
        distance.set(p, d + 1);
        next.push(p);
      }
    }
    level = next;
  }
  return { boundary, notShallow };
}

/** Apply git's send_shallow/send_unshallow rules to a boundary. */
async function finish(cache: CommitCache, boundary: Set<Oid>, notShallow: Set<Oid>, clientShallow: Oid[]): Promise<ShallowPlan> {
  const client = new Set(clientShallow);
  const shallow = [...boundary].filter((oid) => !client.has(oid) && !notShallow.has(oid));
  const unshallow = clientShallow.filter((oid) => notShallow.has(oid));
  const extraWants: Oid[] = [];
  for (const oid of unshallow) extraWants.push(...(await cache.get(oid)).parents);
  return { shallow, unshallow, grafts: new Set([...shallow, ...clientShallow]), extraWants };
}

/** Plan for `deepen <depth>` (optionally deepen-relative); `tips` are the ref tips the client may reach. */
export async function deepen(
  cache: CommitCache,
  opts: { wants: Oid[]; clientShallow: Oid[]; depth: number; relative: boolean; tips: Oid[] },
): Promise<ShallowPlan> {
  if (opts.depth >= INFINITE_DEPTH) {
    return finish(cache, new Set(), new Set(opts.clientShallow), opts.clientShallow);
  }
  if (!opts.relative) {
    const { boundary, notShallow } = await depthBoundary(cache, opts.wants, opts.depth);
    return finish(cache, boundary, notShallow, opts.clientShallow);
  }
  // Only shallow commits reachable from our refs count as starting points (get_reachable_list).
  const unreachable = await limitCommits(cache, { interesting: opts.clientShallow, uninteresting: opts.tips });
  const outside = new Set(unreachable.commits.map((c) => c.oid));
  const heads = opts.clientShallow.filter((oid) => !outside.has(oid));
  const { boundary, notShallow } = await depthBoundary(cache, heads, opts.depth + 1);
  return finish(cache, boundary, notShallow, opts.clientShallow);
}

/** Plan for deepen-since and/or deepen-not (get_shallow_commits_by_rev_list). */
export async function deepenByRevList(cache: CommitCache, opts: { wants: Oid[]; clientShallow: Oid[]; since?: number; not: Oid[] }): Promise<ShallowPlan> {
  const walk = await limitCommits(cache, { interesting: opts.wants, uninteresting: opts.not, maxAge: opts.since });
  if (walk.commits.length === 0) throw new GitError("no commits selected for shallow requests");
  const selected = new Set(walk.commits.map((c) => c.oid));
  const boundary = new Set<Oid>();
  for (const c of walk.commits) if (c.parents.some((p) => !selected.has(p))) boundary.add(c.oid);
  const notShallow = new Set([...selected].filter((oid) => !boundary.has(oid)));
  return finish(cache, boundary, notShallow, opts.clientShallow);
}
