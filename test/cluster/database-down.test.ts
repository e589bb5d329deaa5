// PostgreSQL going away under three running nodes (issue 27, DECISIONS §5; docs/api.md
// "database_unavailable" and GET /readyz): while it is down every node says so (/readyz 503
// naming the database, API 503 `database_unavailable`, git a message on stderr) and keeps
// running; when it is back every node recovers by itself, no restart: /readyz 200, pushes work,
// and a runner's claim held open across the outage gets the job queued after it.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type Cluster, startCluster } from "../helpers/cluster.ts";
import { clone, commitFiles, createRepo, type GitSandbox, gitSandbox, lsRemote, type OrgOwner, repoUrl, setupOwner } from "../helpers/git.ts";
import { eventually } from "../helpers/receiver.ts";
import { client } from "../helpers/server.ts";

setDefaultTimeout(120_000);

const METRICS_TOKEN = "cluster-metrics-token";
const WORKFLOW = "on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo\n";

describe("the database stops and starts under three nodes", () => {
  let cluster: Cluster;
  let g: GitSandbox;
  let owner: OrgOwner;

  beforeAll(async () => {
    // The claim wait outlasts the outage (the case holds one claim open across it).
    cluster = await startCluster({ nodes: 3, env: { SVC_RUNNER_CLAIM_WAIT_MS: "100000", SVC_METRICS_TOKEN: METRICS_TOKEN } });
    g = gitSandbox();
    owner = await setupOwner(cluster.node(0), "acme");
  }, 180_000);

  afterAll(async () => {
    if (cluster && !cluster.pg.running()) await cluster.pg.startServer();
    await cluster?.stop();
    g?.[Symbol.dispose]();
  }, 60_000);

  const readyz = async (i: number) => {
    const res = await fetch(`${cluster.node(i).url}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
  };

  test("down: /readyz 503 naming the database on every node, API 503 database_unavailable, git fails with the message; back: every node recovers, no restart", async () => {
    await createRepo(cluster.node(0), owner, "steady");
    const dir = await clone(g, repoUrl(cluster.node(0), "acme", "steady", owner.token));
    await commitFiles(g, dir, { "README.md": "before\n" }, "before");
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
    const pids = cluster.nodes.map((n) => n.proc.pid);
    for (const i of [0, 1, 2]) expect((await readyz(i)).status).toBe(200);

    // A runner's claim, held open on B before the outage.
    const admin = client(cluster.node(0), { cookie: owner.cookie });
    expect((await admin.patch("/v1/orgs/acme/runner-policy", { self_hosted: "all" }, { origin: cluster.node(0).url })).status).toBe(200);
    const reg = await admin.post("/v1/orgs/acme/runners/registration-token", {}, { origin: cluster.node(0).url });
    expect(reg.status).toBe(201);
    const machine = await client(cluster.node(2), { token: reg.body.token }).post("/v1/runners/register", { name: "m1", os: "linux", arch: "x64" });
    expect(machine.status).toBe(201);
    const held = client(cluster.node(1), { token: machine.body.credential }).post("/v1/runners/claim", {});
    // Held means waiting in B's claim hub (its gauge says so), not merely sent.
    await eventually(async () => {
      const res = await fetch(`${cluster.node(1).url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      return /^svc_runner_claims_waiting 1$/m.test(await res.text());
    });

    const outageFrom = Date.now();
    await cluster.pg.stopServer();
    for (const i of [0, 1, 2]) {
      const r = await readyz(i);
      expect(r.status).toBe(503);
      expect(r.body.status).toBe("unavailable");
      expect(["failing", "timeout"]).toContain(r.body.checks.database!);
      expect(r.body.checks.object_store).toBe("ok");
      // Alive all the same: an orchestrator's liveness probe does not restart it.
      expect((await fetch(`${cluster.node(i).url}/healthz`)).status).toBe(200);
    }
    for (const i of [0, 1, 2]) {
      const r = await client(cluster.node(i), { token: owner.token }).get("/v1/orgs/acme/repos/steady");
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ error: "the database is unavailable; try again shortly", code: "database_unavailable" });
      expect(r.headers.get("retry-after")).toBe("5");
    }
    const failed = await g.run(["clone", "-q", repoUrl(cluster.node(2), "acme", "steady", owner.token), `${g.root}/during-outage`]);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain("the database is unavailable");

    // Every node's job dispatcher meets the outage before it ends: it polls once a second, and an
    // outage shorter than that (a fast machine runs the checks above in well under a second)
    // would otherwise pass between two polls and leave nothing to log or recover from.
    for (const n of cluster.nodes) await eventually(async () => n.stderr().includes("job claim failed"), 30_000, "the dispatcher's failure line");
    await cluster.pg.startServer();
    for (const i of [0, 1, 2]) await eventually(async () => (await readyz(i)).status === 200, 30_000, `node ${i} ready again`);
    // Each node's job dispatcher said so once (then at most one line a minute), and that it recovered.
    const minutes = Math.floor((Date.now() - outageFrom) / 60_000);
    for (const n of cluster.nodes) {
      await eventually(async () => n.stderr().includes("job claims recovered"), 30_000, "the dispatcher's recovery line");
      const lines = n
        .stderr()
        .split("\n")
        .filter((l) => l.includes("job claim failed")).length;
      expect(lines).toBeGreaterThanOrEqual(1);
      expect(lines).toBeLessThanOrEqual(1 + minutes);
    }
    await commitFiles(g, dir, { "README.md": "after\n" }, "after");
    await g.ok(["push", "-q", repoUrl(cluster.node(1), "acme", "steady", owner.token), "HEAD:refs/heads/main"], { cwd: dir });
    const tip = (await g.ok(["rev-parse", "HEAD"], { cwd: dir })).trim();
    for (const i of [0, 1, 2]) expect((await lsRemote(g, repoUrl(cluster.node(i), "acme", "steady", owner.token)))["refs/heads/main"]).toBe(tip);

    // The claim held across the outage gets the job a push queues after it.
    await createRepo(cluster.node(0), owner, "ci");
    const commit = await client(cluster.node(0), { token: owner.token }).post("/v1/orgs/acme/repos/ci/commits", {
      branch: "main",
      message: "ci",
      operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: WORKFLOW }],
    });
    expect(commit.status).toBe(201);
    const got = await held;
    expect(got.status).toBe(200);
    const runs = (await client(cluster.node(2), { token: owner.token }).get("/v1/orgs/acme/repos/ci/runs")).body.runs;
    expect(got.body.job_id).toBe(runs[0].jobs[0].id);
    // No node was restarted.
    expect(cluster.nodes.map((n) => n.proc.pid)).toEqual(pids);
    for (const n of cluster.nodes) expect(n.proc.exitCode).toBeNull();
  });
});
