// `svc migrate-db --to postgres://…` (issue 27, DECISIONS §5 "Several nodes", plan-27 §3.1):
// moves a stopped single-node installation's metadata from its SQLite file into an empty
// PostgreSQL database, so the installation can grow to several nodes without losing a thing.
// Objects are not copied: the nodes use the object store the installation already uses.
//
// Order: refuse what cannot work (a URL that is not PostgreSQL's, an installation already on
// PostgreSQL, a `svc serve` running on the data dir); hold the SQLite database unwritable
// (BEGIN IMMEDIATE on it, for the whole copy); migrate the target and require every table empty;
// refuse names PostgreSQL's Unicode lower() would fold together; copy every table in one
// PostgreSQL transaction (src/db/copy.ts); verify row counts and primary-key checksums per table;
// COMMIT only when all match. `svc restore` into PostgreSQL runs the same copy from a backup's file.
import { Database as Sqlite } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { type Config, ConfigError, type DatabaseConfig } from "../../config.ts";
import { migrate, type Db } from "../../db/client.ts";
import { type CopyReport, copyTables, foldCollisions, nonEmptyTables, type TableCheck, verifyTables } from "../../db/copy.ts";
import type { Queryable } from "../../db/database.ts";
import * as schema from "../../db/schema/index.ts";
import { AppError, Conflict, NotFound } from "../../errors.ts";
import { now } from "../context.ts";
import { type HostKeySecret, readHostKeyFiles } from "./host-keys.ts";
import { runningServer } from "./serve-lock.ts";
import * as store from "./store.ts";

/** The outcome of a copy into PostgreSQL: rows per table, and each table's check. */
export interface PgCopy {
  copied: CopyReport[];
  checks: TableCheck[];
}

/** `--to`: a postgres:// or postgresql:// URL naming a host and a database; anything else is a ConfigError (exit 2). */
export function pgTarget(raw: string, pool = 4): DatabaseConfig {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("--to: expected a URL such as postgres://svc:secret@db.internal:5432/svc");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:")
    throw new ConfigError(`--to: ${url.protocol.replace(/:$/, "")} is not supported; svc moves to PostgreSQL 14+ only (a postgres:// or postgresql:// URL)`);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!url.hostname || !name || name.includes("/"))
    throw new ConfigError("--to: name the host and the database, e.g. postgres://svc:secret@db.internal:5432/svc");
  return { url: raw, name, pool };
}

/** The URL without its password, for messages. */
export function shownUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/**
 * Copies every table of `source` (SQLite, held consistent by the caller) into the PostgreSQL
 * database `target`: migrated, required empty, checked for case-folding collisions, then one
 * transaction that commits only when every table's row count and primary-key checksum match.
 * `beforeCommit` runs inside that transaction once verified (host keys, issue 27 #14).
 */
export async function copyIntoPg(
  source: Queryable,
  target: DatabaseConfig,
  opts: { onTable?: (r: CopyReport) => void; beforeCommit?: (tx: Queryable) => Promise<void> } = {},
): Promise<PgCopy> {
  const [{ openPg }, { migratePg }, { appErrorOf }] = await Promise.all([
    import("../../db/pg/client.ts"),
    import("../../db/pg/migrate.ts"),
    import("../../db/pg/errors.ts"),
  ]);
  const pg = openPg(target);
  const where = `${new URL(target.url).hostname}:${new URL(target.url).port || 5432}/${target.name}`;
  try {
    try {
      await migratePg(pg.sql);
    } catch (error) {
      const cause = appErrorOf(error)?.status === 503 ? "cannot connect to" : "could not migrate";
      throw new AppError("unavailable", `${cause} ${where}: ${(error as Error).message}`);
    }
    const full = await nonEmptyTables(pg.db.read);
    if (full.length) throw Conflict(`target is not empty (${where}: ${full.join(", ")} hold rows); give an empty database`);
    const collisions = await foldCollisions(source);
    if (collisions.length) {
      const list = collisions.map((c) => `${c.table} (${c.index}): ${c.values.map((v) => JSON.stringify(v)).join(", ")}`).join("; ");
      throw Conflict(`names that differ only in case for PostgreSQL would collide; rename all but one of each, then run again: ${list}`);
    }
    let result: PgCopy | null = null;
    await (pg.db.read as unknown as { transaction(fn: (tx: Queryable) => Promise<void>): Promise<void> }).transaction(async (tx) => {
      const copied = await copyTables(source, tx, { onTable: opts.onTable });
      const checks = await verifyTables(source, tx);
      const bad = checks.filter((c) => !c.ok);
      if (bad.length) throw new VerifyFailed(checks, bad.map((c) => `${c.table} (${c.source} → ${c.target})`).join(", "));
      await opts.beforeCommit?.(tx);
      result = { copied, checks };
    });
    return result!;
  } catch (error) {
    if (error instanceof AppError || error instanceof VerifyFailed) throw error;
    throw appErrorOf(error) ?? error;
  } finally {
    await pg.close().catch(() => {});
  }
}

