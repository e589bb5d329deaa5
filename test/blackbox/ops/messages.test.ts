// Clear messages where people get stuck (issue 18), seen with the real git CLI and the API:
// an account password over git HTTP, a push to a missing repository, a blob request on a
// directory, and revisions written the way git users write them (abbreviated ids, ~N, ^).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, startServer, type RunningServer } from "../../helpers/server.ts";
import { commitFiles, createRepo, gitSandbox, importHistory, initRepo, repoUrl, setupOwner, type GitSandbox, type OrgOwner } from "../../helpers/git.ts";

let server: RunningServer;
let g: GitSandbox;
let owner: OrgOwner;
let work: string;
/** Commits of main, oldest first: c0 ← c1 ← c2, then a merge m of c2 and side. */
const c: string[] = [];
let side: string;
let merge: string;

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox();
  owner = await setupOwner(server, "stuck");
  await createRepo(server, owner, "app");
  work = await initRepo(g);
  c.push(await commitFiles(g, work, { "README.md": "zero\n", "docs/guide.md": "guide\n" }, "c0"));
  c.push(await commitFiles(g, work, { "README.md": "one\n" }, "c1"));
  c.push(await commitFiles(g, work, { "README.md": "two\n" }, "c2"));
  await g.ok(["checkout", "-q", "-b", "side", c[1]!], { cwd: work });
  side = await commitFiles(g, work, { "side.txt": "side\n" }, "side");
  await g.ok(["checkout", "-q", "main"], { cwd: work });
  await g.ok(["merge", "-q", "--no-ff", "-m", "merge side", "side"], { cwd: work });
  merge = await g.ok(["rev-parse", "HEAD"], { cwd: work });
  await g.ok(["push", "-q", repoUrl(server, "stuck", "app", owner.token), "main", "side"], { cwd: work });
}, 60_000);

afterAll(async () => {
  g?.[Symbol.dispose]();
  await server?.[Symbol.asyncDispose]();
});

