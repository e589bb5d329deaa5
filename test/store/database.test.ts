// The Database surface on both databases (issue 27, plan-27 §1.5): what store code relies on
// when several writers (nodes) share one database. Written with awaited drizzle builders over
// tablesOf(q), the form every store function takes.
import { expect, test } from "bun:test";
import { createServer } from "node:net";
import { and, eq, sql } from "drizzle-orm";
import { dialectOf } from "../../src/db/dialect-of.ts";
import { tables as tablesOf } from "../../src/db/tables.ts";
import type { Tx } from "../../src/db/database.ts";
import { openPg } from "../../src/db/pg/client.ts";
import { RETRIES } from "../../src/db/pg/database.ts";
import { AppError, Conflict } from "../../src/errors.ts";
import { describeBoth } from "../helpers/db.ts";

/** Resolves once `n` callers arrived; later callers (a retried attempt) pass at once. */
function meeting(n: number): () => Promise<void> {
  let arrived = 0;
  const all = Promise.withResolvers<void>();
  return () => {
    if (++arrived >= n) all.resolve();
    return all.promise;
  };
}

const serializationFailure = () => Object.assign(new Error("could not serialize access"), { errno: "40001" });

async function seedRepo(tx: Tx, name = "r"): Promise<{ orgId: string; repoId: string }> {
  const { orgs, repos } = tablesOf(tx);
  const orgId = crypto.randomUUID();
  const repoId = crypto.randomUUID();
  await tx.insert(orgs).values({ id: orgId, name: `o-${orgId.slice(0, 8)}`, kind: "org", createdAt: Date.now() });
  await tx.insert(repos).values({ id: repoId, orgId, name, createdAt: Date.now() });
  return { orgId, repoId };
}

