// The commit API (SPEC §2.3, §4.6, §8; DECISIONS §2, §3) black-box: JSON operations in, a real
// commit out, checked with the git client (clone, log, byte-exact content, fsck).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { clone, fsck, lsRemote } from "../../helpers/git.ts";
import { client } from "../../helpers/server.ts";
import {
  commitOk,
  del,
  expectNothingWritten,
  lines,
  newRepo,
  put,
  putB64,
  refState,
  repoApi,
  startWorld,
  type TestRepo,
  type World,
} from "../../helpers/content.ts";

setDefaultTimeout(60_000);

const OID = /^[0-9a-f]{40}$/;

let w: World;
beforeAll(async () => {
  w = await startWorld("acme");
}, 60_000);
afterAll(async () => {
  await w?.close();
}, 30_000);

async function expectFsckClean(dir: string) {
  const r = await fsck(w.g, dir);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
}

/** The files of a work tree (excluding .git), sorted, with `/` separators. */
function workFiles(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    if (e.name === ".git" && prefix === "") continue;
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) {
      const inner = workFiles(dir, rel);
      out.push(...(inner.length ? inner : [`${rel}/`]));
    } else out.push(rel);
  }
  return out.sort();
}

describe("commit API: operations", () => {
  test("put, put_base64 and nested paths make a commit on main that git clones byte for byte", async () => {
    const repo = await newRepo(w, "basic");
    const binary = new Uint8Array(70_000);
    binary.set(randomBytes(binary.length));
    for (let i = 0; i < 256; i++) binary[i] = i; // every byte value, NUL and CR/LF included
    const text = "# Hello\n\nUnicode: héllo ✓ 𝄞\r\nno final newline";
    const r = await repo.api.commit({
      message: "first commit",
      operations: [
        put("README.md", text),
        putB64("assets/img/blob.bin", binary),
        put("src/lib/deep/x.ts", "export {};\n"),
        put("src/main.ts", "main\n"),
        putB64("empty.bin", new Uint8Array(0)),
      ],
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ commit: expect.stringMatching(OID), branch: "main", parent: null, tree: expect.stringMatching(OID) });

    const dir = await clone(w.g, repo.url);
    expect(await w.g.ok(["rev-parse", "HEAD", "HEAD^{tree}", "--abbrev-ref", "HEAD"], { cwd: dir })).toBe(`${r.body.commit}\n${r.body.tree}\nmain`);
    expect(workFiles(dir)).toEqual(["README.md", "assets/img/blob.bin", "empty.bin", "src/lib/deep/x.ts", "src/main.ts"]);
    expect(readFileSync(join(dir, "README.md"), "utf8")).toBe(text);
    expect(new Uint8Array(readFileSync(join(dir, "assets/img/blob.bin")))).toEqual(binary);
    expect(await w.g.bytes(["show", "HEAD:assets/img/blob.bin"], { cwd: dir })).toEqual(binary);
    expect(readFileSync(join(dir, "empty.bin")).byteLength).toBe(0);
    // Trees are real trees, one per directory level, with regular-file modes.
    expect(lines(await w.g.ok(["ls-tree", "-r", "-t", "--format=%(objectmode) %(objecttype) %(path)", "HEAD"], { cwd: dir }))).toEqual([
      "100644 blob README.md",
      "040000 tree assets",
      "040000 tree assets/img",
      "100644 blob assets/img/blob.bin",
      "100644 blob empty.bin",
      "040000 tree src",
      "040000 tree src/lib",
      "040000 tree src/lib/deep",
      "100644 blob src/lib/deep/x.ts",
      "100644 blob src/main.ts",
    ]);
    expect(await w.g.ok(["log", "--format=%s|%P", "HEAD"], { cwd: dir })).toBe("first commit|");
    await expectFsckClean(dir);
  });

  test("delete removes files; deleting the last file of a directory prunes the directory", async () => {
    const repo = await newRepo(w, "prune");
    const first = await commitOk(repo.api, {
      operations: [put("keep.txt", "k\n"), put("assets/img/a.png", "png"), put("src/lib/deep/x.ts", "x"), put("src/main.ts", "m"), put("gone.txt", "g")],
    });
    const second = await commitOk(repo.api, { message: "prune", operations: [del("assets/img/a.png"), del("src/lib/deep/x.ts"), del("gone.txt")] });
    expect(second.parent).toBe(first.commit);

    const dir = await clone(w.g, repo.url);
    expect(workFiles(dir)).toEqual(["keep.txt", "src/main.ts"]);
    expect(existsSync(join(dir, "assets"))).toBe(false);
    expect(existsSync(join(dir, "src/lib"))).toBe(false);
    expect(lines(await w.g.ok(["ls-tree", "-r", "-t", "--name-only", "HEAD"], { cwd: dir }))).toEqual(["keep.txt", "src", "src/main.ts"]);
    expect(lines(await w.g.ok(["diff", "--name-status", "HEAD~1", "HEAD"], { cwd: dir }))).toEqual([
      "D\tassets/img/a.png",
      "D\tgone.txt",
      "D\tsrc/lib/deep/x.ts",
    ]);
    await expectFsckClean(dir);

    const root = await repo.api.tree("main");
    expect(root.status).toBe(200);
    expect(root.body.entries.map((e: { name: string }) => e.name)).toEqual(["keep.txt", "src"]);
    expect((await repo.api.tree("main", "src")).body.entries.map((e: { name: string }) => e.name)).toEqual(["main.ts"]);
    expect((await repo.api.tree("main", "src/lib")).status).toBe(404);
    expect((await repo.api.tree("main", "assets")).status).toBe(404);

    // Deleting every file leaves an empty root tree, which is still a valid commit.
    const empty = await commitOk(repo.api, { operations: [del("keep.txt"), del("src/main.ts")] });
    expect(empty.tree).toBe("4b825dc642cb6eb9a060e54bf8d69288fbee4904");
    await w.g.ok(["pull", "-q", "--ff-only"], { cwd: dir });
    expect(workFiles(dir)).toEqual([]);
    await expectFsckClean(dir);
  });

  test("replacing a file's content keeps one entry and updates the blob", async () => {
    const repo = await newRepo(w, "replace");
    await commitOk(repo.api, { operations: [put("a.txt", "one\n")] });
    const c = await commitOk(repo.api, { operations: [put("a.txt", "two\n")] });
    const dir = await clone(w.g, repo.url);
    expect(await w.g.ok(["show", `${c.commit}:a.txt`], { cwd: dir })).toBe("two");
    expect(await w.g.ok(["ls-tree", "--name-only", "HEAD"], { cwd: dir })).toBe("a.txt");
  });
});

