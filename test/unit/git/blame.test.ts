// The blame engine (src/git/blame.ts) against `git blame --porcelain` on real repositories made
// with the git CLI: linear edits, merges (clean and with a resolution), a file deleted and added
// again, CRLF lines, no trailing newline, an empty file, a rename (not followed: git's older
// commits become the renaming commit), random histories; and its hostile bounds.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type BlameLimits, type BlameOutcome, blameFile, type KnownBlame, keptRuns, linesOf } from "../../../src/git/blame.ts";
import { BlameCache } from "../../../src/services/git/blame.ts";
import { BLAME_STORED_MAX_BYTES, BLAME_STORED_MAX_INFLATED, blameKey, decodeBlame, encodeBlame } from "../../../src/services/git/blame-store.ts";
import { BLAMES, kindOf, repoIdOf } from "../../../src/services/ops/object-kinds.ts";
import { BufferText, linesFromDelta } from "../../../src/git/blame-lines.ts";
import { applyDelta, createDelta, parseDelta } from "../../../src/git/delta.ts";
import type { ObjectReader } from "../../../src/git/types.ts";
import { git, openRepoPacks, rng } from "./repo-fixture.ts";

const LIMITS: BlameLimits = { maxBytes: 1024 * 1024, maxCommits: 100_000, maxReadBytes: 512 * 1024 * 1024, maxEdits: 2000 };
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** A repository with a work tree; each commit one second after the last. */
class Work {
  private clock = 1_600_000_000;
  constructor(readonly dir: string) {}
  static async make(): Promise<Work> {
    const dir = await mkdtemp(join(tmpdir(), "svc-blame-"));
    dirs.push(dir);
    git(dir, ["init", "-q", "-b", "main"]);
    return new Work(dir);
  }
  run(args: string[]): string {
    const when = `${this.clock} +0000`;
    return git(this.dir, args, undefined, { GIT_AUTHOR_DATE: when, GIT_COMMITTER_DATE: when });
  }
  async write(path: string, text: string): Promise<void> {
    await writeFile(join(this.dir, path), text);
  }
  async commit(message: string, files: Record<string, string | null> = {}): Promise<string> {
    for (const [path, text] of Object.entries(files)) {
      if (text === null) this.run(["rm", "-q", path]);
      else {
        await this.write(path, text);
        this.run(["add", path]);
      }
    }
    this.clock++;
    this.run(["commit", "-q", "--allow-empty", "-m", message]);
    return this.run(["rev-parse", "HEAD"]);
  }
  /** Per line of `path` at `rev`, the commit git blames. */
  gitBlame(rev: string, path: string): string[] {
    const out = this.run(["blame", "--porcelain", rev, "--", path]);
    const shas: string[] = [];
    for (const line of out.split("\n")) {
      const m = /^([0-9a-f]{40}) \d+ (\d+)/.exec(line);
      if (m) shas[Number(m[2]) - 1] = m[1]!;
    }
    return shas;
  }
  /** Per line, the commit our engine blames. */
  async ours(
    rev: string,
    path: string,
    limits = LIMITS,
    known?: Map<string, KnownBlame>,
    opts: { repack?: string[]; plainReader?: boolean } = {},
  ): Promise<{ shas: string[]; outcome: BlameOutcome }> {
    this.run(["repack", "-a", "-d", "-q", ...(opts.repack ?? [])]);
    const { set, close } = await openRepoPacks(join(this.dir, ".git"));
    try {
      const lookup = known && ((c: string) => known.get(c) ?? null);
      // A plain ObjectReader (not a PackSet): every version read whole (blame-versions.ts ReadVersions).
      const reader: ObjectReader = opts.plainReader ? { has: (o) => set.has(o), read: (o) => set.read(o), readHeader: (o) => set.readHeader(o) } : set;
      const outcome = await blameFile(reader, this.run(["rev-parse", rev]), path.split("/"), limits, undefined, lookup);
      const shas: string[] = [];
      if (outcome.kind === "ok") for (const r of outcome.ranges) for (let i = 0; i < r.count; i++) shas[r.start - 1 + i] = r.commit;
      return { shas, outcome };
    } finally {
      await close();
    }
  }
  async expectSame(rev: string, path: string): Promise<void> {
    const { shas } = await this.ours(rev, path);
    expect(shas).toEqual(this.gitBlame(rev, path));
  }
}

