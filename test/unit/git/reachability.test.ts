// The reachability index (src/git/reachability.ts) against `git rev-list` on a generated history:
// exact for commits and tags whatever closures it used, record packs trusted only while their
// recorded tips are reached, earlier indexes reused incrementally; and abbreviated-id lookups
// (rev-parse.ts findByPrefix) bounded and limited to what the caller admits.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PackSet } from "../../../src/git/pack-set.ts";
import { ReachIndex } from "../../../src/git/reachability.ts";
import { findByPrefix, isAbbreviatedOid, MAX_PREFIX_CANDIDATES } from "../../../src/git/rev-parse.ts";
import { git, gitLines, makeFixtureRepo, openRepoPacks, removeDir } from "./repo-fixture.ts";

let dir: string;
let set: PackSet;
let close: () => Promise<void>;
let allCommits: string[];
let unreachableCommit: string;
let unreachableTag: string;
let unreachableBlob: string;

beforeAll(async () => {
  dir = await makeFixtureRepo(900, 7);
  // Something stored and reached by no ref: a deleted branch with its own blob, and a deleted tag.
  const blob = git(dir, ["hash-object", "-w", "--stdin"], "a secret nobody may read\n");
  const tree = git(dir, ["mktree"], `100644 blob ${blob}\tsecret.txt\n`);
  unreachableCommit = git(dir, ["commit-tree", "-p", "main~5", "-m", "secret", tree]);
  unreachableBlob = blob;
  git(dir, ["tag", "-a", "-m", "gone", "gone", "main~9"]);
  unreachableTag = git(dir, ["rev-parse", "refs/tags/gone"]);
  git(dir, ["update-ref", "-d", "refs/tags/gone"]);
  git(dir, ["pack-objects", "-q", "objects/pack/pack"], `${unreachableCommit}\n${tree}\n${blob}\n${unreachableTag}\n`);
  ({ set, close } = await openRepoPacks(dir));
  allCommits = gitLines(dir, ["rev-list", "--all"]);
});
afterAll(async () => {
  await close?.();
  await removeDir(dir);
});

const rev = (r: string): string => git(dir, ["rev-parse", r]);
const refTargets = (): string[] => gitLines(dir, ["for-each-ref", "--format=%(objectname)"]);

/** Every commit of the repository (those the refs reach and the secret one) as index answers. */
function answers(index: ReachIndex): Set<string> {
  return new Set([...allCommits, unreachableCommit].filter((c) => index.contains(c)));
}

describe("commits: exactly what git rev-list lists", () => {
  const cases: [string, string[]][] = [
    ["every ref", []],
    ["one old branch", ["old"]],
    ["a side branch and a tag", ["side", "v250"]],
    ["a tag of a tree and one of a blob", ["treetag", "blobtag"]],
  ];
  for (const [name, names] of cases) {
    test(name, async () => {
      const tips = names.length ? names.map(rev) : refTargets();
      const index = await ReachIndex.build(set, tips);
      const expected = new Set(gitLines(dir, ["rev-list", ...(names.length ? names : ["--all"])]));
      expect(answers(index)).toEqual(expected);
      expect(index.contains(unreachableCommit)).toBe(false);
    });
  }

  test("tags: those a tip names or peels through, not a deleted one", async () => {
    const index = await ReachIndex.build(set, refTargets());
    expect(index.contains(rev("refs/tags/nested"))).toBe(true);
    expect(index.contains(rev("refs/tags/v250"))).toBe(true); // reached through the nested tag too
    expect(index.contains(unreachableTag)).toBe(false);
  });
});

