// Merge bases, tree diffs, three-way tree merges and line diffs, checked against the real git CLI
// on generated histories and random trees (property tests with fixed seeds).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countEdits, diffLines, splitLines, unifiedHunks } from "../../../src/git/line-diff.ts";
import { diffTrees, mergeBases, mergeTrees } from "../../../src/git/merge.ts";
import { hashObject } from "../../../src/git/oid.ts";
import type { PackSet } from "../../../src/git/pack-set.ts";
import type { ObjectReader, Oid, RawObject } from "../../../src/git/types.ts";
import { git, gitLines, makeFixtureRepo, openRepoPacks, removeDir, rng } from "./repo-fixture.ts";

/** An object reader over a PackSet plus objects made in memory (merge results). */
function overlay(set: PackSet, extra: RawObject[]): ObjectReader {
  const mem = new Map<Oid, RawObject>(extra.map((o) => [hashObject(o.type, o.data), o]));
  return {
    has: async (oid) => mem.has(oid) || set.has(oid),
    read: async (oid) => mem.get(oid) ?? set.read(oid),
    readHeader: async (oid) => {
      const m = mem.get(oid);
      return m ? { type: m.type, size: m.data.length } : set.readHeader(oid);
    },
  };
}

describe("mergeBases matches git merge-base --all", () => {
  let dir: string;
  let set: PackSet;
  let close: () => Promise<void>;
  beforeAll(async () => {
    dir = await makeFixtureRepo(600, 7);
    ({ set, close } = await openRepoPacks(dir));
  });
  afterAll(async () => {
    await close();
    await removeDir(dir);
  });

  test("random pairs across merges, side branches and skewed clocks", async () => {
    const all = gitLines(dir, ["rev-list", "--all"]);
    const rand = rng(11);
    for (let i = 0; i < 60; i++) {
      const a = all[Math.floor(rand() * all.length)]!;
      const b = all[Math.floor(rand() * all.length)]!;
      const expected = gitLines(dir, ["merge-base", "--all", a, b]).sort();
      expect((await mergeBases(set, a, b)).sort()).toEqual(expected);
    }
  });

  test("a commit and its ancestor: the ancestor", async () => {
    const main = git(dir, ["rev-parse", "main"]);
    const old = git(dir, ["rev-parse", "main~20"]);
    expect(await mergeBases(set, main, old)).toEqual([old]);
    expect(await mergeBases(set, old, main)).toEqual([old]);
    expect(await mergeBases(set, main, main)).toEqual([main]);
  });
});

/** A work repository where random trees are committed with the real git. */
class Playground {
  constructor(readonly dir: string) {}
  static async make(): Promise<Playground> {
    const dir = await mkdtemp(join(tmpdir(), "svc-merge-"));
    git(dir, ["init", "-q", "-b", "main"]);
    return new Playground(dir);
  }
  /** Commits `files` (path → content, null deletes) on top of `parent` (or as a root); answers the commit. */
  commit(parent: string | null, files: Map<string, string | null>, base: Map<string, string>): { commit: string; files: Map<string, string> } {
    const next = new Map(base);
    for (const [p, c] of files) {
      if (c === null) next.delete(p);
      else next.set(p, c);
    }
    // Build the tree with git's index, independent of the working directory.
    const env = { GIT_INDEX_FILE: join(this.dir, ".git", "tmp-index") };
    git(this.dir, ["read-tree", "--empty"], undefined, env);
    const input = [...next].map(([p, c]) => `100644 ${git(this.dir, ["hash-object", "-w", "--stdin"], c)}\t${p}`).join("\n");
    if (input) git(this.dir, ["update-index", "--index-info"], `${input}\n`, env);
    const tree = git(this.dir, ["write-tree"], undefined, env);
    const commit = git(this.dir, ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", "c"]);
    // A ref per commit, so repack keeps it.
    git(this.dir, ["update-ref", `refs/c/${commit}`, commit]);
    return { commit, files: next };
  }
  tree(commit: string): string {
    return git(this.dir, ["rev-parse", `${commit}^{tree}`]);
  }
  async packs() {
    git(this.dir, ["repack", "-a", "-d", "-q"]);
    return openRepoPacks(join(this.dir, ".git"));
  }
}

const PATHS = ["a", "b", "c.txt", "d/e", "d/f", "d/g/h", "d/g/i", "j/k", "l/m/n", "l/o"];

/** A random edit of `files`: changes, additions, deletions, sometimes to the same path as `avoid`. */
function randomEdit(rand: () => number, files: Map<string, string>, tag: string): Map<string, string | null> {
  const edit = new Map<string, string | null>();
  const n = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) {
    const p = PATHS[Math.floor(rand() * PATHS.length)]!;
    // A path may not be a file and a directory at once; keep to the fixed layout.
    edit.set(p, files.has(p) && rand() < 0.3 ? null : `${tag} ${p} ${Math.floor(rand() * 3)}\n`);
  }
  return edit;
}

