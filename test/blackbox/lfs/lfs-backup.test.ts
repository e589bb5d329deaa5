// Git LFS objects in backup, restore and fsck (issue 31): a backup holds them, a restored data
// dir serves them to the real `git lfs` client, and `svc fsck` checks each one's size and SHA-256.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRepo, repoUrl, setupOwner, type GitSandbox, type OrgOwner } from "../../helpers/git.ts";
import { runSvc, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";
import { dbRows } from "../ci/helpers.ts";
import { lfsRepo, lfsSandbox, oidOf, randomFiles, sameFiles } from "./lfs-helpers.ts";

setDefaultTimeout(90_000);

describe("Git LFS in backup, restore and fsck", () => {
  let server: RunningServer;
  let restored: RunningServer;
  let g: GitSandbox;
  let owner: OrgOwner;
  const scratch = tempDir("svc-lfs-backup-");
  const files = randomFiles(["x.bin", "y.bin"], 120 * 1024);

  beforeAll(async () => {
    server = await startServer();
    g = await lfsSandbox();
    owner = await setupOwner(server, "acme");
    await createRepo(server, owner, "assets");
    const dir = await lfsRepo(g, files);
    await g.ok(["push", "-q", repoUrl(server, "acme", "assets", owner.token), "main"], { cwd: dir });
  });

  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
    await restored?.stop();
    g?.[Symbol.dispose]();
    scratch[Symbol.dispose]();
  });

  test("backup → restore → clone brings the LFS files back byte-identical; fsck counts them", async () => {
    const to = join(scratch.path, "backup");
    const b = await server.cli(["backup", "--to", to]);
    expect({ code: b.code, stderr: b.stderr.includes("error") }).toEqual({ code: 0, stderr: false });
    const manifest = readFileSync(join(to, "manifest.json"), "utf8");
    for (const bytes of Object.values(files)) expect(manifest).toContain(oidOf(bytes));
    const dataDir = join(scratch.path, "restored");
    const r = await runSvc(["restore", "--from", to], { SVC_DATA_DIR: dataDir, SVC_LOG: "warn" });
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 });
    restored = await startServer({ dataDir });
    const clone = g.path("restored-clone");
    await g.ok(["clone", "-q", repoUrl(restored, "acme", "assets", owner.token), clone]);
    expect(sameFiles(clone, files)).toBe(true);
    const f = await restored.cli(["fsck"]);
    expect({ code: f.code, orphans: f.stdout.split("\n").filter((l) => l.startsWith("orphan")) }).toEqual({ code: 0, orphans: [] });
    expect(f.stdout).toMatch(/^acme\/assets: ok \(.*, 2 LFS objects \(240\.0 KiB\)\)$/m);
  });

  test("fsck finds a corrupted and a missing LFS object", async () => {
    const repoId = dbRows<{ id: string }>(restored, "SELECT id FROM repos WHERE name = 'assets'")[0]!.id;
    const [x, y] = [oidOf(files["x.bin"]!), oidOf(files["y.bin"]!)];
    const path = (oid: string) => join(restored.dataDir, "objects", "lfs", repoId, oid.slice(0, 2), oid);
    const bytes = readFileSync(path(x));
    bytes[1000] = bytes[1000]! ^ 0xff;
    writeFileSync(path(x), bytes);
    rmSync(path(y));
    const f = await restored.cli(["fsck"]);
    expect(f.code).toBe(1);
    expect(f.stdout).toContain(`LFS object ${x}: its bytes hash to ${oidOf(bytes)} (contents changed)`);
    expect(f.stdout).toContain(`LFS object ${y}: missing (lfs/${repoId}/${y.slice(0, 2)}/${y})`);
  });
});
