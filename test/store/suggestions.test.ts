// The stores of applying suggestions (issue 28) on both databases: a change's comments among ids,
// suggesters with the privacy of their sign-in address, and the applied/resolved marks.
import { expect, test } from "bun:test";
import { tables } from "../../src/db/tables.ts";
import { appliedAmong, commentsOfChange, markApplied, suggesters } from "../../src/services/changes/store-suggestions.ts";
import { describeBoth } from "../helpers/db.ts";

describeBoth("suggestion stores", (_dialect, open) => {
  test("comments of a change, suggesters, applied marks and thread resolution", async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      const { orgs, repos, users, emails, changes, changeComments } = tables(tx);
      await tx.insert(orgs).values({ id: "o1", name: "acme", kind: "org", createdAt: 1 });
      await tx.insert(repos).values({ id: "r1", orgId: "o1", name: "app", createdAt: 1 });
      const user = (id: string, handle: string, email: string) => ({ id, handle, email, name: `${handle} name`, passwordHash: "x", createdAt: 1 });
      await tx.insert(users).values([user("u1", "ada", "ada@example.com"), user("u2", "bo", "bo@example.com"), user("u3", "cy", "cy@example.com")]);
      await tx.insert(emails).values([
        { id: "e1", userId: "u1", address: "ada@example.com", private: false, primary: true, createdAt: 1 },
        { id: "e2", userId: "u2", address: "BO@example.com", private: true, primary: true, createdAt: 1 },
        { id: "e4", userId: "u1", address: "ada.old@example.com", private: true, primary: false, createdAt: 1 },
      ]);
      const change = (id: string, number: number) => ({
        id,
        repoId: "r1",
        number,
        title: "t",
        state: "open",
        branch: `b${number}`,
        target: "main",
        createdAt: 1,
        updatedAt: 1,
      });
      await tx.insert(changes).values([change("c1", 1), change("c2", 2)]);
      const comment = (id: string, changeId: string, threadId = id) => ({
        id,
        changeId,
        repoId: "r1",
        authorUserId: "u2",
        body: "b",
        threadId,
        patchset: 1,
        anchoredPatchset: 1,
        suggestion: "x\n",
        updatedAt: 1,
        createdAt: 1,
      });
      await tx.insert(changeComments).values([comment("k1", "c1"), comment("k2", "c1"), comment("k3", "c2"), comment("k4", "c1", "k1")]);
    });

    expect((await commentsOfChange(db.read, "c1", ["k1", "k3", "k4", "nope"])).map((r) => r.id).sort()).toEqual(["k1", "k4"]);
    expect(await commentsOfChange(db.read, "c1", [])).toEqual([]);

    const people = (await suggesters(db.read, ["u1", "u2", "u3"])).sort((a, b) => a.id.localeCompare(b.id));
    expect(people).toEqual([
      { id: "u1", handle: "ada", name: "ada name", email: "ada@example.com", emailPrivate: false },
      { id: "u2", handle: "bo", name: "bo name", email: "bo@example.com", emailPrivate: true },
      // No address row: private.
      { id: "u3", handle: "cy", name: "cy name", email: "cy@example.com", emailPrivate: true },
    ]);

    await db.transaction(async (tx) => {
      expect(await appliedAmong(tx, ["k1", "k4"])).toBe(0);
      await markApplied(tx, ["k4"], ["k1"], "f".repeat(40), "u1", 50);
      expect(await appliedAmong(tx, ["k1", "k4"])).toBe(1);
    });
    const { changeComments } = tables(db.read);
    const rows = (await db.read.select().from(changeComments)).sort((a, b) => a.id.localeCompare(b.id));
    expect(rows.map((r) => [r.id, r.appliedCommit, r.resolved, r.resolvedByUserId, r.resolvedAt])).toEqual([
      ["k1", null, true, "u1", 50],
      ["k2", null, false, null, null],
      ["k3", null, false, null, null],
      ["k4", "f".repeat(40), false, null, null],
    ]);
  });
});
