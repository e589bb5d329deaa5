// The SQL store code needs beyond drizzle's portable builders, per dialect: raw statements,
// scalar max/min, JSON field reads. Store code writes `x(q).rows(sql\`…\`)` instead of the
// bun-sqlite-only `q.all(sql\`…\`)`, so a PostgreSQL handle (issue 27) answers the same calls.
// Today every handle is SQLite; the PostgreSQL client adds its own implementation here.
import { type SQL, sql } from "drizzle-orm";
import type { Queryable, Tx } from "./database.ts";

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
  };
}

const byHandle = new WeakMap<object, Dialect>();

/** The dialect of `q` (the read handle or an open transaction). */
export function x(q: Queryable | Tx): Dialect {
  let d = byHandle.get(q);
  if (!d) byHandle.set(q, (d = sqlite(q as unknown as SqliteHandle)));
  return d;
}