describe("commit API: branch and expected_parent", () => {
  let repo: TestRepo;
  let tip: string;

  beforeAll(async () => {
    repo = await newRepo(w, "parents");
    tip = (await commitOk(repo.api, { operations: [put("base.txt", "base\n")] })).commit;
  });

  test("branch defaults to main; omitted expected_parent commits on the tip", async () => {
    const c = await commitOk(repo.api, { operations: [put("b.txt", "b\n")] });
    expect(c).toMatchObject({ branch: "main", parent: tip });
    tip = c.commit;
    expect((await refState(w, repo)).remote["refs/heads/main"]).toBe(tip);
  });

  test("expected_parent equal to the tip commits; a stale or unknown sha is 409 with the tip as current", async () => {
    const c = await commitOk(repo.api, { expected_parent: tip, operations: [put("c.txt", "c\n")] });
    expect(c.parent).toBe(tip);
    const stale = tip;
    tip = c.commit;
    for (const expected of [stale, "0123456789abcdef0123456789abcdef01234567"]) {
      const r = await expectNothingWritten(w, repo, () => repo.api.commit({ message: "late", expected_parent: expected, operations: [put("d.txt", "d")] }));
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ error: expect.any(String), current: tip });
    }
  });

  test("expected_parent null creates a new branch (a root commit); 409 with current once it exists", async () => {
    const r = await repo.api.commit({ message: "new branch", branch: "feature/x", expected_parent: null, operations: [put("f.txt", "f\n")] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ branch: "feature/x", parent: null });
    const remote = await lsRemote(w.g, repo.url);
    expect(remote).toEqual({ "refs/heads/main": tip, "refs/heads/feature/x": r.body.commit });

    const again = await expectNothingWritten(w, repo, () =>
      repo.api.commit({ message: "again", branch: "feature/x", expected_parent: null, operations: [put("g.txt", "g")] }),
    );
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: expect.any(String), current: r.body.commit });
    const onMain = await expectNothingWritten(w, repo, () => repo.api.commit({ message: "again", expected_parent: null, operations: [put("g.txt", "g")] }));
    expect(onMain.status).toBe(409);
    expect(onMain.body).toEqual({ error: expect.any(String), current: tip });

    // The new branch holds exactly its own files.
    const dir = await clone(w.g, repo.url, ["-b", "feature/x"]);
    expect(workFiles(dir)).toEqual(["f.txt"]);
    await expectFsckClean(dir);
  });

  test("a sha for a branch that does not exist is 409 with current null", async () => {
    const r = await expectNothingWritten(w, repo, () => repo.api.commit({ message: "x", branch: "nope", expected_parent: tip, operations: [put("x", "x")] }));
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ error: expect.any(String), current: null });
  });

  test("omitted expected_parent on a branch that does not exist creates it", async () => {
    const c = await commitOk(repo.api, { branch: "fresh", operations: [put("x", "x")] });
    expect(c).toMatchObject({ branch: "fresh", parent: null });
    expect((await lsRemote(w.g, repo.url))["refs/heads/fresh"]).toBe(c.commit);
  });
});

