// The SQLite connection (bun:sqlite through drizzle): WAL, foreign keys, busy timeout, migrations.
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { SqliteDatabase as MetaDatabase, timeStatements } from "./database.ts";
import { migrations } from "./migrations.ts";
import * as schema from "./schema/index.ts";

/** The drizzle handle every service receives. */
export type Db = ReturnType<typeof drizzle<typeof schema>>;

/** Opens one connection to `<dataDir>/svc.db` with the pragmas the service relies on. */
function connect(dataDir: string): Database {
  const sqlite = new Database(join(dataDir, "svc.db"), { create: true, strict: true });
  sqlite.exec("PRAGMA busy_timeout = 10000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  return sqlite;
}

/** The database and its WAL and shared-memory files. */
const DB_FILES: readonly string[] = ["svc.db", "svc.db-wal", "svc.db-shm", "svc.db-journal"];

/**
 * Makes the data dir private to the service's user (0700) and the database files 0600, existing
 * ones included. Why: the database holds password and token hashes, and SQLite creates its files
 * (and the WAL and shared memory after them, with the database's mode) world-readable under the
 * usual umask. The database file is created here, 0600, so everything SQLite adds inherits that.
 */
export function secureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const main = join(dataDir, "svc.db");
  if (!existsSync(main)) closeSync(openSync(main, "a", 0o600));
  for (const name of DB_FILES) {
    const path = join(dataDir, name);
    if (existsSync(path)) chmodSync(path, 0o600);
  }
}

/**
 * Opens (creating if needed) `<dataDir>/svc.db`: the write connection (`sqlite`, which migrations
 * and the change probes use) and a query-only read connection, behind one `Database`.
 */
export function openDatabase(dataDir: string): { db: MetaDatabase; sqlite: Database; close(): void } {
  secureDataDir(dataDir);
  const sqlite = connect(dataDir);
  const reader = connect(dataDir);
  // Why: the read connection must never write; a stray write through it fails loudly.
  reader.exec("PRAGMA query_only = ON");
  const db = new MetaDatabase(drizzle(reader, { schema }), drizzle(sqlite, { schema }), sqlite);
  const readTiming = (seconds: number) => db.timings?.statement("read", seconds);
  const writeTiming = (seconds: number) => db.timings?.statement("write", seconds);
  timeStatements(reader, () => (db.timings ? readTiming : null));
  timeStatements(sqlite, () => (db.timings ? writeTiming : null));
  return {
    db,
    sqlite,
    close() {
      reader.close();
      sqlite.close();
    },
  };
}

/** Applies pending migrations, each in one immediate transaction (safe with a concurrent process). */
export function migrate(sqlite: Database): string[] {
  sqlite.exec("CREATE TABLE IF NOT EXISTS svc_migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const applied: string[] = [];
  for (const m of migrations) {
    const run = sqlite.transaction(() => {
      const done = sqlite.query("SELECT 1 FROM svc_migrations WHERE tag = ?").get(m.tag);
      if (done) return;
      for (const stmt of m.sql.split("--> statement-breakpoint")) {
        if (stmt.trim()) sqlite.exec(stmt);
      }
      sqlite.query("INSERT INTO svc_migrations (tag, applied_at) VALUES (?, ?)").run(m.tag, Date.now());
      applied.push(m.tag);
    });
    run.immediate();
  }
  return applied;
}

/** Change counters of the database: this process's commits, and other connections' commits. */
export function epochProbes(db: MetaDatabase, sqlite: Database): { own(): number; external(): number } {
  const external = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
  return { own: () => db.ownEpoch, external: () => external.get()!.data_version };
}

/** Either the read handle or an open transaction (stores take this). */
export type DbOrTx = Db;
export type { Queryable, Tx } from "./database.ts";

/**
 * Writes a consistent copy of `<dataDir>/svc.db` to `dest` (SQLite's VACUUM INTO on a read-only
 * connection of its own): the committed state at one instant, safe while a server writes.
 */
export function snapshotDatabase(dataDir: string, dest: string): void {
  const src = new Database(join(dataDir, "svc.db"), { readonly: true, strict: true });
  try {
    src.exec("PRAGMA busy_timeout = 10000");
    src.query("VACUUM INTO ?").run(dest);
  } finally {
    src.close();
  }
}

/** Opens a database file read-only (a snapshot being backed up or restored) as a query handle. */
export function openDatabaseFile(path: string): { q: Db; close(): void } {
  const sqlite = new Database(path, { readonly: true, strict: true });
  return { q: drizzle(sqlite, { schema }), close: () => sqlite.close() };
}