const lines = (...xs: string[]) => xs.map((x) => `${x}\n`).join("");

describe("blame matches git blame --porcelain", () => {
  test("linear edits, inserts and deletes", async () => {
    const w = await Work.make();
    await w.commit("one", { "f.txt": lines("a", "b", "c", "d", "e") });
    await w.commit("two", { "f.txt": lines("a", "B", "c", "d", "e", "f") });
    await w.commit("three", { "f.txt": lines("zero", "a", "B", "d", "e", "f", "g") });
    await w.commit("other file", { "g.txt": "x\n" });
    await w.commit("four", { "f.txt": lines("zero", "a", "B", "d", "E", "f", "g") });
    await w.expectSame("HEAD", "f.txt");
    await w.expectSame("HEAD~2", "f.txt");
  });

  test("merges: a clean merge, a merge that keeps one side, a resolution", async () => {
    const w = await Work.make();
    const base = lines("1", "2", "3", "4", "5", "6", "7", "8", "9", "10");
    await w.commit("base", { "m.txt": base, "k.txt": "k\n" });
    w.run(["checkout", "-q", "-b", "topic"]);
    await w.commit("topic edits the top", { "m.txt": lines("1", "two", "3", "4", "5", "6", "7", "8", "9", "10") });
    await w.commit("topic edits k", { "k.txt": "k topic\n" });
    w.run(["checkout", "-q", "main"]);
    await w.commit("main edits the bottom", { "m.txt": lines("1", "2", "3", "4", "5", "6", "7", "8", "nine", "10") });
    w.run(["merge", "-q", "--no-ff", "-m", "merge topic", "topic"]);
    await w.expectSame("HEAD", "m.txt");
    await w.expectSame("HEAD", "k.txt");
    // A resolution: both sides change line 5, the merge writes its own.
    w.run(["checkout", "-q", "-b", "left"]);
    await w.commit("left 5", { "m.txt": lines("1", "two", "3", "4", "five-left", "6", "7", "8", "nine", "10") });
    w.run(["checkout", "-q", "main"]);
    await w.commit("right 5", { "m.txt": lines("1", "two", "3", "4", "five-right", "6", "7", "8", "nine", "10") });
    w.run(["merge", "-q", "-s", "ours", "--no-commit", "left"]);
    await w.write("m.txt", lines("1", "two", "3", "4", "five-merged", "6", "7", "8", "nine", "10", "eleven-left"));
    w.run(["add", "m.txt"]);
    await w.commit("merge left with a resolution");
    await w.expectSame("HEAD", "m.txt");
    // An octopus merge.
    for (const b of ["o1", "o2"]) {
      w.run(["checkout", "-q", "-b", b, "main"]);
      await w.commit(`${b} file`, { [`${b}.txt`]: `${b}\n` });
      await w.commit(`${b} m`, { "m.txt": `${w.run(["show", "HEAD:m.txt"])}\n${b}\n` });
    }
    w.run(["checkout", "-q", "main"]);
    w.run(["merge", "-q", "-s", "ours", "--no-commit", "o1", "o2"]);
    await w.write("m.txt", `${w.run(["show", "o1:m.txt"])}\no2\n`);
    w.run(["add", "m.txt"]);
    await w.commit("octopus");
    await w.expectSame("HEAD", "m.txt");
  });

  test("a file deleted and added again", async () => {
    const w = await Work.make();
    await w.commit("add", { "d.txt": lines("a", "b", "c"), "other.txt": "o\n" });
    await w.commit("edit", { "d.txt": lines("a", "bee", "c") });
    await w.commit("delete", { "d.txt": null });
    await w.commit("unrelated", { "other.txt": "o2\n" });
    await w.commit("add again", { "d.txt": lines("a", "bee", "c", "d") });
    await w.commit("edit again", { "d.txt": lines("A", "bee", "c", "d") });
    await w.expectSame("HEAD", "d.txt");
  });

  test("CRLF lines, no trailing newline, an empty file", async () => {
    const w = await Work.make();
    w.run(["config", "core.autocrlf", "false"]);
    await w.commit("crlf", { "c.txt": "one\r\ntwo\r\nthree\r\n", "n.txt": "a\nb\nc", "e.txt": "" });
    await w.commit("crlf edit", { "c.txt": "one\r\ntwo\nthree\r\nfour\r\n", "n.txt": "a\nb\nc\nd" });
    await w.commit("newline at the end", { "n.txt": "a\nb\nc\nd\n" });
    await w.commit("still empty", { "e.txt": "", "x.txt": "x" });
    await w.expectSame("HEAD", "c.txt");
    await w.expectSame("HEAD", "n.txt");
    await w.expectSame("HEAD~1", "n.txt");
    const empty = await w.ours("HEAD", "e.txt");
    expect(empty.outcome).toEqual({ kind: "ok", lines: 0, ranges: [], commits: {}, truncated: false, walked: 0 });
    expect(w.gitBlame("HEAD", "e.txt")).toEqual([]);
  });

  test("files in directories, and a rename is not followed", async () => {
    const w = await Work.make();
    await w.run(["init", "-q"]);
    await Bun.write(join(w.dir, "src/deep/a.txt"), lines("a", "b", "c", "d"));
    w.run(["add", "."]);
    await w.commit("add deep");
    await w.commit("edit deep", { "src/deep/a.txt": lines("a", "B", "c", "d") });
    await w.expectSame("HEAD", "src/deep/a.txt");
    w.run(["mv", "src/deep/a.txt", "src/b.txt"]);
    const renamed = await w.commit("rename");
    await w.commit("edit renamed", { "src/b.txt": lines("a", "B", "c", "D") });
    const theirs = w.gitBlame("HEAD", "src/b.txt");
    const after = new Set(w.run(["rev-list", "HEAD", `^${renamed}`]).split("\n"));
    const { shas } = await w.ours("HEAD", "src/b.txt");
    // git follows the rename; we blame what came from before it on the renaming commit.
    expect(shas).toEqual(theirs.map((s) => (after.has(s) ? s : renamed)));
    expect(theirs.some((s) => !after.has(s))).toBe(true);
  });

  test("random histories with branches and merges", async () => {
    for (const seed of [1, 2, 3]) {
      const rand = rng(seed);
      const w = await Work.make();
      let text = Array.from({ length: 60 }, (_, i) => `line ${i} ${Math.floor(rand() * 1e6)}`);
      const put = () => ({ "r.txt": lines(...text) });
      await w.commit("start", put());
      const mutate = (t: string[], n: number) => {
        const out = [...t];
        for (let i = 0; i < n; i++) {
          const at = Math.floor(rand() * (out.length + 1));
          const r = rand();
          if (r < 0.4) out.splice(at, 1, `changed ${Math.floor(rand() * 1e9)}`);
          else if (r < 0.7) out.splice(at, 0, `inserted ${Math.floor(rand() * 1e9)}`);
          else out.splice(at, 1);
        }
        return out;
      };
      for (let step = 0; step < 30; step++) {
        if (step % 7 === 3) {
          // A side branch edits, main edits elsewhere or not, then a merge that takes the side's text.
          w.run(["checkout", "-q", "-b", `side${step}`]);
          const side = mutate(text, 2);
          await w.commit(`side ${step}`, { "r.txt": lines(...side) });
          w.run(["checkout", "-q", "main"]);
          await w.commit(`main ${step}`, { "other.txt": `${step}\n` });
          w.run(["merge", "-q", "-s", "ours", "--no-commit", `side${step}`]);
          text = rand() < 0.5 ? side : mutate(side, 1);
          await w.write("r.txt", lines(...text));
          w.run(["add", "r.txt"]);
          await w.commit(`merge ${step}`);
        } else {
          text = mutate(text, 1 + Math.floor(rand() * 3));
          await w.commit(`edit ${step}`, put());
        }
      }
      await w.expectSame("HEAD", "r.txt");
    }
  });

  test("versions read through deep delta chains, and read whole by a plain reader, blame the same (random long history)", async () => {
    const rand = rng(11);
    const w = await Work.make();
    let text = Array.from({ length: 200 }, (_, i) => `line ${i} ${Math.floor(rand() * 1e6)}`);
    await w.commit("start", { "f.txt": lines(...text) });
    for (let step = 0; step < 120; step++) {
      const out = [...text];
      for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) {
        const at = Math.floor(rand() * (out.length + 1));
        const r = rand();
        // Some edits cut a line in the middle (the delta's copy ends inside a line).
        if (r < 0.3) out.splice(at, 1, `${(out[at] ?? "").slice(0, 4)}changed ${Math.floor(rand() * 1e9)}`);
        else if (r < 0.6) out.splice(at, 0, `inserted ${Math.floor(rand() * 1e9)}`);
        else out.splice(at, 1);
      }
      text = out;
      await w.commit(`edit ${step}`, { "f.txt": lines(...text) + (step % 10 === 9 ? "no newline at the end" : "") });
    }
    const want = w.gitBlame("HEAD", "f.txt");
    // Chains as deep as git makes them on request (past the reader's depth of versions kept as deltas).
    const deep = await w.ours("HEAD", "f.txt", LIMITS, undefined, { repack: ["-f", "--depth=250", "--window=250"] });
    expect(deep.shas).toEqual(want);
    const plain = await w.ours("HEAD", "f.txt", LIMITS, undefined, { plainReader: true });
    expect(plain.shas).toEqual(want);
    expect(plain.outcome).toEqual(deep.outcome);
  });

  test("incremental: blames reused from ancestors equal blames from scratch and git's (random histories)", async () => {
    for (const seed of [4, 5]) {
      const rand = rng(seed);
      const w = await Work.make();
      let text = Array.from({ length: 40 }, (_, i) => `line ${i} ${Math.floor(rand() * 1e6)}`);
      const mutate = (t: string[], n: number) => {
        const out = [...t];
        for (let i = 0; i < n; i++) {
          const at = Math.floor(rand() * (out.length + 1));
          const r = rand();
          if (r < 0.4) out.splice(at, 1, `changed ${Math.floor(rand() * 1e9)}`);
          else if (r < 0.7) out.splice(at, 0, `inserted ${Math.floor(rand() * 1e9)}`);
          else out.splice(at, 1);
        }
        return out;
      };
      const commits = [await w.commit("start", { "r.txt": lines(...text) })];
      for (let step = 0; step < 24; step++) {
        if (step % 5 === 2) {
          w.run(["checkout", "-q", "-b", `side${step}`]);
          const side = mutate(text, 2);
          commits.push(await w.commit(`side ${step}`, { "r.txt": lines(...side) }));
          w.run(["checkout", "-q", "main"]);
          text = mutate(text, 1);
          commits.push(await w.commit(`main ${step}`, { "r.txt": lines(...text) }));
          w.run(["merge", "-q", "-s", "ours", "--no-commit", `side${step}`]);
          // The resolution keeps one side's text, edited or not.
          text = rand() < 0.5 ? side : mutate(rand() < 0.5 ? text : side, 1);
          await w.write("r.txt", lines(...text));
          w.run(["add", "r.txt"]);
          commits.push(await w.commit(`merge ${step}`));
        } else if (step % 6 === 5) {
          commits.push(await w.commit(`unrelated ${step}`, { [`o${step}.txt`]: "x\n" }));
        } else {
          text = mutate(text, 1 + Math.floor(rand() * 3));
          commits.push(await w.commit(`edit ${step}`, { "r.txt": lines(...text) }));
        }
      }
      // As pushes would: each commit blamed with what is known of the ones before (a random half kept).
      const known = new Map<string, KnownBlame>();
      let reused = 0;
      for (const c of commits) {
        const inc = await w.ours(c, "r.txt", LIMITS, known);
        const scratch = await w.ours(c, "r.txt");
        expect(inc.shas).toEqual(scratch.shas);
        expect(inc.shas).toEqual(w.gitBlame(c, "r.txt"));
        if (inc.outcome.kind !== "ok" || scratch.outcome.kind !== "ok") throw new Error("not ok");
        expect(inc.outcome.commits).toEqual(scratch.outcome.commits);
        reused += inc.outcome.reused ?? 0;
        if (rand() < 0.5) known.set(c, inc.outcome);
      }
      expect(reused).toBeGreaterThan(0);
    }
  });

  test("incremental: a known blame that does not fit the lines handed to it is not used", async () => {
    const w = await Work.make();
    const a = await w.commit("a", { "f.txt": lines("1", "2", "3") });
    const b = await w.commit("b", { "f.txt": lines("1", "2", "3", "4") });
    const bogus: KnownBlame = { lines: 1, ranges: [{ start: 1, count: 1, commit: b }], commits: {} };
    const { shas, outcome } = await w.ours(b, "f.txt", LIMITS, new Map([[a, bogus]]));
    expect(shas).toEqual([a, a, a, b]);
    expect(outcome.kind === "ok" && outcome.reused).toBeFalsy();
  });
});