describe("commit API: identities and context", () => {
  let repo: TestRepo;
  beforeAll(async () => {
    repo = await newRepo(w, "identity");
  });

  test("author defaults to the calling person; committer is the service", async () => {
    const member = w.member;
    const byOwner = await commitOk(repo.api, { operations: [put("o.txt", "o")] });
    const byMember = await commitOk(repoApi(w.server, "acme", repo.name, member.token), { operations: [put("m.txt", "m")] });
    const bySession = await client(w.server, { cookie: member.cookie }).post(`${repo.api.base}/commits`, {
      message: "via session",
      operations: [put("s.txt", "s")],
    });
    expect(bySession.status).toBe(201);

    const dir = await clone(w.g, repo.url);
    const log = lines(await w.g.ok(["log", "--format=%H|%an <%ae>|%cn", "HEAD"], { cwd: dir }));
    expect(log).toEqual([
      `${bySession.body.commit}|${member.name} <${member.email}>|svc`,
      `${byMember.commit}|${member.name} <${member.email}>|svc`,
      `${byOwner.commit}|${w.owner.name} <${w.owner.email}>|svc`,
    ]);
    // The committer is not the person.
    expect(await w.g.ok(["log", "-1", "--format=%ce", byOwner.commit], { cwd: dir })).not.toBe(w.owner.email);

    const shown = await repo.api.show(byMember.commit);
    expect(shown.status).toBe(200);
    expect(shown.body.author).toMatchObject({ name: member.name, email: member.email });
    expect(shown.body.committer.name).toBe("svc");
  });

  test("an explicit author is honored; the committer stays the service", async () => {
    const c = await commitOk(repo.api, { author: { name: "Ada Lovelace", email: "ada@example.org" }, message: "by ada", operations: [put("ada.txt", "a")] });
    const dir = await clone(w.g, repo.url);
    expect(await w.g.ok(["log", "-1", "--format=%an <%ae>|%cn|%s", c.commit], { cwd: dir })).toBe("Ada Lovelace <ada@example.org>|svc|by ada");
    await expectFsckClean(dir);
  });

  test("context of any JSON type is recorded and returned unchanged", async () => {
    const values: unknown[] = [
      { ticket: "ABC-1", nested: { list: [1, 2.5, -3e-7, true, false, null], "ünïcødé ✓": "𝄞", empty: {}, arr: [] }, z: 1, a: 2 },
      [1, "two", { three: 3 }, [null]],
      "just a string",
      42,
      -0.125,
      true,
      null,
    ];
    const made: { sha: string; value: unknown }[] = [];
    for (const [i, value] of values.entries()) {
      const c = await commitOk(repo.api, { context: value, operations: [put(`ctx/${i}.txt`, String(i))] });
      made.push({ sha: c.commit, value });
    }
    for (const { sha, value } of made) {
      const r = await repo.api.show(sha);
      expect(r.status).toBe(200);
      expect(r.body.context).toEqual(value);
      // Unchanged means the same JSON text too (key order kept).
      expect(JSON.stringify(r.body.context)).toBe(JSON.stringify(value));
    }
    // A commit without context answers null.
    const plain = await commitOk(repo.api, { operations: [put("ctx/plain.txt", "p")] });
    expect((await repo.api.show(plain.commit)).body.context).toBeNull();
  });

  test("context cannot be changed afterward; a second commit carries its own", async () => {
    const first = await commitOk(repo.api, { context: { run: 1 }, operations: [put("imm.txt", "1")] });
    const second = await commitOk(repo.api, { context: { run: 2 }, operations: [put("imm.txt", "2")] });
    // There is no route that edits a commit.
    for (const method of ["PUT", "PATCH", "POST", "DELETE"]) {
      const r = await repo.api.c.call(method, `${repo.api.base}/commits/${first.commit}`, method === "DELETE" ? undefined : { context: { run: "tampered" } });
      expect(r.status).toBeGreaterThanOrEqual(400);
    }
    expect((await repo.api.show(first.commit)).body.context).toEqual({ run: 1 });
    expect((await repo.api.show(second.commit)).body.context).toEqual({ run: 2 });
  });
});

