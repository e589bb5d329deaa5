// Partial clone filters (issue 24 item 9): every filter C git serves, compared object for object
// with C git's own upload-pack on the same repository, over protocol v0 and v2.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FilterSpecError, filterRules, parseFilterSpec, parseGitUlong } from "../../../src/git/list-objects.ts";
import { MemoryRepo, serveHttp } from "./harness.ts";
import { git, gitLines, removeDir, runGit } from "./repo-fixture.ts";

let fixture: string;
let repo: MemoryRepo;
let work: string;
let http: { url: string; stop(): void };
let seq = 0;

/**
 * A history where the same blob and the same tree sit at several depths (so a tree:<depth> filter
 * must judge each object at its smallest depth), with small and large blobs, a side branch,
 * annotated tags (one of a tree) and a gitlink.
 */
async function makeLayeredRepo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "svc-filter-fixture-"));
  git(dir, ["init", "-q", "--bare", "-b", "main"]);
  const big = (n: number, seed: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + ((i * seed + (i >> 3)) % 26))).join("");
  const lines: string[] = [];
  const enc = new TextEncoder();
  const data = (s: string) => lines.push(`data ${enc.encode(s).length}`, s);
  let t = 1_600_000_000;
  const commit = (ref: string, mark: number, from: number | null, files: Record<string, string | null>, extra: string[] = []) => {
    lines.push(`commit ${ref}`, `mark :${mark}`, `author A <a@example.com> ${t} +0000`, `committer C <c@example.com> ${t} +0000`);
    t += 60;
    data(`commit ${mark}\n`);
    if (from !== null) lines.push(`from :${from}`);
    for (const [path, content] of Object.entries(files)) {
      if (content === null) lines.push(`D ${path}`);
      else {
        lines.push(`M 100644 inline ${path}`);
        data(content);
      }
    }
    lines.push(...extra);
  };
  commit("refs/heads/main", 1, null, {
    "top.txt": "shared\n",
    "big.bin": big(3000, 7),
    "a/one.txt": "one\n",
    "a/b/two.txt": "two\n",
    "a/b/c/shared.txt": "shared\n",
    "a/b/c/deep.txt": "deep only\n",
  });
  commit(
    "refs/heads/main",
    2,
    1,
    {
      "x/shared.txt": "shared\n",
      "x/deep.txt": "deep only\n",
      "a/b/c/deep.txt": "deep, changed\n",
      "a/b/c/d/e/f.txt": "six levels down\n",
    },
    ["M 160000 0123456789012345678901234567890123456789 vendor/lib"],
  );
  commit("refs/heads/side", 3, 1, { "side.txt": big(1500, 3), "a/b/side.txt": "side\n" });
  commit("refs/heads/main", 4, 2, { "top.txt": null, "a/huge.bin": big(5000, 11), "a/b/c/d/e/f.txt": "six, changed\n" });
  git(dir, ["fast-import", "--quiet"], `${lines.join("\n")}\n`);
  git(dir, ["tag", "-a", "-m", "first", "v1", "main~2"]);
  git(dir, ["tag", "-a", "-m", "a tree", "tree-tag", "main:a/b"]);
  git(dir, ["repack", "-adq"]);
  git(dir, ["config", "uploadpack.allowFilter", "true"]);
  git(dir, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
  return dir;
}

beforeAll(async () => {
  fixture = await makeLayeredRepo();
  repo = await MemoryRepo.create();
  await repo.importFrom(fixture);
  work = await mkdtemp(join(tmpdir(), "svc-upload-filter-"));
  http = serveHttp(repo, work);
});
afterAll(async () => {
  http.stop();
  await repo.close();
  await Promise.all([fixture, work].map(removeDir));
});

