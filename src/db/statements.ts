// Prepared statements, one set per connection handle (the read handle, the write handle):
// building and preparing SQL is most of what a small query costs, so the hot paths (credential
// lookups, the CI claim, the contribution graph) prepare each statement once per connection.
// The only module outside the driver setup that reaches the SQLite driver (`$client`): issue 27
// gives it a PostgreSQL twin.
import type { Database as Sqlite, Statement } from "bun:sqlite";
import type { Queryable } from "./database.ts";

export type { Statement } from "bun:sqlite";

/** Statements by connection handle, then by `scope:name`: they live and die with their connection. */
const byHandle = new WeakMap<object, Map<string, unknown>>();

/** The statement cache of one store module (`scope` keeps names of different modules apart). */
export function statementCache(scope: string): {
  /** The drizzle statement `name` on `q`, built and prepared once per connection. */
  prepared<T>(q: Queryable, name: string, build: (q: Queryable) => T): T;
  /** The plain SQLite statement `name` on the connection under `q`, prepared once per connection. */
  raw(q: Queryable, name: string, text: string): Statement;
} {
  const prepared = <T>(q: Queryable, name: string, build: (q: Queryable) => T): T => {
    let m = byHandle.get(q);
    if (!m) byHandle.set(q, (m = new Map()));
    const key = `${scope}:${name}`;
    let stmt = m.get(key) as T | undefined;
    if (stmt === undefined) m.set(key, (stmt = build(q)));
    return stmt;
  };
  return {
    prepared,
    raw: (q, name, text) => prepared(q, name, (q) => (q as unknown as { $client: Sqlite }).$client.prepare(text)),
  };
}