describe("commit API: who may commit", () => {
  let repo: TestRepo;
  let publicRepo: TestRepo;
  beforeAll(async () => {
    repo = await newRepo(w, "guarded");
    publicRepo = await newRepo(w, "guarded-public", true);
    await commitOk(repo.api, { operations: [put("a", "a")] });
    await commitOk(publicRepo.api, { operations: [put("a", "a")] });
  });

  const body = { message: "try", operations: [put("b", "b")] };

  test("a member commits; a viewer (token or session) is 403", async () => {
    const member = w.member;
    expect((await repoApi(w.server, "acme", repo.name, member.token).commit(body)).status).toBe(201);
    const viewer = w.viewer;
    for (const target of [repo, publicRepo]) {
      const r = await expectNothingWritten(w, target, () => repoApi(w.server, "acme", target.name, viewer.token).commit(body));
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: expect.any(String) });
      const s = await expectNothingWritten(w, target, () => client(w.server, { cookie: viewer.cookie }).post(`${target.api.base}/commits`, body));
      expect(s.status).toBe(403);
    }
  });

  test("a repo:read token of an owner is 403", async () => {
    const res = await expectNothingWritten(w, repo, () => repoApi(w.server, "acme", repo.name, w.ownerReadToken).commit(body));
    expect(res.status).toBe(403);
  });

  test("anonymous is 401 on a private repo (and cannot write a public one); an outsider is 404", async () => {
    const anon = await expectNothingWritten(w, repo, () => repoApi(w.server, "acme", repo.name).commit(body));
    expect(anon.status).toBe(401);
    const anonPublic = await expectNothingWritten(w, publicRepo, () => repoApi(w.server, "acme", publicRepo.name).commit(body));
    expect(anonPublic.status).toBe(401);

    const outsider = w.outsider;
    const out = await expectNothingWritten(w, repo, () => repoApi(w.server, "acme", repo.name, outsider.token).commit(body));
    expect(out.status).toBe(404);
    // On a public repository the outsider reads but may not write.
    const outPublic = await expectNothingWritten(w, publicRepo, () => repoApi(w.server, "acme", publicRepo.name, outsider.token).commit(body));
    expect(outPublic.status).toBe(403);
  });
});

