// One schema, two databases (issue 27, plan §1.2): the committed drizzle-kit snapshots match the
// schema as defined (a schema edit without `npm run db:generate` fails here), and the PostgreSQL
// migrations apply on a fresh server, once, with several nodes migrating at once.
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { generateDrizzleJson, generateMigration, generateSQLiteDrizzleJson, generateSQLiteMigration } from "drizzle-kit/api";
import { pgMigrations } from "../../../src/db/migrations.ts";
import { migratePg } from "../../../src/db/pg/migrate.ts";
import { pgCoreTables } from "../../../src/db/pg/schema.ts";
import * as sqliteSchema from "../../../src/db/schema/index.ts";
import { type PostgresDatabase, postgresDatabase } from "../../helpers/postgres.ts";

const ROOT = join(import.meta.dir, "../../..");

/** The newest snapshot drizzle-kit wrote into `dir/meta`. */
function lastSnapshot(dir: string): never {
  const names = readdirSync(join(dir, "meta"))
    .filter((n) => n.endsWith("_snapshot.json"))
    .sort();
  return JSON.parse(readFileSync(join(dir, "meta", names.at(-1)!), "utf8")) as never;
}

describe("migrations match the schema", () => {
  test("PostgreSQL: the derived schema equals migrations/pg's last snapshot", async () => {
    const current = generateDrizzleJson(pgCoreTables as Record<string, unknown>);
    const statements = await generateMigration(lastSnapshot(join(ROOT, "migrations/pg")), current as never);
    expect(statements).toEqual([]);
  });

  test("SQLite: the schema equals migrations/'s last snapshot", async () => {
    const current = await generateSQLiteDrizzleJson(sqliteSchema as Record<string, unknown>);
    const statements = await generateSQLiteMigration(lastSnapshot(join(ROOT, "migrations")), current as never);
    expect(statements).toEqual([]);
  });

  test("a schema edit shows as a difference (the check can fail)", async () => {
    const snap = lastSnapshot(join(ROOT, "migrations/pg")) as unknown as { tables: Record<string, { columns: Record<string, unknown> }> };
    const edited = structuredClone(snap);
    delete edited.tables["public.repos"]!.columns.description;
    const current = generateDrizzleJson(pgCoreTables as Record<string, unknown>);
    const statements = await generateMigration(edited as never, current as never);
    expect(statements.join("\n")).toContain('ADD COLUMN "description"');
  });

  test("every journal entry is embedded", () => {
    const journal = JSON.parse(readFileSync(join(ROOT, "migrations/pg/meta/_journal.json"), "utf8")) as { entries: { tag: string }[] };
    expect(pgMigrations.map((m) => m.tag)).toEqual(journal.entries.map((e) => e.tag));
  });
});

describe("PostgreSQL migrate", () => {
  const dbs: PostgresDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  test("applies on a fresh database, then finds nothing to do", async () => {
    const pgdb = await postgresDatabase();
    dbs.push(pgdb);
    const sql = new SQL({ url: pgdb.url, database: pgdb.name, max: 2 });
    try {
      expect(await migratePg(sql)).toEqual(pgMigrations.map((m) => m.tag));
      expect(await migratePg(sql)).toEqual([]);
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`;
      // every table of the schema, plus svc_migrations, svc_fact_epoch, svc_fact_epoch_log and svc_retry_lane
      // (kept out of the schema: pg migrations 0001, 0003, 0004)
      expect(n).toBe(Object.keys(pgCoreTables).length + 4);
      // the hand-written search part
      const [{ t }] = await sql`SELECT to_tsvector('simple', 'hello world') @@ websearch_to_tsquery('simple', 'hello') AS t`;
      expect(t).toBe(true);
    } finally {
      await sql.close();
    }
  });

  test("three migrators at once: one applies, the others wait and find nothing", async () => {
    const pgdb = await postgresDatabase();
    dbs.push(pgdb);
    const clients = [0, 1, 2].map(() => new SQL({ url: pgdb.url, database: pgdb.name, max: 1 }));
    try {
      const results = await Promise.all(clients.map((c) => migratePg(c)));
      const applied = results.filter((r) => r.length > 0);
      expect(applied).toEqual([pgMigrations.map((m) => m.tag)]);
      expect(results.filter((r) => r.length === 0).length).toBe(2);
      const rows = await clients[0]!`SELECT tag FROM svc_migrations`;
      expect(rows.length).toBe(pgMigrations.length);
    } finally {
      for (const c of clients) await c.close();
    }
  });
});