describe("closures", () => {
  test("a record pack whose tips are all reached is trusted without a walk", async () => {
    const main = set.packs.find((p) => p.idx.find(rev("main")) >= 0 && p.idx.find(unreachableCommit) < 0)!;
    main.reachTips = refTargets();
    try {
      const index = await ReachIndex.build(set, refTargets());
      expect(index.stats).toMatchObject({ walked: 0, closures: 1, voided: 0 });
      expect(answers(index)).toEqual(new Set(allCommits));
      // A recorded tip that is no longer a tip (the branch deleted): the record is void, the walk exact.
      const fewer = await ReachIndex.build(set, [rev("old")], { previous: [index] });
      expect(fewer.stats.walked).toBeGreaterThan(0);
      expect(fewer.stats.incremental).toBe(false);
      expect(answers(fewer)).toEqual(new Set(gitLines(dir, ["rev-list", "old"])));
    } finally {
      main.reachTips = null;
    }
  });

  test("an earlier index whose tips are still reached is reused: only the new commits are walked", async () => {
    const before = await ReachIndex.build(set, [rev("main~20"), rev("side~3")]);
    const after = await ReachIndex.build(set, [rev("main"), rev("side")], { previous: [before] });
    expect(after.stats.incremental).toBe(true);
    expect(after.stats.walked).toBe(gitLines(dir, ["rev-list", "main", "side", "--not", "main~20", "side~3"]).length);
    expect(answers(after)).toEqual(new Set(gitLines(dir, ["rev-list", "main", "side"])));
    // A tip another tip reaches (a merged branch) is deleted: nothing is walked.
    const merged = await ReachIndex.build(set, [rev("main"), rev("side"), rev("main~30")], { previous: [after] });
    expect(merged.stats.incremental).toBe(true);
    const deleted = await ReachIndex.build(set, [rev("main"), rev("side")], { previous: [merged] });
    expect(deleted.stats).toMatchObject({ walked: 0, incremental: true });
    expect(answers(deleted)).toEqual(new Set(gitLines(dir, ["rev-list", "main", "side"])));
    // Rewound: main~20 is not reached from old, so the earlier index is not trusted.
    const rewound = await ReachIndex.build(set, [rev("old")], { previous: [after, before] });
    expect(answers(rewound)).toEqual(new Set(gitLines(dir, ["rev-list", "old"])));
  });
});

describe("trees and blobs", () => {
  test("firstUnreachable agrees with git rev-list --objects", async () => {
    const index = await ReachIndex.build(set, [rev("old")]);
    const reached = new Set(gitLines(dir, ["rev-list", "--objects", "old"]).map((l) => l.slice(0, 40)));
    const newer = gitLines(dir, ["rev-list", "--objects", "main", "--not", "old"]).map((l) => l.slice(0, 40));
    const types = new Map(
      gitLines(dir, ["cat-file", "--batch-check=%(objectname) %(objecttype)", "--batch-all-objects"]).map((l) => l.split(" ") as [string, string]),
    );
    const outside = newer.find((o) => !reached.has(o) && types.get(o) === "blob")!;
    const inside = [...reached].find((o) => types.get(o) === "blob")!;
    expect(await index.firstUnreachable(set, [inside, rev("old~3")])).toBeNull();
    expect(await index.firstUnreachable(set, [inside, outside])).toBe(outside);
    expect(await index.firstUnreachable(set, [unreachableBlob])).toBe(unreachableBlob);
    expect(await index.firstUnreachable(set, [unreachableCommit])).toBe(unreachableCommit);
    expect(await index.firstUnreachable(set, ["0".repeat(40)])).toBe("0".repeat(40));
  });
});

describe("abbreviated ids", () => {
  test("a prefix finds its object among those admitted, odd or even length", async () => {
    const target = rev("main~4");
    for (const n of [4, 5, 7, 12, 40]) {
      const match = await findByPrefix(set.packs, target.slice(0, n).toUpperCase(), (o) => o === target);
      expect(match).toEqual({ found: [target], tooMany: false });
    }
    // Refused ids count for nothing, ambiguity included.
    expect(await findByPrefix(set.packs, unreachableCommit.slice(0, 7), () => false)).toEqual({ found: [], tooMany: false });
  });

  test("no lookup examines more than MAX_PREFIX_CANDIDATES ids", async () => {
    let asked = 0;
    const match = await findByPrefix(set.packs, "0", () => {
      asked++;
      return false;
    });
    expect(set.multiPackIndex().count / 16).toBeGreaterThan(MAX_PREFIX_CANDIDATES);
    expect(match.tooMany).toBe(true);
    expect(asked).toBe(0);
  });

  test("random prefixes agree with a scan of every id", async () => {
    const midx = set.multiPackIndex();
    const ids = Array.from({ length: midx.count }, (_, i) => midx.oidAt(i));
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 300; i++) {
      const len = 1 + (next() % 6);
      const prefix = Array.from({ length: len }, () => "0123456789abcdef"[next() % 16]).join("");
      const expected = ids.filter((o) => o.startsWith(prefix));
      const match = await findByPrefix(set.packs, prefix, () => true, MAX_PREFIX_CANDIDATES + 1);
      if (expected.length > MAX_PREFIX_CANDIDATES) expect(match.tooMany).toBe(true);
      else expect(match).toEqual({ found: expected, tooMany: false });
    }
  });

  test("isAbbreviatedOid takes a minimum", () => {
    expect(isAbbreviatedOid("abcd")).toBe(true);
    expect(isAbbreviatedOid("abcd", 7)).toBe(false);
    expect(isAbbreviatedOid("abcdef0", 7)).toBe(true);
    expect(isAbbreviatedOid("abcg000")).toBe(false);
    expect(isAbbreviatedOid("a".repeat(41))).toBe(false);
  });
});
