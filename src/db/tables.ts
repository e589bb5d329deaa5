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

type Schema = typeof schema;
type TableName = { [K in keyof Schema]: Schema[K] extends SQLiteTable ? K : never }[keyof Schema];

/** Every table of src/db/schema/index.ts, by its export name. */
export type Tables = Pick<Schema, TableName>;

/** The SQLite table set: the schema's own table objects. */
const sqliteTables: Tables = Object.fromEntries(Object.entries(schema).filter(([, v]) => is(v, SQLiteTable))) as unknown as Tables;

/**
 * The tables of `q`'s dialect (a transaction inherits its database's). Today every handle is
 * SQLite; the PostgreSQL client registers its own set here.
 */
export function tables(_q: Queryable | Tx): Tables {
  return sqliteTables;
}
