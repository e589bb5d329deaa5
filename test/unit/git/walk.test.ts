import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PackSet } from "../../../src/git/pack-set.ts";
import { INFINITE_DEPTH } from "../../../src/git/shallow.ts";
import { type CollectRequest, collectObjects, firstUnreachable, isAncestor } from "../../../src/git/walk.ts";
import { BASE_TIME, git, gitLines, makeFixtureRepo, openRepoPacks, removeDir } from "./repo-fixture.ts";

let dir: string;
let set: PackSet;
let close: () => Promise<void>;
const temps: string[] = [];

beforeAll(async () => {
  dir = await makeFixtureRepo(2200);
  ({ set, close } = await openRepoPacks(dir));
});
afterAll(async () => {
  await close();
  await Promise.all([dir, ...temps].map(removeDir));
});

const rev = (r: string): string => git(dir, ["rev-parse", r]);
const revListObjects = (cwd: string, args: string[]): string[] => gitLines(cwd, ["rev-list", "--objects", ...args]).map((l) => l.slice(0, 40));
const sorted = (a: Iterable<string>): string[] => [...a].sort();

async function collect(req: Partial<CollectRequest>) {
  return collectObjects(set, { wants: [], haves: [], shallow: [], ...req });
}

describe("collectObjects matches git rev-list --objects", () => {
  const cases: [string, string[], string[]][] = [
    ["full history of every branch", ["main", "side", "old"], []],
    ["a linear increment", ["main"], ["main~100"]],
    ["across merges and skewed dates", ["main", "side"], ["side~5", "main~300", "old"]],
    ["nothing new", ["old"], ["main"]],
    ["annotated, nested, tree and blob tags", ["v1000", "nested", "treetag", "blobtag"], ["v750"]],
  ];
  for (const [name, wants, haves] of cases) {
    test(name, async () => {
      const result = await collect({ wants: wants.map(rev), haves: haves.map(rev) });
      const expected = revListObjects(dir, [...wants, "--not", ...haves]);
      expect(sorted(result.oids)).toEqual(sorted(expected));
      expect(new Set(result.oids).size).toBe(result.oids.length);
    });
  }

  test("objects come as tags, commits, trees, blobs", async () => {
    const result = await collect({ wants: [rev("v2000")], haves: [rev("main~20")] });
    const types = await Promise.all(result.oids.map(async (o) => (await set.readHeader(o))!.type));
    const rank = { tag: 0, commit: 1, tree: 2, blob: 3 };
    const ranks = types.map((t) => rank[t]);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(result.commitCount).toBe(types.filter((t) => t === "commit").length);
  });

  for (const [spec, filter] of [
    ["blob:none", { kind: "blob:none" }],
    ["blob:limit=1000", { kind: "blob:limit", bytes: 1000 }],
    ["blob:limit=24", { kind: "blob:limit", bytes: 24 }],
  ] as const) {
    test(`filter ${spec}`, async () => {
      const result = await collect({ wants: [rev("main")], haves: [rev("main~60")], filter });
      const expected = revListObjects(dir, [`--filter=${spec}`, "main", "--not", "main~60"]);
      expect(sorted(result.oids)).toEqual(sorted(expected));
    });
  }

  test("explicitly wanted blobs are sent despite the filter", async () => {
    const blob = rev("main:d1/s1/f1.txt");
    const result = await collect({ wants: [blob], filter: { kind: "blob:none" } });
    expect(result.oids).toEqual([blob]);
  });

  test("2,200 commits: a full walk stays fast", async () => {
    const started = performance.now();
    const result = await collect({ wants: [rev("main"), rev("side")] });
    expect(result.commitCount).toBe(gitLines(dir, ["rev-list", "main", "side"]).length);
    // Not a benchmark: a guard against accidentally quadratic walks.
    expect(performance.now() - started).toBeLessThan(15_000);
  });
});

