// The table copier and the copy into PostgreSQL (src/db/copy.ts, services/ops/migrate-db.ts;
// issue 27, plan-27 §3.1): every column type survives SQLite → PostgreSQL → SQLite unchanged (json,
// boolean, blob, identity ids); names PostgreSQL's Unicode lower() would fold together are found
// and stop the copy before anything is written; a copy that does not verify commits nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { asc } from "drizzle-orm";
import { migrate, openDatabase as openSqlite } from "../../../src/db/client.ts";
import { copyTables, foldCollisions, nonEmptyTables, tableOrder, verifyTables } from "../../../src/db/copy.ts";
import type { Queryable } from "../../../src/db/database.ts";
import { openPg } from "../../../src/db/pg/client.ts";
import { tables } from "../../../src/db/tables.ts";
import { AppError } from "../../../src/errors.ts";
import { copyIntoPg, pgTarget } from "../../../src/services/ops/migrate-db.ts";
import { type PostgresDatabase, postgresDatabase } from "../../helpers/postgres.ts";

const T0 = 1_790_000_000_000;

/** A migrated SQLite database in a temp dir. */
function sqliteDb() {
  const dir = mkdtempSync(join(tmpdir(), "svc-copy-"));
  const opened = openSqlite(dir);
  migrate(opened.sqlite);
  return {
    ...opened,
    close() {
      opened.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Inserts a user (the fields the copier must carry: json links, a boolean). */
async function addUser(q: Queryable, id: string, handle: string, email: string, extra: Record<string, unknown> = {}) {
  const { users } = tables(q);
  await q.insert(users).values({ id, handle, email, name: handle, passwordHash: "x", createdAt: T0, ...extra });
}

/** Every row of every table, in primary-key order. */
async function everything(q: Queryable): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const info of tableOrder()) {
    const t = (tables(q) as Record<string, any>)[info.key];
    out[info.name] = await (q as any)
      .select()
      .from(t)
      .orderBy(...info.primaryKey.map((k) => asc(t[k])));
  }
  return out;
}

describe("the table copier", () => {
  let src: ReturnType<typeof sqliteDb>;
  let back: ReturnType<typeof sqliteDb>;
  let pgdb: PostgresDatabase;

  beforeAll(async () => {
    src = sqliteDb();
    back = sqliteDb();
    pgdb = await postgresDatabase();
    const q = src.db.read;
    await src.db.transaction(async (tx) => {
      await addUser(tx, "u1", "ada", "ada@example.com", { links: [{ label: "site", url: "https://ada.example" }], contribPrivateOptin: true, bio: "héllo ✓" });
      await addUser(tx, "u2", "bob", "bob@example.com");
      const { orgs, repos, contributionCounts, rateEvents } = tables(tx);
      await tx.insert(orgs).values({ id: "o1", name: "acme", kind: "org", createdAt: T0 } as never);
      await tx.insert(repos).values({ id: "r1", orgId: "o1", name: "app", description: "the app", public: true, createdAt: T0 } as never);
      await tx.insert(repos).values({ id: "r2", orgId: "o1", name: "lib", createdAt: T0 + 1 } as never);
      await tx.insert(contributionCounts).values({ userId: "u1", day: 20_000, counts: Buffer.from([0, 1, 2, 255]) });
      for (let i = 0; i < 3; i++) await tx.insert(rateEvents).values({ bucket: "signup", address: `a${i}`, createdAt: T0 + i });
    });
    expect(await nonEmptyTables(q)).toEqual(expect.arrayContaining(["users", "orgs", "repos", "contribution_counts", "rate_events", "repo_search_docs"]));
  });

  afterAll(async () => {
    src?.close();
    back?.close();
    await pgdb?.drop();
  });

  test("foreign-key order: every table after the tables it references, repo_search_docs after repos", () => {
    const order = tableOrder().map((t) => t.name);
    expect(new Set(order).size).toBe(order.length);
    expect(order.indexOf("users")).toBeLessThan(order.indexOf("orgs"));
    expect(order.indexOf("orgs")).toBeLessThan(order.indexOf("repos"));
    expect(order.indexOf("repos")).toBeLessThan(order.indexOf("repo_search_docs"));
    expect(order.indexOf("webhooks")).toBeLessThan(order.indexOf("webhook_attempts"));
  });

  test("SQLite → PostgreSQL → SQLite keeps every row of every table as it was (json, boolean, blob, identity ids, search ids)", async () => {
    const before = await everything(src.db.read);
    const copy = await copyIntoPg(src.db.read, pgTarget(pgdb.url));
    expect(copy.checks.every((c) => c.ok)).toBe(true);
    expect(copy.checks.find((c) => c.table === "rate_events")).toEqual({ table: "rate_events", source: 3, target: 3, ok: true });
    const pg = openPg({ url: pgdb.url, name: pgdb.name, pool: 2 });
    try {
      expect(await everything(pg.db.read)).toEqual(before);
      // The identity sequence continues after the copied ids.
      const { rateEvents } = tables(pg.db.read);
      const [made] = await pg.db.read.insert(rateEvents).values({ bucket: "signup", address: "new", createdAt: T0 }).returning();
      expect(made!.id).toBe(4);
      // And back onto SQLite (a backup of a PostgreSQL installation).
      await (pg.db.read as any).transaction(async (tx: Queryable) => {
        await back.db.transaction((w) => copyTables(tx, w));
        expect((await verifyTables(tx, back.db.read)).filter((c) => !c.ok)).toEqual([]);
      });
    } finally {
      await pg.close();
    }
    const after = await everything(back.db.read);
    expect(after.rate_events).toHaveLength(4);
    after.rate_events = after.rate_events!.slice(0, 3);
    expect(after).toEqual(before);
    // The FTS5 rows were rebuilt from the copied search ids: search finds by description.
    expect(back.sqlite.query("SELECT rowid FROM repo_search WHERE repo_search MATCH 'app' ORDER BY rowid").all()).toEqual(
      back.sqlite.query("SELECT docid AS rowid FROM repo_search_docs WHERE repo_id = 'r1'").all(),
    );
  });
});

describe("refused copies write nothing", () => {
  let src: ReturnType<typeof sqliteDb>;
  beforeAll(() => {
    src = sqliteDb();
  });
  afterAll(() => src?.close());

  test("names that differ only in non-ASCII case are listed and stop the copy; the target stays empty", async () => {
    await src.db.transaction(async (tx) => {
      await addUser(tx, "u1", "emile", "émile@example.com");
      await addUser(tx, "u2", "emile2", "ÉMILE@example.com");
      // ASCII case differences are refused by SQLite itself; other letters pass there.
      await addUser(tx, "u3", "zoe", "zoë@example.com");
    });
    expect(await foldCollisions(src.db.read)).toEqual([{ table: "users", index: "users_email_uq", values: ["émile@example.com", "ÉMILE@example.com"] }]);
    await using pgdb = await postgresDatabase();
    const error = await copyIntoPg(src.db.read, pgTarget(pgdb.url)).catch((e) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error.status).toBe(409);
    expect(error.message).toContain('users (users_email_uq): "émile@example.com", "ÉMILE@example.com"');
    const pg = openPg({ url: pgdb.url, name: pgdb.name, pool: 1 });
    try {
      expect(await nonEmptyTables(pg.db.read)).toEqual([]);
    } finally {
      await pg.close();
    }
  });

  test("a copy that does not verify (rows lost on the way) commits nothing and names the table", async () => {
    const clean = sqliteDb();
    try {
      await clean.db.transaction(async (tx) => {
        await addUser(tx, "u1", "ada", "ada@example.com");
        await addUser(tx, "u2", "bob", "bob@example.com");
      });
      await using pgdb = await postgresDatabase();
      const admin = new SQL({ url: pgdb.url, database: pgdb.name, max: 1 });
      try {
        // The target migrated, with a rule that silently drops one user's row.
        const pg = openPg({ url: pgdb.url, name: pgdb.name, pool: 1 });
        await (await import("../../../src/db/pg/migrate.ts")).migratePg(pg.sql);
        await pg.close();
        await admin.unsafe("CREATE RULE lose_bob AS ON INSERT TO users WHERE NEW.handle = 'bob' DO INSTEAD NOTHING");
        const error = await copyIntoPg(clean.db.read, pgTarget(pgdb.url)).catch((e) => e);
        expect(error).toBeInstanceOf(AppError);
        expect(error.message).toContain("the copy did not verify");
        expect(error.message).toContain("users (2 → 1)");
        expect(error.message).toContain("nothing was committed");
        expect(await admin`SELECT count(*)::int AS n FROM users`).toEqual([{ n: 0 }]);
      } finally {
        await admin.close();
      }
    } finally {
      clean.close();
    }
  });

  test("another scheme is a configuration error naming it", () => {
    expect(() => pgTarget("mysql://u:p@db/svc")).toThrow("mysql is not supported");
    expect(() => pgTarget("postgres://db.internal/")).toThrow("name the host and the database");
    expect(pgTarget("postgresql://u:p@db.internal:5433/svc").name).toBe("svc");
  });
});