describe("commit API: 10,000 operations", () => {
  test("10,000 operations are accepted; 10,001 are refused with 400 and nothing written", async () => {
    const repo = await newRepo(w, "many");
    const ops = Array.from({ length: 10_000 }, (_, i) => put(`d${Math.floor(i / 100)}/f${i % 100}.txt`, `${i}\n`));
    const r = await repo.api.commit({ message: "ten thousand", operations: ops });
    expect(r.status).toBe(201);
    const dir = await clone(w.g, repo.url);
    expect(lines(await w.g.ok(["ls-files"], { cwd: dir })).length).toBe(10_000);
    expect(await w.g.ok(["show", "HEAD:d99/f99.txt"], { cwd: dir })).toBe("9999");
    await expectFsckClean(dir);

    const more = [...ops.map((o) => ({ ...o, content: `${o.content}again\n` })), put("extra.txt", "x")];
    expect(more.length).toBe(10_001);
    const refused = await expectNothingWritten(w, repo, () => repo.api.commit({ message: "too many", operations: more }));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: expect.any(String) });
    // The same edits in 10,000 operations go through: the limit is the count, nothing else.
    expect((await repo.api.commit({ message: "ten thousand again", operations: more.slice(0, 10_000) })).status).toBe(201);
  });
});

describe("commit API: rejected requests write nothing", () => {
  let repo: TestRepo;
  let state: Awaited<ReturnType<typeof refState>>;
  beforeAll(async () => {
    repo = await newRepo(w, "rejects");
    await commitOk(repo.api, { operations: [put("a", "file a\n"), put("dir/f.txt", "f\n")] });
    state = await refState(w, repo);
  });

  const ok = { message: "m" };
  const cases: [string, unknown, number][] = [
    ["empty path", { ...ok, operations: [put("", "x")] }, 400],
    ["absolute path", { ...ok, operations: [put("/etc/passwd", "x")] }, 400],
    ["leading ..", { ...ok, operations: [put("../x", "x")] }, 400],
    ["inner ..", { ...ok, operations: [put("dir/../x", "x")] }, 400],
    ["trailing ..", { ...ok, operations: [put("dir/..", "x")] }, 400],
    ["leading .", { ...ok, operations: [put("./x", "x")] }, 400],
    ["inner .", { ...ok, operations: [put("dir/./x", "x")] }, 400],
    ["lone .", { ...ok, operations: [put(".", "x")] }, 400],
    [".git component", { ...ok, operations: [put(".git/config", "x")] }, 400],
    [".GIT component", { ...ok, operations: [put("sub/.GIT/hooks/pre-commit", "x")] }, 400],
    [".Git as a file", { ...ok, operations: [put(".Git", "x")] }, 400],
    ["delete under .git", { ...ok, operations: [del(".git/HEAD")] }, 400],
    ["NUL byte", { ...ok, operations: [put("a\u0000b", "x")] }, 400],
    ["trailing slash", { ...ok, operations: [put("newdir/", "x")] }, 400],
    ["empty component", { ...ok, operations: [put("x//y", "x")] }, 400],
    ["file and directory in one request", { ...ok, operations: [put("p", "1"), put("p/q", "2")] }, 400],
    ["directory and file in one request", { ...ok, operations: [put("p/q/r", "1"), put("p/q", "2")] }, 400],
    ["invalid base64 characters", { ...ok, operations: [{ op: "put_base64", path: "b.bin", content: "not base64!" }] }, 400],
    ["invalid base64 length", { ...ok, operations: [{ op: "put_base64", path: "b.bin", content: "abcde" }] }, 400],
    ["delete of a missing file", { ...ok, operations: [del("nope.txt")] }, 422],
    ["delete under a missing directory", { ...ok, operations: [del("nodir/nope.txt")] }, 422],
    ["delete of a directory", { ...ok, operations: [del("dir")] }, 422],
    ["put under an existing file", { ...ok, operations: [put("a/b", "x")] }, 422],
    ["put over an existing directory", { ...ok, operations: [put("dir", "x")] }, 422],
    ["a good op then a failing one", { ...ok, operations: [put("good.txt", "g"), del("nope.txt")] }, 422],
    ["empty operations", { ...ok, operations: [] }, 400],
    ["operations missing", { ...ok }, 400],
    ["operations not a list", { ...ok, operations: { op: "put", path: "x", content: "x" } }, 400],
    ["duplicate paths", { ...ok, operations: [put("x", "1"), put("x", "2")] }, 400],
    ["put and delete of one path", { ...ok, operations: [put("a", "1"), del("a")] }, 400],
    // A value outside the enumeration of ops (SPEC §7: 422, not a malformed request).
    ["unknown op", { ...ok, operations: [{ op: "rename", path: "a", content: "b" }] }, 422],
    ["put without content", { ...ok, operations: [{ op: "put", path: "x" }] }, 400],
    ["put with non-string content", { ...ok, operations: [{ op: "put", path: "x", content: 5 }] }, 400],
    ["missing message", { operations: [put("x", "x")] }, 400],
    ["empty message", { message: "", operations: [put("x", "x")] }, 400],
    ["non-string message", { message: 7, operations: [put("x", "x")] }, 400],
    ["bad JSON", "{ this is not json", 400],
    ["bad branch name ..", { ...ok, branch: "bad..name", operations: [put("x", "x")] }, 400],
    ["bad branch name .lock", { ...ok, branch: "x.lock", operations: [put("x", "x")] }, 400],
    ["bad branch name with space", { ...ok, branch: "has space", operations: [put("x", "x")] }, 400],
    ["empty branch name", { ...ok, branch: "", operations: [put("x", "x")] }, 400],
    ["expected_parent too short", { ...ok, expected_parent: "abc123", operations: [put("x", "x")] }, 400],
    ["expected_parent not hex", { ...ok, expected_parent: "z".repeat(40), operations: [put("x", "x")] }, 400],
    ["expected_parent a number", { ...ok, expected_parent: 12345, operations: [put("x", "x")] }, 400],
    ["author without email", { ...ok, author: { name: "No Mail" }, operations: [put("x", "x")] }, 400],
    ["author with angle brackets", { ...ok, author: { name: "Eve <evil>", email: "e@example.com" }, operations: [put("x", "x")] }, 400],
  ];

  for (const [label, body, status] of cases) {
    test(`${label} → ${status}`, async () => {
      const r = await repo.api.commit(body);
      expect({ status: r.status, error: typeof r.body?.error }).toEqual({ status, error: "string" });
      // Nothing written: the refs API and git ls-remote still show the state from before.
      expect(await refState(w, repo)).toEqual(state);
    });
  }

  test("after all the refusals the repository is intact", async () => {
    const dir = await clone(w.g, repo.url);
    expect(workFiles(dir)).toEqual(["a", "dir/f.txt"]);
    expect(await w.g.ok(["rev-list", "--count", "HEAD"], { cwd: dir })).toBe("1");
    await expectFsckClean(dir);
  });
});

