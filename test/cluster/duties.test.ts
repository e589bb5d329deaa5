// Duties across nodes (issue 27, DECISIONS §5): a cluster-scoped periodic kind runs once per
// wall-clock slot however many nodes there are (one `job_schedules` row per kind moves by
// compare-and-swap, one `jobs` row per slot), and idle nodes write nothing but those slots.
// Periods are scaled down (SVC_TEST_PERIOD_SCALE=0.02: mirror.schedule's minute is 1.2 s, the
// lander's 5 s scan and the CI sweep 100 ms), so a few slots pass in seconds; the test waits for
// slot advances (observed in the table), never for a time.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type Cluster, startCluster } from "../helpers/cluster.ts";
import { clone, commitFiles, createRepo, type GitSandbox, gitSandbox, type OrgOwner, repoUrl, setupOwner } from "../helpers/git.ts";
import { eventually } from "../helpers/receiver.ts";

setDefaultTimeout(120_000);

/** The cluster-scoped periodic kinds (`every: { scope: "cluster" }` in their domains). */
const CLUSTER_PERIODIC = ["mirror.schedule", "webhook.prune", "repo.gc-pass", "jobs.prune", "notify.prune", "ci.schedule", "ci.cache-evict", "ci.artifact-sweep", "lfs.gc-pass"];

describe("periodic duties on three nodes", () => {
  let cluster: Cluster;
  let g: GitSandbox;
  let owner: OrgOwner;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 3, env: { SVC_TEST_PERIOD_SCALE: "0.02" } });
    g = gitSandbox();
    owner = await setupOwner(cluster.node(0), "acme");
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    g?.[Symbol.dispose]();
  }, 60_000);

  /** mirror.schedule's last slot (the shortest cluster period). */
  const lastSlot = async () => {
    const rows = await cluster.sql`SELECT last_slot FROM job_schedules WHERE name = 'mirror.schedule'`;
    return rows.length ? Number(rows[0].last_slot) : null;
  };
  /** Waits until mirror.schedule's slot moved `n` times past the one seen now. */
  const slotsPass = async (n: number) => {
    const from = await eventually(lastSlot, 30_000, "a first mirror.schedule slot");
    await eventually(async () => ((await lastSlot()) ?? 0) >= from + n, 60_000, `${n} mirror.schedule slots`);
  };

  test("a cluster periodic kind runs once per slot across three nodes", async () => {
    await slotsPass(4);
    const slots = await cluster.sql`
      SELECT kind, payload->>'slot' AS slot, count(*)::int AS n, max(attempts)::int AS attempts
      FROM jobs WHERE kind IN ${cluster.sql(CLUSTER_PERIODIC)} GROUP BY kind, payload->>'slot'`;
    const mirror = slots.filter((r: { kind: string }) => r.kind === "mirror.schedule");
    expect(mirror.length).toBeGreaterThanOrEqual(4);
    // One row per slot, each run by one attempt (of one node).
    for (const r of slots) expect({ kind: r.kind, slot: r.slot, n: r.n }).toEqual({ kind: r.kind, slot: r.slot, n: 1 });
    await eventually(async () => {
      const rows = await cluster.sql`SELECT count(*)::int AS n FROM jobs WHERE kind = 'mirror.schedule' AND done_at IS NULL AND run_at < ${Date.now() - 5_000}`;
      return rows[0].n === 0;
    });
    const runs = await cluster.sql`SELECT attempts::int AS a FROM jobs WHERE kind = 'mirror.schedule' AND done_at IS NOT NULL`;
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (const r of runs) expect(r.a).toBe(1);
    // One schedule row per cluster kind, however many nodes tick.
    const schedules = await cluster.sql`SELECT name FROM job_schedules ORDER BY name`;
    expect(schedules.map((r: { name: string }) => r.name).every((n: string) => CLUSTER_PERIODIC.includes(n))).toBe(true);
  });

  test("three idle nodes write no row over many sweeper periods, apart from the schedule slots", async () => {
    // Something to sweep over: a repository with a push. Then let its own work finish.
    await createRepo(cluster.node(0), owner, "quiet");
    const dir = await clone(g, repoUrl(cluster.node(0), "acme", "quiet", owner.token));
    await commitFiles(g, dir, { "README.md": "quiet\n" }, "quiet");
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
    await eventually(async () => {
      const rows = await cluster.sql`
        SELECT count(*)::int AS n FROM jobs
        WHERE done_at IS NULL AND kind NOT IN ${cluster.sql(CLUSTER_PERIODIC)} AND run_at < ${Date.now() + 60_000}`;
      return rows[0].n === 0;
    });

    // From here no request reaches any node. Every row version written since carries a newer
    // transaction id in its xmin.
    const [{ x: start }] = await cluster.sql`SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS x`;
    // Three slots of mirror.schedule: 3.6 s, i.e. ~36 lander scans and CI sweeps per node and
    // three idle polls of each node's job dispatcher.
    await slotsPass(3);
    const tables = await cluster.sql`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`;
    const written: Record<string, number> = {};
    for (const { tablename } of tables) {
      const [{ n }] = await cluster.sql.unsafe(`SELECT count(*)::int AS n FROM "${tablename}" WHERE xmin::text::bigint >= $1`, [start]);
      if (n > 0) written[tablename] = n;
    }
    const { jobs, job_schedules, ...others } = written;
    expect(others).toEqual({});
    expect(job_schedules ?? 0).toBeLessThanOrEqual(CLUSTER_PERIODIC.length);
    // The count sees writes: the three slots' rows are there.
    expect(job_schedules).toBeGreaterThanOrEqual(1);
    expect(jobs).toBeGreaterThanOrEqual(3);
    // The jobs rows written are the slots' own, one per (kind, slot).
    const rows = await cluster.sql`SELECT kind, payload->>'slot' AS slot FROM jobs WHERE xmin::text::bigint >= ${start}`;
    expect(rows.length).toBe(jobs ?? 0);
    for (const r of rows) expect(CLUSTER_PERIODIC).toContain(r.kind);
    expect(new Set(rows.map((r: { kind: string; slot: string }) => `${r.kind}#${r.slot}`)).size).toBe(rows.length);
  });
});
