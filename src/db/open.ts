// Opens the configured metadata database, migrated: the embedded SQLite file in SVC_DATA_DIR, or
// PostgreSQL when SVC_DATABASE_URL is set (DECISIONS §5 "Several nodes"; the URL's scheme was
// checked by loadConfig).
import { type Config, ConfigError } from "../config.ts";
import { epochProbes, migrate, openDatabase as openSqlite } from "./client.ts";
import type { Database } from "./database.ts";

/**
 * PostgreSQL's NOTIFY (on the pool) and LISTEN (PgSignals); `listen` holds one dedicated
 * connection (SVC_DATABASE_LISTEN_URL when set) and re-listens after a reconnect, calling
 * `onlisten` each time and `onclose` when the connection drops.
 */
export interface NotifyChannel {
  listen(channel: string, onnotify: (payload: string) => void, onlisten?: () => void, onclose?: () => void): Promise<{ unlisten(): Promise<void> }>;
  notify(channel: string, payload: string): Promise<unknown>;
}

export interface OpenDatabase {
  db: Database;
  /** The fact cache's change counters (services/access/fact-cache.ts EpochProbes). */
  probes: { own(): number; external(): number | Promise<number> };
  /** The migration tags this open applied (empty when the schema was up to date). */
  applied: string[];
  /** PostgreSQL only: the channel PgSignals sends and listens on. */
  channel?: NotifyChannel;
  close(): void;
}

/** Rows in the fact epoch's log past which a node folds them into its base (a read counts them). */
export const FOLD_AT = 4096;

/** The database of `config`, with pending migrations applied. */
export async function openDatabase(config: Config): Promise<OpenDatabase> {
  if (!config.database) {
    const { db, sqlite, close } = openSqlite(config.dataDir);
    const applied = migrate(sqlite);
    return { db, probes: epochProbes(db, sqlite), applied, close };
  }
  // Loaded only for PostgreSQL: a SQLite process never loads drizzle's pg-core.
  const [{ openPg }, { migratePg }, { appErrorOf }] = await Promise.all([import("./pg/client.ts"), import("./pg/migrate.ts"), import("./pg/errors.ts")]);
  const pg = openPg(config.database);
  let applied: string[];
  try {
    applied = await migratePg(pg.sql);
  } catch (error) {
    await pg.close().catch(() => {});
    const where = new URL(config.database.url);
    const cause = appErrorOf(error)?.status === 503 ? "cannot connect" : "migrations failed";
    throw new ConfigError(`SVC_DATABASE_URL: ${cause} (${where.hostname}:${where.port || 5432}/${config.database.name}): ${(error as Error).message}`);
  }
  // Other processes' commits: the shared fact epoch (migrations/pg/0001_fact_epoch.sql and
  // 0003_fact_epoch_log.sql, plan-27 §2 #3): a base row plus one appended row per statement that
  // wrote a table the fact cache loads from, so it moves exactly when such a write commits and
  // concurrent writers never meet on it. The cache awaits this one read per window per node.
  // Why a raw prepared statement, not a drizzle query: this read runs up to once per millisecond
  // per node, and building the query each time cost more CPU than the read (bench/README §26).
  const { statementCache } = await import("./statements.ts");
  const statements = statementCache("fact-epoch");
  const epoch = statements.stmt(
    pg.db.read,
    "read",
    "SELECT e.n + l.count AS n, l.count AS pending FROM svc_fact_epoch e, (SELECT count(*)::bigint AS count FROM svc_fact_epoch_log) l WHERE e.id = 1",
  );
  // Folds the log into the base in one statement: at READ COMMITTED a second node folding at
  // the same time deletes only the rows the first left and adds only those, and a reader's one
  // statement sees the sum before or after, never a part: the epoch does not move.
  const fold = statements.stmt(
    pg.db.read,
    "fold",
    "WITH gone AS (DELETE FROM svc_fact_epoch_log RETURNING 1) UPDATE svc_fact_epoch SET n = n + (SELECT count(*) FROM gone) WHERE id = 1",
  );
  let folding = false;
  let last = -1;
  let closed = false;
  const read = async (): Promise<number> => {
    const row = await epoch.get<{ n: number; pending: number }>();
    if (!row) throw new Error("svc_fact_epoch has no row: migration 0001_fact_epoch did not apply");
    if (Number(row.pending) >= FOLD_AT && !folding) {
      folding = true;
      fold
        .run()
        .catch(() => {}) // the next read past FOLD_AT tries again
        .finally(() => {
          folding = false;
        });
    }
    return (last = Number(row.n));
  };
  // Why a number once closed: after close() nothing can be validated against the database, and
  // work still finishing during shutdown must not meet a probe that fails (or waits) on a closed pool.
  const external = (): number | Promise<number> => (closed ? last : read());
  return {
    db: pg.db,
    probes: { own: () => pg.db.ownEpoch, external },
    applied,
    channel: {
      listen: (channel, onnotify, onlisten, onclose) => pg.listen(channel, onnotify, onlisten, onclose),
      notify: (channel, payload) => pg.sql`SELECT pg_notify(${channel}, ${payload})`,
    },
    close: () => {
      closed = true;
      void pg.close();
    },
  };
}
