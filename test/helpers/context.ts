// The service tests' contexts (test/service): `openTestContext(env)` is
// `openContext(loadConfig(env))` on the database the test run asks for. SVC_TEST_DATABASE unset
// (or `sqlite`) keeps the embedded SQLite file in SVC_DATA_DIR; `pg` (`npm run test:service:pg`,
// issue 27) gives each data dir a fresh PostgreSQL database on this process's shared test server
// (test/helpers/postgres.ts) as its SVC_DATABASE_URL. Why per data dir and not per call: a data
// dir stands for one installation, so a context reopened on it (a restart) or a second context on
// it (a second node) meets the same database, as it meets the same SQLite file. The databases go
// with the server when the test process ends.
import { join, resolve } from "node:path";
import { type Config, loadConfig } from "../../src/config.ts";
import * as schema from "../../src/db/schema/index.ts";
import type { Tables } from "../../src/db/tables.ts";
import { openContext } from "../../src/runtime.ts";
import type { Dialect } from "./db.ts";
import { type PostgresDatabase, postgresDatabase } from "./postgres.ts";

function testDatabase(): Dialect {
  const v = process.env.SVC_TEST_DATABASE;
  if (v === undefined || v === "" || v === "sqlite") return "sqlite";
  if (v === "pg") return "pg";
  throw new Error(`SVC_TEST_DATABASE=${v}: expected sqlite or pg`);
}

/** The database the service tests run on (SVC_TEST_DATABASE). */
export const TEST_DATABASE: Dialect = testDatabase();

/**
 * The table objects of the test run's database, for a test's own queries on `ctx.db` (a query
 * must be built from its handle's dialect's tables: src/db/tables.ts). The same keys and row
 * types as src/db/schema's exports: `const { jobs } = testTables;`.
 */
export const testTables: Tables =
  TEST_DATABASE === "pg"
    ? ((require("../../src/db/pg/schema.ts") as typeof import("../../src/db/pg/schema.ts")).pgTables as unknown as Tables)
    : (schema as unknown as Tables);

const databases = new Map<string, Promise<PostgresDatabase>>();

/** `env` with SVC_DATABASE_URL set to its data dir's database when the tests run on PostgreSQL. */
export async function testEnv(env: Record<string, string | undefined>): Promise<Record<string, string | undefined>> {
  if (TEST_DATABASE !== "pg" || env.SVC_DATABASE_URL) return env;
  const dataDir = resolve(env.SVC_DATA_DIR || "./data");
  let db = databases.get(dataDir);
  if (!db) {
    db = postgresDatabase();
    databases.set(dataDir, db);
    db.catch(() => databases.delete(dataDir));
  }
  return { ...env, SVC_DATABASE_URL: (await db).url };
}

/** loadConfig(env) on the test run's database. */
export async function testConfig(env: Record<string, string | undefined>): Promise<Config> {
  return loadConfig(await testEnv(env));
}

/**
 * openContext(loadConfig(env)) on the test run's database. On PostgreSQL it resolves once the
 * context's LISTEN is up (PgSignals.ready), as on a node that has been running a while: the
 * first LISTEN sends every subscriber a "look again" (`*`), which must not land in a test's
 * count of wake-ups.
 */
export async function openTestContext(env: Record<string, string | undefined>): ReturnType<typeof openContext> {
  const ctx = await openContext(await testConfig(env));
  await (ctx.signals as { ready?(): Promise<void> }).ready?.();
  return ctx;
}

const said = new Set<string>();
/**
 * For `test.skipIf(sqliteOnly("why"))`: true when the tests run on PostgreSQL, for a test of
 * something only the SQLite database has (the .db file, its PRAGMAs, its lock). The reason is
 * printed once per run so a skip is never silent.
 */
export function sqliteOnly(reason: string): boolean {
  if (TEST_DATABASE === "sqlite") return false;
  if (!said.has(reason)) {
    said.add(reason);
    console.warn(`skipped on PostgreSQL (SQLite only): ${reason}`);
  }
  return true;
}

/** A connection of its own to the database of `dataDir` (another process: the CLI, a hand edit, another node). */
export interface OtherConnection {
  /** Runs statements (no parameters); `{ sqlite, pg }` when the dialects need different text. */
  exec(statements: string | { sqlite: string; pg: string }): Promise<void>;
  /** The rows of one query (no parameters). */
  rows<T>(query: string | { sqlite: string; pg: string }): Promise<T[]>;
  close(): Promise<void>;
}

/** Opens a second connection to the database a context on `dataDir` uses (open that context first). */
export async function otherConnection(dataDir: string): Promise<OtherConnection> {
  const pick = (q: string | { sqlite: string; pg: string }) => (typeof q === "string" ? q : q[TEST_DATABASE]);
  if (TEST_DATABASE === "sqlite") {
    const { Database } = await import("bun:sqlite");
    const db = new Database(join(dataDir, "svc.db"));
    // The context's own writes may hold the lock for a moment: wait, as another process would.
    db.exec("PRAGMA busy_timeout = 10000");
    return {
      exec: async (q) => void db.exec(pick(q)),
      rows: async <T>(q: string | { sqlite: string; pg: string }) => db.query(pick(q)).all() as T[],
      close: async () => db.close(),
    };
  }
  const db = databases.get(resolve(dataDir));
  if (!db) throw new Error(`no context was opened on ${dataDir}`);
  const { url, name } = await db;
  const sql = new Bun.SQL({ url, database: name, max: 1 });
  return {
    exec: async (q) => void (await sql.unsafe(pick(q)).simple()),
    rows: async <T>(q: string | { sqlite: string; pg: string }) => [...((await sql.unsafe(pick(q))) as T[])],
    close: () => sql.close(),
  };
}
