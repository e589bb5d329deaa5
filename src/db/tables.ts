// The table objects a store function builds its queries from, chosen by the handle it runs on:
// `const { repos, orgs } = tables(q);` at the top of each store function. Why through the handle
// and not the module-level schema imports: one process can hold two databases (SQLite and, issue
// 27, PostgreSQL: `svc migrate-db`, the store tests), and a query must be built from the tables
// of its handle's dialect (drizzle checks the table's dialect; the JSON and boolean columns map
// values differently). Type-only imports of the schema (row types) stay as they are.
import { is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Queryable, Tx } from "./database.ts";
import * as schema from "./schema/index.ts";
import { dialectOf } from "./dialect-of.ts";

type Schema = typeof schema;
type TableName = { [K in keyof Schema]: Schema[K] extends SQLiteTable ? K : never }[keyof Schema];

/** Every table of src/db/schema/index.ts, by its export name. */
export type Tables = Pick<Schema, TableName>;

/** The SQLite table set: the schema's own table objects. */
const sqliteTables: Tables = Object.fromEntries(Object.entries(schema).filter(([, v]) => is(v, SQLiteTable))) as unknown as Tables;

/** `load()` on the first call, then its answer again (an import memoized: no state of any context). */
function once<T>(load: () => T): () => T {
  let value: { v: T } | null = null;
  return () => (value ??= { v: load() }).v;
}

/**
 * The PostgreSQL table set, derived on first use: a SQLite-only process never derives it. Why
 * memoized: a `require` costs ~18 µs, and store functions call `tables` on every query
 * (bench/README §29: 4% of a comment's CPU on PostgreSQL).
 */
const pgTables = once(() => (require("./pg/schema.ts") as typeof import("./pg/schema.ts")).pgTables as unknown as Tables);

/**
 * The tables of `q`'s dialect (a transaction inherits its database's: src/db/dialect-of.ts reads
 * the dialect drizzle gives the handle and each of its transactions). The PostgreSQL set is
 * derived from the SQLite one (src/db/pg/schema.ts) and typed as it.
 */
export function tables(q: Queryable | Tx): Tables {
  if (dialectOf(q) === "sqlite") return sqliteTables;
  // Loaded only once a PostgreSQL handle exists (its client imported it already).
  return pgTables();
}
