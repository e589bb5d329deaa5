// Machines' last_seen_at stamps (services/ci/credentials.ts flushRunnerSeen → ci/store.ts
// stampRunnersSeen): a flush writes every waiting stamp in one statement (one per 1,000
// machines), whatever the number of machines, on both databases; a stamp never moves one
// backwards and an unknown id is ignored.
import { expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Database } from "../../src/db/database.ts";
import { tables } from "../../src/db/tables.ts";
import { stampRunnersSeen } from "../../src/services/ci/store.ts";
import { describeBoth } from "../helpers/db.ts";

async function addRunners(db: Database, n: number, lastSeenAt: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `m${String(i).padStart(5, "0")}`);
  await db.transaction(async (tx) => {
    const { runners } = tables(tx);
    for (let i = 0; i < ids.length; i += 500)
      await tx
        .insert(runners)
        .values(
          ids
            .slice(i, i + 500)
            .map((id) => ({ id, hosted: true, name: id, labels: ["x"], os: "linux", arch: "x64", credentialHash: "h", lastSeenAt, createdAt: 1 })),
        );
  });
  return ids;
}

async function seen(db: Database): Promise<Map<string, number>> {
  const { runners } = tables(db.read);
  const rows = await db.read.select({ id: runners.id, t: runners.lastSeenAt }).from(runners);
  return new Map(rows.map((r) => [r.id, r.t]));
}

/** Statements the database runs during `fn` (its statement timing hooks). */
async function statements(db: Database, fn: () => Promise<void>): Promise<number> {
  let n = 0;
  const before = db.timings;
  db.timings = { statement: () => void n++, transaction: () => {} };
  try {
    await fn();
  } finally {
    db.timings = before;
  }
  return n;
}

describeBoth("runner last_seen_at stamps", (_dialect, open) => {
  test("one statement per flush of 1,000 machines; newer stamps win, older ones and unknown ids change nothing", async () => {
    const { db } = await open();
    const ids = await addRunners(db, 1_200, 5_000);
    const stamps: [string, number][] = ids.map((id, i) => [id, i % 2 ? 9_000 + i : 1_000]);
    stamps.push(["nobody", 9_999]);
    // What a transaction costs by itself (PostgreSQL's asks whether it wrote) is not the flush's.
    const empty = await statements(db, () => db.transaction(async () => {}));
    const n = await statements(db, () => db.transaction((tx) => stampRunnersSeen(tx, stamps)));
    expect(n - empty).toBe(2); // 1,201 stamps: two chunks
    const after = await seen(db);
    for (const [i, id] of ids.entries()) expect(after.get(id)).toBe(i % 2 ? 9_000 + i : 5_000);
    expect(after.has("nobody")).toBe(false);
    // One more flush of a few: one statement, only those rows move.
    expect((await statements(db, () => db.transaction((tx) => stampRunnersSeen(tx, [[ids[0]!, 20_000]])))) - empty).toBe(1);
    const last = await seen(db);
    expect(last.get(ids[0]!)).toBe(20_000);
    expect(last.get(ids[2]!)).toBe(5_000);
    const { runners } = tables(db.read);
    expect((await db.read.select({ t: runners.lastSeenAt }).from(runners).where(eq(runners.id, ids[1]!)))[0]!.t).toBe(9_001);
  });
});
