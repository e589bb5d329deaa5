// Database.readView (issue 27, plan-27 §3.2): the reads `svc fsck` makes of one repository run in
// one consistent view. On PostgreSQL a push committed by another node while the view is open is
// not half-seen (its pack row without its ref, or the reverse), and the view cannot write.
import { expect, test } from "bun:test";
import type { Database } from "../../src/db/database.ts";
import { tables } from "../../src/db/tables.ts";
import * as store from "../../src/services/ops/store.ts";
import { describeBoth } from "../helpers/db.ts";

/** A repository with one pack and main at `tip`. */
async function seed(db: Database, tip: string): Promise<void> {
  await db.transaction(async (tx) => {
    const { orgs, repos, packs, refs } = tables(tx);
    await tx.insert(orgs).values({ id: "o1", name: "acme", kind: "org", createdAt: 1 });
    await tx.insert(repos).values({ id: "r1", orgId: "o1", name: "app", createdAt: 2 });
    await tx.insert(packs).values({ id: "p1", repoId: "r1", storageRepoId: "r1", name: "1".repeat(40), size: 100, idxSize: 9, objectCount: 3, createdAt: 3 });
    await tx.insert(refs).values({ repoId: "r1", name: "refs/heads/main", target: tip });
  });
}

/** What a push commits: a new pack row and the ref moved to a commit in it, in one transaction. */
async function push(db: Database, tip: string): Promise<void> {
  await db.transaction(async (tx) => {
    const { packs } = tables(tx);
    await tx.insert(packs).values({ id: "p2", repoId: "r1", storageRepoId: "r1", name: "2".repeat(40), size: 50, idxSize: 9, objectCount: 2, createdAt: 4 });
    const { refs } = tables(tx);
    await tx.update(refs).set({ target: tip });
  });
}

describeBoth("readView", (dialect, open) => {
  test("answers the reads of its callback", async () => {
    const { db } = await open();
    await seed(db, "a".repeat(40));
    const seen = await db.readView(async (q) => ({ packs: (await store.packRows(q, { repoId: "r1" })).length, refs: await store.refRows(q, "r1") }));
    expect(seen).toEqual({ packs: 1, refs: [{ name: "refs/heads/main", target: "a".repeat(40) }] });
  });

  if (dialect === "pg") {
    test("a push committed by another node during the view is seen whole or not at all", async () => {
      const { db } = await open();
      const seen = await db.readView(async (q) => {
        const packs = await store.packRows(q, { repoId: "r1" });
        // Another node commits a push between the view's two reads.
        await push(db, "b".repeat(40));
        const refs = await store.refRows(q, "r1");
        return { packs: packs.map((p) => p.name), refs: refs.map((r) => r.target) };
      });
      expect(seen).toEqual({ packs: ["1".repeat(40)], refs: ["a".repeat(40)] });
      // after the view: the push, whole
      expect((await store.packRows(db.read, { repoId: "r1" })).length).toBe(2);
      expect((await store.refRows(db.read, "r1"))[0]!.target).toBe("b".repeat(40));
    });

    test("the view is read-only", async () => {
      const { db } = await open();
      const refused = await db
        .readView(async (q) => {
          const { refs } = tables(q);
          await q.update(refs).set({ target: "c".repeat(40) });
        })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Error);
      expect((await store.refRows(db.read, "r1"))[0]!.target).toBe("b".repeat(40));
    });
  }
});
