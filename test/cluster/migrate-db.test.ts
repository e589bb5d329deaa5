// Moving up (issue 27, DECISIONS §5 "Several nodes"): a populated single-node SQLite installation
// (on s3rver from the start, so the nodes after it read the same objects) is moved into an empty
// PostgreSQL database with `svc migrate-db`, then two nodes over that database answer everything a
// user could read exactly as the single node did, clone the same history, accept the same token
// and session. Refused: another scheme, a target that is not empty, a running server, an
// installation already on PostgreSQL.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { caller, person, type Person } from "../helpers/api.ts";
import { startCluster, type Cluster } from "../helpers/cluster.ts";
import type { PostgresDatabase } from "../helpers/postgres.ts";
import { clone, gitSandbox, lsRemote, repoUrl, type GitSandbox } from "../helpers/git.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { client, runSvc, startServer, type RunningServer } from "../helpers/server.ts";
import { registerKey, sshWorkspace, type SshWorkspace } from "../helpers/ssh.ts";
import { commitFiles, registrationToken, until } from "../blackbox/ci/helpers.ts";

setDefaultTimeout(120_000);

let cluster: Cluster;
/** The empty database moved into (the cluster's own is its first node's). */
let target: PostgresDatabase;
let root: string;
let single: RunningServer;
let singleDir: string;
let rx: Receiver;
let g: GitSandbox;
let ws: SshWorkspace;
let owner: Person;
let token: string;
let runId: string;
let jobId: string;
let before: Record<string, unknown>;
let beforeRefs: Record<string, string>;
/** The settings of the SQLite installation: the cluster's bucket, no database URL. */
let sqliteEnv: Record<string, string>;
const nodes: RunningServer[] = [];

