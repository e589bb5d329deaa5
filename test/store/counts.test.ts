// Aggregates read alike on both databases: counts and sums arrive as numbers (PostgreSQL answers
// int8 and numeric, which store code casts back), conditions summed as CASE, not booleans.
import { expect, test } from "bun:test";
import { tables } from "../../src/db/tables.ts";
import { hostedMinutesUsed } from "../../src/services/billing/store.ts";
import { livePackCounts } from "../../src/services/git/store.ts";
import { describeBoth } from "../helpers/db.ts";

describeBoth("store aggregates", (_dialect, open) => {
  test("live pack counts and hosted CI minutes", async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      const { orgs, repos, packs, ciMinutes } = tables(tx);
      await tx.insert(orgs).values({ id: "o1", name: "acme", kind: "org", createdAt: 1 });
      await tx.insert(repos).values([
        { id: "r1", orgId: "o1", name: "a", createdAt: 1 },
        { id: "r2", orgId: "o1", name: "b", createdAt: 1 },
      ]);
      const pack = { size: 1, idxSize: 1, objectCount: 1, createdAt: 1 };
      await tx.insert(packs).values([
        { id: "p1", repoId: "r1", storageRepoId: "r1", name: "n1", reachTips: "x", ...pack },
        { id: "p2", repoId: "r1", storageRepoId: "r2", name: "n2", ...pack },
        { id: "p3", repoId: "r2", storageRepoId: "r2", name: "n3", ...pack },
      ]);
      await tx.insert(ciMinutes).values([
        { jobId: "j1", orgId: "o1", repoId: "r1", hosted: true, startedAt: 1_000, finishedAt: 61_000, minutes: 2 },
        { jobId: "j2", orgId: "o1", repoId: "r1", hosted: true, startedAt: 2_000, finishedAt: null, minutes: null },
        { jobId: "j3", orgId: "o1", repoId: "r1", hosted: false, startedAt: 3_000, finishedAt: null, minutes: 9 },
      ]);
    });
    const counts = (await livePackCounts(db.read)).sort((a, b) => a.repoId.localeCompare(b.repoId));
    expect(counts).toEqual([
      { repoId: "r1", n: 2, recorded: 1, own: 1 },
      { repoId: "r2", n: 1, recorded: 0, own: 1 },
    ]);
    // j1: 2 minutes; j2 running since 2 s: ceil((182 s - 2 s) / 60 s) = 3 minutes
    expect(await hostedMinutesUsed(db.read, "o1", 0, 10_000, 182_000)).toBe(5);
  });
});
