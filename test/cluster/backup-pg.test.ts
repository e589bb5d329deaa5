// Backup and restore of a PostgreSQL installation (issue 27, plan-27 §3.2): `svc backup` writes
// the same format as on SQLite (a SQLite database file + objects + manifest), so one backup
// restores into a fresh PostgreSQL database and onto SQLite alike, and both answer what the
// original did. Restore into PostgreSQL refuses a database that holds rows, before writing anything.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { caller, person, type Person } from "../helpers/api.ts";
import { startCluster, type Cluster } from "../helpers/cluster.ts";
import { clone, gitSandbox, lsRemote, repoUrl, type GitSandbox } from "../helpers/git.ts";
import type { PostgresDatabase } from "../helpers/postgres.ts";
import { runSvc, startServer, type RunningServer } from "../helpers/server.ts";
import { commitFiles } from "../blackbox/ci/helpers.ts";

setDefaultTimeout(120_000);

let cluster: Cluster;
let root: string;
let g: GitSandbox;
let owner: Person;
let token: string;
let before: Record<string, unknown>;
let beforeRefs: Record<string, string>;
let backupDir: string;
const started: RunningServer[] = [];

/** What a user could read, with the server's own addresses (HTTP, SSH) taken out. */
async function answers(on: RunningServer): Promise<Record<string, unknown>> {
  const c = caller(on, owner);
  const base = "/v1/orgs/acme/repos/app";
  const out = {
    repos: (await c.get("/v1/orgs/acme/repos")).body,
    refs: (await c.get(`${base}/refs`)).body,
    commits: (await c.get(`${base}/commits?ref=main`)).body,
    changes: (await c.get(`${base}/changes`)).body,
    user: (await c.get(`/v1/users/${owner.handle}`)).body,
    org: (await c.get("/v1/orgs/acme/profile")).body,
    tokens: (await c.get("/v1/orgs/acme/tokens")).body,
    teams: (await c.get("/v1/orgs/acme/teams")).body,
    search: (await c.get("/v1/search/repos?q=app")).body,
  };
  return JSON.parse(
    JSON.stringify(out)
      .replaceAll(on.url, "<server>")
      .replaceAll(on.ssh ?? "<no ssh>", "<ssh>"),
  );
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "svc-backup-pg-"));
  cluster = await startCluster({ nodes: 1, env: { SVC_SSH_ADDR: "127.0.0.1:0" } });
  g = gitSandbox();
  const node = cluster.node(0);
  owner = await person(node, "acme", "owner@acme.example", "owner");
  const api = caller(node, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "app", description: "the app" })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/repos", { name: "lib", description: "a library for the app" })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/teams", { name: "core" })).status).toBe(201);
  expect((await api.patch("/v1/orgs/acme/profile", { display_name: "Acme Inc." })).status).toBe(200);
  token = (await api.post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "git" })).body.token;
  await commitFiles(api, "app", { "README.md": "# app\n" });
  await commitFiles(api, "app", { "topic.txt": "topic\n" }, "topic");
  expect((await api.post("/v1/orgs/acme/repos/app/changes", { title: "topic", branch: "topic" })).status).toBe(201);
  const dir = await clone(g, repoUrl(node, "acme", "app", token));
  await Bun.write(join(dir, "src.txt"), "pushed through git\n");
  await g.ok(["add", "."], { cwd: dir });
  await g.ok(["commit", "-q", "-m", "by git"], { cwd: dir });
  await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
  before = await answers(node);
  beforeRefs = await lsRemote(g, repoUrl(node, "acme", "app", token));
  backupDir = join(root, "backup");
  const b = await node.cli(["backup", "--to", backupDir]);
  expect({ code: b.code, stderr: b.stderr }).toEqual({ code: 0, stderr: "" });
}, 240_000);

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await cluster?.stop();
  g?.[Symbol.dispose]();
  if (root) rmSync(root, { recursive: true, force: true });
}, 60_000);

/** `svc restore --from <backup>` into `dataDir` with fs storage and `env`. */
function restoreInto(dataDir: string, env: Record<string, string> = {}) {
  return runSvc(["restore", "--from", backupDir], { SVC_DATA_DIR: dataDir, SVC_LOG: "warn", ...env });
}