/** The copy did not verify: nothing was committed. */
export class VerifyFailed extends AppError {
  constructor(
    readonly checks: TableCheck[],
    which: string,
  ) {
    super("internal", `the copy did not verify (row counts or primary keys differ: ${which}); nothing was committed`);
  }
}

/**
 * Stores `keys` in the target's `node_secrets` inside the copy's transaction: `replace` for
 * migrate-db (the data dir's files are the installation's keys), not for a restore (keys the
 * backup's database holds win over its files). Why not saveHostKeys: that opens its own
 * transaction, and keys committed apart from the copy could be missing when the first node starts
 * (it would generate new ones, and every client would see a changed host key).
 */
export async function storeHostKeys(tx: Queryable, keys: readonly HostKeySecret[], opts: { replace: boolean }): Promise<number> {
  for (const k of keys) {
    // The same rule as services/ops/host-keys.ts; no key text in the message.
    if (!/^-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(k.private.trimStart()) || k.private.length > 16 * 1024)
      throw new AppError("invalid", `host key ${k.name} is not a private key in OpenSSH or PEM form; nothing was committed`);
  }
  await store.putNodeSecrets(
    tx,
    keys.map((k) => ({ name: k.name, value: k.private })),
    now(),
    opts,
  );
  return keys.length;
}

/** What `migrateDb` did, for the command's summary. */
export interface MigrateDbResult extends PgCopy {
  target: string;
  hostKeys: number;
}

/**
 * Moves the SQLite installation of `config` into the empty PostgreSQL database at `to`, its SSH
 * host key files included (into `node_secrets`, in the same transaction).
 */
export async function migrateDb(config: Config, to: DatabaseConfig, opts: { onTable?: (r: CopyReport) => void } = {}): Promise<MigrateDbResult> {
  if (config.database)
    throw new ConfigError(
      "SVC_DATABASE_URL is set: this installation is on PostgreSQL already; migrate-db moves a SQLite installation (unset SVC_DATABASE_URL)",
    );
  const pid = runningServer(config.dataDir);
  if (pid !== null) throw Conflict(`svc serve (pid ${pid}) is running on ${config.dataDir}; stop it first`);
  const file = join(config.dataDir, "svc.db");
  if (!existsSync(file)) throw NotFound(`no database at ${file}: nothing to migrate (check SVC_DATA_DIR)`);
  const sqlite = new Sqlite(file, { strict: true });
  try {
    sqlite.exec("PRAGMA busy_timeout = 10000");
    // The copy reads the current schema: bring the file up to it, as `svc serve` would at start.
    migrate(sqlite);
    // Why IMMEDIATE and held to the end: no one writes to the source while it is copied, so the
    // verification compares the very rows copied, and a server started meanwhile waits (then fails)
    // instead of taking writes that would be left behind.
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      // Checked again under the lock: a server that started before it is seen now.
      const late = runningServer(config.dataDir);
      if (late !== null) throw Conflict(`svc serve (pid ${late}) is running on ${config.dataDir}; stop it first`);
      const source = drizzle(sqlite, { schema }) as unknown as Db;
      let hostKeys = 0;
      const copy = await copyIntoPg(source, to, {
        onTable: opts.onTable,
        beforeCommit: async (tx) => {
          hostKeys = await storeHostKeys(tx, readHostKeyFiles(config.dataDir), { replace: true });
        },
      });
      return { ...copy, target: shownUrl(to.url), hostKeys };
    } finally {
      sqlite.exec("ROLLBACK");
    }
  } finally {
    sqlite.close();
  }
}
