// Which database a query handle belongs to, from the handle itself: a drizzle handle and every
// transaction opened from it share one dialect object, so transactions inherit their parent's
// answer without bookkeeping. One process can hold both kinds (the store tests, `svc migrate-db`).
import { entityKind } from "drizzle-orm";
import type { Queryable } from "./database.ts";

/** "pg" for a handle of the PostgreSQL client (or one of its transactions), else "sqlite". */
export function dialectOf(q: Queryable): "sqlite" | "pg" {
  const dialect = (q as unknown as { dialect?: { constructor: { [entityKind]?: string } } }).dialect;
  return dialect?.constructor[entityKind] === "PgDialect" ? "pg" : "sqlite";
}
