// Which database a query handle belongs to, from the handle itself: a drizzle handle and every
// transaction opened from it share one dialect object, so transactions inherit their parent's
// answer without bookkeeping. One process can hold both kinds (the store tests, `svc migrate-db`).
import { entityKind } from "drizzle-orm";
import * as sqliteTables from "./schema/index.ts";
import type { Queryable } from "./database.ts";

/** "pg" for a handle of the PostgreSQL client (or one of its transactions), else "sqlite". */
export function dialectOf(q: Queryable): "sqlite" | "pg" {
  const dialect = (q as unknown as { dialect?: { constructor: { [entityKind]?: string } } }).dialect;
  return dialect?.constructor[entityKind] === "PgDialect" ? "pg" : "sqlite";
}

/** The table objects of `q`'s database (typed as the sqlite-core definition; see src/db/pg/schema.ts). */
export function tablesOf(q: Queryable): typeof sqliteTables {
  if (dialectOf(q) === "sqlite") return sqliteTables;
  // Loaded only when a PostgreSQL handle exists (its client imported it already): a SQLite-only
  // process never pays for deriving the pg tables.
  return (require("./pg/schema.ts") as typeof import("./pg/schema.ts")).pgTables as unknown as typeof sqliteTables;
}
