// Prepared statements, one set per connection handle (the read handle, the write handle):
// building and preparing SQL is most of what a small query costs, so the hot paths (credential
// lookups, the CI claim, the contribution graph) prepare each statement once per connection.
// The only module outside the driver setup that reaches a driver (`$client`, Bun.sql's `unsafe`):
// `stmt` and `query` run on either database (issue 27), `raw` and `prepared` are SQLite's.
import type { Database as Sqlite, Statement } from "bun:sqlite";
import type { Queryable } from "./database.ts";
import { dialectOf } from "./dialect-of.ts";

export type { Statement } from "bun:sqlite";

/** Statements by connection handle, then by `scope:name`: they live and die with their connection. */
const byHandle = new WeakMap<object, Map<string, unknown>>();

/** The statement cache of one store module (`scope` keeps names of different modules apart). */
export function statementCache(scope: string): {
  /** The drizzle statement `name` on `q`, built and prepared once per connection. */
  prepared<T>(q: Queryable, name: string, build: (q: Queryable) => T): T;
  /** The plain SQLite statement `name` on the connection under `q`, prepared once per connection. */
  raw(q: Queryable, name: string, text: string): Statement;
  /** The raw statement `name` on either database (promises; see portableStatement). */
  stmt(q: Queryable, name: string, text: StatementText): PortableStatement;
  /** The drizzle query `name` built by `build` (not prepared: this does it) once per handle, on either database. */
  query<B extends Preparable & PromiseLike<unknown>>(q: Queryable, name: string, build: (q: Queryable) => B): PortableQuery<RowOf<B>>;
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
    stmt: (q, name, text) => portableStatement(scope, q, name, text, dialectOf(q)),
    query: <B extends Preparable & PromiseLike<unknown>>(q: Queryable, name: string, build: (q: Queryable) => B) =>
      prepared(q, `${name}:query`, (q): PortableQuery<RowOf<B>> => {
        type T = RowOf<B>;
        if (dialectOf(q) === "sqlite") {
          const p = build(q).prepare() as unknown as {
            all(v?: Record<string, unknown>): T[];
            get(v?: Record<string, unknown>): T | undefined;
            run(v?: Record<string, unknown>): unknown;
          };
          return {
            all: async (v) => p.all(v),
            get: async (v) => p.get(v) ?? undefined,
            run: async (v) => {
              p.run(v);
            },
          };
        }
        const p = build(q).prepare(`${scope}_${name}`) as unknown as { execute(v?: Record<string, unknown>): Promise<T[]> };
        return {
          all: (v) => p.execute(v),
          get: async (v) => (await p.execute(v))[0],
          run: async (v) => {
            await p.execute(v);
          },
        };
      }),
  };
}

/** A drizzle query builder that can be prepared (select, insert, update, delete). */
export interface Preparable {
  prepare(name?: string): unknown;
}

/** A prepared drizzle query on either database; `values` fill its `sql.placeholder`s. */
export interface PortableQuery<T> {
  all(values?: Record<string, unknown>): Promise<T[]>;
  get(values?: Record<string, unknown>): Promise<T | undefined>;
  /** Runs it for its effect (an insert, update or delete without RETURNING). */
  run(values?: Record<string, unknown>): Promise<void>;
}

/** The row type a drizzle builder answers (never for one that answers no rows). */
type RowOf<B> = Awaited<B> extends readonly (infer R)[] ? R : never;

/** A raw statement's text: one for both databases (SQLite's `?`/`?N` parameters, rewritten to `$N` for PostgreSQL), or one per database. */
export type StatementText = string | { readonly sqlite: string; readonly pg: string };

/** A raw statement prepared on one handle, run on either database. */
export interface PortableStatement {
  /** The first row (columns by their SQL names or `AS "alias"`), or null (as bun:sqlite's `get`). */
  get<T>(...params: unknown[]): Promise<T | null>;
  all<T>(...params: unknown[]): Promise<T[]>;
  run(...params: unknown[]): Promise<void>;
}

/**
 * SQLite's positional parameters (`?`, `?N`) as PostgreSQL's (`$N`), outside quoted strings and
 * identifiers. A bare `?` takes the number after the highest one seen so far, as SQLite numbers it.
 */
export function pgParameters(text: string): string {
  let out = "";
  let next = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      const stop = end < 0 ? text.length : end + 1;
      out += text.slice(i, stop);
      i = stop - 1;
      continue;
    }
    if (c !== "?") {
      out += c;
      continue;
    }
    const m = /^\d+/.exec(text.slice(i + 1));
    const n = m ? Number(m[0]) : next;
    next = Math.max(next, n + 1);
    out += `$${n}`;
    i += m ? m[0].length : 0;
  }
  return out;
}

/** int8 columns arrive from Bun.sql as BigInt (src/db/pg/client.ts): numbers, as SQLite gives them. */
function plain<T>(row: Record<string, unknown>): T {
  for (const k in row) if (typeof row[k] === "bigint") row[k] = Number(row[k]);
  return row as T;
}

type PgClientOf = { session: { client: { unsafe(text: string, params?: unknown[]): Promise<Record<string, unknown>[]> } } };

/**
 * The portable raw statement `name` of `scope` on `q`: bun:sqlite's prepared statement (once per
 * connection), or on PostgreSQL the connection's own `unsafe(text, params)` (Bun.sql prepares
 * each text once per connection). Both answer promises.
 */
export function portableStatement(scope: string, q: Queryable, name: string, text: StatementText, dialect: "sqlite" | "pg"): PortableStatement {
  if (dialect === "sqlite") {
    const stmt = statementCache(scope).raw(q, name, typeof text === "string" ? text : text.sqlite);
    return {
      get: async <T>(...params: unknown[]) => (stmt.get(...(params as never[])) ?? null) as T | null,
      all: async <T>(...params: unknown[]) => stmt.all(...(params as never[])) as T[],
      run: async (...params: unknown[]) => {
        stmt.run(...(params as never[]));
      },
    };
  }
  const pgText = statementCache(scope).prepared(q, `${name}:pg-text`, () => (typeof text === "string" ? pgParameters(text) : text.pg));
  const client = (q as unknown as PgClientOf).session.client;
  const all = async <T>(...params: unknown[]) => Array.from(await client.unsafe(pgText, params), (r) => plain<T>(r));
  return {
    get: async <T>(...params: unknown[]) => (await all<T>(...params))[0] ?? null,
    all,
    run: async (...params: unknown[]) => {
      await client.unsafe(pgText, params);
    },
  };
}
