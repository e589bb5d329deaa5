// Operating several nodes (issue 27, DECISIONS §5 "Several nodes"): every node presents the same
// SSH host key (kept in the database, not in a node's data dir), as a client behind a TCP
// balancer must see it; `svc fsck` checks the cluster's database and bucket while nodes write;
// /metrics shows the PostgreSQL pool, retries, LISTEN state and job leases; the LISTEN connection
// goes to SVC_DATABASE_LISTEN_URL when it is set (PgBouncer in transaction mode cannot carry it).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster, type Cluster } from "../helpers/cluster.ts";
import { clone, commitFiles, createRepo, type GitSandbox, gitSandbox, type OrgOwner, repoUrl, setupOwner } from "../helpers/git.ts";
import { run, sshWorkspace, type SshWorkspace } from "../helpers/ssh.ts";
import { eventually } from "../helpers/receiver.ts";
import { client, type RunningServer, runSvc, startServer } from "../helpers/server.ts";

const METRICS_TOKEN = "a-metrics-token-of-some-length";

/** A node's /metrics text. */
async function metricsOf(node: RunningServer): Promise<string> {
  const res = await fetch(`${node.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return await res.text();
}

/** The value of one series (`name{labels}` exactly as rendered), or null when absent. */
function seriesValue(text: string, series: string): number | null {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

setDefaultTimeout(120_000);

/** `ssh-keyscan` of a node's SSH port through `ssh-keygen -lf -`: `{ TYPE: SHA256:… }`. */
async function keyscan(ws: SshWorkspace, node: RunningServer): Promise<Record<string, string>> {
  const colon = node.ssh!.lastIndexOf(":");
  const scan = await run(["ssh-keyscan", "-p", node.ssh!.slice(colon + 1), "-t", "ed25519,rsa", node.ssh!.slice(0, colon)], { env: ws.env });
  expect(scan.code).toBe(0);
  const listed = await run(["ssh-keygen", "-lf", "-"], { env: ws.env, input: scan.stdout });
  expect(listed.code).toBe(0);
  const out: Record<string, string> = {};
  for (const line of listed.stdout.trim().split("\n")) {
    const [, fp, , type] = line.split(/\s+/);
    out[type!.replace(/[()]/g, "")] = fp!;
  }
  return out;
}

describe("two nodes over PostgreSQL: operations", () => {
  let cluster: Cluster;
  let ws: SshWorkspace;
  let g: GitSandbox;
  let owner: OrgOwner;
  let scratch: string;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 2, env: { SVC_SSH_ADDR: "127.0.0.1:0", SVC_METRICS_TOKEN: METRICS_TOKEN } });
    ws = sshWorkspace();
    g = gitSandbox();
    scratch = mkdtempSync(join(tmpdir(), "svc-cluster-ops-"));
    owner = await setupOwner(cluster.node(0), "ops");
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    ws?.[Symbol.dispose]();
    g?.[Symbol.dispose]();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  test("both nodes present the same SSH host keys, and no node keeps them in its data dir", async () => {
    const [a, b] = [cluster.node(0), cluster.node(1)];
    expect(a.hostKeys.map((k) => k.type)).toEqual(["ED25519", "RSA"]);
    expect(b.hostKeys).toEqual(a.hostKeys);
    const printed = Object.fromEntries(a.hostKeys.map((k) => [k.type, k.fingerprint]));
    expect(await keyscan(ws, a)).toEqual(printed);
    expect(await keyscan(ws, b)).toEqual(printed);
    for (const n of [a, b]) expect(existsSync(join(n.dataDir, "ssh_host_ed25519_key"))).toBe(false);
  });

  test("a restarted node presents the same keys; `svc ssh-host-keys` prints them", async () => {
    const before = cluster.node(1).hostKeys;
    await cluster.kill(1, "SIGTERM");
    const b = await cluster.restart(1);
    expect(b.hostKeys).toEqual(before);
    const cli = await b.cli(["ssh-host-keys"]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe(before.map((k) => `${k.type} ${k.fingerprint}\n`).join(""));
  });

  test("svc fsck over the cluster's database and bucket is clean while another node takes pushes", async () => {
    await createRepo(cluster.node(0), owner, "busy");
    const url = (i: number) => repoUrl(cluster.node(i), "ops", "busy", owner.token);
    const dir = await clone(g, url(0));
    await commitFiles(g, dir, { "README.md": "0\n" }, "c0");
    await g.ok(["push", "-q", url(0), "HEAD:refs/heads/main"], { cwd: dir });
    const pushes = (async () => {
      for (let i = 1; i <= 4; i++) {
        await commitFiles(g, dir, { "README.md": `${i}\n`, [`f${i}.txt`]: `${i}\n` }, `c${i}`);
        await g.ok(["push", "-q", url(1), "HEAD:refs/heads/main"], { cwd: dir });
      }
    })();
    const fsck = runSvc(["fsck"], { ...cluster.env, SVC_DATA_DIR: join(scratch, "fsck"), SVC_LOG: "error" });
    const [r] = await Promise.all([fsck, pushes]);
    expect(r.stderr).toContain("0 with problems");
    expect(r.stdout).toMatch(/^ops\/busy: .*ok/m);
    expect(r.code).toBe(0);
    // and once the pushes are in
    const after = await runSvc(["fsck", "--repo", "ops/busy"], { ...cluster.env, SVC_DATA_DIR: join(scratch, "fsck"), SVC_LOG: "error" });
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/^ops\/busy: .*ok \(\d+ packs, \d+ objects, 1 refs\)/m);
  });

  /** Work enqueued on node A to run now, which A announces over NOTIFY: a repository's deletion (its purge job). */
  async function enqueueOnA(repo: string): Promise<void> {
    await createRepo(cluster.node(0), owner, repo);
    const gone = await client(cluster.node(0), { cookie: owner.cookie }).delete(`/v1/orgs/ops/repos/${repo}`, { origin: cluster.node(0).url });
    expect(gone.status).toBeLessThan(300);
  }

  test("/metrics on a PostgreSQL node: pool, retries, LISTEN, notifications received, job leases, svc_db_* timings", async () => {
    const b = cluster.node(1);
    const before = seriesValue(await metricsOf(b), 'svc_db_notify_received_total{topic="work"}') ?? 0;
    await enqueueOnA("announced");
    const text = await eventually(
      async () => {
        const t = await metricsOf(b);
        return (seriesValue(t, 'svc_db_notify_received_total{topic="work"}') ?? 0) > before && seriesValue(t, "svc_db_listen_connected") === 1 ? t : null;
      },
      60_000,
      "B counts a notification from A",
    );
    for (const state of ["busy", "idle", "waiting"]) expect(seriesValue(text, `svc_db_pool_connections{state="${state}"}`)).toBeGreaterThanOrEqual(0);
    const pool = ["busy", "idle"].reduce((n, state) => n + seriesValue(text, `svc_db_pool_connections{state="${state}"}`)!, 0);
    expect(pool).toBe(16);
    expect(seriesValue(text, 'svc_db_transaction_retries_total{sqlstate="40001"}')).toBeGreaterThanOrEqual(0);
    expect(seriesValue(text, 'svc_db_transaction_retries_total{sqlstate="40P01"}')).toBeGreaterThanOrEqual(0);
    expect(text).toContain("# TYPE svc_jobs_leases gauge");
    expect(seriesValue(text, 'svc_db_statement_duration_seconds_count{connection="read"}')).toBeGreaterThan(0);
    expect(text).toContain("# TYPE svc_db_transaction_duration_seconds histogram");
    // The SQLite names stay SQLite's.
    expect(text).not.toContain("svc_sqlite_");
  });

  test("SVC_DATABASE_LISTEN_URL: the LISTEN connection goes there, and the node still hears the others", async () => {
    // A role of its own makes the LISTEN session recognisable in pg_stat_activity.
    const admin = new SQL({ url: cluster.database.url, database: cluster.database.name, max: 1 });
    try {
      await admin.unsafe("CREATE ROLE svc_listener LOGIN PASSWORD 'listen-secret'");
      const listenUrl = new URL(cluster.database.url);
      listenUrl.username = "svc_listener";
      listenUrl.password = "listen-secret";
      const sessions = async (user: string) =>
        (await admin`SELECT query FROM pg_stat_activity WHERE usename = ${user} AND datname = ${cluster.database.name}`) as { query: string }[];
      expect(await sessions("svc_listener")).toEqual([]);
      await using node = await startServer({
        env: { ...cluster.env, SVC_METRICS_TOKEN: METRICS_TOKEN, SVC_DATABASE_LISTEN_URL: listenUrl.toString() },
        dataDir: join(scratch, "listen-node"),
      });
      const listening = await eventually(
        async () => {
          const s = await sessions("svc_listener");
          return s.length > 0 ? s : null;
        },
        60_000,
        "a LISTEN session of svc_listener",
      );
      // exactly one session, the LISTEN (the pool's statements keep to SVC_DATABASE_URL's role)
      expect(listening.map((s) => s.query)).toEqual(['LISTEN "svc"']);
      const before = seriesValue(await metricsOf(node), 'svc_db_notify_received_total{topic="work"}') ?? 0;
      await enqueueOnA("heard");
      await eventually(
        async () => {
          const t = await metricsOf(node);
          return (seriesValue(t, 'svc_db_notify_received_total{topic="work"}') ?? 0) > before && seriesValue(t, "svc_db_listen_connected") === 1;
        },
        60_000,
        "the node hears A over the LISTEN URL",
      );
    } finally {
      await admin.close();
    }
  });
});
