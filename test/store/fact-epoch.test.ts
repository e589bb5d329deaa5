// The shared fact epoch (issue 27, plan-27 §2 #3; migrations/pg/0001_fact_epoch.sql, 0003): on
// PostgreSQL every write that can change a cached authority fact moves a counter, and the
// stamps written on every use do not. Two "nodes" are two opens of one database (src/db/open.ts,
// the probes the server's FactCache gets).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { eq } from "drizzle-orm";
import type { Config } from "../../src/config.ts";
import type { Tx } from "../../src/db/database.ts";
import { FOLD_AT, type OpenDatabase, openDatabase } from "../../src/db/open.ts";
import { tables } from "../../src/db/tables.ts";
import { FactCache } from "../../src/services/access/fact-cache.ts";
import * as orgStore from "../../src/services/orgs/store.ts";
import * as credentials from "../../src/services/people/store-credentials.ts";
import * as people from "../../src/services/people/store.ts";
import { type PostgresDatabase, postgresDatabase } from "../helpers/postgres.ts";
import { eventually } from "../helpers/receiver.ts";

describe("fact epoch [pg]", () => {
  let pgdb: PostgresDatabase;
  let a: OpenDatabase;
  let b: OpenDatabase;
  const orgId = crypto.randomUUID();
  const userId = crypto.randomUUID();

  beforeAll(async () => {
    pgdb = await postgresDatabase();
    const config = { dataDir: "/nonexistent", database: { url: pgdb.url, name: pgdb.name, pool: 4 } } as unknown as Config;
    a = await openDatabase(config);
    b = await openDatabase(config);
    await a.db.transaction(async (tx) => {
      const { orgs, users } = tables(tx);
      await tx.insert(users).values({ id: userId, handle: "ann", email: "ann@example.com", name: "Ann", passwordHash: "x", createdAt: Date.now() });
      await tx.insert(orgs).values({ id: orgId, name: "acme", kind: "org", createdAt: Date.now() });
    });
  });
  afterAll(async () => {
    a?.close();
    b?.close();
    await pgdb?.drop();
  });

  /** The epoch as node B's probe reads it. */
  const epoch = async () => await b.probes.external();
  /** Whether `write` (a transaction on node A) moved the epoch. */
  async function moves(write: (tx: Tx) => Promise<unknown>): Promise<boolean> {
    const before = await epoch();
    await a.db.transaction(write);
    return (await epoch()) !== before;
  }
  const token = (id: string) => ({
    id,
    orgId,
    userId,
    kind: "personal" as const,
    scopes: ["repo:read"],
    label: "t",
    repoId: null,
    secretHash: "h",
    lastUsedAt: null,
    createdAt: Date.now(),
  });

  test("token creation and revocation move it; a last_used_at stamp does not", async () => {
    const id = "tok0000000000001";
    expect(await moves((tx) => credentials.insertToken(tx, token(id) as never))).toBe(true);
    expect(await moves((tx) => credentials.stampTokens(tx, [[id, Date.now()]]))).toBe(false);
    expect(await moves((tx) => credentials.deleteToken(tx, id))).toBe(true);
  });

  test("membership changes move it", async () => {
    expect(await moves((tx) => orgStore.insertMembership(tx, { orgId, userId, role: "member", createdAt: Date.now() } as never))).toBe(true);
    expect(await moves((tx) => orgStore.setMembershipRole(tx, orgId, userId, "admin"))).toBe(true);
    expect(await moves((tx) => orgStore.deleteMembership(tx, orgId, userId))).toBe(true);
  });

  test("a runner's heartbeat does not move it; its removal does", async () => {
    const id = crypto.randomUUID();
    const runner = { id, orgId, name: "r1", labels: ["linux"], os: "linux", arch: "x64", credentialHash: "h", lastSeenAt: 1, createdAt: 1 };
    expect(await moves((tx) => tx.insert(tables(tx).runners).values(runner as never))).toBe(true);
    expect(
      await moves((tx) =>
        tx
          .update(tables(tx).runners)
          .set({ lastSeenAt: Date.now() })
          .where(eq(tables(tx).runners.id, id)),
      ),
    ).toBe(false);
    expect(
      await moves((tx) =>
        tx
          .update(tables(tx).runners)
          .set({ removedAt: Date.now() })
          .where(eq(tables(tx).runners.id, id)),
      ),
    ).toBe(true);
  });

  test("a push's activity stamp (repos.active_at) does not move it; a rename does", async () => {
    const id = crypto.randomUUID();
    const { repos } = tables(a.db.read);
    expect(await moves((tx) => tx.insert(tables(tx).repos).values({ id, orgId, name: "app", activeAt: 1, createdAt: 1 } as never))).toBe(true);
    expect(await moves((tx) => tx.update(tables(tx).repos).set({ activeAt: Date.now() }).where(eq(repos.id, id)))).toBe(false);
    expect(await moves((tx) => tx.update(tables(tx).repos).set({ name: "app2" }).where(eq(repos.id, id)))).toBe(true);
  });

  test("concurrent authority writes on two nodes all commit and each moves it once", async () => {
    const before = await epoch();
    const ids = Array.from({ length: 16 }, (_, i) => `tokc${String(i).padStart(12, "0")}`);
    await Promise.all(ids.map((id, i) => (i % 2 ? a : b).db.transaction((tx) => credentials.insertToken(tx, token(id) as never))));
    expect((await epoch()) - before).toBe(ids.length);
  });

  test("48 concurrent authority writes through two nodes all commit and each moves it once", async () => {
    const before = await epoch();
    const ids = Array.from({ length: 48 }, (_, i) => `tokq${String(i).padStart(12, "0")}`);
    // Each stays open for a few statements after its trigger ran, as a service call does (an
    // audit row, reads): with one counter row (0001) this was the window in which they collided.
    const write = async (tx: Tx, id: string) => {
      await credentials.insertToken(tx, token(id) as never);
      for (let i = 0; i < 4; i++) await people.tokenById(tx, id);
    };
    const answers = await Promise.allSettled(ids.map((id, i) => (i % 2 ? a : b).db.transaction((tx) => write(tx, id))));
    expect(answers.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    expect((await epoch()) - before).toBe(ids.length);
  });

  test("writes of different fact tables never meet at the epoch: 48 at once, none retried", async () => {
    const retried = () =>
      [a, b].reduce((n, o) => n + [...(o.db as unknown as { retried: Map<string, number> }).retried.values()].reduce((x, y) => x + y, 0), 0);
    const before = { epoch: await epoch(), retried: retried() };
    // Tokens and memberships of distinct rows, each transaction held open after its trigger ran;
    // with one counter row (0001) every pair of these collided on it.
    const ids = Array.from({ length: 48 }, (_, i) => `tokn${String(i).padStart(12, "0")}`);
    const answers = await Promise.allSettled(
      ids.map((id, i) =>
        (i % 2 ? a : b).db.transaction(async (tx) => {
          await credentials.insertToken(tx, token(id) as never);
          await new Promise((r) => setImmediate(r));
        }),
      ),
    );
    expect(answers.filter((r) => r.status === "rejected")).toEqual([]);
    expect((await epoch()) - before.epoch).toBe(ids.length);
    expect(retried() - before.retried).toBe(0);
  });

  test("a node folds a long log into the base; the epoch does not move, and later writes still move it", async () => {
    const pgClient = new SQL({ url: pgdb.url, database: pgdb.name, max: 1 });
    try {
      const pending = async () => Number((await pgClient`SELECT count(*)::int AS n FROM svc_fact_epoch_log`)[0].n);
      await pgClient`INSERT INTO svc_fact_epoch_log SELECT FROM generate_series(1, ${FOLD_AT})`;
      const at = await epoch(); // this read counts FOLD_AT rows or more and starts the fold
      await eventually(async () => (await pending()) === 0, 30_000, "the log folded");
      expect(await epoch()).toBe(at);
      expect(await moves((tx) => credentials.insertToken(tx, token("tokf000000000001") as never))).toBe(true);
    } finally {
      await pgClient.close();
    }
  });

  test("node B's cached token survives A's stamps and is dropped at B's next request after A revokes it", async () => {
    const id = "tok0000000000002";
    await a.db.transaction((tx) => credentials.insertToken(tx, token(id) as never));
    let clock = 1_000;
    const cache = new FactCache(b.probes, () => clock);
    let loads = 0;
    const lookup = async () => {
      clock += 10; // a new request, past every window
      cache.fresh();
      return await cache.get("token", id, async () => {
        loads++;
        return await people.tokenById(b.db.read, id);
      });
    };
    expect((await lookup())?.id).toBe(id);
    await a.db.transaction((tx) => credentials.stampTokens(tx, [[id, Date.now()]]));
    expect((await lookup())?.id).toBe(id);
    expect(loads).toBe(1);
    await a.db.transaction((tx) => credentials.deleteToken(tx, id));
    expect(await lookup()).toBeNull();
    expect(loads).toBe(2);
  });
});
