// Connectivity check after a push (git's check_connected): everything reachable from the
// new ref values must exist, so no ref ever points into a hole.
//
// git walks `rev-list --objects <new tips> --not --all`. Here the walk stops at any object
// already stored in the repository before the push: stored objects were checked when they
// arrived (or written by the server itself), so their closure is present. Only the objects
// of the new pack are walked, which bounds the cost by the size of the push.
import { isTreeMode, parseCommit, parseTag, parseTree } from "./object.ts";
import type { PackSet } from "./pack-set.ts";
import { GitError, type ObjectReader, type Oid } from "./types.ts";

/** Options of checkConnectivity. */
export interface ConnectivityOptions {
  /** The repository's objects before the push; whatever is here needs no walk. */
  existing: ObjectReader;
}

/** A synchronous membership test when the reader is a pack set (no await per object). */
function hasNow(reader: ObjectReader): ((oid: Oid) => boolean) | null {
  const set = reader as Partial<PackSet>;
  return typeof set.locate === "function" ? (oid) => set.locate!(oid) !== null : null;
}

const GITLINK = "160000";

/**
 * Throw GitError (code "missing") naming the first missing object reachable from `newTips`.
 * The objects themselves were validated by the indexer (validateObject on every commit, tree
 * and tag of the pack), so this walk only follows links.
 */
export async function checkConnectivity(reader: ObjectReader, newTips: Oid[], opts: ConnectivityOptions): Promise<void> {
  const existingHas = hasNow(opts.existing);
  const seen = new Set<Oid>();
  const stack: { oid: Oid; blob: boolean }[] = newTips.map((oid) => ({ oid, blob: false }));
  while (stack.length > 0) {
    const { oid, blob } = stack.pop()!;
    if (seen.has(oid)) continue;
    seen.add(oid);
    if (existingHas ? existingHas(oid) : await opts.existing.has(oid)) continue;
    if (blob) {
      if (!(await reader.has(oid))) throw new GitError(`missing necessary object ${oid}`, "missing");
      continue;
    }
    const obj = await reader.read(oid);
    if (!obj) throw new GitError(`missing necessary object ${oid}`, "missing");
    if (obj.type === "commit") {
      const c = parseCommit(obj.data);
      stack.push({ oid: c.tree, blob: false });
      for (const p of c.parents) stack.push({ oid: p, blob: false });
    } else if (obj.type === "tree") {
      for (const e of parseTree(obj.data)) {
        if (e.mode !== GITLINK) stack.push({ oid: e.oid, blob: !isTreeMode(e.mode) });
      }
    } else if (obj.type === "tag") {
      stack.push({ oid: parseTag(obj.data).object, blob: false });
    }
  }
}
