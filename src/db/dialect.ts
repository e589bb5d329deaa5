// The SQL store code needs beyond drizzle's portable builders, per dialect: raw statements,
// scalar max/min, JSON field reads. Store code writes `x(q).rows(sql\`…\`)` instead of the
// bun-sqlite-only `q.all(sql\`…\`)`, so a PostgreSQL handle (issue 27) answers the same calls.
// Which one a handle gets is read from the handle (src/db/dialect-of.ts): transactions inherit it.
import { type SQL, sql } from "drizzle-orm";
import type { Queryable, Tx } from "./database.ts";
import { dialectOf } from "./dialect-of.ts";

/** What differs by dialect, bound to one handle. */
export interface Dialect {
  readonly name: "sqlite" | "pg";
  /** Every row of a raw statement, columns by their SQL names (`AS` aliases). */
  rows<T>(statement: SQL): Promise<T[]>;
  /** The first row of a raw statement, or undefined. */
  row<T>(statement: SQL): Promise<T | undefined>;
  /** Runs a raw statement for its effect. */
  run(statement: SQL): Promise<void>;
  /** The larger of two scalars (SQLite `max(a, b)`, PostgreSQL `greatest(a, b)`). */
  greatest(a: unknown, b: unknown): SQL;
  /** The smaller of two scalars (SQLite `min(a, b)`, PostgreSQL `least(a, b)`). */
  least(a: unknown, b: unknown): SQL;
  /** The number at `key` of a JSON object column (null when absent). */
  jsonNumber(column: unknown, key: string): SQL<number | null>;
  /** The string at `key` of a JSON object column (null when absent). */
  jsonText(column: unknown, key: string): SQL<string | null>;
  /** True when every element of the JSON array `column` is one of `values` (strings). */
  jsonSubset(column: unknown, values: readonly string[]): SQL<boolean>;
  /**
   * Waits for the transaction-scoped lock named `key` (released at COMMIT/ROLLBACK): short
   * critical sections across nodes. SQLite: nothing to do, the write lock already holds.
   */
  lockKey(key: string): Promise<void>;
  /** Takes the transaction-scoped lock `key` when free, without waiting: whether it was taken. */
  tryLockKey(key: string): Promise<boolean>;
  /** Appended to a SELECT whose rows the transaction will claim: PostgreSQL `FOR UPDATE SKIP LOCKED`, SQLite nothing. */
  readonly skipLocked: SQL;
}

type SqliteHandle = {
  all<T>(s: SQL): T[];
  run(s: SQL): unknown;
};

/** A JSON path to one top-level key; keys are identifiers chosen by store code, never input. */
function jsonPath(key: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`bad JSON key ${key}`);
  return `$.${key}`;
}

function sqlite(q: SqliteHandle): Dialect {
  return {
    name: "sqlite",
    rows: async <T>(s: SQL) => q.all<T>(s),
    // Why all()[0]: bun-sqlite's get() of raw SQL answers the row as an array of values.
    row: async <T>(s: SQL) => q.all<T>(s)[0],
    run: async (s: SQL) => {
      q.run(s);
    },
    greatest: (a, b) => sql`max(${a}, ${b})`,
    least: (a, b) => sql`min(${a}, ${b})`,
    jsonNumber: (column, key) => sql<number | null>`json_extract(${column}, ${jsonPath(key)})`,
    jsonText: (column, key) => sql<string | null>`json_extract(${column}, ${jsonPath(key)})`,
    jsonSubset: (column, values) =>
      sql<boolean>`NOT EXISTS (SELECT 1 FROM json_each(${column}) l WHERE l.value NOT IN (SELECT value FROM json_each(${JSON.stringify(values)})))`,
    lockKey: async () => {},
    tryLockKey: async () => true,
    skipLocked: sql``,
  };
}

type PgHandle = { execute(s: SQL): Promise<ArrayLike<Record<string, unknown>>> };

/**
 * A raw row as store code reads it on SQLite: int8 values (Bun.sql hands them over as BigInt, see
 * src/db/pg/client.ts) become numbers (every integer svc stores is below 2^53: epoch ms, sizes,
 * counters, ids of identity columns).
 */
function plainRow<T>(row: Record<string, unknown>): T {
  for (const k in row) if (typeof row[k] === "bigint") row[k] = Number(row[k]);
  return row as T;
}

function pg(q: PgHandle): Dialect {
  const rows = async <T>(s: SQL): Promise<T[]> => Array.from(await q.execute(s), (r) => plainRow<T>(r));
  return {
    name: "pg",
    rows,
    row: async <T>(s: SQL) => (await rows<T>(s))[0],
    run: async (s: SQL) => {
      await q.execute(s);
    },
    greatest: (a, b) => sql`greatest(${a}, ${b})`,
    least: (a, b) => sql`least(${a}, ${b})`,
    // float8: a JSON number read as a JS number (int8 or numeric would arrive as BigInt or string).
    jsonNumber: (column, key) => sql<number | null>`(${column}->>${sql.raw(`'${jsonPath(key).slice(2)}'`)})::float8`,
    jsonText: (column, key) => sql<string | null>`(${column}->>${sql.raw(`'${jsonPath(key).slice(2)}'`)})`,
    // jsonb containment; the values as JSON text, cast through text (a parameter typed jsonb would
    // be JSON-encoded again by Bun.sql, and a JS array is sent as a pg array).
    jsonSubset: (column, values) => sql<boolean>`(${column} <@ ${JSON.stringify(values)}::text::jsonb)`,
    lockKey: async (key) => {
      await q.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`);
    },
    tryLockKey: async (key) => {
      const [row] = Array.from(await q.execute(sql`SELECT pg_try_advisory_xact_lock(hashtext(${key})) AS ok`));
      return row?.ok === true;
    },
    skipLocked: sql` FOR UPDATE SKIP LOCKED`,
  };
}

const byHandle = new WeakMap<object, Dialect>();

/** The dialect of `q` (the read handle or an open transaction). */
export function x(q: Queryable | Tx): Dialect {
  let d = byHandle.get(q);
  if (!d) byHandle.set(q, (d = dialectOf(q) === "pg" ? pg(q as unknown as PgHandle) : sqlite(q as unknown as SqliteHandle)));
  return d;
}
