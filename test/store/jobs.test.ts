// The durable work queue's claim on both databases: two claimers at once take disjoint rows
// (PostgreSQL: FOR UPDATE SKIP LOCKED), and sequence numbers of one key stay distinct.
import { expect, test } from "bun:test";
import * as store from "../../src/services/jobs/store.ts";
import { describeBoth } from "../helpers/db.ts";

describeBoth("jobs store", (_dialect, open) => {
  test("two concurrent claims lease disjoint rows, every row once", async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      for (let i = 0; i < 6; i++) await store.insertJob(tx, { id: `j${i}`, kind: "k", payload: { i }, runAt: i, createdAt: i });
    });
    const claimOnce = (token: string) => db.transaction((tx) => store.claim(tx, "k", 100, 3, 1_000, token));
    const [a, b] = await Promise.all([claimOnce("a"), claimOnce("b")]);
    const ids = [...a, ...b].map((r) => r.id).sort();
    expect(ids).toEqual(["j0", "j1", "j2", "j3", "j4", "j5"]);
    expect((await db.transaction((tx) => store.claim(tx, "k", 100, 3, 1_000, "c"))).length).toBe(0);
  });

  test("concurrent enqueuers of one key get distinct sequence numbers", async () => {
    const { db } = await open();
    const add = (i: number) =>
      db.transaction(async (tx) => {
        const seq = await store.nextSeq(tx, "key:1");
        await store.insertJob(tx, { id: `s${i}`, kind: "q", payload: {}, runAt: 0, createdAt: 0, key: "key:1", seq });
        return seq;
      });
    const seqs = await Promise.all([0, 1, 2, 3].map(add));
    expect([...seqs].sort()).toEqual([1, 2, 3, 4]);
  });
});