describe("commit API: never writes what git itself refuses", () => {
  // git treats these names as `.git` (NTFS trailing dots/spaces, 8.3 short name and stream
  // suffix, HFS+ ignorable code points; fsck.c is_ntfs_dotgit / is_hfs_dotgit) and refuses such
  // trees on fetch with fsck enabled (`hasDotgit`); `.gitmodules` must be a file.
  const aliases = [".git.", ".git ", "git~1", "GIT~1", "sub/.gIt.", ".git::$INDEX_ALLOCATION/x", ".g\u200cit/config", ".git\u200d", ".gitmodules/x"];
  for (const path of aliases) {
    test(`path ${JSON.stringify(path)} is refused with 400 and the repository stays clonable`, async () => {
      const repo = await newRepo(w, `alias-${aliases.indexOf(path)}`);
      await commitOk(repo.api, { operations: [put("ok.txt", "ok\n")] });
      const r = await repo.api.commit({ message: "alias", operations: [put(path, "x")] });
      const c = await w.g.run(["clone", "-q", repo.url, w.g.path("alias")]);
      expect({ path, status: r.status, clone: c.code === 0 ? "ok" : c.stderr.split("\n").find((l) => l.startsWith("error")) }).toEqual({
        path,
        status: 400,
        clone: "ok",
      });
    });
  }

  test("a NUL byte in the message is refused with 400 and the repository stays clonable", async () => {
    const repo = await newRepo(w, "nul-message");
    await commitOk(repo.api, { operations: [put("ok.txt", "ok\n")] });
    const r = await repo.api.commit({ message: "before\u0000after", operations: [put("x.txt", "x")] });
    const c = await w.g.run(["clone", "-q", repo.url, w.g.path("nul")]);
    expect({ status: r.status, clone: c.code === 0 ? "ok" : c.stderr.split("\n").find((l) => l.startsWith("error")) }).toEqual({ status: 400, clone: "ok" });
  });

  test("a branch whose name nests under an existing branch (or the reverse) is refused; git can still clone", async () => {
    // git cannot hold refs/heads/main and refs/heads/main/x at once (a file and a directory).
    const repo = await newRepo(w, "df-branches");
    await commitOk(repo.api, { operations: [put("a", "a")] });
    await commitOk(repo.api, { branch: "topic/one", operations: [put("b", "b")] });
    for (const branch of ["main/x", "topic"]) {
      const r = await expectNothingWritten(w, repo, () => repo.api.commit({ message: "nested", branch, operations: [put("c", "c")] }));
      expect({ branch, status: r.status }).toEqual({ branch, status: r.status === 409 ? 409 : 422 });
    }
    const c = await w.g.run(["clone", "-q", repo.url, w.g.path("df")]);
    expect({ code: c.code, stderr: c.stderr }).toEqual({ code: 0, stderr: "" });
  });
});