describeBoth("database", (dialect, open) => {
  test("handles and their transactions know their dialect", async () => {
    const { db } = await open();
    expect(dialectOf(db.read)).toBe(dialect);
    expect(db.dialect).toBe(dialect);
    await db.transaction(async (tx) => expect(dialectOf(tx)).toBe(dialect));
  });

  test("read decides write: two concurrent check-then-insert answer one success and the pre-check's Conflict", async () => {
    const { db } = await open();
    // On PostgreSQL both read before either writes; SQLite's write lock runs them one after the other.
    const both = meeting(dialect === "pg" ? 2 : 1);
    const attempts = [0, 0];
    const create = (i: number, name: string) =>
      db.transaction(async (tx) => {
        attempts[i]!++;
        const { orgs } = tablesOf(tx);
        const taken = await tx.select({ id: orgs.id }).from(orgs).where(sql`lower(${orgs.name}) = lower(${name})`).limit(1);
        await both();
        if (taken.length) throw Conflict(`the name ${name} is taken or reserved`);
        await tx.insert(orgs).values({ id: crypto.randomUUID(), name, kind: "org", createdAt: Date.now() });
        return name;
      });
    const results = await Promise.allSettled([create(0, "Acme"), create(1, "ACME")]);
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(ok.length).toBe(1);
    expect(refused.length).toBe(1);
    expect(refused[0]!.reason).toBeInstanceOf(AppError);
    expect((refused[0]!.reason as AppError).status).toBe(409);
    expect((refused[0]!.reason as AppError).message).toMatch(/^the name (Acme|ACME) is taken or reserved$/);
    // PostgreSQL: the loser failed to serialize and ran again (3 attempts in all); SQLite: once each.
    expect(attempts[0]! + attempts[1]!).toBe(dialect === "pg" ? 3 : 2);
    const { orgs } = tablesOf(db.read);
    const rows = await db.read.select({ name: orgs.name }).from(orgs).where(sql`lower(${orgs.name}) = 'acme'`);
    expect(rows.length).toBe(1);
  });

  test("ref compare-and-swap: two moves from the same old tip, one wins, every reader agrees", async () => {
    const { db } = await open();
    const { repoId } = await db.transaction((tx) => seedRepo(tx));
    const { refs } = tablesOf(db.read);
    await db.transaction(async (tx) => {
      await tx.insert(refs).values({ repoId, name: "refs/heads/main", target: "a".repeat(40) });
    });
    // The pusher's expected old tip comes from outside the transaction (publish's CAS).
    const old = "a".repeat(40);
    const both = meeting(dialect === "pg" ? 2 : 1);
    const attempts = { n: 0 };
    const move = (to: string) =>
      db.transaction(async (tx) => {
        attempts.n++;
        const { refs } = tablesOf(tx);
        const where = and(eq(refs.repoId, repoId), eq(refs.name, "refs/heads/main"));
        await tx.select({ target: refs.target }).from(refs).where(where).limit(1);
        await both();
        const moved = await tx
          .update(refs)
          .set({ target: to })
          .where(and(where, eq(refs.target, old)))
          .returning({ target: refs.target });
        return moved.length === 1 ? "moved" : "stale";
      });
    const outcomes = await Promise.all([move("b".repeat(40)), move("c".repeat(40))]);
    expect([...outcomes].sort()).toEqual(["moved", "stale"]);
    // PostgreSQL: the loser's update waited for the winner's row lock, failed to serialize, and ran again.
    expect(attempts.n).toBe(dialect === "pg" ? 3 : 2);
    const [row] = await db.read.select({ target: refs.target }).from(refs).where(eq(refs.repoId, repoId));
    expect(["b".repeat(40), "c".repeat(40)]).toContain(row!.target);
  });

  test("json, boolean, bytea and large integers round-trip with the same JS types", async () => {
    const { db } = await open();
    const { orgs, repos, metricBuckets } = tablesOf(db.read);
    const policy = { hosted: "all", self_hosted: "selected", self_hosted_repos: ["a", "b/c"] };
    const hist = Buffer.from([0, 1, 2, 250, 255, 0]);
    const at = 1_795_000_000_123;
    const { orgId, repoId } = await db.transaction(async (tx) => {
      const ids = await seedRepo(tx);
      const { orgs, repos, metricBuckets } = tablesOf(tx);
      await tx
        .update(orgs)
        .set({ runnerPolicy: policy, paidSeats: 2 ** 40 })
        .where(eq(orgs.id, ids.orgId));
      await tx.update(repos).set({ public: true, lastSyncAt: at }).where(eq(repos.id, ids.repoId));
      await tx.insert(metricBuckets).values({ orgId: ids.orgId, kind: "k", grain: 1, start: at, count: 3, bytes: 2 ** 45, msSum: 7, hist });
      return ids;
    });
    const [org] = await db.read.select().from(orgs).where(eq(orgs.id, orgId));
    expect(org!.runnerPolicy).toEqual(policy);
    expect(org!.paidSeats).toBe(2 ** 40);
    expect(typeof org!.createdAt).toBe("number");
    const [repo] = await db.read.select().from(repos).where(eq(repos.id, repoId));
    expect(repo!.public).toBe(true);
    expect(repo!.lastSyncAt).toBe(at);
    const notPublic = await db.read
      .select({ id: repos.id })
      .from(repos)
      .where(and(eq(repos.id, repoId), eq(repos.public, false)));
    expect(notPublic).toEqual([]);
    const [bucket] = await db.read.select().from(metricBuckets).where(eq(metricBuckets.orgId, orgId));
    expect(Buffer.isBuffer(bucket!.hist)).toBe(true);
    expect([...bucket!.hist]).toEqual([...hist]);
    expect(bucket!.bytes).toBe(2 ** 45);
    expect(bucket!.start).toBe(at);
    // sql<number> fields without a decoder (counts) are numbers too. A sum of bigints is numeric on
    // PostgreSQL (a string from the driver): store code casts it back to BIGINT.
    const [c] = await db.read.select({ n: sql<number>`count(*)`, s: sql<number>`CAST(sum(${metricBuckets.count}) AS BIGINT)` }).from(metricBuckets);
    expect(c).toEqual({ n: 1, s: 3 });
  });

  test("ownEpoch moves with a transaction that wrote, not with one that only read", async () => {
    const { db } = await open();
    const before = db.ownEpoch;
    await db.transaction(async (tx) => tx.select().from(tablesOf(tx).orgs).limit(1));
    expect(db.ownEpoch).toBe(before);
    await db.transaction(async (tx) => {
      await tx.insert(tablesOf(tx).orgs).values({ id: crypto.randomUUID(), name: `e-${crypto.randomUUID().slice(0, 8)}`, kind: "org", createdAt: 1 });
    });
    expect(db.ownEpoch).toBe(before + 1);
  });

  test("afterCommit runs after COMMIT, once; never for a rollback; at once outside a transaction", async () => {
    const { db } = await open();
    const ran: string[] = [];
    await db.transaction(async (tx) => {
      db.afterCommit(tx, () => ran.push("committed"));
      expect(ran).toEqual([]);
      expect(db.inTransaction).toBe(true);
    });
    expect(ran).toEqual(["committed"]);
    await expect(
      db.transaction(async (tx) => {
        db.afterCommit(tx, () => ran.push("rolled back"));
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    db.afterCommit(undefined, () => ran.push("now"));
    expect(ran).toEqual(["committed", "now"]);
  });

  test("two transactions open at once keep their own hooks", async () => {
    const { db } = await open();
    const ran: string[] = [];
    const both = meeting(dialect === "pg" ? 2 : 1);
    const one = (name: string, fail: boolean) =>
      db.transaction(async (tx) => {
        db.afterCommit(tx, () => ran.push(name));
        await both();
        if (fail) throw new Error(name);
      });
    const r = await Promise.allSettled([one("a", false), one("b", true)]);
    expect(r.map((x) => x.status)).toEqual(["fulfilled", "rejected"]);
    expect(ran).toEqual(["a"]);
  });
});

describeBoth("database (PostgreSQL only behaviour)", (dialect, open) => {
  if (dialect === "sqlite") {
    test("SQLite: a unique violation is the driver's error, as before issue 27", async () => {
      const { db } = await open();
      const add = () => db.transaction((tx) => tx.insert(tablesOf(tx).orgs).values({ id: crypto.randomUUID(), name: "dup", kind: "org", createdAt: 1 }));
      await add();
      const err = await add().catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(AppError);
      expect(String(err)).toContain("UNIQUE");
    });
    return;
  }

  test("a unique violation nobody pre-checked is a Conflict with the constraint's message", async () => {
    const { db } = await open();
    const add = (name: string) => db.transaction((tx) => tx.insert(tablesOf(tx).orgs).values({ id: crypto.randomUUID(), name, kind: "org", createdAt: 1 }));
    await add("dup");
    const err = await add("DUP").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(409);
    expect((err as AppError).message).toBe("the name is taken or reserved");
  });

  test("a retried attempt's hooks are dropped with it; the last attempt's run once", async () => {
    const { db } = await open();
    const ran: number[] = [];
    let attempt = 0;
    await db.transaction(async (tx) => {
      const n = ++attempt;
      db.afterCommit(tx, () => ran.push(n));
      if (n < 3) throw serializationFailure();
    });
    expect(ran).toEqual([3]);
  });

  test(`serialization failures are retried ${RETRIES} times, then 503 database_busy`, async () => {
    const { db } = await open();
    let attempts = 0;
    const err = await db
      .transaction(async () => {
        attempts++;
        throw serializationFailure();
      })
      .catch((e: unknown) => e);
    expect(attempts).toBe(RETRIES);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(503);
    expect((err as AppError).extra).toEqual({ code: "database_busy" });
  });

  test("40 writers that each read what the others write all commit: retries queue behind each other", async () => {
    const { db } = await open();
    // Forty jobs of one kind; each transaction reads them all (as settling a CI run reads all its
    // jobs) and then finishes its own: every pair conflicts under SERIALIZABLE.
    const kind = `t.${crypto.randomUUID()}`;
    const ids = Array.from({ length: 40 }, () => crypto.randomUUID());
    await db.transaction(async (tx) => {
      const { jobs } = tablesOf(tx);
      for (const id of ids) await tx.insert(jobs).values({ id, kind, payload: {}, runAt: 1, createdAt: 1 });
    });
    const answers = await Promise.allSettled(
      ids.map((id) =>
        db.transaction(async (tx) => {
          const { jobs } = tablesOf(tx);
          const open = await tx
            .select()
            .from(jobs)
            .where(and(eq(jobs.kind, kind), sql`${jobs.doneAt} IS NULL`));
          await tx
            .update(jobs)
            .set({ doneAt: 2, lastError: String(open.length) })
            .where(eq(jobs.id, id));
          // More of the service call's statements (a check row, an event, the run's state).
          for (let i = 0; i < 6; i++) await tx.select().from(jobs).where(eq(jobs.kind, kind));
        }),
      ),
    );
    expect(answers.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    // Serializable: the finishes happened one after another, so each saw one fewer still open.
    const seen = await db.read
      .select({ e: tablesOf(db.read).jobs.lastError })
      .from(tablesOf(db.read).jobs)
      .where(eq(tablesOf(db.read).jobs.kind, kind));
    expect(seen.map((r) => Number(r.e)).sort((a, b) => a - b)).toEqual(ids.map((_, i) => i + 1));
  });

  test("an unreachable server is a 503 database_unavailable, not a 500", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const pg = openPg({ url: `postgres://svc:x@127.0.0.1:${port}/svc`, name: "svc", pool: 1 });
    try {
      const err = await pg.db.transaction((tx) => tx.select().from(tablesOf(tx).orgs).limit(1)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(503);
      expect((err as AppError).extra).toEqual({ code: "database_unavailable" });
    } finally {
      await pg.close();
    }
  });
});
