// GET …/blame/{ref}?path= (DECISIONS §5) on the real server: a history made with the git client
// (edits, a merge, a file deleted and added again, CRLF, no trailing newline, an empty file)
// pushed, then every answer compared line by line with `git blame --porcelain` in the clone;
// refs by branch, tag and id; the same read rule as the content routes (masked 404); refusals.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { commitFiles, initRepo, repoUrl } from "../../helpers/git.ts";
import { newRepo, repoApi, startWorld, type TestRepo, type World } from "../../helpers/content.ts";

setDefaultTimeout(60_000);

let w: World;
let repo: TestRepo;
let dir: string;

const git = (...args: string[]) => w.g.ok(args, { cwd: dir });
const lines = (...xs: string[]) => xs.map((x) => `${x}\n`).join("");
const blame = (ref: string, path?: string, api = repo.api) =>
  api.c.get(`${api.base}/blame/${encodeURIComponent(ref)}${path === undefined ? "" : `?path=${encodeURIComponent(path)}`}`);

/** Per line, the commit `git blame --porcelain` names. */
async function gitBlame(rev: string, path: string): Promise<string[]> {
  const out = await git("blame", "--porcelain", rev, "--", path);
  const shas: string[] = [];
  for (const line of out.split("\n")) {
    const m = /^([0-9a-f]{40}) \d+ (\d+)/.exec(line);
    if (m) shas[Number(m[2]) - 1] = m[1]!;
  }
  return shas;
}

/** Per line, the commit the API names; also checks that the ranges tile the file. */
function perLine(body: { lines: number; ranges: { start: number; count: number; commit: { sha: string } }[] }): string[] {
  const out: string[] = [];
  let next = 1;
  for (const r of body.ranges) {
    expect(r.start).toBe(next);
    for (let i = 0; i < r.count; i++) out.push(r.commit.sha);
    next += r.count;
  }
  expect(out.length).toBe(body.lines);
  return out;
}

beforeAll(async () => {
  w = await startWorld("blamers");
  repo = await newRepo(w, "story");
  dir = await initRepo(w.g, "story");
  await git("config", "core.autocrlf", "false");
  await commitFiles(
    w.g,
    dir,
    { "src/app.ts": lines("import x;", "const a = 1;", "const b = 2;", "run(a, b);"), "crlf.txt": "one\r\ntwo\r\n", "tail.txt": "a\nb", "empty.txt": "" },
    "start",
  );
  await commitFiles(w.g, dir, { "src/app.ts": lines("import x;", "const a = 10;", "const b = 2;", "run(a, b);", "done();") }, "tune a");
  await git("checkout", "-q", "-b", "topic");
  await commitFiles(w.g, dir, { "src/app.ts": lines("import x;", "import y;", "const a = 10;", "const b = 2;", "run(a, b);", "done();") }, "topic imports y");
  await git("checkout", "-q", "-");
  await commitFiles(
    w.g,
    dir,
    { "src/app.ts": lines("import x;", "const a = 10;", "const b = 20;", "run(a, b);", "done();"), "crlf.txt": "one\r\ntwo\r\nthree\r\n", "tail.txt": "a\nB" },
    "tune b",
  );
  await git("merge", "-q", "--no-ff", "-m", "merge topic", "topic");
  await commitFiles(w.g, dir, { "gone.txt": lines("x", "y") }, "add gone");
  await git("rm", "-q", "gone.txt");
  await git("commit", "-q", "-m", "remove gone");
  await commitFiles(
    w.g,
    dir,
    { "gone.txt": lines("x", "y", "z"), "bin.dat": new Uint8Array([1, 0, 2, 10]), "big.txt": "x".repeat(1024 * 1024 + 1) },
    "gone is back",
  );
  await git("tag", "v1", "HEAD~2");
  await git("push", "-q", repo.url, "HEAD:refs/heads/main", "v1");
}, 90_000);

afterAll(async () => {
  await w?.close();
}, 30_000);