const newDir = (name: string): string => join(work, `${name}-${++seq}`);
/** Every object a repository holds (what the pack it received carried). */
const objectsOf = (gitDir: string): string[] => gitLines(gitDir, ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"]).sort();

/** Clone with `filter` from svc and from C git's upload-pack; the object sets (or the failure). */
async function cloneBoth(filter: string, version: number, extra: string[] = []) {
  const ours = newDir("ours");
  const theirs = newDir("theirs");
  const args = (url: string, dir: string) => ["-c", `protocol.version=${version}`, "clone", "-q", "--bare", `--filter=${filter}`, ...extra, url, dir];
  const [a, b] = await Promise.all([runGit(work, args(http.url, ours)), runGit(work, args(`file://${fixture}`, theirs))]);
  return {
    ours: a.exitCode === 0 ? objectsOf(ours) : a.stderr,
    theirs: b.exitCode === 0 ? objectsOf(theirs) : b.stderr,
  };
}

const SINGLE = [
  "blob:none",
  "blob:limit=1000",
  "blob:limit=1k",
  "blob:limit=0",
  "tree:0",
  "tree:1",
  "tree:2",
  "tree:3",
  "tree:4",
  "tree:5",
  "tree:100",
  "object:type=blob",
  "object:type=tree",
  "object:type=commit",
  "object:type=tag",
];

for (const version of [0, 2]) {
  describe(`filters over protocol v${version} match C git's upload-pack`, () => {
    for (const filter of SINGLE) {
      test(filter, async () => {
        const { ours, theirs } = await cloneBoth(filter, version);
        expect(typeof theirs).not.toBe("string");
        expect(ours).toEqual(theirs);
      });
    }

    test("combine: what every part sends (at least what C git sends)", async () => {
      for (const [spec, parts] of [
        ["combine:blob:none+tree:2", ["blob:none", "tree:2"]],
        ["combine:blob:limit=1000+object:type=blob", ["blob:limit=1000", "object:type=blob"]],
        ["combine:tree:3+blob:limit=1000", ["tree:3", "blob:limit=1000"]],
        ["combine:object:type=tree+tree:2", ["object:type=tree", "tree:2"]],
        ["combine:tree:1+combine:blob:none%2Bobject:type=tree", ["tree:1", "blob:none", "object:type=tree"]],
      ] as const) {
        const { ours, theirs } = await cloneBoth(spec, version);
        expect(typeof ours).not.toBe("string");
        expect(typeof theirs).not.toBe("string");
        const each = await Promise.all(parts.map((p) => cloneBoth(p, version)));
        const intersection = (each[0]!.theirs as string[]).filter((oid) => each.every((e) => (e.theirs as string[]).includes(oid)));
        expect({ spec, objects: ours }).toEqual({ spec, objects: intersection });
        expect((theirs as string[]).filter((oid) => !(ours as string[]).includes(oid))).toEqual([]);
      }
    });

    test("a tree wanted by id under tree:0 comes alone; its entries are judged at depth 0", async () => {
      const tree = git(fixture, ["rev-parse", "main:a"]);
      for (const filter of ["tree:0", "tree:1", "blob:none"]) {
        const ours = newDir("ours");
        const theirs = newDir("theirs");
        git(work, ["init", "-q", "--bare", ours]);
        git(work, ["init", "-q", "--bare", theirs]);
        const fetch = (dir: string, url: string) => runGit(dir, ["-c", `protocol.version=${version}`, "fetch", "-q", `--filter=${filter}`, url, tree]);
        const [a, b] = await Promise.all([fetch(ours, http.url), fetch(theirs, `file://${fixture}`)]);
        // Older clients refuse to fetch a non-commit into a non-promisor repository; compare what happened.
        expect(a.exitCode).toBe(b.exitCode);
        if (a.exitCode === 0) expect(objectsOf(ours)).toEqual(objectsOf(theirs));
      }
    });
  });
}

describe("filter refusals", () => {
  test("sparse:oid is refused with C git's message, alone and inside combine", async () => {
    for (const version of [0, 2]) {
      for (const spec of ["sparse:oid=main:.sparse", "combine:blob:none+sparse:oid=abc"]) {
        const r = await runGit(work, ["-c", `protocol.version=${version}`, "clone", "-q", "--bare", `--filter=${spec}`, http.url, newDir("sparse")]);
        expect(r.exitCode).not.toBe(0);
        expect(r.stderr).toContain("filter 'sparse:oid' not supported");
      }
    }
  });

  test("a treeless clone checks out by fetching trees and blobs lazily", async () => {
    const dir = newDir("treeless");
    const r = await runGit(work, ["clone", "-q", "--filter=tree:0", http.url, dir]);
    expect(r.exitCode).toBe(0);
    expect(await Bun.file(join(dir, "a", "b", "c", "d", "e", "f.txt")).text()).toBe("six, changed\n");
    git(dir, ["fsck", "--no-dangling"]);
  });

  test("parse errors carry git's own messages", () => {
    const message = (spec: string) => {
      try {
        parseFilterSpec(spec);
        return null;
      } catch (e) {
        expect(e).toBeInstanceOf(FilterSpecError);
        return (e as Error).message;
      }
    };
    expect(message("tree:x")).toBe("expected 'tree:<depth>'");
    expect(message("tree:-1")).toBe("expected 'tree:<depth>'");
    expect(message("blob:limit=1x")).toBe("invalid filter-spec 'blob:limit=1x'");
    expect(message("object:type=thing")).toBe("'thing' for 'object:type=<type>' is not a valid object type");
    expect(message("combine:")).toBe("expected something after combine:");
    expect(message("combine:tree:0+blob:none~")).toBe("must escape char in sub-filter-spec: '~'");
    expect(message("combine:tree:0++blob:none")).toBe("invalid filter-spec ''");
    expect(message("sparse:path=x")).toBe("sparse:path filters support has been dropped");
    expect(message("frob")).toBe("invalid filter-spec 'frob'");
    expect(message(`combine:${"combine:".repeat(40)}blob:none`)).toContain("nested");
    expect(parseFilterSpec("combine:tree:2+combine:blob:none%2Bobject:type%3Dtree")).toEqual({
      kind: "combine",
      filters: [{ kind: "tree", depth: 2 }, { kind: "blob:none" }, { kind: "object:type", type: "tree" }],
    });
  });

  test("sizes and depths parse as git_parse_ulong does", () => {
    expect([parseGitUlong("10"), parseGitUlong("0x10"), parseGitUlong("010"), parseGitUlong("2k"), parseGitUlong("1M"), parseGitUlong(" +3g")]).toEqual([
      10,
      16,
      8,
      2048,
      1048576,
      3 * 1024 ** 3,
    ]);
    expect([parseGitUlong(""), parseGitUlong("-1"), parseGitUlong("1kb"), parseGitUlong("08"), parseGitUlong("99999999999999999999")]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(parseGitUlong("18446744073709551615")).toBe(Number.POSITIVE_INFINITY);
    expect(filterRules(parseFilterSpec("combine:tree:3+object:type=blob+blob:limit=5"))).toEqual({
      commits: false,
      trees: false,
      descend: true,
      maxDepth: 3,
      blobLimit: 5,
    });
  });
});
