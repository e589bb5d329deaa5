// The service tests' contexts (test/service): `openTestContext(env)` is
// `openContext(loadConfig(env))` on the database the test run asks for. SVC_TEST_DATABASE unset
// (or `sqlite`) keeps the embedded SQLite file in SVC_DATA_DIR; `pg` (`npm run test:service:pg`,
// issue 27) gives each data dir a fresh PostgreSQL database on this process's shared test server
// (test/helpers/postgres.ts) as its SVC_DATABASE_URL. Why per data dir and not per call: a data
// dir stands for one installation, so a context reopened on it (a restart) or a second context on
// it (a second node) meets the same database, as it meets the same SQLite file. The databases go
// with the server when the test process ends.
import { resolve } from "node:path";
import { type Config, loadConfig } from "../../src/config.ts";
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

/** openContext(loadConfig(env)) on the test run's database. */
export async function openTestContext(env: Record<string, string | undefined>): ReturnType<typeof openContext> {
  return openContext(await testConfig(env));
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
