// The refs API (DECISIONS §2, §3): list, compare-and-swap create/move/delete, target checks and
// name checks, every result checked against `git ls-remote`; and the default branch (HEAD).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { clone, fsck, lsRemote } from "../../helpers/git.ts";
import { commitOk, expectNothingWritten, lines, newRepo, put, refState, repoApi, startWorld, type TestRepo, type World } from "../../helpers/content.ts";

setDefaultTimeout(60_000);

let w: World;
let repo: TestRepo;
let c1: string;
let c2: string;
let tagObject: string; // an annotated tag pushed with git, pointing at c1
let blobId: string;
let treeId: string;
let work: string;

beforeAll(async () => {
  w = await startWorld("acme");
  repo = await newRepo(w, "refs");
  c1 = (await commitOk(repo.api, { message: "one", operations: [put("a.txt", "1\n")] })).commit;
  c2 = (await commitOk(repo.api, { message: "two", operations: [put("a.txt", "2\n")] })).commit;
  work = await clone(w.g, repo.url);
  await w.g.ok(["tag", "-a", "-m", "release one", "v1", c1], { cwd: work });
  await w.g.ok(["push", "-q", "origin", "v1"], { cwd: work });
  tagObject = await w.g.ok(["rev-parse", "v1"], { cwd: work });
  blobId = await w.g.ok(["rev-parse", `${c1}:a.txt`], { cwd: work });
  treeId = await w.g.ok(["rev-parse", `${c1}^{tree}`], { cwd: work });
}, 60_000);

afterAll(async () => {
  await w?.close();
}, 30_000);

/** Asserts the refs API and `git ls-remote` agree, and returns the refs. */
async function agreed(): Promise<Record<string, string>> {
  const s = await refState(w, repo);
  expect(s.api).toEqual(s.remote);
  return s.api;
}