describe("commit API: concurrency", () => {
  test("20 concurrent commits on the same expected_parent: one 201, nineteen 409 naming the winner", async () => {
    const repo = await newRepo(w, "race");
    const base = await commitOk(repo.api, { operations: [put("base.txt", "base\n")] });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        repo.api.commit({ message: `racer ${i}`, expected_parent: base.commit, operations: [put(`racer-${i}.txt`, `${i}\n`)] }),
      ),
    );
    const winners = results.filter((r) => r.status === 201);
    const losers = results.filter((r) => r.status !== 201);
    expect(winners.length).toBe(1);
    const winner = winners[0]!.body.commit as string;
    expect(winners[0]!.body.parent).toBe(base.commit);
    expect(losers.map((r) => ({ status: r.status, current: r.body.current }))).toEqual(Array.from({ length: 19 }, () => ({ status: 409, current: winner })));

    expect((await refState(w, repo)).remote).toEqual({ "refs/heads/main": winner });
    const dir = await clone(w.g, repo.url);
    expect(await w.g.ok(["rev-list", "--count", "HEAD"], { cwd: dir })).toBe("2");
    expect(workFiles(dir).length).toBe(2);
    await expectFsckClean(dir);
  });

  test("20 concurrent commits without expected_parent each land on the then-current tip", async () => {
    // SPEC §2.3: omitted means "commit on the current tip"; only an expected_parent mismatch is a 409.
    const repo = await newRepo(w, "race-open");
    await commitOk(repo.api, { operations: [put("base.txt", "base\n")] });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => repo.api.commit({ message: `open ${i}`, operations: [put(`open-${i}.txt`, `${i}\n`)] })),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 201));
    const dir = await clone(w.g, repo.url);
    expect(await w.g.ok(["rev-list", "--count", "HEAD"], { cwd: dir })).toBe("21");
    expect(workFiles(dir).length).toBe(21);
    await expectFsckClean(dir);
  });
});