describe("bounds", () => {
  test("binary, too large, a directory, missing", async () => {
    const w = await Work.make();
    await Bun.write(join(w.dir, "dir/x.txt"), "x\n");
    await w.commit("files", { "bin.dat": "a\0b\n", "big.txt": "x".repeat(2000) });
    w.run(["add", "."]);
    await w.commit("dir");
    expect((await w.ours("HEAD", "bin.dat")).outcome).toEqual({ kind: "binary" });
    expect((await w.ours("HEAD", "big.txt", { ...LIMITS, maxBytes: 1000 })).outcome).toEqual({ kind: "too_large", size: 2000 });
    expect((await w.ours("HEAD", "dir")).outcome).toEqual({ kind: "not_file" });
    expect((await w.ours("HEAD", "nope.txt")).outcome).toEqual({ kind: "missing" });
    expect((await w.ours("HEAD", "dir/x.txt/y")).outcome).toEqual({ kind: "missing" });
  });

  test("a cap on commits blames the pending lines on the commit they reached", async () => {
    const w = await Work.make();
    const shas: string[] = [];
    let text = ["a", "b", "c", "d", "e"];
    shas.push(await w.commit("c0", { "f.txt": lines(...text) }));
    for (let i = 0; i < 5; i++) {
      text = [...text];
      text[i] = `${text[i]}${i}`;
      shas.push(await w.commit(`c${i + 1}`, { "f.txt": lines(...text) }));
    }
    const full = await w.ours("HEAD", "f.txt");
    expect(full.shas).toEqual(shas.slice(1));
    expect(full.outcome.kind === "ok" && full.outcome.truncated).toBe(false);
    const cut = await w.ours("HEAD", "f.txt", { ...LIMITS, maxCommits: 2 });
    // Taken: c5 (line 5), c4 (line 4); lines 1-3 had reached c3 and are blamed there.
    expect(cut.shas).toEqual([shas[3]!, shas[3]!, shas[3]!, shas[4]!, shas[5]!]);
    expect(cut.outcome.kind === "ok" && cut.outcome.truncated).toBe(true);
    const read = await w.ours("HEAD", "f.txt", { ...LIMITS, maxReadBytes: 30 });
    expect(read.outcome.kind === "ok" && read.outcome.truncated).toBe(true);
  });
});

