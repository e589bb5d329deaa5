// The git smart-HTTP scenarios shared by git-http.test.ts (fs backend) and git-s3.test.ts (S3):
// real `git` pushes and clones against a real server, every clone checked with `git fsck`.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  clone,
  commitFiles,
  createRepo,
  fsck,
  gitSandbox,
  importHistory,
  initRepo,
  localRefs,
  lsRemote,
  postReceivePack,
  receivePackBody,
  repoUrl,
  setupOwner,
  basicAuth,
  packRevs,
  type GitSandbox,
  type OrgOwner,
} from "../../helpers/git.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

/** A storage backend for the server: its SVC_* environment and how to stop it. */
export interface Backend {
  env: Record<string, string>;
  stop(): Promise<void>;
}

const DAY = 86_400;

/** `YYYY-MM-DD HH:MM:SS +0000`, a date format git parses exactly. */
function gitDate(epochSeconds: number): string {
  return `${new Date(epochSeconds * 1000).toISOString().slice(0, 19).replace("T", " ")} +0000`;
}
const T0 = 1_600_000_000;

/** Defines the scenarios against a server started with `boot()`'s environment. */
export function gitScenarios(label: string, boot: () => Promise<Backend>) {
  // Real git against a real server: seconds per test, more on a busy machine.
  setDefaultTimeout(60_000);
  describe(`git smart HTTP on ${label}`, () => {
    let backend: Backend | undefined;
    let server: RunningServer;
    let g: GitSandbox;
    let owner: OrgOwner;
    let n = 0;

    beforeAll(async () => {
      backend = await boot();
      server = await startServer({ env: backend.env });
      g = gitSandbox();
      owner = await setupOwner(server, "acme");
    }, 60_000);

    afterAll(async () => {
      await server?.[Symbol.asyncDispose]();
      await backend?.stop();
      g?.[Symbol.dispose]();
    }, 30_000);

    /** A new private repository; returns its authenticated URL. */
    async function newRepo(prefix: string): Promise<{ name: string; url: string }> {
      const name = `${prefix}-${++n}`;
      await createRepo(server, owner, name);
      return { name, url: repoUrl(server, "acme", name, owner.token) };
    }

    /** A new repository holding `count` commits on main (made with fast-import), pushed. */
    async function seeded(prefix: string, count: number, o: { step?: number } = {}) {
      const repo = await newRepo(prefix);
      const dir = await initRepo(g);
      const tip = await importHistory(g, dir, { ref: "refs/heads/main", count, start: T0, step: o.step ?? DAY });
      await g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
      return { ...repo, dir, tip };
    }

    async function expectFsckClean(dir: string) {
      const r = await fsck(g, dir);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    }

    async function count(dir: string, rev = "HEAD"): Promise<number> {
      return Number(await g.ok(["rev-list", "--count", rev], { cwd: dir }));
    }

    test("push a new repository with branches and tags, clone it back: every ref equal", async () => {
      const repo = await newRepo("roundtrip");
      const dir = await initRepo(g);
      const main = await importHistory(g, dir, { ref: "refs/heads/main", count: 30 });
      const topic = await importHistory(g, dir, { ref: "refs/heads/topic", count: 5, from: `${main}~10`, label: "topic" });
      await g.ok(["tag", "light", `${main}~3`], { cwd: dir });
      await g.ok(["tag", "-a", "-m", "release one", "v1", `${main}~1`], { cwd: dir });
      const push = await g.run(["push", repo.url, "--all"], { cwd: dir });
      expect(push).toMatchObject({ code: 0 });
      await g.ok(["push", "-q", repo.url, "--tags"], { cwd: dir });

      const local = await localRefs(g, dir);
      expect(await lsRemote(g, repo.url)).toEqual(local);

      const c = await clone(g, repo.url, ["--mirror"]);
      expect(await localRefs(g, c)).toEqual(local);
      expect(await g.ok(["rev-parse", "refs/heads/topic"], { cwd: c })).toBe(topic);
      await expectFsckClean(c);

      // A normal clone checks out the default branch and sees the remote branches.
      const w = await clone(g, repo.url);
      expect(await g.ok(["rev-parse", "HEAD", "origin/topic"], { cwd: w })).toBe(`${main}\n${topic}`);
      expect(await g.ok(["symbolic-ref", "HEAD"], { cwd: w })).toBe("refs/heads/main");
      await expectFsckClean(w);
    });

    for (const version of [0, 2] as const) {
      test(`clone and incremental fetch with protocol v${version}`, async () => {
        const repo = await seeded(`proto${version}`, 40);
        const trace = { GIT_TRACE_PACKET: "1" };
        const c = g.path("clone");
        const cl = await g.run(["-c", `protocol.version=${version}`, "clone", repo.url, c], { env: trace });
        expect(cl).toMatchObject({ code: 0 });
        // The wire protocol actually used: v2 announces itself, v0 advertises refs with capabilities.
        if (version === 2) expect(cl.stderr).toMatch(/< version 2$/m);
        else {
          expect(cl.stderr).not.toMatch(/< version 2$/m);
          expect(cl.stderr).toMatch(/< [0-9a-f]{40} \S+\\0\S/);
        }
        expect(await g.ok(["rev-parse", "HEAD"], { cwd: c })).toBe(repo.tip);

        // New commits upstream; the fetch negotiates with haves and receives only the new part.
        const next = await importHistory(g, repo.dir, { ref: "refs/heads/main", count: 7, from: repo.tip, start: T0 + 100 * DAY, label: "more" });
        await g.ok(["push", "-q", repo.url, "main"], { cwd: repo.dir });
        const f = await g.run(["-c", `protocol.version=${version}`, "fetch", "origin"], { cwd: c, env: trace });
        expect(f).toMatchObject({ code: 0 });
        expect(f.stderr).toMatch(/> have [0-9a-f]{40}/);
        expect(await g.ok(["rev-parse", "origin/main"], { cwd: c })).toBe(next);
        await g.ok(["merge", "-q", "--ff-only", "origin/main"], { cwd: c });
        await expectFsckClean(c);
      });
    }

    test("shallow clone --depth 1, then --deepen=5, then --unshallow", async () => {
      const repo = await seeded("shallow", 20);
      const c = await clone(g, repo.url, ["--depth", "1"]);
      expect(await count(c)).toBe(1);
      expect(existsSync(join(c, ".git/shallow"))).toBe(true);
      await expectFsckClean(c);

      await g.ok(["fetch", "-q", "--deepen=5"], { cwd: c });
      expect(await count(c)).toBe(6);
      await expectFsckClean(c);

      await g.ok(["fetch", "-q", "--unshallow"], { cwd: c });
      expect(await count(c)).toBe(20);
      expect(existsSync(join(c, ".git/shallow"))).toBe(false);
      expect(await g.ok(["rev-parse", "HEAD"], { cwd: c })).toBe(repo.tip);
      await expectFsckClean(c);
    });

    test("shallow clone with protocol v0 deepens too", async () => {
      const repo = await seeded("shallow0", 12);
      const c = g.path("clone");
      await g.ok(["-c", "protocol.version=0", "clone", "-q", "--depth", "2", repo.url, c]);
      expect(await count(c)).toBe(2);
      await g.ok(["-c", "protocol.version=0", "fetch", "-q", "--deepen=3"], { cwd: c });
      expect(await count(c)).toBe(5);
      await g.ok(["-c", "protocol.version=0", "fetch", "-q", "--unshallow"], { cwd: c });
      expect(await count(c)).toBe(12);
      await expectFsckClean(c);
    });

    test("--shallow-since keeps only commits at or after the date", async () => {
      // Commit i is dated T0 + i days; since T0 + 15 days (less an hour) keeps commits 15..19.
      const repo = await seeded("since", 20);
      const c = await clone(g, repo.url, [`--shallow-since=${gitDate(T0 + 15 * DAY - 3600)}`]);
      expect(await count(c)).toBe(5);
      expect(await g.ok(["log", "-1", "--format=%s", "HEAD~4"], { cwd: c })).toBe("main 15");
      await expectFsckClean(c);
    });

    test("--shallow-exclude leaves out what a tag reaches", async () => {
      const repo = await seeded("exclude", 20);
      await g.ok(["tag", "base", `${repo.tip}~10`], { cwd: repo.dir });
      await g.ok(["push", "-q", repo.url, "base"], { cwd: repo.dir });
      const c = await clone(g, repo.url, ["--shallow-exclude=base", "--single-branch", "--branch", "main"]);
      // Commits 10..19 are not reachable from base (commit 9).
      expect(await count(c)).toBe(10);
      await expectFsckClean(c);
    });

    test("partial clone --filter=blob:none fetches blobs lazily on checkout", async () => {
      const repo = await newRepo("partial");
      const dir = await initRepo(g);
      await commitFiles(g, dir, { "a.txt": "alpha\n", "b/c.txt": "charlie\n" }, "one");
      await commitFiles(g, dir, { "a.txt": "alpha two\n", "d.bin": randomBytes(4096) }, "two");
      await g.ok(["push", "-q", repo.url, "main"], { cwd: dir });

      const c = await clone(g, repo.url, ["--filter=blob:none", "--no-checkout"]);
      expect(await g.ok(["config", "remote.origin.promisor"], { cwd: c })).toBe("true");
      const missing = (await g.ok(["rev-list", "--objects", "--all", "--missing=print"], { cwd: c })).split("\n").filter((l) => l.startsWith("?"));
      expect(missing.length).toBe(4); // every blob of both commits stayed on the server

      const co = await g.run(["checkout", "main"], { cwd: c, env: { GIT_TRACE_PACKET: "1" } });
      expect(co).toMatchObject({ code: 0 });
      expect(co.stderr).toMatch(/> want [0-9a-f]{40}/); // the lazy fetch happened
      expect(readFileSync(join(c, "a.txt"), "utf8")).toBe("alpha two\n");
      expect(readFileSync(join(c, "d.bin"))).toEqual(readFileSync(join(dir, "d.bin")));
      await expectFsckClean(c);
    });

    test("lightweight and annotated tags: clone sees them, describe works, --tags fetch gets new ones", async () => {
      const repo = await seeded("tags", 10);
      await g.ok(["tag", "light", `${repo.tip}~5`], { cwd: repo.dir });
      await g.ok(["tag", "-a", "-m", "version 1.0", "v1.0", `${repo.tip}~1`], { cwd: repo.dir });
      await g.ok(["push", "-q", repo.url, "--tags"], { cwd: repo.dir });

      const c = await clone(g, repo.url);
      expect((await g.ok(["tag", "-l"], { cwd: c })).split("\n")).toEqual(["light", "v1.0"]);
      expect(await g.ok(["cat-file", "-t", "v1.0"], { cwd: c })).toBe("tag");
      expect(await g.ok(["cat-file", "-t", "light"], { cwd: c })).toBe("commit");
      const abbrev = await g.ok(["rev-parse", "--short=7", "HEAD"], { cwd: c });
      expect(await g.ok(["describe", "--abbrev=7"], { cwd: c })).toBe(`v1.0-1-g${abbrev}`);
      expect(await g.ok(["describe", "--tags", "--abbrev=0", "HEAD~2"], { cwd: c })).toBe("light");

      // A tag on an old commit pushed from elsewhere arrives with `fetch --tags`.
      await g.ok(["tag", "-a", "-m", "old one", "v0.1", `${repo.tip}~8`], { cwd: repo.dir });
      await g.ok(["push", "-q", repo.url, "v0.1"], { cwd: repo.dir });
      await g.ok(["fetch", "-q", "--tags", "origin"], { cwd: c });
      expect(await g.ok(["rev-parse", "v0.1^{commit}"], { cwd: c })).toBe(await g.ok(["rev-parse", `${repo.tip}~8`], { cwd: repo.dir }));
      expect(await g.ok(["rev-parse", "v0.1"], { cwd: c })).toBe(await g.ok(["rev-parse", "v0.1"], { cwd: repo.dir }));
      await expectFsckClean(c);
    });

    test("branch deletion with push origin :branch", async () => {
      const repo = await seeded("delete", 3);
      await g.ok(["push", "-q", repo.url, `${repo.tip}~1:refs/heads/feature`], { cwd: repo.dir });
      expect(Object.keys(await lsRemote(g, repo.url)).sort()).toEqual(["refs/heads/feature", "refs/heads/main"]);
      const del = await g.run(["push", repo.url, ":feature"], { cwd: repo.dir });
      expect(del).toMatchObject({ code: 0 });
      expect(del.stderr).toContain("[deleted]");
      expect(await lsRemote(g, repo.url)).toEqual({ "refs/heads/main": repo.tip });
      await expectFsckClean(await clone(g, repo.url));
    });

    test("a non-fast-forward push is rejected; push -f replaces the branch", async () => {
      const repo = await seeded("force", 5);
      const a = await clone(g, repo.url);
      const b = await clone(g, repo.url);
      const aTip = await commitFiles(g, a, { "a.txt": "from a\n" }, "a");
      await g.ok(["push", "-q", "origin", "main"], { cwd: a });

      // b does not know a's commit: git refuses before sending ("fetch first").
      const bTip = await commitFiles(g, b, { "b.txt": "from b\n" }, "b");
      const stale = await g.run(["push", "origin", "main"], { cwd: b });
      expect(stale.code).not.toBe(0);
      expect(stale.stderr).toMatch(/\[rejected\].*\(fetch first\)/);
      expect(await lsRemote(g, repo.url)).toEqual({ "refs/heads/main": aTip });

      // After fetching, the remote tip is known and not an ancestor: "non-fast-forward".
      await g.ok(["fetch", "-q"], { cwd: b });
      const nonFf = await g.run(["push", "origin", "main"], { cwd: b });
      expect(nonFf.code).not.toBe(0);
      expect(nonFf.stderr).toMatch(/\[rejected\].*\(non-fast-forward\)/);
      expect(await lsRemote(g, repo.url)).toEqual({ "refs/heads/main": aTip });

      const forced = await g.run(["push", "-f", "origin", "main"], { cwd: b });
      expect(forced).toMatchObject({ code: 0 });
      expect(forced.stderr).toContain("(forced update)");
      expect(await lsRemote(g, repo.url)).toEqual({ "refs/heads/main": bTip });
      await expectFsckClean(await clone(g, repo.url));
    });

    test("the server itself refuses a stale update (old id no longer current)", async () => {
      // git checks fast-forwards on its side; this request skips the client to test the server's CAS.
      const repo = await seeded("cas", 4);
      const next = await importHistory(g, repo.dir, { ref: "refs/heads/next", count: 1, from: repo.tip, label: "next" });
      const pack = await packRevs(g, repo.dir, [next, `^${repo.tip}`]);
      const staleOld = await g.ok(["rev-parse", `${repo.tip}~1`], { cwd: repo.dir });
      const body = receivePackBody([{ old: staleOld, new: next, ref: "refs/heads/main" }], ["report-status"], pack);
      const r = await postReceivePack(server, "acme", repo.name, body, basicAuth(owner.token));
      expect(r.status).toBe(200);
      expect(r.refs["refs/heads/main"]).toMatch(/^ng \S/);
      expect(await lsRemote(g, repo.url)).toEqual({ "refs/heads/main": repo.tip });
    });

    test("push --atomic with one failing ref leaves every ref unchanged", async () => {
      const repo = await seeded("atomic", 6);
      await g.ok(["push", "-q", repo.url, `${repo.tip}~2:refs/heads/other`], { cwd: repo.dir });
      const before = await lsRemote(g, repo.url);

      // With git: main fast-forwards, other would rewind (rejected) → nothing is sent.
      const mainNext = await importHistory(g, repo.dir, { ref: "refs/heads/main", count: 2, from: repo.tip, label: "ff" });
      const cli = await g.run(["push", "--atomic", repo.url, "main", `${repo.tip}~4:refs/heads/other`], { cwd: repo.dir });
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toMatch(/atomic push failed/);
      expect(await lsRemote(g, repo.url)).toEqual(before);

      // The server's side: an atomic request where only `other` is stale must move nothing.
      const pack = await packRevs(g, repo.dir, [mainNext, `^${repo.tip}`]);
      const body = receivePackBody(
        [
          { old: repo.tip, new: mainNext, ref: "refs/heads/main" },
          { old: repo.tip, new: mainNext, ref: "refs/heads/other" }, // stale: other is at tip~2
          { old: "0".repeat(40), new: mainNext, ref: "refs/heads/brand-new" },
        ],
        ["report-status", "atomic"],
        pack,
      );
      const r = await postReceivePack(server, "acme", repo.name, body, basicAuth(owner.token));
      expect(r.status).toBe(200);
      expect(r.unpack).toBe("ok");
      expect(Object.keys(r.refs).sort()).toEqual(["refs/heads/brand-new", "refs/heads/main", "refs/heads/other"]);
      for (const v of Object.values(r.refs)) expect(v).toMatch(/^ng /);
      expect(await lsRemote(g, repo.url)).toEqual(before);

      // The same request without atomic applies the good updates only.
      const plain = receivePackBody(
        [
          { old: repo.tip, new: mainNext, ref: "refs/heads/main" },
          { old: repo.tip, new: mainNext, ref: "refs/heads/other" },
        ],
        ["report-status"],
        pack,
      );
      const r2 = await postReceivePack(server, "acme", repo.name, plain, basicAuth(owner.token));
      expect(r2.refs["refs/heads/main"]).toBe("ok");
      expect(r2.refs["refs/heads/other"]).toMatch(/^ng /);
      expect(await lsRemote(g, repo.url)).toEqual({ ...before, "refs/heads/main": mainNext });
      await expectFsckClean(await clone(g, repo.url));
    });

    test("clone of an empty repository warns and succeeds; then the first push", async () => {
      const repo = await newRepo("empty");
      const c = g.path("clone");
      const cl = await g.run(["clone", repo.url, c]);
      expect(cl).toMatchObject({ code: 0 });
      expect(cl.stderr).toContain("You appear to have cloned an empty repository");
      expect(await lsRemote(g, repo.url)).toEqual({});

      const tip = await commitFiles(g, c, { "README.md": "# hello\n" }, "first");
      const push = await g.run(["push", "origin", "main"], { cwd: c });
      expect(push).toMatchObject({ code: 0 });
      expect(push.stderr).toContain("[new branch]");
      expect(await lsRemote(g, repo.url)).toEqual({ "refs/heads/main": tip });
      const again = await clone(g, repo.url);
      expect(readFileSync(join(again, "README.md"), "utf8")).toBe("# hello\n");
      await expectFsckClean(again);
    });

    test("a 5 MB random binary file round-trips byte-exact", async () => {
      const repo = await newRepo("binary");
      const dir = await initRepo(g);
      const blob = randomBytes(5 * 1024 * 1024);
      await commitFiles(g, dir, { "blob.bin": blob, "small.txt": "x\n" }, "binary");
      await g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
      const c = await clone(g, repo.url);
      expect(Buffer.compare(readFileSync(join(c, "blob.bin")), blob)).toBe(0);
      await expectFsckClean(c);
    });

    test("a history of 2,000 commits pushes and clones", async () => {
      const repo = await seeded("long", 2000, { step: 60 });
      const c = await clone(g, repo.url);
      expect(await count(c)).toBe(2000);
      expect(await g.ok(["rev-parse", "HEAD"], { cwd: c })).toBe(repo.tip);
      expect(await localRefs(g, c)).toEqual({ "refs/heads/main": repo.tip, "refs/remotes/origin/HEAD": repo.tip, "refs/remotes/origin/main": repo.tip });
      await expectFsckClean(c);
    });

    test("concurrent pushes to one branch: exactly one wins, the others are rejected cleanly", async () => {
      const repo = await seeded("race", 3);
      const clones = await Promise.all([1, 2, 3, 4, 5].map(() => clone(g, repo.url)));
      const tips = await Promise.all(clones.map((c, i) => commitFiles(g, c, { [`racer-${i}.txt`]: `racer ${i}\n` }, `racer ${i}`)));
      const results = await Promise.all(clones.map((c) => g.run(["push", "origin", "main"], { cwd: c })));

      const winners = results.flatMap((r, i) => (r.code === 0 ? [i] : []));
      expect(winners.length).toBe(1);
      const winner = winners[0]!;
      for (const [i, r] of results.entries()) {
        if (i === winner) continue;
        // Rejected either by git (it saw the new tip: "fetch first") or by the server's CAS.
        expect(r.stderr).toMatch(/rejected|fetch first|stale|failed to (lock|update)|\[remote rejected\]/);
        expect(r.stderr).toContain("failed to push some refs");
        expect(r.stderr).not.toMatch(/internal error|fatal: the remote end hung up/);
      }
      expect(await lsRemote(g, repo.url)).toEqual({ "refs/heads/main": tips[winner]! });
      const fresh = await clone(g, repo.url);
      expect(await g.ok(["rev-parse", "HEAD"], { cwd: fresh })).toBe(tips[winner]!);
      await expectFsckClean(fresh);
    });
  });
}