describe("diffTrees and mergeTrees against git", () => {
  let pg: Playground;
  beforeAll(async () => {
    pg = await Playground.make();
  });
  afterAll(async () => removeDir(pg.dir));

  test("random three-way cases: diff-tree agrees; a clean merge equals git's; git's conflicts are ours too", async () => {
    const rand = rng(3);
    const cases: { base: string; ours: string; theirs: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const start = new Map<string, string>();
      for (const p of PATHS) if (rand() < 0.6) start.set(p, `base ${p}\n`);
      const base = pg.commit(null, new Map(start), new Map());
      const ours = pg.commit(base.commit, randomEdit(rand, base.files, "ours"), base.files);
      const theirs = pg.commit(base.commit, randomEdit(rand, base.files, "theirs"), base.files);
      cases.push({ base: base.commit, ours: ours.commit, theirs: theirs.commit });
    }
    const { set, close } = await pg.packs();
    try {
      let clean = 0;
      for (const c of cases) {
        const [bt, ot, tt] = [pg.tree(c.base), pg.tree(c.ours), pg.tree(c.theirs)];
        const expected = gitLines(pg.dir, ["diff-tree", "-r", "--no-renames", "--name-status", bt, ot]).map((l) => l.replace(/\t/, " "));
        const got = (await diffTrees(set, bt, ot)).changes.map(
          (ch) => `${{ added: "A", deleted: "D", modified: "M", "type-changed": "T" }[ch.status]} ${ch.path}`,
        );
        expect(got).toEqual(expected);

        const ourMerge = await mergeTrees(set, bt, ot, tt);
        const r = Bun.spawnSync(["git", "merge-tree", "--write-tree", "--name-only", c.ours, c.theirs], { cwd: pg.dir, env: { ...process.env, HOME: pg.dir } });
        const gitClean = r.exitCode === 0;
        if (ourMerge.kind === "clean") {
          clean++;
          expect(gitClean).toBe(true);
          expect(ourMerge.tree).toBe(r.stdout.toString().trim().split("\n")[0]!);
          // Every new tree object is well-formed and really is what the merge names.
          const reader = overlay(set, ourMerge.objects);
          expect(await reader.has(ourMerge.tree)).toBe(true);
        } else {
          // Both sides changed each reported path.
          const ours = new Set((await diffTrees(set, bt, ot)).changes.map((x) => x.path));
          const theirs = new Set((await diffTrees(set, bt, tt)).changes.map((x) => x.path));
          for (const p of ourMerge.paths) {
            const touched = (s: Set<string>) => s.has(p) || [...s].some((x) => x.startsWith(`${p}/`));
            expect(touched(ours) && touched(theirs)).toBe(true);
          }
        }
        if (!gitClean) expect(ourMerge.kind).toBe("conflict");
      }
      // The generator must exercise both outcomes.
      expect(clean).toBeGreaterThan(5);
      expect(clean).toBeLessThan(cases.length);
    } finally {
      await close();
    }
  });

  test("a directory both sides emptied disappears; a conflict names the path", async () => {
    const base = pg.commit(
      null,
      new Map([
        ["d/x", "1\n"],
        ["d/y", "2\n"],
        ["k", "k\n"],
      ]),
      new Map(),
    );
    const ours = pg.commit(
      base.commit,
      new Map([
        ["d/x", null],
        ["k", "ours\n"],
      ]),
      base.files,
    );
    const theirs = pg.commit(base.commit, new Map([["d/y", null]]), base.files);
    const clash = pg.commit(base.commit, new Map([["k", "theirs\n"]]), base.files);
    const { set, close } = await pg.packs();
    try {
      const m = await mergeTrees(set, pg.tree(base.commit), pg.tree(ours.commit), pg.tree(theirs.commit));
      expect(m.kind).toBe("clean");
      if (m.kind === "clean") {
        const listed = (await diffTrees(overlay(set, m.objects), null, m.tree)).changes.map((c) => c.path);
        expect(listed).toEqual(["k"]);
      }
      const c = await mergeTrees(set, pg.tree(base.commit), pg.tree(ours.commit), pg.tree(clash.commit));
      expect(c).toEqual({ kind: "conflict", paths: ["k"] });
    } finally {
      await close();
    }
  });

  test("diffTrees stops at the limit and says so", async () => {
    const files = new Map<string, string | null>();
    for (let i = 0; i < 50; i++) files.set(`f${i}`, `${i}\n`);
    const big = pg.commit(null, files, new Map());
    const { set, close } = await pg.packs();
    try {
      const d = await diffTrees(set, null, pg.tree(big.commit), { limit: 10 });
      expect(d.changes.length).toBe(10);
      expect(d.truncated).toBe(true);
    } finally {
      await close();
    }
  });
});

