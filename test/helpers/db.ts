// Store-level tests on both databases (issue 27, plan-27 §4.1): `describeBoth(name, fn)` runs the
// cases of `fn` once on SQLite (a temp data dir) and once on PostgreSQL (a fresh database on this
// process's shared test server, test/helpers/postgres.ts). No PostgreSQL binaries means the pg half
// fails with the install hint; it never skips silently.
import { afterAll, describe } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate, openDatabase as openSqlite } from "../../src/db/client.ts";
import type { Database } from "../../src/db/database.ts";
import { openPg } from "../../src/db/pg/client.ts";
import { migratePg } from "../../src/db/pg/migrate.ts";
import { postgresDatabase } from "./postgres.ts";

export type Dialect = "sqlite" | "pg";
export const DIALECTS: readonly Dialect[] = ["sqlite", "pg"];

export interface TestDb {
  dialect: Dialect;
  db: Database;
  /** PostgreSQL: the database's URL and name (a second client, another "node"). */
  url?: string;
  name?: string;
  close(): Promise<void>;
}

/** A fresh, migrated database of `dialect`. */
export async function openTestDb(dialect: Dialect, opts: { pool?: number } = {}): Promise<TestDb> {
  if (dialect === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "svc-store-"));
    const { db, sqlite, close } = openSqlite(dir);
    migrate(sqlite);
    return {
      dialect,
      db,
      close: async () => {
        close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pgdb = await postgresDatabase();
  const pg = openPg({ url: pgdb.url, name: pgdb.name, pool: opts.pool ?? 8 });
  await migratePg(pg.sql);
  return {
    dialect,
    db: pg.db,
    url: pgdb.url,
    name: pgdb.name,
    close: async () => {
      await pg.close();
      await pgdb.drop();
    },
  };
}

/**
 * `describe(name [dialect])` for each dialect; `fn` gets the dialect and a getter of the block's
 * database (opened on first use, closed after the block).
 */
export function describeBoth(name: string, fn: (dialect: Dialect, db: () => Promise<TestDb>) => void): void {
  for (const dialect of DIALECTS) {
    describe(`${name} [${dialect}]`, () => {
      let opened: Promise<TestDb> | undefined;
      const get = () => (opened ??= openTestDb(dialect));
      afterAll(async () => {
        if (opened) await (await opened).close();
      });
      fn(dialect, get);
    });
  }
}