/** The same checks on a restored server: every answer, the refs, a clone, the token. */
async function sameAsBefore(server: RunningServer): Promise<void> {
  // The host keys (node_secrets rows in the backup's database): clients see the same host.
  expect(cluster.node(0).hostKeys).toHaveLength(2);
  expect(server.hostKeys).toEqual(cluster.node(0).hostKeys);
  expect(await answers(server)).toEqual(before);
  expect(await lsRemote(g, repoUrl(server, "acme", "app", token))).toEqual(beforeRefs);
  const dir = await clone(g, repoUrl(server, "acme", "app", token));
  expect((await g.ok(["rev-parse", "HEAD"], { cwd: dir })).trim()).toBe(beforeRefs["refs/heads/main"]!);
}

describe("a backup of a PostgreSQL installation", () => {
  test("has the SQLite format: a SQLite database file with the SQLite migrations, the packs, a manifest", () => {
    const manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8"));
    expect(manifest.format).toBe("svc-backup");
    expect(manifest.repositories).toBe(2);
    expect(manifest.kinds.pack.files).toBeGreaterThanOrEqual(2);
    expect(manifest.database.migrations).toContain("0000_init");
    expect(readFileSync(join(backupDir, "svc.db")).subarray(0, 15).toString()).toBe("SQLite format 3");
  });

  test("restores into a fresh PostgreSQL database: same answers, same history, the token works", async () => {
    await using fresh: PostgresDatabase = await cluster.pg.createDatabase();
    const dataDir = join(root, "restored-pg");
    const r = await restoreInto(dataDir, { SVC_DATABASE_URL: fresh.url });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(existsSync(join(dataDir, "svc.db"))).toBe(false);
    const server = await startServer({ dataDir, env: { SVC_DATABASE_URL: fresh.url, SVC_SSH_ADDR: "127.0.0.1:0" } });
    started.push(server);
    try {
      await sameAsBefore(server);
      // New rows after the restored ones: identity sequences were moved.
      expect((await caller(server, owner).post("/v1/orgs/acme/repos", { name: "after" })).status).toBe(201);
    } finally {
      await server.stop();
    }
  });

  test("restores onto SQLite: same answers, same history, the token works", async () => {
    const dataDir = join(root, "restored-sqlite");
    const r = await restoreInto(dataDir);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const server = await startServer({ dataDir, env: { SVC_SSH_ADDR: "127.0.0.1:0" } });
    started.push(server);
    await sameAsBefore(server);
  });

  test("restore into a PostgreSQL database that holds rows is refused before anything is written", async () => {
    const dataDir = join(root, "restored-refused");
    const r = await restoreInto(dataDir, { SVC_DATABASE_URL: cluster.database.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the database of SVC_DATABASE_URL is not empty");
    expect(existsSync(dataDir) ? readdirSync(dataDir) : []).toEqual([]);
  });
});

describe("a backup of a SQLite installation restored into PostgreSQL", () => {
  test("answers the same, and its host key files become the database's host keys (none left in the data dir)", async () => {
    const sqliteDir = join(root, "sqlite-origin");
    const origin = await startServer({ dataDir: sqliteDir, env: { SVC_SSH_ADDR: "127.0.0.1:0" } });
    started.push(origin);
    const who = await person(origin, "beta", "owner@beta.example", "owner");
    expect((await caller(origin, who).post("/v1/orgs/beta/repos", { name: "site" })).status).toBe(201);
    const repos = (await caller(origin, who).get("/v1/orgs/beta/repos")).body;
    const dir = join(root, "sqlite-backup");
    const b = await origin.cli(["backup", "--to", dir]);
    expect({ code: b.code, stderr: b.stderr }).toEqual({ code: 0, stderr: "" });
    await origin.stop();
    await using fresh: PostgresDatabase = await cluster.pg.createDatabase();
    const dataDir = join(root, "sqlite-origin-on-pg");
    const r = await runSvc(["restore", "--from", dir], { SVC_DATA_DIR: dataDir, SVC_LOG: "warn", SVC_DATABASE_URL: fresh.url });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readdirSync(dataDir).filter((f) => f.startsWith("ssh_host_"))).toEqual([]);
    const server = await startServer({ dataDir, env: { SVC_DATABASE_URL: fresh.url, SVC_SSH_ADDR: "127.0.0.1:0" } });
    started.push(server);
    try {
      expect(origin.hostKeys).toHaveLength(2);
      expect(server.hostKeys).toEqual(origin.hostKeys);
      const after = (await caller(server, who).get("/v1/orgs/beta/repos")).body;
      expect(JSON.parse(JSON.stringify(after).replaceAll(server.ssh!, "<ssh>").replaceAll(server.url, "<server>"))).toEqual(
        JSON.parse(JSON.stringify(repos).replaceAll(origin.ssh!, "<ssh>").replaceAll(origin.url, "<server>")),
      );
    } finally {
      await server.stop();
    }
  });
});