describe("line diffs", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-linediff-"));
  });
  afterAll(async () => removeDir(dir));

  /** Applies a script: must reproduce b exactly. */
  const apply = (a: string[], b: string[], edits: NonNullable<ReturnType<typeof diffLines>>) =>
    edits.filter((e) => e.op !== "del").map((e) => (e.op === "keep" ? a[e.a]! : b[e.b]!));

  test("random texts: the script rebuilds b and its size is git --minimal's (numstat)", async () => {
    const rand = rng(5);
    const words = ["alpha\n", "beta\n", "gamma\n", "delta\n", "eps\n"];
    for (let i = 0; i < 40; i++) {
      const a = Array.from({ length: Math.floor(rand() * 60) }, () => words[Math.floor(rand() * words.length)]!);
      const b = a.filter(() => rand() > 0.2).flatMap((l) => (rand() < 0.15 ? [l, words[Math.floor(rand() * words.length)]!] : [l]));
      if (rand() < 0.2 && b.length) b[b.length - 1] = "no newline";
      const edits = diffLines(a, b)!;
      expect(apply(a, b, edits)).toEqual(b);
      await Bun.write(join(dir, "a"), a.join(""));
      await Bun.write(join(dir, "b"), b.join(""));
      const r = Bun.spawnSync(["git", "diff", "--no-index", "--minimal", "--numstat", "a", "b"], { cwd: dir });
      const line = r.stdout.toString().trim();
      const { additions, deletions } = countEdits(edits);
      if (line === "") expect(additions + deletions).toBe(0);
      else expect(line.split("\t").slice(0, 2).map(Number)).toEqual([additions, deletions]);
    }
  });

  test("unified hunks apply with git apply", async () => {
    const rand = rng(9);
    for (let i = 0; i < 15; i++) {
      const a = Array.from({ length: 30 + Math.floor(rand() * 40) }, (_, k) => `line ${k % 7} ${Math.floor(rand() * 3)}\n`);
      const b = a.flatMap((l) => (rand() < 0.1 ? [] : rand() < 0.1 ? [l, `new ${Math.floor(rand() * 5)}\n`] : [l]));
      const hunks = unifiedHunks(a, b, diffLines(a, b)!);
      await Bun.write(join(dir, "f"), a.join(""));
      await Bun.write(join(dir, "p.diff"), `--- a/f\n+++ b/f\n${hunks}`);
      const r = Bun.spawnSync(["git", "apply", "--unidiff-zero", "p.diff"], { cwd: dir });
      expect(r.stderr.toString()).toBe("");
      expect(await Bun.file(join(dir, "f")).text()).toBe(b.join(""));
    }
  });

  test("splitLines keeps newlines; a missing final newline is marked", () => {
    expect(splitLines("a\nb")).toEqual(["a\n", "b"]);
    expect(splitLines("")).toEqual([]);
    const a = splitLines("x\ny\n");
    const b = splitLines("x\nz");
    expect(unifiedHunks(a, b, diffLines(a, b)!)).toBe("@@ -1,2 +1,2 @@\n x\n-y\n+z\n\\ No newline at end of file\n");
  });

  test("over the edit budget: null (the file counts as rewritten)", () => {
    const a = Array.from({ length: 300 }, (_, i) => `a${i}\n`);
    const b = Array.from({ length: 300 }, (_, i) => `b${i}\n`);
    expect(diffLines(a, b, 100)).toBeNull();
    expect(countEdits(diffLines(a, b)!)).toEqual({ additions: 300, deletions: 300 });
  });
});