describe("line keys", () => {
  const enc = new TextEncoder();
  test("keys found through a nearby version equal keys hashed afresh (random edits, no final newline, CRLF, empty lines)", () => {
    const rand = rng(9);
    const pool = ["", "}", "\r", "a", "return x;", "  if (y) {", "x".repeat(300), "ü€𝄞"];
    const line = () => (rand() < 0.5 ? pool[Math.floor(rand() * pool.length)]! : `l${Math.floor(rand() * 1e6)}`);
    for (let round = 0; round < 300; round++) {
      const base = Array.from({ length: Math.floor(rand() * 80) }, line);
      const edited = [...base];
      for (let k = Math.floor(rand() * 6); k > 0; k--) {
        const at = Math.floor(rand() * (edited.length + 1));
        const r = rand();
        if (r < 0.4) edited.splice(at, 1, line());
        else if (r < 0.7) edited.splice(at, 0, line());
        else edited.splice(at, 1);
      }
      const text = (ls: string[]) => ls.join("\n") + (rand() < 0.7 ? "\n" : "");
      const near = linesOf(enc.encode(text(base)));
      const data = enc.encode(text(edited));
      const direct = linesOf(data);
      const derived = linesOf(data, near);
      expect({ round, starts: [...derived.starts], keys: [...derived.keys] }).toEqual({ round, starts: [...direct.starts], keys: [...direct.keys] });
    }
  });

  test("keys derived through a delta's copies equal keys hashed afresh (random edits, lines cut by copies, no final newline, CRLF)", () => {
    const rand = rng(21);
    const pool = ["", "}", "\r", "a", "return x;", "  if (y) {", "x".repeat(300), "ü€𝄞"];
    const line = () => (rand() < 0.5 ? pool[Math.floor(rand() * pool.length)]! : `l${Math.floor(rand() * 1e6)}`);
    for (let round = 0; round < 300; round++) {
      const base = Array.from({ length: Math.floor(rand() * 80) }, line);
      const edited = [...base];
      for (let k = Math.floor(rand() * 6); k > 0; k--) {
        const at = Math.floor(rand() * (edited.length + 1));
        const r = rand();
        if (r < 0.3) edited.splice(at, 1, line());
        else if (r < 0.5) edited.splice(at, 1, `${(edited[at] ?? "").slice(0, 2)}${line()}`);
        else if (r < 0.75) edited.splice(at, 0, line());
        else edited.splice(at, 1);
      }
      const text = (ls: string[]) => ls.join("\n") + (rand() < 0.7 ? "\n" : "");
      const baseBytes = enc.encode(text(base));
      const data = enc.encode(text(edited));
      const delta = createDelta(baseBytes, data);
      const { resultSize, ops } = parseDelta(delta, baseBytes.length);
      expect(resultSize).toBe(data.length);
      const derived = linesFromDelta(linesOf(baseBytes), ops, new BufferText(data));
      const direct = linesOf(data);
      expect({ round, starts: [...derived.starts], keys: [...derived.keys] }).toEqual({ round, starts: [...direct.starts], keys: [...direct.keys] });
    }
  });

  test("parseDelta accepts exactly what applyDelta accepts, and its instructions rebuild the result (random and corrupted deltas)", () => {
    const rand = rng(31);
    for (let round = 0; round < 500; round++) {
      const base = enc.encode(Array.from({ length: Math.floor(rand() * 40) }, () => `w${Math.floor(rand() * 50)}`).join(" "));
      const target = enc.encode(Array.from({ length: Math.floor(rand() * 40) }, () => `w${Math.floor(rand() * 50)}`).join(" "));
      const delta = createDelta(base, target);
      // Corrupt one byte in some rounds (sizes, opcodes, offsets, literal lengths).
      if (round % 2) delta[Math.floor(rand() * delta.length)] = Math.floor(rand() * 256);
      let applied: Uint8Array | string;
      let parsed: Uint8Array | string;
      try {
        applied = applyDelta(base, delta);
      } catch (e) {
        applied = `error ${(e as Error).constructor.name}`;
      }
      try {
        const { resultSize, ops } = parseDelta(delta, base.length);
        const out = new Uint8Array(resultSize);
        for (let i = 0; i < ops.length; i += 3) {
          const [at, size, source] = [ops[i]!, ops[i + 1]!, ops[i + 2]!];
          out.set(source >= 0 ? base.subarray(source, source + size) : delta.subarray(-1 - source, -1 - source + size), at);
        }
        parsed = out;
      } catch (e) {
        parsed = `error ${(e as Error).constructor.name}`;
      }
      expect({ round, parsed }).toEqual({ round, parsed: applied });
    }
  });

  test("equal lines have equal keys; a line with and without its newline differ", () => {
    const a = linesOf(enc.encode("x\ny\nx\ny"));
    expect(a.keys[0]).toBe(a.keys[2]!);
    expect(a.keys[1]).not.toBe(a.keys[3]!);
    expect([...a.starts]).toEqual([0, 2, 4, 6, 7]);
    // Kept: line 0 of b at line 0 of a, line 2 at line 2 (as (line in b, line in a, count) runs).
    expect(keptRuns(linesOf(enc.encode("a\nb\nc\n")).keys, linesOf(enc.encode("a\nX\nc\nd\n")).keys, 100)).toEqual(new Int32Array([0, 0, 1, 2, 2, 1]));
  });
});

