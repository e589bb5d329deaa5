// Several nodes over one PostgreSQL and one bucket (issue 27, DECISIONS §5): what is made on one
// node is there on every node at once, git moves refs by compare-and-swap across nodes, and a
// revocation on one node is refused on another at its next request.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startCluster, type Cluster } from "../helpers/cluster.ts";
import {
  clone,
  commitFiles,
  createRepo,
  gitSandbox,
  lsRemote,
  mintTokenWithId,
  repoUrl,
  revokeToken,
  setupOwner,
  type GitSandbox,
  type OrgOwner,
} from "../helpers/git.ts";
import { client } from "../helpers/server.ts";

setDefaultTimeout(120_000);

describe("three nodes, one PostgreSQL, one bucket", () => {
  let cluster: Cluster;
  let g: GitSandbox;
  let owner: OrgOwner;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 3 });
    g = gitSandbox();
    owner = await setupOwner(cluster.node(0), "acme");
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    g?.[Symbol.dispose]();
  }, 60_000);

  test("an account, token and repository made on A work on B and C at once", async () => {
    await createRepo(cluster.node(0), owner, "made-on-a");
    for (const i of [1, 2]) {
      const r = await client(cluster.node(i), { token: owner.token }).get("/v1/orgs/acme/repos/made-on-a");
      expect(r.status).toBe(200);
      expect(r.body.name).toBe("made-on-a");
    }
  });

  test("push to A, clone from B and C: every node answers the same refs", async () => {
    await createRepo(cluster.node(0), owner, "app");
    const dir = await clone(g, repoUrl(cluster.node(0), "acme", "app", owner.token));
    await commitFiles(g, dir, { "README.md": "hello\n" }, "first");
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
    const refs = await Promise.all([0, 1, 2].map((i) => lsRemote(g, repoUrl(cluster.node(i), "acme", "app", owner.token))));
    expect(refs[0]!["refs/heads/main"]).toMatch(/^[0-9a-f]{40}$/);
    expect(refs[1]).toEqual(refs[0]!);
    expect(refs[2]).toEqual(refs[0]!);
    for (const i of [1, 2]) {
      const copy = await clone(g, repoUrl(cluster.node(i), "acme", "app", owner.token));
      expect((await g.ok(["rev-parse", "HEAD"], { cwd: copy })).trim()).toBe(refs[0]!["refs/heads/main"]!);
    }
  });

  test("two fast-forwards of one branch through A and B at once: exactly one wins, every node agrees, the loser's retry after a fetch lands", async () => {
    await createRepo(cluster.node(0), owner, "race");
    const seed = await clone(g, repoUrl(cluster.node(0), "acme", "race", owner.token));
    await commitFiles(g, seed, { "a.txt": "base\n" }, "base");
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: seed });
    const viaA = await clone(g, repoUrl(cluster.node(0), "acme", "race", owner.token));
    const viaB = await clone(g, repoUrl(cluster.node(1), "acme", "race", owner.token));
    const tipA = await commitFiles(g, viaA, { "a.txt": "from A\n" }, "A");
    const tipB = await commitFiles(g, viaB, { "b.txt": "from B\n" }, "B");
    const [pa, pb] = await Promise.all([
      g.run(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: viaA }),
      g.run(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: viaB }),
    ]);
    expect([pa.code === 0, pb.code === 0].filter(Boolean)).toHaveLength(1);
    const winner = pa.code === 0 ? tipA : tipB;
    for (const i of [0, 1, 2]) expect((await lsRemote(g, repoUrl(cluster.node(i), "acme", "race", owner.token)))["refs/heads/main"]).toBe(winner);
    const loser = pa.code === 0 ? viaB : viaA;
    await g.ok(["pull", "-q", "--rebase", "origin", "main"], { cwd: loser });
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: loser });
    const tip = (await g.ok(["rev-parse", "HEAD"], { cwd: loser })).trim();
    for (const i of [0, 1, 2]) expect((await lsRemote(g, repoUrl(cluster.node(i), "acme", "race", owner.token)))["refs/heads/main"]).toBe(tip);
  });

  test("a token revoked on A is refused on B at B's next request", async () => {
    const { id, token } = await mintTokenWithId(cluster.node(0), owner.cookie, "acme", { scopes: ["repo:read"], label: "short-lived" });
    expect((await client(cluster.node(1), { token }).get("/v1/orgs/acme/repos/app")).status).toBe(200);
    await revokeToken(cluster.node(0), owner.cookie, "acme", id);
    expect((await client(cluster.node(1), { token }).get("/v1/orgs/acme/repos/app")).status).toBe(401);
    expect((await client(cluster.node(2), { token }).get("/v1/orgs/acme/repos/app")).status).toBe(401);
  });

  test("a runner's claim held open on B receives the job a push through A queued", async () => {
    const admin = client(cluster.node(0), { cookie: owner.cookie });
    await createRepo(cluster.node(0), owner, "ci");
    expect((await admin.patch("/v1/orgs/acme/runner-policy", { self_hosted: "all" }, { origin: cluster.node(0).url })).status).toBe(200);
    const reg = await admin.post("/v1/orgs/acme/runners/registration-token", {}, { origin: cluster.node(0).url });
    expect(reg.status).toBe(201);
    // Registered on C, claiming on B, the job queued through A.
    const machine = await client(cluster.node(2), { token: reg.body.token }).post("/v1/runners/register", { name: "m1", os: "linux", arch: "x64" });
    expect(machine.status).toBe(201);
    const runner = client(cluster.node(1), { token: machine.body.credential });
    // The claim is held open on B until a job is queued (the server's wait is longer than this test).
    const held = runner.post("/v1/runners/claim", {});
    const commit = await client(cluster.node(0), { token: owner.token }).post("/v1/orgs/acme/repos/ci/commits", {
      branch: "main",
      message: "ci",
      operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: "on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo\n" }],
    });
    expect(commit.status).toBe(201);
    const got = await held;
    expect(got.status).toBe(200);
    const runs = (await client(cluster.node(2), { token: owner.token }).get("/v1/orgs/acme/repos/ci/runs")).body.runs;
    expect(got.body.job_id).toBe(runs[0].jobs[0].id);
  });

  test("a machine removed through A: its claim held open on B answers 401, not a 204 after the wait", async () => {
    const admin = client(cluster.node(0), { cookie: owner.cookie });
    expect((await admin.patch("/v1/orgs/acme/runner-policy", { self_hosted: "all" }, { origin: cluster.node(0).url })).status).toBe(200);
    const reg = await admin.post("/v1/orgs/acme/runners/registration-token", {}, { origin: cluster.node(0).url });
    expect(reg.status).toBe(201);
    const machine = await client(cluster.node(2), { token: reg.body.token }).post("/v1/runners/register", { name: "m-removed", os: "linux", arch: "x64" });
    expect(machine.status).toBe(201);
    const runner = client(cluster.node(1), { token: machine.body.credential });
    // The claim waits on B (nothing is queued; the server's wait, 20 s, is longer than this case).
    const held = runner.post("/v1/runners/claim", {});
    expect((await admin.delete(`/v1/orgs/acme/runners/${machine.body.runner_id}`, { origin: cluster.node(0).url })).status).toBe(204);
    const got = await held;
    expect(got.status).toBe(401);
    expect((await runner.post("/v1/runners/claim", {})).status).toBe(401);
  });

  test("API commits with expected_parent through every node, in turn and at once: no lost update", async () => {
    await createRepo(cluster.node(0), owner, "ledger");
    const on = (i: number) => client(cluster.node(i % 3), { token: owner.token });
    const commit = (i: number, parent: string | null, n: number) =>
      on(i).post("/v1/orgs/acme/repos/ledger/commits", {
        branch: "main",
        expected_parent: parent,
        message: `entry ${n}`,
        operations: [{ op: "put", path: `entries/${n}.txt`, content: `${n}\n` }],
      });
    // In turn: each node commits on the tip the previous node made.
    let tip: string | null = null;
    for (let n = 0; n < 9; n++) {
      const r = await commit(n, tip, n);
      expect(r.status).toBe(201);
      tip = r.body.commit;
    }
    // At once: ten commits on the same parent through the three nodes; exactly one moves the
    // branch, every other answers 409 with the winner's tip.
    const racing = await Promise.all(Array.from({ length: 10 }, (_, k) => commit(k, tip, 100 + k)));
    const won = racing.filter((r) => r.status === 201);
    expect(won).toHaveLength(1);
    for (const r of racing.filter((r) => r.status !== 201)) {
      expect(r.status).toBe(409);
      expect(r.body.current).toBe(won[0]!.body.commit);
    }
    const history = await on(1).get("/v1/orgs/acme/repos/ledger/commits?limit=100");
    expect(history.status).toBe(200);
    expect(history.body.commits).toHaveLength(10);
    expect(history.body.commits[0].sha).toBe(won[0]!.body.commit);
  });
});
