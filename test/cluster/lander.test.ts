// The lander across nodes (issue 27, DECISIONS §5): three changes to one target branch, each
// opened and queued through a different node, land once each and in the order they were queued.
// Every node runs a lander; the `change.land` lease (one attempt per target at a time) and the
// publish compare-and-swap keep them from landing anything twice or out of order.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type Cluster, startCluster } from "../helpers/cluster.ts";
import { clone, commitFiles, createRepo, type GitSandbox, gitSandbox, lsRemote, type OrgOwner, repoUrl, setupOwner } from "../helpers/git.ts";
import { eventually } from "../helpers/receiver.ts";
import { client } from "../helpers/server.ts";

setDefaultTimeout(120_000);

describe("the lander on three nodes", () => {
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

  test("three changes queued through three nodes land once each, in queue order", async () => {
    await createRepo(cluster.node(0), owner, "queue");
    const dir = await clone(g, repoUrl(cluster.node(0), "acme", "queue", owner.token));
    const base = await commitFiles(g, dir, { "README.md": "base\n" }, "base");
    await g.ok(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: dir });
    // Three branches off the base, each adding its own file (the first lands by fast-forward,
    // the next two as merge commits on the moved target).
    const heads: string[] = [];
    for (const n of [1, 2, 3]) {
      await g.ok(["checkout", "-q", "-B", `topic-${n}`, base], { cwd: dir });
      heads.push(await commitFiles(g, dir, { [`topic-${n}.txt`]: `${n}\n` }, `topic ${n}`));
    }
    await g.ok(["push", "-q", "origin", "topic-1", "topic-2", "topic-3"], { cwd: dir });

    const on = (i: number) => client(cluster.node(i), { token: owner.token });
    const numbers: number[] = [];
    for (const i of [0, 1, 2]) {
      const r = await on(i).post("/v1/orgs/acme/repos/queue/changes", { title: `topic ${i + 1}`, branch: `topic-${i + 1}`, target: "main" });
      expect(r.status).toBe(201);
      numbers.push(r.body.number);
    }
    // Queued back to back, each through its own node: every node's lander may take the queue.
    for (const i of [0, 1, 2]) {
      const r = await on(i).post(`/v1/orgs/acme/repos/queue/changes/${numbers[i]}/land`, {});
      expect(r.status).toBe(202);
      expect(r.body.state).toBe("queued");
    }
    const landed = await eventually(
      async () => {
        const got = await Promise.all(numbers.map((n, i) => on(i).get(`/v1/orgs/acme/repos/queue/changes/${n}`)));
        for (const r of got) expect(["queued", "landed"]).toContain(r.body.state);
        return got.every((r) => r.body.state === "landed") && got.map((r) => r.body);
      },
      60_000,
      "three changes landed",
    );

    // In queue order: #1 by fast-forward, #2 merged onto #1's landing, #3 onto #2's.
    const [c1, c2, c3] = landed as [{ landed_commit: string }, { landed_commit: string }, { landed_commit: string }];
    expect(c1.landed_commit).toBe(heads[0]!);
    await g.ok(["fetch", "-q", "origin", "main"], { cwd: dir });
    const parents = async (oid: string) => (await g.ok(["log", "-1", "--format=%P", oid], { cwd: dir })).trim().split(" ");
    expect(await parents(c2.landed_commit)).toEqual([c1.landed_commit, heads[1]!]);
    expect(await parents(c3.landed_commit)).toEqual([c2.landed_commit, heads[2]!]);
    // Once each: the target's first-parent history is exactly base, #1, #2's merge, #3's merge,
    // and every node answers that tip.
    const firstParents = (await g.ok(["rev-list", "--first-parent", "origin/main"], { cwd: dir })).trim().split("\n");
    expect(firstParents).toEqual([c3.landed_commit, c2.landed_commit, c1.landed_commit, base]);
    const messages = (await g.ok(["log", "--format=%s", "origin/main"], { cwd: dir })).trim().split("\n");
    for (const n of numbers) expect(messages.filter((m) => m.startsWith(`Land change #${n}:`)).length).toBe(n === numbers[0] ? 0 : 1);
    for (const i of [0, 1, 2]) expect((await lsRemote(g, repoUrl(cluster.node(i), "acme", "queue", owner.token)))["refs/heads/main"]).toBe(c3.landed_commit);
    // One change.landed event per change: none landed twice.
    const rows = await cluster.sql`SELECT payload FROM events WHERE kind = 'change.landed'`;
    const landedEvents = rows.map((r: { payload: unknown }) => (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload).change as number);
    expect(landedEvents.sort((a: number, b: number) => a - b)).toEqual(numbers);
  });
});
