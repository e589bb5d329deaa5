// The pool's use as the PostgreSQL client wrapper counts it (svc_db_pool_connections; Bun.sql does
// not expose its pool): a statement or a transaction holds one connection while it runs, and
// what is beyond the pool's size waits.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { x } from "../../src/db/dialect.ts";
import type { PgDatabase } from "../../src/db/pg/database.ts";
import { openTestDb, type TestDb } from "../helpers/db.ts";

describe("pool use [pg]", () => {
  let t: TestDb | undefined;
  afterAll(async () => {
    await t?.close();
  });

  test("transactions and statements in flight are counted, beyond the size too, and all given back", async () => {
    t = await openTestDb("pg", { pool: 2 });
    const db = t.db as PgDatabase;
    expect(db.pool).toEqual({ size: 2, inUse: 0 });
    await x(db.read).rows(sql`SELECT 1`);
    expect(db.pool.inUse).toBe(0);
    // Three transactions that each wait for a release: two hold the pool's connections, one waits.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    let allStarted!: () => void;
    const two = new Promise<void>((r) => (allStarted = r));
    const running = [0, 1, 2].map(() =>
      db.transaction(async (tx) => {
        await x(tx).rows(sql`SELECT 1`);
        if (++started === 2) allStarted();
        await gate;
      }),
    );
    try {
      await two;
      // two hold the pool's connections, the third waits for one
      expect(db.pool.inUse).toBe(3);
    } finally {
      release();
    }
    await Promise.all(running);
    expect(db.pool.inUse).toBe(0);
    // a failing statement gives its connection back too
    await expect(x(db.read).rows(sql`SELECT * FROM no_such_table`)).rejects.toThrow();
    expect(db.pool.inUse).toBe(0);
  });
});
