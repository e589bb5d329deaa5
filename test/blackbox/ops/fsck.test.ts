// `svc fsck [--repo org/name]` (DECISIONS §4): clean repositories pass; a changed, truncated or
// missing pack or idx, and a ref whose history has a hole, are each named and exit 1; orphan
// files are reported without failing; --repo limits the check.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type RunningServer, serverDb } from "../../helpers/server.ts";
import { commitFiles, createRepo, gitSandbox, initRepo, repoUrl, setupOwner, type GitSandbox, type OrgOwner } from "../../helpers/git.ts";

let g: GitSandbox;
afterAll(() => g?.[Symbol.dispose]());
beforeAll(() => {
  g = gitSandbox();
});

/** A server with repositories `names` of org `org`, each with two pushes (two packs). */
async function serverWith(org: string, names: string[]): Promise<{ server: RunningServer; owner: OrgOwner; ids: Map<string, string> }> {
  const server = await startServer();
  const owner = await setupOwner(server, org);
  const ids = new Map<string, string>();
  for (const name of names) {
    const before = new Set(listRepoDirs(server));
    await createRepo(server, owner, name);
    const dir = await initRepo(g, name);
    await commitFiles(g, dir, { "a.txt": `${name} one\n` }, "one");
    await g.ok(["push", "-q", repoUrl(server, org, name, owner.token), "main"], { cwd: dir });
    await commitFiles(g, dir, { "b.txt": `${name} two\n` }, "two");
    await g.ok(["push", "-q", repoUrl(server, org, name, owner.token), "main"], { cwd: dir });
    ids.set(name, listRepoDirs(server).find((d) => !before.has(d))!);
  }
  return { server, owner, ids };
}

/** Repository ids that have stored objects (fs storage). */
function listRepoDirs(server: RunningServer): string[] {
  try {
    return readdirSync(join(server.dataDir, "objects", "repos"));
  } catch {
    return [];
  }
}

/** The pack files of a repository (fs storage), full paths, `.pack` before `.idx` of each. */
function packFiles(server: RunningServer, repoId: string, ext: "pack" | "idx"): string[] {
  const dir = join(server.dataDir, "objects", "repos", repoId, "packs");
  return readdirSync(dir)
    .filter((f) => f.endsWith(`.${ext}`))
    .sort()
    .map((f) => join(dir, f));
}

describe("a sound data dir", () => {
  test("every repository ok, exit 0, a summary on stderr", async () => {
    const { server } = await serverWith("sound", ["one", "two"]);
    await using _ = server;
    const r = await server.cli(["fsck"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sound\/one: ok \(2 packs, \d+ objects, 1 refs\)$/m);
    expect(r.stdout).toMatch(/^sound\/two: ok \(2 packs, \d+ objects, 1 refs\)$/m);
    expect(r.stderr).toContain("fsck: 2 repositories checked, 0 with problems, 0 orphan files");
    expect(r.stdout + r.stderr).not.toContain("\u001b[");
  }, 60_000);
});

describe("damage is found, named, and fails the run", () => {
  let server: RunningServer;
  let ids: Map<string, string>;
  beforeAll(async () => {
    ({ server, ids } = await serverWith("hurt", ["flipped", "truncated", "missing", "holed", "fine"]));
  }, 90_000);
  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
  });

  test("each kind of damage in its repository; the rest stay ok; exit 1", async () => {
    // A changed byte inside a pack.
    const flipped = packFiles(server, ids.get("flipped")!, "pack")[0]!;
    const bytes = readFileSync(flipped);
    bytes[bytes.length - 30] = bytes[bytes.length - 30]! ^ 0x01;
    writeFileSync(flipped, bytes);
    // A truncated idx.
    const idx = packFiles(server, ids.get("truncated")!, "idx")[0]!;
    truncateSync(idx, readFileSync(idx).length - 7);
    // A pack file gone.
    rmSync(packFiles(server, ids.get("missing")!, "pack")[1]!);
    // A ref moved past what is stored (as a bad restore or a hand edit would leave it).
    const db = serverDb(server);
    db.run("UPDATE refs SET target = ? WHERE repo_id = ?", ["1234567890abcdef1234567890abcdef12345678", ids.get("holed")!]);
    db.close();

    const r = await server.cli(["fsck"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^hurt\/flipped: 1 problem .*\n {2}pack-[0-9a-f]{40}\.pack: checksum mismatch/m);
    expect(r.stdout).toMatch(/^hurt\/truncated: 1 problem .*\n {2}pack-[0-9a-f]{40}\.idx: \d+ bytes, recorded \d+/m);
    expect(r.stdout).toMatch(/^hurt\/missing: 1 problem .*\n {2}pack-[0-9a-f]{40}\.pack: missing/m);
    expect(r.stdout).toMatch(
      /^hurt\/holed: 1 problem .*\n {2}refs\/heads\/main \(1234567890abcdef1234567890abcdef12345678\): missing necessary object 1234567890abcdef1234567890abcdef12345678/m,
    );
    expect(r.stdout).toMatch(/^hurt\/fine: ok/m);
    expect(r.stderr).toContain("5 repositories checked, 4 with problems");
  }, 60_000);

  test("--repo checks one repository: a sound one exits 0 even beside damaged ones", async () => {
    const fine = await server.cli(["fsck", "--repo", "hurt/fine"]);
    expect(fine.code).toBe(0);
    expect(fine.stdout.trim().split("\n")).toEqual([expect.stringMatching(/^hurt\/fine: ok/)]);
    const bad = await server.cli(["fsck", "--repo", "HURT/Flipped"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("hurt/flipped: 1 problem");
    expect(bad.stdout).not.toContain("hurt/fine");
  }, 60_000);

  test("--repo naming no repository: exit 1 and a message", async () => {
    for (const name of ["hurt/none", "nobody/fine", "no-slash"]) {
      const r = await server.cli(["fsck", "--repo", name]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`no repository ${name}`);
    }
  }, 60_000);
});

describe("orphans", () => {
  test("a file no pack row names is reported, and the run still passes", async () => {
    const { server, ids } = await serverWith("lonely", ["repo"]);
    await using _ = server;
    const id = ids.get("repo")!;
    const pack = packFiles(server, id, "pack")[0]!;
    const stray = join(server.dataDir, "objects", "repos", id, "packs", `pack-${"ab".repeat(20)}.pack`);
    copyFileSync(pack, stray);
    const r = await server.cli(["fsck"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`orphan repos/${id}/packs/pack-${"ab".repeat(20)}.pack`);
    expect(r.stdout).toContain("no pack row");
    expect(r.stderr).toContain("1 orphan file");
    const one = await server.cli(["fsck", "--repo", "lonely/repo"]);
    expect(one.stdout).toContain("orphan ");
  }, 60_000);
});
