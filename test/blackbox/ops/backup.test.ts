// Backup and restore (DECISIONS §4, issue 18): `svc backup` while pushes run makes a consistent
// snapshot; `svc restore` into a new data dir gives a server whose every repository clones with
// `git fsck` clean; restore never overwrites; a damaged backup is refused by its checksums; an
// S3 prefix works as target and source.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { client, runSvc, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";
import {
  clone,
  commitFiles,
  createRepo,
  fsck,
  gitSandbox,
  importHistory,
  initRepo,
  repoUrl,
  setupOwner,
  type GitSandbox,
  type OrgOwner,
} from "../../helpers/git.ts";
import { startS3rver, type S3rverHandle } from "../../helpers/s3rver.ts";

const REPOS = ["alpha", "beta", "gamma"];
const ROUNDS = 4;

let server: RunningServer;
let g: GitSandbox;
let owner: OrgOwner;
let scratch: ReturnType<typeof tempDir>;
/** Local working repositories, one per server repository. */
const work = new Map<string, string>();
let backupDir: string;
let backupRun: { code: number; stdout: string; stderr: string };
/** Pushes that completed while `svc backup` ran. */
let pushesDuringBackup = 0;

/** Every file under a directory, relative. */
function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(dir, join(prefix, e.name)) : [join(prefix, e.name)],
  );
}

/** Clones every repository of `on` with the owner's token; each clone must pass git fsck. Answers refs by repository. */
async function cloneAll(on: RunningServer): Promise<Map<string, string>> {
  const listed = await client(on, { token: owner.token }).get("/v1/orgs/keep/repos");
  expect(listed.status).toBe(200);
  expect(listed.body.repos.map((r: { name: string }) => r.name).sort()).toEqual(REPOS);
  const tips = new Map<string, string>();
  for (const name of REPOS) {
    const dir = await clone(g, repoUrl(on, "keep", name, owner.token));
    const check = await fsck(g, dir);
    expect({ repo: name, code: check.code, stderr: check.stderr }).toEqual({ repo: name, code: 0, stderr: "" });
    tips.set(name, await g.ok(["rev-parse", "HEAD"], { cwd: dir }));
  }
  return tips;
}

beforeAll(async () => {
  scratch = tempDir("svc-backup-test-");
  server = await startServer();
  g = gitSandbox();
  owner = await setupOwner(server, "keep");
  for (const name of REPOS) {
    await createRepo(server, owner, name);
    const dir = await initRepo(g, name);
    await importHistory(g, dir, { ref: "refs/heads/main", count: 40, label: name });
    await g.ok(["checkout", "-q", "main"], { cwd: dir });
    await g.ok(["push", "-q", repoUrl(server, "keep", name, owner.token), "main"], { cwd: dir });
    work.set(name, dir);
  }
  backupDir = join(scratch.path, "nightly");
  // Pushes to every repository until the backup is done (and at least ROUNDS of them).
  let started!: () => void;
  const pushing = new Promise<void>((r) => (started = r));
  let backupDone = false;
  let backupStartedAt = Infinity;
  const pushes = REPOS.map(async (name) => {
    const dir = work.get(name)!;
    for (let i = 0; i < ROUNDS || !backupDone; i++) {
      await commitFiles(g, dir, { [`round-${i}.txt`]: `${name} ${i}\n`.repeat(50) }, `round ${i}`);
      await g.ok(["push", "-q", repoUrl(server, "keep", name, owner.token), "main"], { cwd: dir });
      if (!backupDone && performance.now() > backupStartedAt) pushesDuringBackup++;
      started();
    }
  });
  await pushing;
  backupStartedAt = performance.now();
  backupRun = await server.cli(["backup", "--to", backupDir]);
  backupDone = true;
  await Promise.all(pushes);
}, 120_000);

afterAll(async () => {
  g?.[Symbol.dispose]();
  await server?.[Symbol.asyncDispose]();
  scratch?.[Symbol.dispose]();
});