describe("shallow requests match a real git clone/fetch", () => {
  async function cloneShallow(args: string[]): Promise<string> {
    const target = await mkdtemp(join(tmpdir(), "svc-walk-clone-"));
    temps.push(target);
    git(tmpdir(), ["clone", "-q", "--bare", "--single-branch", "--branch", "main", ...args, `file://${dir}`, target]);
    return target;
  }
  const shallowFile = (repo: string): string[] =>
    existsSync(join(repo, "shallow")) ? readFileSync(join(repo, "shallow"), "utf8").trim().split("\n").sort() : [];
  const mainObjects = (repo: string): string[] => sorted(revListObjects(repo, ["refs/heads/main"]));

  const clones: [string, string[], Partial<CollectRequest>][] = [
    ["--depth 1", ["--depth", "1"], { depth: 1 }],
    ["--depth 7 (through merges)", ["--depth", "7"], { depth: 7 }],
    ["--depth 60", ["--depth", "60"], { depth: 60 }],
    ["--shallow-since", [`--shallow-since=${BASE_TIME + 2100 * 3600}`], { deepenSince: BASE_TIME + 2100 * 3600 }],
    ["--shallow-exclude", ["--shallow-exclude=old"], { deepenNot: ["old"] }],
  ];
  for (const [name, args, req] of clones) {
    test(`clone ${name}`, async () => {
      const clone = await cloneShallow(args);
      const result = await collect({
        ...req,
        wants: [rev("main")],
        deepenNot: req.deepenNot?.map(rev),
      });
      expect(sorted(result.shallow)).toEqual(shallowFile(clone));
      expect(result.unshallow).toEqual([]);
      expect(sorted(result.oids)).toEqual(mainObjects(clone));
    });
  }

  const fetches: [string, string[], Partial<CollectRequest>][] = [
    ["--deepen=5", ["--deepen=5"], { depth: 5, deepenRelative: true }],
    ["--depth=12", ["--depth=12"], { depth: 12 }],
    ["--unshallow", ["--unshallow"], { depth: INFINITE_DEPTH }],
    ["--shallow-since", [`--shallow-since=${BASE_TIME + 2000 * 3600}`], { deepenSince: BASE_TIME + 2000 * 3600 }],
  ];
  for (const [name, args, req] of fetches) {
    test(`fetch ${name} from a --depth 3 clone`, async () => {
      const clone = await cloneShallow(["--depth", "3"]);
      const before = shallowFile(clone);
      const had = new Set(mainObjects(clone));
      const result = await collect({
        ...req,
        wants: [rev("main")],
        haves: [rev("main")],
        shallow: before,
        tips: [rev("main"), rev("side"), rev("old")],
      });
      git(clone, ["fetch", "-q", ...args, "origin"]);
      const after = new Set(before.filter((s) => !result.unshallow.includes(s)));
      for (const s of result.shallow) after.add(s);
      expect(sorted(after)).toEqual(shallowFile(clone));
      const union = new Set([...had, ...result.oids]);
      expect(mainObjects(clone).filter((o) => !union.has(o))).toEqual([]);
    });
  }

  test("deepen and deepen-since together are refused", async () => {
    await expect(collect({ wants: [rev("main")], depth: 2, deepenSince: BASE_TIME })).rejects.toThrow("cannot be used together");
  });
});

describe("reachability helpers", () => {
  test("isAncestor", async () => {
    expect(await isAncestor(set, rev("main~30"), rev("main"))).toBe(true);
    expect(await isAncestor(set, rev("main"), rev("main~30"))).toBe(false);
    expect(await isAncestor(set, rev("old"), rev("main"))).toBe(true);
    expect(await isAncestor(set, rev("side"), rev("old"))).toBe(false);
    const base = git(dir, ["merge-base", "main", "side"]);
    expect(await isAncestor(set, base, rev("side"))).toBe(true);
  });

  test("isAncestor is exact whatever the committer clocks say", async () => {
    // A child committed ten days "before" its parent, then a grandchild: dates must not prune the walk.
    const skewed = await mkdtemp(join(tmpdir(), "svc-skew-"));
    temps.push(skewed);
    git(skewed, ["init", "-q", "--bare"]);
    const work = await mkdtemp(join(tmpdir(), "svc-skew-work-"));
    temps.push(work);
    git(work, ["init", "-q"]);
    const commitAt = (secs: number, msg: string) => {
      const date = `${secs} +0000`;
      git(work, ["commit", "-q", "--allow-empty", "-m", msg], undefined, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
      return git(work, ["rev-parse", "HEAD"]);
    };
    const parent = commitAt(BASE_TIME, "parent");
    commitAt(BASE_TIME - 10 * 86400, "child from a slow clock");
    for (let i = 0; i < 5; i++) commitAt(BASE_TIME - 10 * 86400 + i + 1, `descendant ${i}`);
    const tip = git(work, ["rev-parse", "HEAD"]);
    git(work, ["push", "-q", skewed, "HEAD:refs/heads/main"]);
    git(skewed, ["repack", "-adq"]);
    const packs = await openRepoPacks(skewed);
    try {
      expect(await isAncestor(packs.set, parent, tip)).toBe(true);
      expect(await isAncestor(packs.set, tip, parent)).toBe(false);
    } finally {
      await packs.close();
    }
  });

  test("firstUnreachable accepts tips, ancestors, and their trees and blobs", async () => {
    const tips = [rev("main"), rev("side"), rev("v1000")];
    const ok = [rev("main~500"), rev("main~500^{tree}"), rev("main~1500:d2/s1/f3.txt"), rev("v1000")];
    expect(await firstUnreachable(set, tips, ok)).toBeNull();
    expect(await firstUnreachable(set, [rev("main~100")], [rev("main")])).toBe(rev("main"));
    expect(await firstUnreachable(set, tips, ["00".repeat(20)])).toBe("00".repeat(20));
    const blobTagged = rev("blobtag^{}");
    expect(await firstUnreachable(set, [rev("old")], [blobTagged, rev("old~3")])).toBeNull();
    expect(await firstUnreachable(set, [rev("old")], [rev("nested")])).toBe(rev("nested"));
  });
});