describe("the node's blame cache", () => {
  test("one run for concurrent requests, remembered after; a failure is not remembered", async () => {
    const cache = new BlameCache();
    let runs = 0;
    const ok: BlameOutcome = { kind: "ok", lines: 1, ranges: [{ start: 1, count: 1, commit: "a".repeat(40) }], commits: {}, truncated: false, walked: 1 };
    const gate = Promise.withResolvers<void>();
    const make = async () => {
      runs++;
      await gate.promise;
      return ok;
    };
    const both = Promise.all([cache.get("r:c:p", make), cache.get("r:c:p", make)]);
    gate.resolve();
    const [x, y] = await both;
    expect([x, y, runs]).toEqual([ok, ok, 1]);
    expect(await cache.get("r:c:p", make)).toEqual(ok);
    expect(runs).toBe(1);
    await expect(cache.get("r:c:q", () => Promise.reject(new Error("time limit")))).rejects.toThrow("time limit");
    expect(await cache.get("r:c:q", make)).toEqual(ok);
    expect(runs).toBe(2);
    cache.clear();
    await cache.get("r:c:p", make);
    expect(runs).toBe(3);
  });
});

describe("stored blames (services/git/blame-store.ts)", () => {
  const sha = (c: string) => c.repeat(40);
  const info = (s: string) => ({ sha: s, author: { name: "A", email: "a@x" }, summary: "s", authored_at: 1 });
  const outcome: BlameOutcome = {
    kind: "ok",
    lines: 5,
    ranges: [
      { start: 1, count: 2, commit: sha("a") },
      { start: 3, count: 1, commit: sha("b") },
      { start: 4, count: 2, commit: sha("a") },
    ],
    commits: { [sha("a")]: info(sha("a")), [sha("b")]: info(sha("b")) },
    truncated: false,
    walked: 3,
  };

  test("round trip; truncated and empty outcomes are not stored; the key is of the blame kind", () => {
    const bytes = encodeBlame(["d", "f.txt"], outcome)!;
    expect(decodeBlame(bytes, ["d", "f.txt"])).toEqual({ lines: 5, ranges: outcome.ranges, commits: outcome.commits });
    expect(encodeBlame(["f"], { ...outcome, truncated: true })).toBeNull();
    expect(encodeBlame(["f"], { kind: "binary" })).toBeNull();
    const key = blameKey("repo_1", sha("c"), ["d", "f.txt"]);
    expect(kindOf(key)).toBe(BLAMES);
    expect(repoIdOf(key)).toBe("repo_1");
  });

  test("anything else reads as not stored: another path, corrupt bytes, ranges that do not tile, bad ids, a bomb", () => {
    const json = (v: unknown) => gzipSync(JSON.stringify(v));
    const good = { path: "f", lines: 2, ranges: [[1, 2, 0]], commits: [info(sha("a"))] };
    expect(decodeBlame(json(good), ["f"])).not.toBeNull();
    expect(decodeBlame(json(good), ["g"])).toBeNull();
    expect(decodeBlame(new TextEncoder().encode("nope"), ["f"])).toBeNull();
    expect(decodeBlame(json({ ...good, ranges: [[1, 1, 0]] }), ["f"])).toBeNull();
    expect(decodeBlame(json({ ...good, ranges: [[2, 2, 0]] }), ["f"])).toBeNull();
    expect(decodeBlame(json({ ...good, ranges: [[1, 2, 1]] }), ["f"])).toBeNull();
    expect(decodeBlame(json({ ...good, commits: [info("zz")] }), ["f"])).toBeNull();
    expect(decodeBlame(json(null), ["f"])).toBeNull();
    expect(decodeBlame(gzipSync(new Uint8Array(BLAME_STORED_MAX_INFLATED + 1)), ["f"])).toBeNull();
    expect(decodeBlame(new Uint8Array(BLAME_STORED_MAX_BYTES + 1), ["f"])).toBeNull();
  });
});
