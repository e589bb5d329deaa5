// Tree editing: apply file puts and deletes to a tree, creating and pruning subtrees, reading
// only the trees along the touched paths. Used by the commit API.
import { hashObject } from "./oid.ts";
import { isTreeMode, parseTree, serializeTree, type TreeEntry } from "./object.ts";
import { GitError, type ObjectReader, type Oid, type RawObject } from "./types.ts";

/** One edit; `path` is already split into validated components. */
export type TreeOp = { kind: "put"; path: string[]; data: Uint8Array } | { kind: "delete"; path: string[] };

interface Node {
  entries: Map<string, { mode: string; oid: Oid }>;
  children: Map<string, Node>;
  dirty: boolean;
}

const EMPTY_TREE_MODE = "40000";

async function loadNode(reader: ObjectReader, oid: Oid | null): Promise<Node> {
  const node: Node = { entries: new Map(), children: new Map(), dirty: false };
  if (!oid) return node;
  const obj = await reader.read(oid);
  if (!obj || obj.type !== "tree") throw new GitError(`tree ${oid} is missing`, "corrupt");
  for (const e of parseTree(obj.data)) node.entries.set(e.name, { mode: e.mode, oid: e.oid });
  return node;
}

/** Applies `ops` in order to `baseTree` (null: empty); returns the new root and every new object. */
export async function editTree(reader: ObjectReader, baseTree: Oid | null, ops: TreeOp[]): Promise<{ tree: Oid; objects: RawObject[] }> {
  const root = await loadNode(reader, baseTree);
  const created = new Map<Oid, RawObject>();
  for (const op of ops) {
    let node = root;
    const shown: string[] = [];
    for (const part of op.path.slice(0, -1)) {
      shown.push(part);
      let child = node.children.get(part);
      if (!child) {
        const entry = node.entries.get(part);
        if (entry && !isTreeMode(entry.mode)) throw new GitError(`${shown.join("/")} is a file, not a directory`, "conflict");
        if (!entry && op.kind === "delete") throw new GitError(`${op.path.join("/")} does not exist`, "missing");
        child = await loadNode(reader, entry?.oid ?? null);
        node.children.set(part, child);
      }
      node.dirty = true;
      node = child;
    }
    const name = op.path[op.path.length - 1]!;
    const existing = node.entries.get(name);
    if (op.kind === "delete") {
      if (node.children.has(name) || (existing && isTreeMode(existing.mode))) throw new GitError(`${op.path.join("/")} is a directory`, "conflict");
      if (!existing) throw new GitError(`${op.path.join("/")} does not exist`, "missing");
      node.entries.delete(name);
    } else {
      if (node.children.has(name) || (existing && isTreeMode(existing.mode))) throw new GitError(`${op.path.join("/")} is a directory`, "conflict");
      const oid = hashObject("blob", op.data);
      created.set(oid, { type: "blob", data: op.data });
      // Keep an executable bit or a symlink's mode when content is replaced.
      const mode = existing && (existing.mode === "100755" || existing.mode === "120000") ? existing.mode : "100644";
      node.entries.set(name, { mode, oid });
    }
    node.dirty = true;
  }
  const tree = writeNode(root, created, true)!;
  return { tree, objects: [...created.values()] };
}

/** Serializes a dirty node bottom-up; an empty subtree is pruned (null), the root never is. */
function writeNode(node: Node, created: Map<Oid, RawObject>, isRoot: boolean): Oid | null {
  for (const [name, child] of node.children) {
    if (!child.dirty) continue;
    const oid = writeNode(child, created, false);
    if (oid === null) node.entries.delete(name);
    else node.entries.set(name, { mode: EMPTY_TREE_MODE, oid });
  }
  if (!isRoot && node.entries.size === 0) return null;
  const entries: TreeEntry[] = [...node.entries].map(([name, e]) => ({ name, mode: e.mode, oid: e.oid }));
  const data = serializeTree(entries);
  const oid = hashObject("tree", data);
  created.set(oid, { type: "tree", data });
  return oid;
}
