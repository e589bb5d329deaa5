// A node killed in the middle of its work (issue 27, DECISIONS §5): each node reaches the bucket
// through a fault proxy of its own, which holds a pack upload unanswered; the test SIGKILLs the
// node when its proxy sees the upload (no sleep), then checks that the other nodes see the
// branch old or new (never torn), that the work is finished elsewhere, and that `svc fsck` is
// clean. The leases are scaled down (SVC_TEST_LEASE_SCALE=0.1: change.land's 15 s is 1.5 s).
//
// The cases share one cluster and run in order: the first kills node 0, the second the node of
// 1 and 2 that took the landing; the last runs fsck over everything they left.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Cluster, startCluster } from "../helpers/cluster.ts";
import { type FaultProxyHandle, startFaultProxy } from "../helpers/fault-proxy.ts";
import { clone, commitFiles, createRepo, type GitSandbox, gitSandbox, lsRemote, type OrgOwner, repoUrl, setupOwner } from "../helpers/git.ts";
import { eventually } from "../helpers/receiver.ts";
import { client, runSvc } from "../helpers/server.ts";

setDefaultTimeout(120_000);

const PACK_UPLOAD = { method: "PUT", pathIncludes: ".pack" };

describe("a node killed mid-duty", () => {
  let cluster: Cluster;
  let g: GitSandbox;
  let owner: OrgOwner;
  const proxies: FaultProxyHandle[] = [];
  const scratch = mkdtempSync(join(tmpdir(), "svc-crash-"));

  beforeAll(async () => {
    cluster = await startCluster({
      nodes: 3,
      env: { SVC_TEST_LEASE_SCALE: "0.1" },
      nodeEnv: async (i, s3) => {
        proxies[i] = await startFaultProxy(s3.endpoint);
        return { SVC_S3_ENDPOINT: proxies[i]!.endpoint };
      },
    });
    g = gitSandbox();
    owner = await setupOwner(cluster.node(1), "acme");
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    for (const p of proxies) await p?.stop();
    g?.[Symbol.dispose]();
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  test("SIGKILL of the node receiving a push while its pack uploads: B and C see the old branch, never a torn one; the retry through C lands", async () => {
    await createRepo(cluster.node(1), owner, "crashy");
    const dir = await clone(g, repoUrl(cluster.node(1), "acme", "crashy", owner.token));
    const old = await commitFiles(g, dir, { "README.md": "one\n" }, "one");
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
    const next = await commitFiles(g, dir, { "README.md": "two\n", "more.txt": "more\n" }, "two");

    await proxies[0]!.configure({ hold: PACK_UPLOAD });
    const push = g.run(["push", "-q", repoUrl(cluster.node(0), "acme", "crashy", owner.token), "HEAD:refs/heads/main"], { cwd: dir });
    const held = await proxies[0]!.held();
    expect(held.some((r) => r.path.includes(".pack"))).toBe(true);
    expect(await cluster.kill(0, "SIGKILL")).not.toBe(0);
    await proxies[0]!.configure({ hold: null });
    expect((await push).code).not.toBe(0);

    // The node died before publishing: the branch is the old tip on every live node (a new tip
    // would be acceptable had the publish committed; anything else is torn).
    const seen = await Promise.all([1, 2].map(async (i) => (await lsRemote(g, repoUrl(cluster.node(i), "acme", "crashy", owner.token)))["refs/heads/main"]));
    expect(seen[0]).toBe(seen[1]!);
    expect([old, next]).toContain(seen[0]!);
    const copy = await clone(g, repoUrl(cluster.node(2), "acme", "crashy", owner.token));
    await g.ok(["fsck", "--strict"], { cwd: copy });

    // The same push through C succeeds, and B agrees.
    await g.ok(["push", "-q", repoUrl(cluster.node(2), "acme", "crashy", owner.token), "HEAD:refs/heads/main"], { cwd: dir });
    for (const i of [1, 2]) expect((await lsRemote(g, repoUrl(cluster.node(i), "acme", "crashy", owner.token)))["refs/heads/main"]).toBe(next);
  });

  test("SIGKILL of the node holding a change.land lease: the other node lands the change once the lease lapses", async () => {
    await createRepo(cluster.node(1), owner, "leased");
    const dir = await clone(g, repoUrl(cluster.node(1), "acme", "leased", owner.token));
    const base = await commitFiles(g, dir, { "README.md": "base\n" }, "base");
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
    await g.ok(["checkout", "-q", "-b", "topic"], { cwd: dir });
    const head = await commitFiles(g, dir, { "topic.txt": "topic\n" }, "topic");
    await g.ok(["push", "-q", "origin", "topic"], { cwd: dir });
    // The target moves on, so the landing is a merge commit: a pack to upload under the lease.
    await g.ok(["checkout", "-q", "-B", "main", base], { cwd: dir });
    const tip = await commitFiles(g, dir, { "main.txt": "main\n" }, "main moves");
    await g.ok(["push", "-q", "origin", "main"], { cwd: dir });

    const api = client(cluster.node(1), { token: owner.token });
    const change = await api.post("/v1/orgs/acme/repos/leased/changes", { title: "topic", branch: "topic", target: "main" });
    expect(change.status).toBe(201);
    for (const i of [1, 2]) await proxies[i]!.configure({ hold: PACK_UPLOAD });
    expect((await api.post(`/v1/orgs/acme/repos/leased/changes/${change.body.number}/land`, {})).status).toBe(202);
    // Whichever node took the landing is uploading its merge: that one dies.
    // (The other proxy's wait ends when it stops, possibly failing: caught.)
    const holder = await Promise.race(
      [1, 2].map((i) =>
        proxies[i]!.held().then(
          () => i,
          () => new Promise<number>(() => {}),
        ),
      ),
    );
    const survivor = holder === 1 ? 2 : 1;
    // The leased row. (A second, unleased change.land may wait beside it: the node-scoped scan
    // enqueues one for a target with queued changes when no pending one exists; on a loaded
    // machine it fires during the hold.)
    const lease = await eventually(async () => {
      const rows = await cluster.sql`SELECT id, locked_until, attempts FROM jobs WHERE kind = 'change.land' AND done_at IS NULL AND locked_until IS NOT NULL`;
      return rows.length === 1 && rows[0];
    });
    expect(Number(lease.locked_until)).toBeGreaterThan(Date.now() - 5_000);
    expect(await cluster.kill(holder, "SIGKILL")).not.toBe(0);
    for (const i of [1, 2]) await proxies[i]!.configure({ hold: null });

    const other = client(cluster.node(survivor), { token: owner.token });
    const landed = await eventually(
      async () => {
        const r = await other.get(`/v1/orgs/acme/repos/leased/changes/${change.body.number}`);
        expect(r.body.state).not.toBe("ejected");
        return r.body.state === "landed" && r.body;
      },
      60_000,
      "the change landed by the surviving node",
    );
    const landedAt = (await lsRemote(g, repoUrl(cluster.node(survivor), "acme", "leased", owner.token)))["refs/heads/main"];
    expect(landedAt).toBe(landed.landed_commit);
    await g.ok(["fetch", "-q", repoUrl(cluster.node(survivor), "acme", "leased", owner.token), "main"], { cwd: dir });
    expect((await g.ok(["log", "-1", "--format=%P", "FETCH_HEAD"], { cwd: dir })).trim()).toBe(`${tip} ${head}`);
    // Once: a single change.landed, and the job row ended after a second attempt.
    const events = await cluster.sql`SELECT count(*)::int AS n FROM events WHERE kind = 'change.landed' AND payload->>'change' = ${String(change.body.number)}`;
    expect(events[0].n).toBe(1);
    // (The survivor may have landed it through the scan's row first: the lapsed one then ends idle.)
    const job = await eventually(async () => {
      const rows = await cluster.sql`SELECT attempts, done_at FROM jobs WHERE id = ${lease.id}`;
      return rows[0]?.done_at !== null && rows[0];
    });
    expect(Number(job.attempts)).toBeGreaterThanOrEqual(2);
  });

  test("svc fsck over the cluster's database and bucket reports clean after both crashes", async () => {
    const r = await runSvc(["fsck"], { ...cluster.env, SVC_DATA_DIR: join(scratch, "fsck"), SVC_LOG: "error" });
    expect(r.stderr).toContain("0 with problems");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("acme/crashy: ok");
    expect(r.stdout).toContain("acme/leased: ok");
  });
});
