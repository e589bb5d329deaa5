// Pack maintenance as an operator sees it: many writes leave many packs; `svc gc` (run beside the
// live server) repacks everything reachable into one pack; clones before and after agree and are
// fsck-clean; a second GC finds nothing to do; a deleted repository's objects are purged.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { clone, commitFiles, createRepo, fsck, gitSandbox, initRepo, lsRemote, repoUrl, setupOwner, type OrgOwner } from "../../helpers/git.ts";
import { client, startServer, type RunningServer, serverDb } from "../../helpers/server.ts";

setDefaultTimeout(60_000);

let server: RunningServer;
let owner: OrgOwner;
const g = gitSandbox("svc-gc-");

beforeAll(async () => {
  server = await startServer();
  owner = await setupOwner(server, "maint");
  await createRepo(server, owner, "busy");
  const api = client(server, { token: owner.token });
  // Seven API commits and a deletion: eight writes, each publishing its own small pack.
  for (let i = 0; i < 7; i++) {
    const r = await api.post("/v1/orgs/maint/repos/busy/commits", { message: `c${i}`, operations: [{ op: "put", path: `f/${i}.txt`, content: `${i}\n` }] });
    expect(r.status).toBe(201);
  }
  const r = await api.post("/v1/orgs/maint/repos/busy/commits", { message: "drop", operations: [{ op: "delete", path: "f/0.txt" }] });
  expect(r.status).toBe(201);
});

afterAll(async () => {
  await server.stop();
  g[Symbol.dispose]();
});

function packFiles(repoId: string): string[] {
  try {
    return readdirSync(join(server.dataDir, "objects", "repos", repoId, "packs")).filter((f) => f.endsWith(".pack"));
  } catch {
    return [];
  }
}

test("svc gc repacks into one pack while the server runs; clones agree and fsck clean", async () => {
  const url = repoUrl(server, "maint", "busy", owner.token);
  const before = await lsRemote(g, url);
  const dirBefore = await clone(g, url);

  const gc = await server.cli(["gc", "--repo", "maint/busy"]);
  expect(gc.code).toBe(0);
  const report = JSON.parse(gc.stdout.trim());
  expect(report.repo).toBe("maint/busy");
  expect(report.packs_replaced).toBeGreaterThanOrEqual(2);
  expect(report.objects).toBeGreaterThan(0);

  // The server picks up the new pack list on its next request.
  expect(await lsRemote(g, url)).toEqual(before);
  const dirAfter = await clone(g, url);
  expect((await fsck(g, dirAfter)).code).toBe(0);
  expect(await g.ok(["-C", dirAfter, "log", "--format=%H"])).toBe(await g.ok(["-C", dirBefore, "log", "--format=%H"]));
  expect(await g.ok(["-C", dirAfter, "ls-files"])).toBe(["f/1.txt", "f/2.txt", "f/3.txt", "f/4.txt", "f/5.txt", "f/6.txt"].join("\n"));

  // Everything reachable is now in one pack: a second pass has nothing to replace.
  const again = JSON.parse((await server.cli(["gc", "--repo", "maint/busy"])).stdout.trim());
  expect(again.packs_replaced).toBe(0);
});

/** Live pack rows of a repository, read from the server's database. */
function livePacks(repo: string): { name: string; reach_tips: string | null }[] {
  const db = serverDb(server, { readonly: true });
  try {
    return db.query("select p.name, p.reach_tips from packs p join repos r on r.id = p.repo_id where r.name = ? and p.replaced_at is null").all(repo) as {
      name: string;
      reach_tips: string | null;
    }[];
  } finally {
    db.close();
  }
}

test("reachability records: the first push and a GC pack record their tips; clones after more pushes stay exact", async () => {
  await createRepo(server, owner, "records");
  const url = repoUrl(server, "maint", "records", owner.token);
  const work = await initRepo(g, "records");
  const first = await commitFiles(g, work, { "a.txt": "a\n", "dir/b.txt": "b\n" }, "one");
  await g.ok(["push", url, "HEAD:refs/heads/main"], { cwd: work });
  // The first push into an empty repository is exactly what its tip reaches.
  expect(livePacks("records")).toEqual([{ name: expect.any(String), reach_tips: first }]);

  await commitFiles(g, work, { "a.txt": "a2\n" }, "two");
  await g.ok(["push", url, "HEAD:refs/heads/main", "HEAD~1:refs/heads/stable"], { cwd: work });
  const gc = JSON.parse((await server.cli(["gc", "--repo", "maint/records"])).stdout.trim());
  expect(gc.packs_replaced).toBe(2);
  const recorded = livePacks("records");
  expect(recorded.length).toBe(1);
  // Both refs' targets, less stable's: main reaches it.
  expect(recorded[0]!.reach_tips).toBe((await lsRemote(g, url))["refs/heads/main"]!);

  // A fast-forward after the GC: the clone walks only the new commit, and is exact and fsck-clean.
  const third = await commitFiles(g, work, { "c.txt": "c\n" }, "three");
  await g.ok(["push", url, "HEAD:refs/heads/main"], { cwd: work });
  // The stable branch deleted: it was left out of the record, which main's fast-forward meets.
  await g.ok(["push", url, ":refs/heads/stable"], { cwd: work });
  const dir = await clone(g, url, ["--bare"]);
  expect((await fsck(g, dir)).code).toBe(0);
  expect(await g.ok(["-C", dir, "rev-parse", "main"])).toBe(third);
  const inPack = Number(/in-pack: (\d+)/.exec(await g.ok(["-C", dir, "count-objects", "-v"]))![1]);
  expect(inPack).toBe((await g.ok(["-C", work, "rev-list", "--objects", "main"])).split("\n").length);
});

test("svc gc names an unknown repository and exits non-zero", async () => {
  const r = await server.cli(["gc", "--repo", "maint/nope"]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain("maint/nope");
});

test("deleting a repository purges its stored objects in the background", async () => {
  await createRepo(server, owner, "doomed");
  const api = client(server, { token: owner.token });
  const repo = (await api.get("/v1/orgs/maint/repos/doomed")).body;
  await api.post("/v1/orgs/maint/repos/doomed/commits", { message: "x", operations: [{ op: "put", path: "a", content: "a" }] });
  expect(packFiles(repo.id).length).toBe(1);
  expect((await api.delete("/v1/orgs/maint/repos/doomed")).status).toBe(204);
  // The purge job runs in the server's worker loop; wait for its effect (bounded, event-driven polling of the folder).
  const deadline = Date.now() + 30_000;
  while (packFiles(repo.id).length > 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  expect(packFiles(repo.id)).toEqual([]);
});
