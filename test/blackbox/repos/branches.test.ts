// Branch and tag lists (DECISIONS §5): GET …/branches and …/tags answer `{ branches|tags: [{ name,
// target, committed_at, … }], next_cursor }` by name, paged by limit and cursor, agreeing with
// `git ls-remote`; hostile names come back as they are; a private repository is the masked 404.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { initRepo } from "../../helpers/git.ts";
import { newRepo, startWorld, type TestRepo, type World } from "../../helpers/content.ts";
import { client } from "../../helpers/server.ts";

setDefaultTimeout(60_000);

let w: World;
let repo: TestRepo;
let work: string;
let c1: string;
let c2: string;
let tagObject: string;
const HOSTILE = `"><svg/onload=alert(1)>`;

beforeAll(async () => {
  w = await startWorld("lists");
  repo = await newRepo(w, "app");
  work = await initRepo(w.g, "app");
  const env = { GIT_COMMITTER_DATE: "1700000000 +0000", GIT_AUTHOR_DATE: "1700000000 +0000" };
  await w.g.ok(["commit", "-q", "--allow-empty", "-m", "one"], { cwd: work, env });
  c1 = await w.g.ok(["rev-parse", "HEAD"], { cwd: work });
  await w.g.ok(["commit", "-q", "--allow-empty", "-m", "two"], { cwd: work, env: { ...env, GIT_COMMITTER_DATE: "1700000100 +0000" } });
  c2 = await w.g.ok(["rev-parse", "HEAD"], { cwd: work });
  for (const b of ["feature/a", "feature/b", "zeta", "ünï", HOSTILE]) await w.g.ok(["branch", b, c1], { cwd: work });
  await w.g.ok(["tag", "-a", "-m", "annotated", "v1.0", c1], { cwd: work, env });
  await w.g.ok(["tag", "v2.0", c2], { cwd: work });
  const tree = await w.g.ok(["rev-parse", `${c1}^{tree}`], { cwd: work });
  await w.g.ok(["tag", "tree-tag", tree], { cwd: work });
  tagObject = await w.g.ok(["rev-parse", "v1.0"], { cwd: work });
  await w.g.ok(["push", "-q", repo.url, "--all"], { cwd: work });
  await w.g.ok(["push", "-q", repo.url, "--tags"], { cwd: work });
}, 60_000);

afterAll(async () => {
  await w?.close();
}, 30_000);

describe("branches", () => {
  test("every branch by name with its commit and committer time; the default marked", async () => {
    const r = await repo.api.c.get(`${repo.api.base}/branches`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      branches: [
        { name: HOSTILE, target: c1, committed_at: 1700000000000, default: false },
        { name: "feature/a", target: c1, committed_at: 1700000000000, default: false },
        { name: "feature/b", target: c1, committed_at: 1700000000000, default: false },
        { name: "main", target: c2, committed_at: 1700000100000, default: true },
        { name: "zeta", target: c1, committed_at: 1700000000000, default: false },
        { name: "ünï", target: c1, committed_at: 1700000000000, default: false },
      ],
      next_cursor: null,
    });
  });

  test("paged by limit and cursor, the pages together the whole list", async () => {
    const names: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await repo.api.c.get(`${repo.api.base}/branches?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.body.branches.length).toBeLessThanOrEqual(2);
      names.push(...r.body.branches.map((b: { name: string }) => b.name));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(names).toEqual([HOSTILE, "feature/a", "feature/b", "main", "zeta", "ünï"]);
    expect((await repo.api.c.get(`${repo.api.base}/branches?limit=0`)).status).toBe(400);
    expect((await repo.api.c.get(`${repo.api.base}/branches?cursor=nonsense`)).status).toBe(400);
  });
});

describe("tags", () => {
  test("tags by name: the ref's object, the commit it peels to and its time; a tag of a tree has none", async () => {
    const r = await repo.api.c.get(`${repo.api.base}/tags`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      tags: [
        { name: "tree-tag", target: expect.any(String), commit: null, committed_at: null },
        { name: "v1.0", target: tagObject, commit: c1, committed_at: 1700000000000 },
        { name: "v2.0", target: c2, commit: c2, committed_at: 1700000100000 },
      ],
      next_cursor: null,
    });
  });
});

describe("access", () => {
  test("a private repository: an outsider and anonymous get the answer of a missing repository", async () => {
    for (const kind of ["branches", "tags"]) {
      for (const who of [client(w.server, { token: w.outsider.token }), client(w.server)]) {
        const hidden = await who.get(`/v1/orgs/lists/repos/app/${kind}`);
        const missing = await who.get(`/v1/orgs/lists/repos/nothing/${kind}`);
        expect({ status: hidden.status, body: hidden.body }).toEqual({ status: missing.status, body: missing.body });
        expect([401, 404]).toContain(hidden.status);
      }
    }
  });

  test("a viewer reads both lists", async () => {
    const viewer = client(w.server, { token: w.viewer.token });
    expect((await viewer.get(`/v1/orgs/lists/repos/app/branches`)).status).toBe(200);
    expect((await viewer.get(`/v1/orgs/lists/repos/app/tags`)).status).toBe(200);
  });
});