describe("svc backup while the server takes pushes", () => {
  test("succeeds, prints one JSON line, writes the database, the packs and a manifest with checksums", () => {
    expect({ code: backupRun.code, stderr: backupRun.stderr }).toEqual({ code: 0, stderr: "" });
    expect(pushesDuringBackup).toBeGreaterThan(0);
    const out = JSON.parse(backupRun.stdout);
    expect(out).toMatchObject({ to: backupDir, repositories: REPOS.length });
    const manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8"));
    expect(manifest.format).toBe("svc-backup");
    expect(manifest.database.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.objects.length).toBeGreaterThanOrEqual(REPOS.length * 2);
    const files = new Set(filesUnder(backupDir));
    expect(files.has("svc.db")).toBe(true);
    for (const o of manifest.objects) {
      expect(files.has(join("objects", o.key))).toBe(true);
      const bytes = readFileSync(join(backupDir, "objects", o.key));
      expect(bytes.length).toBe(o.size);
      expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toBe(o.sha256);
    }
    // Nothing but what the manifest names.
    expect(files.size).toBe(manifest.objects.length + manifest.data_files.length + 2);
  });

  test("a second backup into the same directory is refused", async () => {
    const again = await server.cli(["backup", "--to", backupDir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("not empty");
  }, 30_000);
});

describe("svc restore into a new data dir", () => {
  let restored: RunningServer;
  let restoredDir: string;
  beforeAll(async () => {
    restoredDir = join(scratch.path, "restored");
    const r = await runSvc(["restore", "--from", backupDir], { SVC_DATA_DIR: restoredDir, SVC_LOG: "warn" });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(r.stdout)).toMatchObject({ from: backupDir, data_dir: restoredDir, repositories: REPOS.length });
    restored = await startServer({ dataDir: restoredDir });
  }, 60_000);
  afterAll(async () => {
    await restored?.[Symbol.asyncDispose]();
  });

  test("a server on it clones every repository with git fsck clean, at a state that was pushed", async () => {
    const tips = await cloneAll(restored);
    for (const [name, tip] of tips) {
      // The snapshot's tip is one of the pushed commits: an ancestor of (or equal to) the final one.
      const dir = work.get(name)!;
      const r = await g.run(["merge-base", "--is-ancestor", tip, "main"], { cwd: dir });
      expect({ repo: name, ancestor: r.code }).toEqual({ repo: name, ancestor: 0 });
    }
  }, 60_000);

  test("svc fsck on the restored data dir is clean", async () => {
    const r = await restored.cli(["fsck"]);
    expect(r.code).toBe(0);
    for (const name of REPOS) expect(r.stdout).toContain(`keep/${name}: ok`);
  }, 60_000);

  test("the restored server takes new pushes", async () => {
    const dir = await clone(g, repoUrl(restored, "keep", "alpha", owner.token));
    await commitFiles(g, dir, { "after-restore.txt": "yes\n" }, "after restore");
    await g.ok(["push", "-q", "origin", "HEAD:main"], { cwd: dir });
  }, 60_000);

  test("restoring over it is refused (never overwrites)", async () => {
    const r = await runSvc(["restore", "--from", backupDir], { SVC_DATA_DIR: restoredDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not empty");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  }, 30_000);
});

describe("restore refuses what it cannot trust", () => {
  test("a damaged pack in the backup: checksum mismatch, exit 1", async () => {
    const damaged = join(scratch.path, "damaged");
    cpSync(backupDir, damaged, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(damaged, "manifest.json"), "utf8"));
    const victim = join(damaged, "objects", manifest.objects.find((o: { key: string }) => o.key.endsWith(".pack")).key);
    const bytes = readFileSync(victim);
    bytes[20] = bytes[20]! ^ 0xff;
    writeFileSync(victim, bytes);
    const target = join(scratch.path, "from-damaged");
    const r = await runSvc(["restore", "--from", damaged], { SVC_DATA_DIR: target });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("checksum mismatch");
    // The database goes in last, so a failed restore never leaves a data dir a server would start on.
    expect(existsSync(join(target, "svc.db"))).toBe(false);
  }, 30_000);

  test("a directory without a manifest is not a backup", async () => {
    using empty = tempDir("svc-not-a-backup-");
    const r = await runSvc(["restore", "--from", empty.path], { SVC_DATA_DIR: join(scratch.path, "never") });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no complete backup");
  }, 30_000);

  test("an s3:// target without SVC_S3_ENDPOINT is a configuration error (exit 2, one line)", async () => {
    const r = await server.cli(["backup", "--to", "s3://somewhere/x"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("SVC_S3_ENDPOINT");
  }, 30_000);
});

describe("an S3 prefix as backup target and restore source", () => {
  let s3: S3rverHandle;
  beforeAll(async () => {
    s3 = await startS3rver();
  }, 30_000);
  afterAll(async () => {
    await s3?.stop();
  });

  test("backup to s3://bucket/prefix, restore from it, serve, clone", async () => {
    const creds = { SVC_S3_ENDPOINT: s3.endpoint, SVC_S3_ACCESS_KEY: s3.accessKey, SVC_S3_SECRET_KEY: s3.secretKey };
    // s3rver answers unsigned reads (it checks no credentials), so it counts as a public target.
    const b = await server.cli(["backup", "--to", "s3://svc-backups/nightly/2026-11-24", "--allow-public-target"], creds);
    expect({ code: b.code, stderr: b.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(b.stdout).to).toBe("s3://svc-backups/nightly/2026-11-24");
    const dir = join(scratch.path, "from-s3");
    const r = await runSvc(["restore", "--from", "s3://svc-backups/nightly/2026-11-24"], { SVC_DATA_DIR: dir, ...creds });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    await using fromS3 = await startServer({ dataDir: dir });
    await cloneAll(fromS3);
  }, 90_000);
});
