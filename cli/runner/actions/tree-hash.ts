// The git tree oid of a directory on disk, as `git write-tree` would give for it with every file
// added: blobs hashed as "blob <len>\0"+bytes, symbolic links as their target, modes 100644 /
// 100755 (the owner's execute bit, git's rule) / 120000 / 40000, entries in git's order
// (serializeTree). Empty directories are left out, as git has no way to hold them. The agent
// checks a cached action against the commit's tree with it before each use (fetch.ts). Anything
// git could not have checked out (a socket, a fifo, a name git refuses) answers null: a mismatch.
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { serializeTree, type TreeEntry } from "../../../src/git/object.ts";
import { hashObject } from "../../../src/git/oid.ts";

/** Bounds on what is hashed: a cached action is a checkout of one commit, never this deep. */
const MAX_DEPTH = 64;

/** The tree oid of `dir` (null for what no git tree can hold, an empty directory included). */
export async function treeOidOfDir(dir: string): Promise<string | null> {
  const oid = await walk(dir, 0);
  return oid === "" ? null : oid;
}

/** A directory's tree oid; "" when it holds no file at any depth (git leaves it out), null for what no tree can hold. */
async function walk(dir: string, depth: number): Promise<string | null> {
  if (depth > MAX_DEPTH) return null;
  const entries: TreeEntry[] = [];
  for (const d of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, d.name);
    if (d.isDirectory()) {
      const sub = await walk(path, depth + 1);
      if (sub === null) return null;
      if (sub === "") continue;
      entries.push({ mode: "40000", name: d.name, oid: sub });
    } else if (d.isSymbolicLink()) {
      entries.push({ mode: "120000", name: d.name, oid: hashObject("blob", await readlink(path, { encoding: "buffer" })) });
    } else if (d.isFile()) {
      const st = await lstat(path);
      entries.push({ mode: st.mode & 0o100 ? "100755" : "100644", name: d.name, oid: hashObject("blob", await readFile(path)) });
    } else return null;
  }
  if (entries.length === 0) return "";
  try {
    return hashObject("tree", serializeTree(entries));
  } catch {
    // Why: a name git refuses in a tree (".git", one with a NUL) cannot be a pristine checkout.
    return null;
  }
}