describe("git over HTTP with an account password", () => {
  test("clone: git shows `remote: passwords are not accepted for git; use a token`", async () => {
    const u = new URL(server.url);
    const url = `${u.protocol}//${encodeURIComponent(owner.email)}:${encodeURIComponent("correct horse battery staple")}@${u.host}/stuck/app.git`;
    const r = await g.run(["clone", url, g.path("pw")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("remote: passwords are not accepted for git; use a token");
  }, 30_000);

  test("push: the same words", async () => {
    const u = new URL(server.url);
    const url = `${u.protocol}//someone:not-a-token-at-all@${u.host}/stuck/app.git`;
    const r = await g.run(["push", url, "main"], { cwd: work });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("remote: passwords are not accepted for git; use a token");
  }, 30_000);

  test("a token-shaped but revoked or wrong secret is still `invalid credentials`", async () => {
    const bogus = `svc_${"a".repeat(16)}_${"b".repeat(32)}`;
    const r = await g.run(["clone", repoUrl(server, "stuck", "app", bogus), g.path("bogus")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("remote: invalid credentials");
    expect(r.stderr).not.toContain("passwords");
  }, 30_000);

  test("the token in either field still works", async () => {
    for (const field of ["user", "password"] as const) {
      const r = await g.run(["ls-remote", repoUrl(server, "stuck", "app", owner.token, field)]);
      expect(r.code).toBe(0);
    }
  }, 30_000);
});

describe("pushing to a repository that does not exist", () => {
  test("git shows how to create it", async () => {
    const r = await g.run(["push", repoUrl(server, "stuck", "nowhere", owner.token), "main"], { cwd: work });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('remote: repository not found; create it first (POST /v1/orgs/stuck/repos with {"name":"nowhere"}), then push again');
  }, 30_000);

  test("a clone of a missing repository gets no creation hint", async () => {
    const r = await g.run(["clone", repoUrl(server, "stuck", "nowhere", owner.token), g.path("nowhere")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).not.toContain("create it first");
  }, 30_000);

  test("a private repository of another org answers exactly like a missing one", async () => {
    const other = await setupOwner(server, "elsewhere");
    await createRepo(server, other, "secret");
    const hidden = await g.run(["push", repoUrl(server, "elsewhere", "secret", owner.token), "main"], { cwd: work });
    const missing = await g.run(["push", repoUrl(server, "elsewhere", "absent", owner.token), "main"], { cwd: work });
    const remoteLines = (s: string) =>
      s
        .split("\n")
        .filter((l) => l.startsWith("remote:"))
        .map((l) => l.replace(/secret|absent/g, "NAME"));
    expect(remoteLines(hidden.stderr)).toEqual(remoteLines(missing.stderr));
  }, 30_000);
});

describe("a blob request on a directory", () => {
  test("404 that points at the tree route", async () => {
    const api = client(server, { token: owner.token });
    const r = await api.get("/v1/orgs/stuck/repos/app/blob/main?path=docs");
    expect(r.status).toBe(404);
    expect(r.body.error).toContain("is a directory");
    expect(r.body.error).toContain("/v1/orgs/stuck/repos/app/tree/main?path=docs");
    const tree = await api.get("/v1/orgs/stuck/repos/app/tree/main?path=docs");
    expect(tree.status).toBe(200);
    expect(tree.body.entries.map((e: { name: string }) => e.name)).toEqual(["guide.md"]);
  });

  test("a missing file is still the plain 404", async () => {
    const r = await client(server, { token: owner.token }).get("/v1/orgs/stuck/repos/app/blob/main?path=nope.txt");
    expect(r.status).toBe(404);
    expect(r.body.error).not.toContain("directory");
  });
});

describe("revisions as git users write them", () => {
  const api = () => client(server, { token: owner.token });
  const treeCommit = async (rev: string) => {
    const r = await api().get(`/v1/orgs/stuck/repos/app/tree/${encodeURIComponent(rev)}`);
    return r.status === 200 ? r.body.commit : r.status;
  };

  test("a unique abbreviated commit id, 4 to 39 digits, any case", async () => {
    expect(await treeCommit(c[1]!.slice(0, 7))).toBe(c[1]);
    expect(await treeCommit(c[1]!.slice(0, 12).toUpperCase())).toBe(c[1]);
    expect(await treeCommit(c[0]!)).toBe(c[0]);
  });

  test("~N follows first parents; ^ and ^N pick a parent; they combine", async () => {
    expect(await treeCommit("main~1")).toBe(c[2]);
    expect(await treeCommit("main~3")).toBe(c[0]);
    expect(await treeCommit("main^")).toBe(c[2]);
    expect(await treeCommit("main^2")).toBe(side);
    expect(await treeCommit("main^2~1")).toBe(c[1]);
    expect(await treeCommit("main^^")).toBe(c[1]);
    expect(await treeCommit("HEAD~2")).toBe(c[1]);
    expect(await treeCommit(`${merge.slice(0, 8)}~1`)).toBe(c[2]);
    expect(await treeCommit("main^0")).toBe(merge);
  });

  test("blob, history and single-commit routes take them too", async () => {
    const blob = await fetch(`${server.url}/v1/orgs/stuck/repos/app/blob/main~2?path=README.md`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(blob.status).toBe(200);
    expect(await blob.text()).toBe("one\n");
    const one = await api().get(`/v1/orgs/stuck/repos/app/commits/${c[1]!.slice(0, 9)}`);
    expect(one.status).toBe(200);
    expect(one.body.sha).toBe(c[1]);
    const parent = await api().get(`/v1/orgs/stuck/repos/app/commits/${c[2]!.slice(0, 9)}~1`);
    expect(parent.body.sha).toBe(c[1]);
    const history = await api().get("/v1/orgs/stuck/repos/app/commits?ref=main~1");
    expect(history.body.commits.map((x: { sha: string }) => x.sha)).toEqual([c[2], c[1], c[0]]);
  });

  test("past the root, malformed suffixes, unknown or too-short ids: 404", async () => {
    for (const rev of ["main~4", "main^3", "main~x", "main~~^a", "~1", c[0]!.slice(0, 3), "0000000", "nosuch~1"]) expect(await treeCommit(rev)).toBe(404);
  });

  test("an ambiguous abbreviation is refused and says so", async () => {
    // Abbreviations name commits and tags (docs/architecture.md "Reachability is the boundary"):
    // enough commits that two share their first four hex digits (a signed-in caller may use 4).
    await importHistory(g, work, { ref: "refs/heads/many", count: 1500, from: "refs/heads/main^0", label: "many" });
    await g.ok(["push", "-q", repoUrl(server, "stuck", "app", owner.token), "many"], { cwd: work });
    const oids = (await g.ok(["rev-list", "many"], { cwd: work })).split("\n");
    const byPrefix = new Map<string, number>();
    for (const o of oids) byPrefix.set(o.slice(0, 4), (byPrefix.get(o.slice(0, 4)) ?? 0) + 1);
    const shared = [...byPrefix].find(([, n]) => n > 1)![0];
    const r = await api().get(`/v1/orgs/stuck/repos/app/tree/${shared}`);
    expect(r.status).toBe(404);
    expect(r.body.error).toContain("ambiguous");
  }, 60_000);
});