/** Everything a user could read, as JSON with the server's own addresses taken out. */
async function answers(on: RunningServer): Promise<Record<string, unknown>> {
  const c = caller(on, owner);
  const base = "/v1/orgs/acme/repos/app";
  const hooks = (await c.get(`${base}/webhooks`)).body;
  const out: Record<string, unknown> = {
    repos: (await c.get("/v1/orgs/acme/repos")).body,
    repo: (await c.get(base)).body,
    refs: (await c.get(`${base}/refs`)).body,
    commits: (await c.get(`${base}/commits?ref=main`)).body,
    changes: (await c.get(`${base}/changes`)).body,
    runs: (await c.get(`${base}/runs`)).body,
    run: (await c.get(`${base}/runs/${runId}`)).body,
    log: await (await fetch(`${on.url}${base}/runs/${runId}/jobs/${jobId}/logs`, { headers: { cookie: owner.cookie } })).text(),
    webhooks: hooks,
    deliveries: await Promise.all(hooks.webhooks.map(async (h: { id: string }) => (await c.get(`${base}/webhooks/${h.id}/deliveries`)).body)),
    user: (await c.get(`/v1/users/${owner.handle}`)).body,
    org: (await c.get("/v1/orgs/acme/profile")).body,
    tokens: (await c.get("/v1/orgs/acme/tokens")).body,
    teams: (await c.get("/v1/orgs/acme/teams")).body,
    keys: (await c.get("/v1/orgs/acme/ssh-keys")).body,
    search: (await c.get("/v1/search/repos?q=app")).body,
  };
  return JSON.parse(
    JSON.stringify(out)
      .replaceAll(on.url, "<server>")
      .replaceAll(on.ssh ?? "<no ssh>", "<ssh>"),
  );
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "svc-migrate-db-"));
  // The cluster's one node is not needed: stopped before it could touch the bucket the SQLite
  // installation will use.
  cluster = await startCluster({ nodes: 1 });
  await cluster.kill(0, "SIGTERM");
  target = await cluster.pg.createDatabase();
  const { SVC_DATABASE_URL: _, ...shared } = cluster.env;
  sqliteEnv = { ...shared, SVC_WEBHOOK_ALLOW_PRIVATE: "1", SVC_SSH_ADDR: "127.0.0.1:0" };
  rx = startReceiver();
  g = gitSandbox();
  ws = sshWorkspace();
  singleDir = join(root, "single");
  single = await startServer({ dataDir: singleDir, env: sqliteEnv });
  owner = await person(single, "acme", "owner@acme.example", "owner");
  const api = caller(single, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "app", description: "the app" })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/repos", { name: "Tools", description: "more tools for the app" })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/teams", { name: "core" })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/repos/app/webhooks", { url: `${rx.url}/hook` })).status).toBe(201);
  expect((await api.patch("/v1/orgs/acme/profile", { display_name: "Acme Inc." })).status).toBe(200);
  token = (await api.post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "git" })).body.token;
  await registerKey(single, { cookie: owner.cookie }, "acme", await ws.keygen("laptop", "ed25519"));

  // A runner claims the job the push queues and finishes it with a log.
  const reg = await client(single, { token: await registrationToken(api) }).post("/v1/runners/register", { name: "m1", os: "linux", arch: "x64" });
  expect(reg.status).toBe(201);
  const claim = client(single, { token: reg.body.credential }).post("/v1/runners/claim");
  await commitFiles(api, "app", {
    "README.md": "# app\n",
    ".svc/workflows/ci.yml": "on: push\njobs:\n  test:\n    runs-on: self-hosted\n    steps:\n      - run: echo hi\n",
  });
  const claimed = await claim;
  expect(claimed.status).toBe(200);
  jobId = claimed.body.job_id;
  const job = client(single, { token: claimed.body.token });
  expect((await job.post(`/v1/runner/jobs/${jobId}/logs`, { offset: 0, text: "héllo ✓\n" })).status).toBe(200);
  expect((await job.post(`/v1/runner/jobs/${jobId}/steps/0`, { state: "success", exit_code: 0 })).status).toBe(204);
  expect((await job.post(`/v1/runner/jobs/${jobId}/complete`, { verdict: "success" })).status).toBe(204);

  // Pushes through real git, and a change from a branch.
  const dir = await clone(g, repoUrl(single, "acme", "app", token));
  await Bun.write(join(dir, "src.txt"), "pushed through git\n");
  await g.ok(["add", "."], { cwd: dir });
  await g.ok(["commit", "-q", "-m", "by git"], { cwd: dir });
  await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
  await g.ok(["push", "-q", "origin", "HEAD:refs/heads/topic"], { cwd: dir });
  expect((await api.post("/v1/orgs/acme/repos/app/changes", { title: "topic", branch: "topic" })).status).toBe(201);

  runId = (await api.get("/v1/orgs/acme/repos/app/runs")).body.runs.find((r: any) => r.jobs.some((j: any) => j.id === jobId)).id;
  await until("the run to finish", async () => (await api.get(`/v1/orgs/acme/repos/app/runs/${runId}`)).body.state === "success");
  await until("webhook deliveries to settle", async () => {
    const hook = (await api.get("/v1/orgs/acme/repos/app/webhooks")).body.webhooks[0];
    const d = (await api.get(`/v1/orgs/acme/repos/app/webhooks/${hook.id}/deliveries`)).body.deliveries;
    return d.length >= 2 && d.length === rx.of("/hook").length && d.every((x: any) => x.status_code === 200);
  });
  before = await answers(single);
  beforeRefs = await lsRemote(g, repoUrl(single, "acme", "app", token));
}, 240_000);

afterAll(async () => {
  await Promise.all([single, ...nodes].map((n) => n?.stop()));
  await cluster?.stop();
  rx?.stop();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
  if (root) rmSync(root, { recursive: true, force: true });
}, 60_000);

/** `svc migrate-db` on the SQLite installation's data dir. */
function migrateDb(args: string[], env: Record<string, string> = {}) {
  return runSvc(["migrate-db", ...args], { ...sqliteEnv, SVC_DATA_DIR: singleDir, SVC_LOG: "warn", ...env });
}

