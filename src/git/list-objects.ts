// Tree traversal for `rev-list --objects`: the trees and blobs of the interesting
// commits, minus everything in the trees of the uninteresting edge commits, with the
// partial-clone blob filters of rev-list --filter.
import { type EntryKind, forEachTreeEntry } from "./object-links.ts";
import { GitError, type ObjectReader, type Oid } from "./types.ts";

/** Partial clone filters: blob:none omits every blob, blob:limit=<n> omits blobs of n bytes or more. */
export type ObjectFilter = { kind: "blob:none" } | { kind: "blob:limit"; bytes: number };

/** Parse a filter-spec ("blob:none", "blob:limit=1k"); null for a spec this server does not support. */
export function parseFilterSpec(spec: string): ObjectFilter | null {
  if (spec === "blob:none") return { kind: "blob:none" };
  const m = /^blob:limit=(\d+)([kmg]?)$/.exec(spec);
  if (!m) return null;
  const scale = m[2] === "k" ? 1024 : m[2] === "m" ? 1024 ** 2 : m[2] === "g" ? 1024 ** 3 : 1;
  return { kind: "blob:limit", bytes: Number(m[1]) * scale };
}

/** Reads trees once each; remembers what the client already has. */
export class TreeWalker {
  /** Trees and blobs reachable from uninteresting (client-side) trees. */
  readonly uninteresting = new Set<Oid>();

  constructor(private readonly reader: ObjectReader) {}

  /** The entries of a tree; throws GitError naming it when missing. */
  async entries(oid: Oid): Promise<{ kind: EntryKind; oid: Oid }[]> {
    const obj = await this.reader.read(oid);
    if (!obj) throw new GitError(`missing tree ${oid}`, "missing");
    if (obj.type !== "tree") throw new GitError(`object ${oid} is a ${obj.type}, not a tree`);
    const entries: { kind: EntryKind; oid: Oid }[] = [];
    forEachTreeEntry(obj.data, (kind, entry) => entries.push({ kind, oid: entry }));
    return entries;
  }

  /** Hint the subtrees among `entries` the walk will read next, so object storage fetches them side by side. */
  private prefetchTrees(entries: { kind: EntryKind; oid: Oid }[], seen?: Set<Oid>): void {
    if (!this.reader.prefetch) return;
    const next = entries.filter((e) => e.kind === "tree" && !this.uninteresting.has(e.oid) && !seen?.has(e.oid)).map((e) => e.oid);
    if (next.length > 0) this.reader.prefetch(next);
  }

  /** Mark a tree and everything below it as held by the client (mark_tree_uninteresting). */
  async markUninteresting(root: Oid): Promise<void> {
    if (this.uninteresting.has(root)) return;
    this.uninteresting.add(root);
    const stack = [root];
    while (stack.length > 0) {
      const tree = stack.pop()!;
      const entries = await this.entries(tree).catch(() => []);
      this.prefetchTrees(entries);
      for (const e of entries) {
        if (e.kind === "gitlink" || this.uninteresting.has(e.oid)) continue;
        this.uninteresting.add(e.oid);
        if (e.kind === "tree") stack.push(e.oid);
      }
    }
  }

  /**
   * Append to `trees`/`blobs` every object under `root` not yet in `seen` and not uninteresting,
   * depth first in tree order; blobs the filter omits are skipped.
   */
  async collect(root: Oid, seen: Set<Oid>, trees: Oid[], blobs: Oid[], filter?: ObjectFilter): Promise<void> {
    if (seen.has(root) || this.uninteresting.has(root)) return;
    seen.add(root);
    trees.push(root);
    const rootEntries = await this.entries(root);
    this.prefetchTrees(rootEntries, seen);
    const stack: { entries: { kind: EntryKind; oid: Oid }[]; at: number }[] = [{ entries: rootEntries, at: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.at >= top.entries.length) {
        stack.pop();
        continue;
      }
      const e = top.entries[top.at++]!;
      if (e.kind === "gitlink" || seen.has(e.oid) || this.uninteresting.has(e.oid)) continue;
      if (e.kind === "tree") {
        seen.add(e.oid);
        trees.push(e.oid);
        const entries = await this.entries(e.oid);
        this.prefetchTrees(entries, seen);
        stack.push({ entries, at: 0 });
      } else {
        seen.add(e.oid);
        if (await this.wantBlob(e.oid, filter)) blobs.push(e.oid);
      }
    }
  }

  private async wantBlob(oid: Oid, filter?: ObjectFilter): Promise<boolean> {
    if (!filter) return true;
    if (filter.kind === "blob:none") return false;
    const head = await this.reader.readHeader(oid);
    if (!head) throw new GitError(`missing blob ${oid}`, "missing");
    return head.size < filter.bytes;
  }
}
