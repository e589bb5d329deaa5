// The push check's walk over locked paths (services/git/lfs-locks.ts) against the plain answer:
// flatten both trees whole (every entry, files and directories, by path) and call a lock touched
// when the entry at its path differs. Random trees with seeded edits (content, mode, type, adds,
// deletes, renames), random locks on existing and absent paths, nested locks included.
import { describe, expect, test } from "bun:test";
import { serializeTree, type TreeEntry } from "../../../src/git/object.ts";
import { hashObject } from "../../../src/git/oid.ts";
import type { ObjectReader, ObjectType, Oid, RawObject } from "../../../src/git/types.ts";
import { locksTouched } from "../../../src/services/git/lfs-locks.ts";
import type { LockedPath } from "../../../src/services/git/store.ts";
import { normalizeLockPath } from "../../../src/services/lfs/locks.ts";
import { AppError } from "../../../src/errors.ts";

/** Seeded PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Node = { kind: "blob"; mode: string; content: string } | { kind: "tree"; children: Map<string, Node> };

const NAMES = ["a", "b", "c.bin", "d", "e.psd"];
const MODES = ["100644", "100644", "100644", "100755", "120000"];

class Objects implements ObjectReader {
  readonly map = new Map<Oid, RawObject>();
  put(type: ObjectType, data: Uint8Array): Oid {
    const oid = hashObject(type, data);
    this.map.set(oid, { type, data });
    return oid;
  }
  async has(oid: Oid) {
    return this.map.has(oid);
  }
  async read(oid: Oid) {
    return this.map.get(oid) ?? null;
  }
  async readHeader(oid: Oid) {
    const o = this.map.get(oid);
    return o ? { type: o.type, size: o.data.length } : null;
  }
}

function randomNode(r: () => number, depth: number): Node {
  if (depth === 0 || r() < 0.45) return { kind: "blob", mode: MODES[Math.floor(r() * MODES.length)]!, content: `c${Math.floor(r() * 4)}` };
  const children = new Map<string, Node>();
  for (const name of NAMES) if (r() < 0.6) children.set(name, randomNode(r, depth - 1));
  return { kind: "tree", children };
}

function clone(n: Node): Node {
  return n.kind === "blob" ? { ...n } : { kind: "tree", children: new Map([...n.children].map(([k, v]) => [k, clone(v)])) };
}

/** A few random edits anywhere in the tree (in place). */
function edit(root: Node & { kind: "tree" }, r: () => number, edits: number): void {
  for (let i = 0; i < edits; i++) {
    let dir = root;
    while (r() < 0.6) {
      const subdirs = [...dir.children.values()].filter((c): c is Node & { kind: "tree" } => c.kind === "tree");
      if (!subdirs.length) break;
      dir = subdirs[Math.floor(r() * subdirs.length)]!;
    }
    const name = NAMES[Math.floor(r() * NAMES.length)]!;
    const current = dir.children.get(name);
    const op = r();
    if (op < 0.25) dir.children.delete(name);
    else if (op < 0.5) dir.children.set(name, { kind: "blob", mode: current?.kind === "blob" ? current.mode : "100644", content: `n${Math.floor(r() * 4)}` });
    else if (op < 0.65 && current?.kind === "blob") current.mode = MODES[Math.floor(r() * MODES.length)]!;
    else if (op < 0.8) dir.children.set(name, randomNode(r, 2));
    else if (current) {
      // Rename within the directory.
      const to = NAMES[Math.floor(r() * NAMES.length)]!;
      dir.children.delete(name);
      dir.children.set(to, current);
    }
  }
}

function write(objects: Objects, n: Node): Oid {
  if (n.kind === "blob") return objects.put("blob", new TextEncoder().encode(n.content));
  const entries: TreeEntry[] = [...n.children].map(([name, c]) => ({ mode: c.kind === "tree" ? "40000" : c.mode, name, oid: write(objects, c) }));
  const key = (e: TreeEntry) => (e.mode === "40000" ? `${e.name}/` : e.name);
  entries.sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
  return objects.put("tree", serializeTree(entries));
}

/** Every entry by path: `mode oid`. */
function flatten(objects: Objects, n: Node, prefix = "", out = new Map<string, string>()): Map<string, string> {
  if (n.kind === "tree") {
    for (const [name, c] of n.children) {
      const path = prefix + name;
      out.set(path, `${c.kind === "tree" ? "40000" : c.mode} ${write(objects, c)}`);
      flatten(objects, c, `${path}/`, out);
    }
  }
  return out;
}

describe("the locked-path walk", () => {
  test("agrees with comparing the flattened trees (2,000 seeded cases)", async () => {
    const r = rng(20261128);
    for (let i = 0; i < 2000; i++) {
      const objects = new Objects();
      const before = randomNode(r, 3);
      const oldRoot: Node & { kind: "tree" } = before.kind === "tree" ? before : { kind: "tree", children: new Map([["a", before]]) };
      const newRoot = clone(oldRoot) as Node & { kind: "tree" };
      edit(newRoot, r, 1 + Math.floor(r() * 4));
      const empty = r() < 0.05;
      const [a, b] = [empty ? null : write(objects, oldRoot), write(objects, newRoot)];
      const flatOld = empty ? new Map<string, string>() : flatten(objects, oldRoot);
      const flatNew = flatten(objects, newRoot);
      const candidates = [...new Set([...flatOld.keys(), ...flatNew.keys(), "a/zz", "b/a/zz", "zz", "a/b/c.bin/x"])];
      const locks: LockedPath[] = [];
      for (const path of candidates) if (r() < 0.3) locks.push({ id: `l${locks.length}`, path, ownerId: "u", ownerName: "olga" });
      const expected = locks.filter((l) => flatOld.get(l.path) !== flatNew.get(l.path)).map((l) => l.path);
      const got = (await locksTouched(objects, a, b, locks)).map((l) => l.path);
      expect({ case: i, got: [...got].sort() }).toEqual({ case: i, got: [...expected].sort() });
    }
  });
});

describe("lock paths", () => {
  test("normalization of random input: an invalid refusal or a canonical path, idempotent", () => {
    const r = rng(7);
    const alphabet = ["a", "b", "/", "/", ".", "..", "\\", " ", "é", "\u0000", "\u001f", "x".repeat(900)];
    for (let i = 0; i < 5000; i++) {
      let raw = "";
      const n = Math.floor(r() * 12);
      for (let k = 0; k < n; k++) raw += alphabet[Math.floor(r() * alphabet.length)]!;
      let path: string;
      try {
        path = normalizeLockPath(raw);
      } catch (e) {
        expect(e instanceof AppError && e.code === "invalid").toBe(true);
        continue;
      }
      const segments = path.split("/");
      expect(segments.every((s) => s !== "" && s !== "." && s !== "..")).toBe(true);
      expect(Buffer.byteLength(path)).toBeLessThanOrEqual(4096);
      expect(normalizeLockPath(path)).toBe(path);
    }
  });
});