describe("refs API", () => {
  test("the list shows every ref, as git ls-remote does", async () => {
    const r = await repo.api.refs();
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["refs"]);
    for (const ref of r.body.refs) expect(Object.keys(ref).sort()).toEqual(["name", "target"]);
    expect(await agreed()).toEqual({ "refs/heads/main": c2, "refs/tags/v1": tagObject });
  });

  test("create with expected null; 409 with current once it exists", async () => {
    const r = await repo.api.putRef("refs/heads/feature", { target: c1, expected: null });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name: "refs/heads/feature", target: c1 });
    expect((await agreed())["refs/heads/feature"]).toBe(c1);

    const again = await expectNothingWritten(w, repo, () => repo.api.putRef("refs/heads/feature", { target: c2, expected: null }));
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: expect.any(String), current: c1 });
  });

  test("move with expected = old; 409 with a stale expected; unconditional move (even backwards)", async () => {
    const moved = await repo.api.putRef("refs/heads/feature", { target: c2, expected: c1 });
    expect(moved).toMatchObject({ status: 200, body: { name: "refs/heads/feature", target: c2 } });
    expect((await agreed())["refs/heads/feature"]).toBe(c2);

    const stale = await expectNothingWritten(w, repo, () => repo.api.putRef("refs/heads/feature", { target: c1, expected: c1 }));
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ error: expect.any(String), current: c2 });

    // An expected value for a ref that does not exist: 409, current null.
    const missing = await expectNothingWritten(w, repo, () => repo.api.putRef("refs/heads/ghost", { target: c1, expected: c1 }));
    expect(missing.status).toBe(409);
    expect(missing.body).toEqual({ error: expect.any(String), current: null });

    const back = await repo.api.putRef("refs/heads/feature", { target: c1 });
    expect(back).toMatchObject({ status: 200, body: { name: "refs/heads/feature", target: c1 } });
    expect((await agreed())["refs/heads/feature"]).toBe(c1);
    // Unconditional also creates.
    expect((await repo.api.putRef("refs/heads/uncond", { target: c2 })).status).toBe(200);
    expect((await agreed())["refs/heads/uncond"]).toBe(c2);
  });

  test("the ref name may be sent with encoded slashes", async () => {
    const r = await repo.api.putRef("refs%2Fheads%2Fencoded", { target: c2, expected: null });
    expect(r).toMatchObject({ status: 200, body: { name: "refs/heads/encoded", target: c2 } });
    expect((await agreed())["refs/heads/encoded"]).toBe(c2);
    expect((await repo.api.deleteRef("refs%2Fheads%2Fencoded", c2)).status).toBe(204);
    expect((await agreed())["refs/heads/encoded"]).toBeUndefined();
  });

  test("tags may point at a commit or an annotated tag object; git peels the tag", async () => {
    expect(await repo.api.putRef("refs/tags/at-commit", { target: c2, expected: null })).toMatchObject({ status: 200, body: { target: c2 } });
    expect(await repo.api.putRef("refs/tags/at-tag", { target: tagObject, expected: null })).toMatchObject({ status: 200, body: { target: tagObject } });
    const refs = await agreed();
    expect(refs).toMatchObject({ "refs/tags/at-commit": c2, "refs/tags/at-tag": tagObject });
    const raw = lines(await w.g.ok(["ls-remote", repo.url, "refs/tags/at-tag*"]));
    expect(raw).toEqual([`${tagObject}\trefs/tags/at-tag`, `${c1}\trefs/tags/at-tag^{}`]);
    // A fresh fetch gets the tags and checks clean.
    await w.g.ok(["fetch", "-q", "--tags", "origin"], { cwd: work });
    expect(await w.g.ok(["rev-parse", "at-tag^{commit}", "at-commit"], { cwd: work })).toBe(`${c1}\n${c2}`);
    const f = await fsck(w.g, work);
    expect({ code: f.code, stderr: f.stderr }).toEqual({ code: 0, stderr: "" });
  });

  test("a target that is not a commit (or, for tags, not a commit or tag) or does not exist is 422", async () => {
    const other = await newRepo(w, "refs-other");
    const foreign = (await commitOk(other.api, { message: "elsewhere", operations: [put("z.txt", "z")] })).commit;
    const cases: [string, string][] = [
      ["refs/heads/to-blob", blobId],
      ["refs/heads/to-tree", treeId],
      ["refs/heads/to-tag", tagObject],
      ["refs/tags/tag-to-blob", blobId],
      ["refs/tags/tag-to-tree", treeId],
      ["refs/heads/to-nothing", "0123456789abcdef0123456789abcdef01234567"],
      ["refs/tags/tag-to-nothing", "0123456789abcdef0123456789abcdef01234567"],
      // An object of another repository does not exist in this one.
      ["refs/heads/to-foreign", foreign],
    ];
    for (const [name, target] of cases) {
      const r = await expectNothingWritten(w, repo, () => repo.api.putRef(name, { target, expected: null }));
      expect({ name, status: r.status, error: typeof r.body?.error }).toEqual({ name, status: 422, error: "string" });
    }
    // Moving an existing branch onto a blob is refused too.
    const r = await expectNothingWritten(w, repo, () => repo.api.putRef("refs/heads/main", { target: blobId }));
    expect(r.status).toBe(422);
  });

  test("invalid ref names and malformed ids are 400", async () => {
    const names = [
      "refs/heads/a..b",
      "heads/x",
      "refs/heads/x.lock",
      "refs/heads/with%20space",
      "refs/heads/x~1",
      "refs/heads/x%5E",
      "refs/heads/x:y",
      "refs/heads/a%2F%2Fb",
      "HEAD",
      "main",
      "refs/heads/x%5B",
      "refs/heads/@%7Bu%7D",
    ];
    for (const name of names) {
      const r = await expectNothingWritten(w, repo, () => repo.api.putRef(name, { target: c1, expected: null }));
      expect({ name, status: r.status }).toEqual({ name, status: 400 });
      const d = await expectNothingWritten(w, repo, () => repo.api.deleteRef(name));
      expect({ name, status: d.status }).toEqual({ name, status: 400 });
    }
    for (const body of [{ target: "abc" }, { target: c1.toUpperCase() }, { target: c1, expected: "abc" }, {}, { target: 42 }]) {
      const r = await expectNothingWritten(w, repo, () => repo.api.putRef("refs/heads/okname", body));
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
    }
    const d = await expectNothingWritten(w, repo, () => repo.api.deleteRef("refs/heads/main", "abc"));
    expect(d.status).toBe(400);
  });

  test("a ref nested under an existing ref, or above one, is refused and git can still clone", async () => {
    // git cannot hold refs/heads/feature and refs/heads/feature/sub at once (file vs directory).
    const r = await newRepo(w, "refs-df");
    const c = (await commitOk(r.api, { operations: [put("a", "a")] })).commit;
    expect((await r.api.putRef("refs/heads/deep/er", { target: c, expected: null })).status).toBe(200);
    for (const name of ["refs/heads/main/sub", "refs/heads/deep", "refs/heads/deep/er/est"]) {
      for (const body of [{ target: c, expected: null }, { target: c }]) {
        const res = await expectNothingWritten(w, r, () => r.api.putRef(name, body));
        expect({ name, body, status: res.status }).toEqual({ name, body, status: res.status === 409 ? 409 : 422 });
      }
    }
    const cl = await w.g.run(["clone", "-q", r.url, w.g.path("refs-df")]);
    expect({ code: cl.code, stderr: cl.stderr }).toEqual({ code: 0, stderr: "" });
  });

  test("delete: a stale expected is 409 with current; the right one 204; a missing ref 409 with current null", async () => {
    expect((await repo.api.putRef("refs/heads/doomed", { target: c2, expected: null })).status).toBe(200);
    const stale = await expectNothingWritten(w, repo, () => repo.api.deleteRef("refs/heads/doomed", c1));
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ error: expect.any(String), current: c2 });

    const ok = await repo.api.deleteRef("refs/heads/doomed", c2);
    expect(ok.status).toBe(204);
    expect((await agreed())["refs/heads/doomed"]).toBeUndefined();

    for (const expected of [undefined, c2]) {
      const gone = await expectNothingWritten(w, repo, () => repo.api.deleteRef("refs/heads/doomed", expected));
      expect(gone.status).toBe(409);
      expect(gone.body).toEqual({ error: expect.any(String), current: null });
    }
    // Without expected the delete is unconditional; tags delete the same way.
    expect((await repo.api.deleteRef("refs/heads/uncond")).status).toBe(204);
    expect((await repo.api.deleteRef("refs/tags/at-commit", c2)).status).toBe(204);
    const refs = await agreed();
    expect(refs["refs/heads/uncond"]).toBeUndefined();
    expect(refs["refs/tags/at-commit"]).toBeUndefined();
  });

  test("a branch created by the ref API is cloned by git with its history", async () => {
    expect((await repo.api.putRef("refs/heads/from-api", { target: c2, expected: null })).status).toBe(200);
    const dir = await clone(w.g, repo.url, ["-b", "from-api"]);
    expect(await w.g.ok(["log", "--format=%H", "HEAD"], { cwd: dir })).toBe(`${c2}\n${c1}`);
    const f = await fsck(w.g, dir);
    expect(f.code).toBe(0);
  });

  test("writes need repo:write: viewer and read token 403, anonymous 401, outsider 404; reads follow read access", async () => {
    const { viewer, outsider } = w;
    const callers: [string, string | undefined, number][] = [
      ["viewer", viewer.token, 403],
      ["read token", w.ownerReadToken, 403],
      ["anonymous", undefined, 401],
      ["outsider", outsider.token, 404],
    ];
    for (const [who, token, status] of callers) {
      const api = repoApi(w.server, "acme", repo.name, token);
      const put = await expectNothingWritten(w, repo, () => api.putRef("refs/heads/intruder", { target: c1 }));
      const moved = await expectNothingWritten(w, repo, () => api.putRef("refs/heads/main", { target: c1 }));
      const del = await expectNothingWritten(w, repo, () => api.deleteRef("refs/heads/feature"));
      expect({ who, put: put.status, moved: moved.status, del: del.status }).toEqual({ who, put: status, moved: status, del: status });
      const list = await api.refs();
      expect({ who, list: list.status }).toEqual({ who, list: status === 403 ? 200 : status });
    }
    const member = w.member;
    expect((await repoApi(w.server, "acme", repo.name, member.token).putRef("refs/heads/by-member", { target: c1, expected: null })).status).toBe(200);
    expect((await agreed())["refs/heads/by-member"]).toBe(c1);
  });
});

