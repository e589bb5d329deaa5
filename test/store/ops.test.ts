// The ops store (readiness, fsck and backup reads: raw SQL through x(q)) on both databases.
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { x } from "../../src/db/dialect.ts";
import { tables } from "../../src/db/tables.ts";
import * as store from "../../src/services/ops/store.ts";
import { describeBoth } from "../helpers/db.ts";

describeBoth("ops store", (dialect, open) => {
  test("ping, applied migrations, mail outbox, repositories, packs and refs read alike", async () => {
    const { db } = await open();
    await store.ping(db.read);
    expect((await store.appliedMigrations(db.read)).length).toBeGreaterThan(0);
    expect(await store.mailOutbox(db.read)).toEqual({ pending: 0, failed: 0, oldestPending: null });
    const big = 1_795_000_000_000;
    await db.transaction(async (tx) => {
      const { orgs, repos, packs, refs, mailOutbox } = tables(tx);
      await tx.insert(orgs).values({ id: "o1", name: "Acme", kind: "org", createdAt: 1 });
      await tx.insert(repos).values({ id: "r1", orgId: "o1", name: "Widget", createdAt: 2 });
      await tx.insert(packs).values({ id: "p1", repoId: "r1", storageRepoId: "r1", name: "pack-1", size: 2 ** 40, idxSize: 9, objectCount: 3, createdAt: 3 });
      await tx.insert(refs).values({ repoId: "r1", name: "refs/heads/main", target: "a".repeat(40) });
      const mail = { subject: "s", textBody: "t", htmlBody: "h", runAt: big, createdAt: big };
      await tx.insert(mailOutbox).values([
        { id: "m1", toAddress: "a@x", ...mail },
        { id: "m2", toAddress: "b@x", ...mail, createdAt: big + 5 },
        { id: "m3", toAddress: "c@x", ...mail, failedAt: big },
      ]);
    });
    expect(await store.mailOutbox(db.read)).toEqual({ pending: 2, failed: 1, oldestPending: big });
    expect(await store.allRepoNames(db.read)).toEqual([{ id: "r1", name: "Acme/Widget" }]);
    expect(await store.repoByFullName(db.read, "acme", "WIDGET")).toEqual({ id: "r1", name: "Acme/Widget" });
    expect(await store.packRows(db.read)).toEqual([
      { repoId: "r1", storageRepoId: "r1", name: "pack-1", size: 2 ** 40, idxSize: 9, objectCount: 3, replacedAt: null },
    ]);
    expect(await store.refRows(db.read, "r1")).toEqual([{ name: "refs/heads/main", target: "a".repeat(40) }]);
    expect(await store.repoIds(db.read)).toEqual(new Set(["r1"]));
    expect(dialect).toBe(db.dialect);
  });

  test("dialect operations: greatest, least, jsonNumber, row, run", async () => {
    const { db } = await open();
    const d = x(db.read);
    expect(d.name).toBe(dialect);
    expect(await d.row<{ g: number; l: number }>(sql`SELECT ${d.greatest(sql`3`, sql`7`)} AS g, ${d.least(sql`3`, sql`7`)} AS l`)).toEqual({ g: 7, l: 3 });
    await db.transaction(async (tx) => {
      const { orgs } = tables(tx);
      await tx
        .insert(orgs)
        .values({ id: "o2", name: "J", kind: "org", createdAt: 1, runnerPolicy: { hosted: "all", self_hosted: "none", self_hosted_repos: [] } });
      await x(tx).run(sql`UPDATE orgs SET paid_seats = 4 WHERE id = 'o2'`);
    });
    const { workflowJobs } = tables(db.read);
    expect(workflowJobs).toBeDefined();
    const n = await d.row<{ n: number | null }>(
      sql`SELECT ${d.jsonNumber(dialect === "pg" ? sql`'{"timeoutS": 60}'::jsonb` : sql`'{"timeoutS": 60}'`, "timeoutS")} AS n`,
    );
    expect(n).toEqual({ n: 60 });
    expect(await d.row<{ seats: number }>(sql`SELECT paid_seats AS seats FROM orgs WHERE id = 'o2'`)).toEqual({ seats: 4 });
  });
});

describeBoth("dialect: JSON subsets and transaction locks", (dialect, open) => {
  test("jsonSubset: every element of the array column is among the values", async () => {
    const { db } = await open();
    const d = x(db.read);
    const arr = (v: string[]) => (dialect === "pg" ? sql`${JSON.stringify(v)}::text::jsonb` : sql`${JSON.stringify(v)}`);
    const ask = async (col: string[], values: string[]) =>
      !!(await d.row<{ ok: unknown }>(sql`SELECT CASE WHEN ${d.jsonSubset(arr(col), values)} THEN 1 ELSE 0 END AS ok`))!.ok;
    expect(await ask(["linux", "x64"], ["linux", "x64", "gpu"])).toBe(true);
    expect(await ask([], ["linux"])).toBe(true);
    expect(await ask(["linux", "arm64"], ["linux", "x64"])).toBe(false);
  });

  test("lockKey serializes two transactions on one key; tryLockKey says whether it got it", async () => {
    const { db } = await open();
    const order: string[] = [];
    const held = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    const first = db.transaction(async (tx) => {
      await x(tx).lockKey("seq:k");
      order.push("first has it");
      held.resolve();
      await release.promise;
      order.push("first done");
    });
    await held.promise;
    if (dialect === "pg") {
      // Another transaction cannot take it now, and waits for it.
      expect(await db.transaction((tx) => x(tx).tryLockKey("seq:k"))).toBe(false);
      const second = db.transaction(async (tx) => {
        await x(tx).lockKey("seq:k");
        order.push("second has it");
      });
      release.resolve();
      await Promise.all([first, second]);
      expect(order).toEqual(["first has it", "first done", "second has it"]);
    } else {
      release.resolve();
      await first;
      expect(await db.transaction((tx) => x(tx).tryLockKey("seq:k"))).toBe(true);
    }
  });
});