describe("blame", () => {
  test("every file agrees with git blame --porcelain, line by line", async () => {
    const head = await git("rev-parse", "HEAD");
    for (const path of ["src/app.ts", "crlf.txt", "tail.txt", "gone.txt"]) {
      const r = await blame("main", path);
      expect(r.status).toBe(200);
      expect({ ref: r.body.ref, commit: r.body.commit, path: r.body.path, truncated: r.body.truncated }).toEqual({
        ref: "main",
        commit: head,
        path,
        truncated: false,
      });
      expect(perLine(r.body)).toEqual(await gitBlame("HEAD", path));
    }
  });

  test("a range carries its commit's author, summary and author time", async () => {
    const r = await blame("main", "src/app.ts");
    const sha = await git("rev-parse", "topic");
    const range = r.body.ranges.find((x: { commit: { sha: string } }) => x.commit.sha === sha);
    const [name, email, at] = (await git("show", "-s", "--format=%an%n%ae%n%at", sha)).split("\n");
    expect(range).toEqual({ start: 2, count: 1, commit: { sha, author: { name, email }, summary: "topic imports y", authored_at: Number(at) * 1000 } });
  });

  test("by tag, by commit id, by abbreviated id; the empty file has no ranges", async () => {
    const tagged = await git("rev-parse", "v1");
    const byTag = await blame("v1", "src/app.ts");
    expect(byTag.body.commit).toBe(tagged);
    expect(perLine(byTag.body)).toEqual(await gitBlame("v1", "src/app.ts"));
    const byId = await blame(tagged, "src/app.ts");
    expect(byId.body).toEqual({ ...byTag.body, ref: tagged });
    expect((await blame(tagged.slice(0, 10), "src/app.ts")).body.commit).toBe(tagged);
    const empty = await blame("main", "empty.txt");
    expect(empty.body).toMatchObject({ lines: 0, ranges: [], truncated: false });
  });

  test("refusals: no path, a missing file, a directory, binary, too large, an unknown ref", async () => {
    const cases: [string, string | undefined, number][] = [
      ["main", undefined, 400],
      ["main", "", 400],
      ["main", "../etc/passwd", 400],
      ["main", "nope.txt", 404],
      ["main", "src", 404],
      ["main", "bin.dat", 422],
      ["main", "big.txt", 413],
      ["no-such-branch", "src/app.ts", 404],
      ["main~1", "gone.txt", 404],
    ];
    for (const [ref, path, status] of cases) {
      const r = await blame(ref, path);
      expect({ ref, path, status: r.status, error: typeof r.body.error }).toEqual({ ref, path, status, error: "string" });
    }
  });

  test("the content routes' read rule: readers see it, others get the 404 of a missing repository", async () => {
    const ok = await blame("main", "src/app.ts");
    const viewer = await blame("main", "src/app.ts", repoApi(w.server, w.owner.org, repo.name, w.viewer.token));
    expect(viewer.body).toEqual(ok.body);
    // An outsider gets the 404 of a missing repository; anonymous callers the same answer either way.
    for (const token of [w.outsider.token, undefined]) {
      const hidden = await blame("main", "src/app.ts", repoApi(w.server, w.owner.org, repo.name, token));
      const missing = await blame("main", "src/app.ts", repoApi(w.server, w.owner.org, "no-such-repo", token));
      expect(hidden.status).toBe(token ? 404 : 401);
      expect({ status: hidden.status, body: hidden.body }).toEqual({ status: missing.status, body: missing.body });
    }
    // An unreachable id is the 404 of an unknown one, whatever is stored.
    expect((await blame("0".repeat(40), "src/app.ts")).status).toBe(404);
  });

  test("a public repository is blamed for anyone; a pushed change is a new answer", async () => {
    const pub = await newRepo(w, "open", true);
    const d = await initRepo(w.g, "open");
    await commitFiles(w.g, d, { "a.txt": lines("1", "2") }, "one");
    await w.g.ok(["push", "-q", repoUrl(w.server, w.owner.org, "open", w.owner.token), "HEAD:refs/heads/main"], { cwd: d });
    const anon = repoApi(w.server, w.owner.org, pub.name);
    const first = await blame("main", "a.txt", anon);
    expect(first.status).toBe(200);
    expect(first.body.ranges).toHaveLength(1);
    const second = await commitFiles(w.g, d, { "a.txt": lines("1", "two") }, "two");
    await w.g.ok(["push", "-q", repoUrl(w.server, w.owner.org, "open", w.owner.token), "HEAD:refs/heads/main"], { cwd: d });
    const again = await blame("main", "a.txt", anon);
    expect(again.body.commit).toBe(second);
    expect(again.body.ranges.map((r: { start: number; commit: { sha: string } }) => [r.start, r.commit.sha])).toEqual([
      [1, first.body.commit],
      [2, second],
    ]);
  });
});