describe("default branch", () => {
  test("PATCH default_branch moves HEAD: a fresh clone checks out that branch; ls-remote --symref shows it", async () => {
    const r = await newRepo(w, "heads");
    const mainTip = (await commitOk(r.api, { message: "main", operations: [put("which.txt", "main\n")] })).commit;
    const dev = (await commitOk(r.api, { message: "develop", branch: "develop", expected_parent: null, operations: [put("which.txt", "develop\n")] })).commit;

    const before = await w.g.ok(["ls-remote", "--symref", r.url, "HEAD"]);
    expect(lines(before)).toEqual(["ref: refs/heads/main\tHEAD", `${mainTip}\tHEAD`]);

    const patched = await r.api.patchRepo({ default_branch: "develop" });
    expect(patched.status).toBe(200);
    expect(patched.body.default_branch).toBe("develop");
    expect((await r.api.c.get(r.api.base)).body.default_branch).toBe("develop");

    expect(lines(await w.g.ok(["ls-remote", "--symref", r.url, "HEAD"]))).toEqual(["ref: refs/heads/develop\tHEAD", `${dev}\tHEAD`]);
    const dir = await clone(w.g, r.url);
    expect(await w.g.ok(["rev-parse", "--abbrev-ref", "HEAD"], { cwd: dir })).toBe("develop");
    expect(await w.g.ok(["rev-parse", "HEAD"], { cwd: dir })).toBe(dev);
    expect(await w.g.ok(["show", "HEAD:which.txt"], { cwd: dir })).toBe("develop");
    expect(await w.g.ok(["symbolic-ref", "refs/remotes/origin/HEAD"], { cwd: dir })).toBe("refs/remotes/origin/develop");

    // The content API follows HEAD too: HEAD resolves to develop, and history defaults to it.
    const tree = await r.api.tree("HEAD");
    expect(tree).toMatchObject({ status: 200, body: { commit: dev } });
    expect((await r.api.log()).body.commits.map((c: { sha: string }) => c.sha)).toEqual([dev]);

    // And back.
    expect((await r.api.patchRepo({ default_branch: "main" })).status).toBe(200);
    const again = await clone(w.g, r.url);
    expect(await w.g.ok(["rev-parse", "--abbrev-ref", "HEAD"], { cwd: again })).toBe("main");
    expect((await lsRemote(w.g, r.url))["refs/heads/develop"]).toBe(dev);
  });
});