describe("refused before anything is copied", () => {
  test("another URL scheme: exit 2, naming the scheme", async () => {
    const r = await migrateDb(["--to", "mysql://svc:secret@127.0.0.1:3306/svc"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("mysql is not supported");
    expect(r.stdout).toBe("");
  });

  test("while svc serve runs on the data dir: exit 1, stop it first; the target is untouched", async () => {
    const r = await migrateDb(["--to", target.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`is running on ${singleDir}; stop it first`);
    const { SQL } = await import("bun");
    const pg = new SQL({ url: target.url, database: target.name, max: 1 });
    try {
      expect(await pg`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`).toEqual([{ n: 0 }]);
    } finally {
      await pg.close();
    }
  });

  test("an installation already on PostgreSQL: exit 2", async () => {
    const r = await migrateDb(["--to", target.url], { SVC_DATABASE_URL: target.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("on PostgreSQL already");
  });
});

describe("a populated SQLite installation moved to PostgreSQL", () => {
  let migrated: { code: number; stdout: string; stderr: string };
  beforeAll(async () => {
    await single.stop();
    migrated = await migrateDb(["--to", target.url]);
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: "" });
    for (let i = 0; i < 2; i++)
      nodes.push(
        await startServer({
          dataDir: join(root, `node-${i}`),
          env: { ...cluster.env, SVC_DATABASE_URL: target.url, SVC_WEBHOOK_ALLOW_PRIVATE: "1", SVC_SSH_ADDR: "127.0.0.1:0" },
        }),
      );
  }, 120_000);

  test("prints every table's counts on both sides, the verification and what to set next", () => {
    const out = migrated.stdout;
    expect(out).toMatch(/^table\s+sqlite\s+postgres$/m);
    expect(out).toMatch(/^users\s+1\s+1$/m);
    expect(out).toMatch(/^repos\s+2\s+2$/m);
    expect(out).toMatch(/^ssh_keys\s+1\s+1$/m);
    expect(out).not.toContain("MISMATCH");
    expect(out).toContain("row counts and primary-key checksums match; committed");
    expect(out).toContain("SVC_DATABASE_URL=postgres://");
    expect(out).not.toContain(":svc-test@");
    expect(out).toContain(`SVC_STORAGE=s3 SVC_S3_BUCKET=${cluster.env.SVC_S3_BUCKET}`);
  });

  test("both nodes answer everything the single node did", async () => {
    for (const n of nodes) expect(await answers(n)).toEqual(before);
  });

  test("the token and the session work on both nodes; clone from each gives the same history", async () => {
    for (const n of nodes) {
      expect(await lsRemote(g, repoUrl(n, "acme", "app", token))).toEqual(beforeRefs);
      const dir = await clone(g, repoUrl(n, "acme", "app", token));
      expect((await g.ok(["rev-parse", "HEAD"], { cwd: dir })).trim()).toBe(beforeRefs["refs/heads/main"]!);
      expect((await client(n, { cookie: owner.cookie }).get(`/v1/users/${owner.handle}/emails`)).status).toBe(200);
    }
  });

  test("the SSH host keys came along: both nodes present the single node's keys, and the command said so", () => {
    expect(single.hostKeys).toHaveLength(2);
    for (const n of nodes) expect(n.hostKeys).toEqual(single.hostKeys);
    expect(migrated.stdout).toContain("stored 2 SSH host key(s)");
  });

  test("new rows get fresh ids after the copied ones (identity sequences moved), on either node", async () => {
    const api = caller(nodes[1]!, owner);
    expect((await api.post("/v1/orgs/acme/repos", { name: "after", description: "made after the move" })).status).toBe(201);
    const found = (await caller(nodes[0]!, owner).get("/v1/search/repos?q=after")).body;
    expect(found.hits.map((h: { org: string; name: string }) => `${h.org}/${h.name}`)).toEqual(["acme/after"]);
    const dir = await clone(g, repoUrl(nodes[0]!, "acme", "app", token));
    await Bun.write(join(dir, "more.txt"), "after the move\n");
    await g.ok(["add", "."], { cwd: dir });
    await g.ok(["commit", "-q", "-m", "after"], { cwd: dir });
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
    await until("the new push's webhook delivery", async () => {
      const hook = (await api.get("/v1/orgs/acme/repos/app/webhooks")).body.webhooks[0];
      const d = (await api.get(`/v1/orgs/acme/repos/app/webhooks/${hook.id}/deliveries`)).body.deliveries;
      return d.length > (before.deliveries as any[])[0].deliveries.length;
    });
  });

  test("run again into the same database: refused, target is not empty; nothing changes", async () => {
    const r = await migrateDb(["--to", target.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("target is not empty");
    expect(existsSync(join(singleDir, "svc.db"))).toBe(true);
    expect((await caller(nodes[0]!, owner).get("/v1/orgs/acme/repos/after")).status).toBe(200);
  });
});
