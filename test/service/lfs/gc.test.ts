// The LFS GC (issue 31): an object no reachable commit of the network points at is deleted once
// older than the grace period; a referenced one stays, whatever its age. A real server in this
// process (so the test can move the service clock) and the real `git lfs` client.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import { gitHandler } from "../../../src/http/git.ts";
import { startHttp } from "../../../src/http/server.ts";
import { setClock } from "../../../src/services/context.ts";
import { collectLfsGarbage, LFS_GC_GRACE_MS } from "../../../src/services/lfs/gc.ts";
import { lfsObjectKey } from "../../../src/services/lfs/lfs.ts";
import { openAppNode, signedInOwner, type AppNode } from "../../helpers/app-node.ts";
import type { GitSandbox } from "../../helpers/git.ts";
import { batchBody, lfsRepo, lfsSandbox, oidOf, postBatch, randomFiles, sameFiles } from "../../blackbox/lfs/lfs-helpers.ts";

setDefaultTimeout(60_000);

let root: string;
let node: AppNode;
let server: Server<undefined>;
let g: GitSandbox;
let url: string;
let auth: Record<string, string>;
let repoId: string;
let owner: Awaited<ReturnType<typeof signedInOwner>>;

beforeAll(async () => {
  // The key LFS credentials are signed with (PostgreSQL with local storage has no other).
  root = mkdtempSync(join(tmpdir(), "svc-lfs-gc-"));
  node = await openAppNode({ SVC_DATA_DIR: join(root, "data"), SVC_SECRETS_KEY: "5a".repeat(32) });
  server = startHttp(node.ctx, { hostname: "127.0.0.1", port: 0, git: gitHandler(node.ctx) });
  // The batch API's hrefs name the base URL: the address this test's server is bound to.
  (node.ctx as { baseUrl: string }).baseUrl = `http://127.0.0.1:${server.port}`;
  owner = await signedInOwner(node, "acme");
  const repo = await owner("POST", "/v1/orgs/acme/repos", { name: "assets" });
  expect(repo.status).toBe(201);
  repoId = repo.body.id;
  const token = (await owner("POST", "/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "lfs" })).body.token;
  url = `http://x-token:${token}@127.0.0.1:${server.port}/acme/assets.git`;
  auth = { authorization: `Basic ${btoa(`x-token:${token}`)}` };
  g = await lfsSandbox();
});

afterAll(async () => {
  await server?.stop(true);
  g?.[Symbol.dispose]();
  node?.ctx.close();
  rmSync(root, { recursive: true, force: true });
});

const stored = (oid: string) => existsSync(join(node.ctx.config.dataDir, "objects", lfsObjectKey(repoId, oid)));

test("GC keeps a referenced object and deletes an unreferenced one once past the grace period", async () => {
  const keep = randomFiles(["keep.bin"], 30_000);
  const dir = await lfsRepo(g, keep);
  await g.ok(["push", "-q", url, "main"], { cwd: dir });
  // An object uploaded for a commit that never reached the server (a branch never pushed).
  await g.ok(["checkout", "-q", "-b", "side"], { cwd: dir });
  const drop = randomFiles(["drop.bin"], 20_000);
  await Bun.write(join(dir, "drop.bin"), drop["drop.bin"]!);
  await g.ok(["add", "drop.bin"], { cwd: dir });
  await g.ok(["commit", "-q", "-m", "side"], { cwd: dir });
  await g.ok(["lfs", "push", url, "side"], { cwd: dir });
  const keepOid = oidOf(keep["keep.bin"]!);
  const dropOid = oidOf(drop["drop.bin"]!);
  expect([stored(keepOid), stored(dropOid)]).toEqual([true, true]);
  // Both count toward the repository's usage (the query on either database).
  const usage = await owner("GET", "/v1/orgs/acme/usage");
  expect(usage.body.repos[0].bytes).toBeGreaterThan(50_000);

  // Within the grace period nothing goes.
  expect(await collectLfsGarbage(node.ctx)).toEqual({ networks: 1, skipped: 0, kept: 2, deleted: 0, orphans: 0, temps: 0 });
  const restore = setClock(() => Date.now() + LFS_GC_GRACE_MS + 60_000);
  try {
    expect(await collectLfsGarbage(node.ctx)).toEqual({ networks: 1, skipped: 0, kept: 1, deleted: 1, orphans: 0, temps: 0 });
  } finally {
    restore();
  }
  expect([stored(keepOid), stored(dropOid)]).toEqual([true, false]);
  // The referenced file still clones.
  const clone = g.path("clone");
  await g.ok(["clone", "-q", url, clone]);
  expect(sameFiles(clone, keep)).toBe(true);
});

test("a file with no row (an upload never verified) is deleted after the grace period, not before", async () => {
  const oid = "ab".repeat(32);
  await node.ctx.store.put(lfsObjectKey(repoId, oid), new Uint8Array([1, 2, 3]));
  expect((await collectLfsGarbage(node.ctx)).orphans).toBe(0);
  expect(stored(oid)).toBe(true);
  const restore = setClock(() => Date.now() + LFS_GC_GRACE_MS + 60_000);
  try {
    expect((await collectLfsGarbage(node.ctx)).orphans).toBe(1);
  } finally {
    restore();
  }
  expect(stored(oid)).toBe(false);
});

test("an object a batch offers as already held after the walk survives the pass (its push is on the way)", async () => {
  // Uploaded with the batch API and the fs transfer, referenced by no commit.
  const bytes = randomFiles(["late.bin"], 10_000)["late.bin"]!;
  const oid = oidOf(bytes);
  const base = `http://127.0.0.1:${server.port}`;
  const up = await postBatch(base, "acme", "assets", batchBody("upload", [{ oid, size: bytes.length }]), auth);
  const action = up.body.objects[0].actions.upload;
  expect((await fetch(action.href, { method: "PUT", headers: action.header, body: Buffer.from(bytes) })).status).toBe(200);
  expect(stored(oid)).toBe(true);

  const later = Date.now() + LFS_GC_GRACE_MS + 60_000;
  let restore = setClock(() => later);
  try {
    // Between the walk (which found no pointer to it) and the delete, a client's batch is told the
    // server has it: no upload action. The deleting transaction re-reads the row and keeps it.
    const offered: unknown[] = [];
    const report = await collectLfsGarbage(node.ctx, {
      beforeDelete: async (_network, judged) => {
        if (judged !== oid) return;
        const again = await postBatch(base, "acme", "assets", batchBody("upload", [{ oid, size: bytes.length }]), auth);
        offered.push(again.body.objects[0]);
      },
    });
    expect(offered).toEqual([{ oid, size: bytes.length, authenticated: true }]);
    expect(report.deleted).toBe(0);
    expect(stored(oid)).toBe(true);
  } finally {
    restore();
  }
  // Past the grace counted from that batch, with still nothing pointing at it, it goes; a batch
  // then asks for an upload again.
  restore = setClock(() => later + LFS_GC_GRACE_MS + 60_000);
  try {
    expect((await collectLfsGarbage(node.ctx)).deleted).toBe(1);
    expect(stored(oid)).toBe(false);
    const after = await postBatch(base, "acme", "assets", batchBody("upload", [{ oid, size: bytes.length }]), auth);
    expect(Object.keys(after.body.objects[0].actions)).toEqual(["upload"]);
  } finally {
    restore();
  }
});

test("an fs upload's temp file left by a crash is deleted after the grace period, not before; other temp files are left alone", async () => {
  const left = join(node.ctx.tmpDir, "lfs-left-by-a-crash");
  const other = join(node.ctx.tmpDir, "copy-not-ours");
  await Bun.write(left, "partial body");
  await Bun.write(other, "someone else's");
  expect((await collectLfsGarbage(node.ctx)).temps).toBe(0);
  expect(existsSync(left)).toBe(true);
  const restore = setClock(() => Date.now() + LFS_GC_GRACE_MS + 60_000);
  try {
    expect((await collectLfsGarbage(node.ctx)).temps).toBe(1);
  } finally {
    restore();
  }
  expect([existsSync(left), existsSync(other)]).toEqual([false, true]);
});
