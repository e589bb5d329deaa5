// The PostgreSQL connection: one Bun.sql pool (SVC_DATABASE_POOL connections at most) behind
// drizzle-orm/bun-sql, typed as the SQLite handle store code is written against (row types are
// the same by the column map of src/db/pg/schema.ts; the tables a pg handle uses come from
// tables(q)). Bun.sql was chosen by measurement (bench/README "PostgreSQL drivers": fastest on
// reads, LISTEN that reconnects by itself, nothing to install).
import { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import type { DatabaseConfig } from "../../config.ts";
import type { Db } from "../client.ts";
import { PgDatabase, type PoolUse } from "./database.ts";

export interface PgClient {
  db: PgDatabase;
  /** The pool (migrations, NOTIFY). */
  sql: SQL;
  /**
   * LISTEN on `channel` over the LISTEN connection: a client of its own holding one connection
   * (SVC_DATABASE_LISTEN_URL when set, else SVC_DATABASE_URL), opened on the first call;
   * `onlisten` runs once the LISTEN is acknowledged (again after each reconnect), `onclose` when
   * the connection drops (the driver reconnects by itself).
   */
  listen(channel: string, onnotify: (payload: string) => void, onlisten?: () => void, onclose?: () => void): Promise<{ unlisten(): Promise<void> }>;
  close(): Promise<void>;
}

/** int8 values (BigInt with `bigint: true`) as numbers, in place: what SQLite answers for integers. */
function plainValues<T>(rows: T): T {
  if (!Array.isArray(rows)) return rows;
  for (const row of rows as unknown[]) {
    if (!row || typeof row !== "object") continue;
    const r = row as Record<string, unknown>;
    for (const k in r) if (typeof r[k] === "bigint") r[k] = Number(r[k]);
  }
  return rows;
}

type Unsafe = (text: string, params?: unknown[]) => PromiseLike<unknown> & { values(): PromiseLike<unknown> };
type Timing = ((connection: "read" | "write", seconds: number) => void) | null;

/**
 * The client drizzle (and src/db/statements.ts) runs statements on: Bun.sql's own, with every
 * result's int8 values turned into numbers and every statement timed, in the pool and in each
 * transaction (`begin`/`savepoint` hand the callback a wrapped client too). Why in the client:
 * raw rows, `sql<number>` fields and counts all pass here, whichever API built them.
 */
function wrapClient<C extends object>(client: C, timing: () => Timing, pool: PoolUse | null, connection: "read" | "write"): C {
  // Why `pool` only at the top: a transaction's statements run on the connection it holds.
  const hold = <T>(p: Promise<T>): Promise<T> => {
    if (!pool) return p;
    pool.inUse++;
    return p.finally(() => pool.inUse--);
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === "unsafe") {
        const unsafe = (value as Unsafe).bind(target);
        return (text: string, params?: unknown[]) => {
          const query = unsafe(text, params);
          const run = <T>(p: PromiseLike<T>): Promise<T> => {
            const sink = timing();
            const started = sink ? performance.now() : 0;
            return hold(Promise.resolve(p)).then((rows) => {
              sink?.(connection, (performance.now() - started) / 1000);
              return plainValues(rows);
            });
          };
          return {
            // A thenable like Bun.sql's own query, as drizzle awaits it.
            then: (ok?: (v: unknown) => unknown, fail?: (e: unknown) => unknown) => run(query).then(ok, fail),
            values: () => run(query.values()),
          };
        };
      }
      if (prop === "begin" || prop === "savepoint") {
        const begin = (value as (...a: unknown[]) => Promise<unknown>).bind(target);
        return (...args: unknown[]) => {
          const fn = args.at(-1) as (c: object) => unknown;
          return hold(begin(...args.slice(0, -1), (inner: object) => fn(wrapClient(inner, timing, null, "write"))));
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Opens the pool; no connection is made until the first query. */
export function openPg(config: DatabaseConfig): PgClient {
  // `database` explicitly: Bun.sql lets PGDATABASE win over the URL's database. `bigint`: int8
  // arrives as BigInt instead of a string, so integers are told apart from text (wrapClient).
  const client = new SQL({ url: config.url, database: config.name, max: config.pool, idleTimeout: 60, connectionTimeout: 10, bigint: true });
  let db: PgDatabase | null = null;
  // Statements on the pool are "read" (autocommit), those inside a transaction "write".
  const timing = (): Timing => {
    const t = db?.timings;
    return t ? (connection, s) => t.statement(connection, s) : null;
  };
  const pool: PoolUse = { size: config.pool, inUse: 0 };
  const handle = drizzle({ client: wrapClient(client, timing, pool, "read") }) as unknown as Db;
  db = new PgDatabase(handle, pool);
  // The LISTEN connection: a client of its own (nothing else runs on it), so its onclose is that
  // connection's (svc_db_listen_connected) and SVC_DATABASE_LISTEN_URL can send it past a pooler
  // in transaction mode, which cannot keep a LISTEN. No idle timeout: it only waits.
  const at = config.listen ?? { url: config.url, name: config.name };
  const closed = new Set<() => void>();
  let listener: SQL | null = null;
  const listen: PgClient["listen"] = async (channel, onnotify, onlisten, onclose) => {
    listener ??= new SQL({
      url: at.url,
      database: at.name,
      max: 1,
      connectionTimeout: 10,
      onclose: () => {
        for (const fn of closed) fn();
      },
    });
    if (onclose) closed.add(onclose);
    const sub = await listener.listen(channel, onnotify, onlisten);
    return {
      unlisten: async () => {
        if (onclose) closed.delete(onclose);
        await sub.unlisten();
      },
    };
  };
  return {
    db,
    sql: client,
    listen,
    close: async () => {
      await Promise.all([client.close(), listener?.close()]);
    },
  };
}
