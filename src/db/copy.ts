// The table copier (issue 27, plan-27 §3.1/§3.2): every table of the one schema definition from a
// handle of one dialect to a handle of the other (or the same), in foreign-key order, in batches,
// through each side's own tables (tables(q): the json, boolean and bytea mapping is the column
// types'). Used by `svc migrate-db` (SQLite → PostgreSQL), `svc backup` of a PostgreSQL
// installation (PostgreSQL → a fresh SQLite file) and `svc restore` into PostgreSQL (the backup's
// SQLite file → PostgreSQL). The caller owns the transactions: the source's (a consistent view)
// and the target's (all or nothing).
//
// What the schema does not say and this file does: `repo_search_docs` is filled by a trigger on
// `repos` on both databases, so the rows the trigger made while `repos` was copied are replaced by
// the source's (a repository keeps its search id, the search's page order); on SQLite the FTS5
// table `repo_search` is then rebuilt from them (PostgreSQL's tsvector is a generated column of
// `repos`, right by construction). Identity sequences (PostgreSQL) are moved past the copied ids.
import { createHash } from "node:crypto";
import { asc, getTableColumns, is, SQL, sql } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Queryable } from "./database.ts";
import { x } from "./dialect.ts";
import * as schema from "./schema/index.ts";
import { type Tables, tables } from "./tables.ts";

type TableKey = keyof Tables;
// A table of either dialect, by its columns' JS keys.
type AnyTable = any;

/** One table of the definition: its export key, SQL name, primary-key column keys, identity column. */
export interface TableInfo {
  key: TableKey;
  name: string;
  /** JS keys of the primary key's columns, in key order. */
  primaryKey: string[];
  /** SQL name of the autoincrement (identity) column, if any. */
  identity: string | null;
  /** Columns per row (batch sizing). */
  columns: number;
}

/** Rows per INSERT at most; fewer when a table is wide (bound parameters per statement). */
const BATCH = 1000;
const MAX_PARAMS = 30_000;

const sqliteTables = Object.entries(schema as Record<string, unknown>).filter((e): e is [string, SQLiteTable] => is(e[1], SQLiteTable));

/**
 * Every table in foreign-key order (a table after every table it references; ties by name), from
 * the definition's foreign keys. `repo_search_docs` goes after `repos` (its rows are made by a
 * trigger on `repos`, see above).
 */
export function tableOrder(): TableInfo[] {
  const byName = new Map<string, { info: TableInfo; needs: Set<string> }>();
  for (const [key, table] of sqliteTables) {
    const c = getTableConfig(table);
    const cols = getTableColumns(table);
    const keyOfName = new Map(Object.entries(cols).map(([k, col]) => [col.name, k]));
    const single = Object.entries(cols).filter(([, col]) => col.primary);
    const primaryKey = c.primaryKeys.length ? c.primaryKeys[0]!.columns.map((col) => keyOfName.get(col.name)!) : single.map(([k]) => k);
    if (!primaryKey.length) throw new Error(`src/db/copy.ts: ${c.name} has no primary key`);
    const identity = c.columns.find((col) => (col as unknown as { autoIncrement?: boolean }).autoIncrement)?.name ?? null;
    const needs = new Set(c.foreignKeys.map((fk) => getTableConfig(fk.reference().foreignTable).name).filter((n) => n !== c.name));
    if (c.name === "repo_search_docs") needs.add("repos");
    byName.set(c.name, { info: { key: key as TableKey, name: c.name, primaryKey, identity, columns: c.columns.length }, needs });
  }
  const out: TableInfo[] = [];
  const done = new Set<string>();
  const visit = (name: string, path: string[]) => {
    if (done.has(name)) return;
    if (path.includes(name)) throw new Error(`src/db/copy.ts: foreign-key cycle ${[...path, name].join(" → ")}`);
    const t = byName.get(name);
    if (!t) throw new Error(`src/db/copy.ts: unknown table ${name}`);
    for (const n of [...t.needs].sort()) visit(n, [...path, name]);
    done.add(name);
    out.push(t.info);
  };
  for (const name of [...byName.keys()].sort()) visit(name, []);
  return out;
}

/** The tables of `q` that hold any row (a copy's target must have none). */
export async function nonEmptyTables(q: Queryable): Promise<string[]> {
  const found: string[] = [];
  for (const t of tableOrder()) {
    const row = await x(q).row<{ any: number | boolean }>(sql`SELECT EXISTS (SELECT 1 FROM ${sql.identifier(t.name)}) AS "any"`);
    if (row?.any === true || row?.any === 1) found.push(t.name);
  }
  return found;
}

/** Rows of `table` in primary-key order after `after` (keyset paging: the same cost per page). */
async function page(q: Queryable, info: TableInfo, after: unknown[] | null, limit: number): Promise<Record<string, unknown>[]> {
  const t: AnyTable = tables(q)[info.key];
  const keys = info.primaryKey.map((k) => t[k]);
  const base = (q as AnyTable).select().from(t);
  const where = after
    ? sql`(${sql.join(keys, sql`, `)}) > (${sql.join(
        after.map((v) => sql`${v}`),
        sql`, `,
      )})`
    : undefined;
  return await (where ? base.where(where) : base).orderBy(...keys.map((k: unknown) => asc(k as never))).limit(limit);
}

/** Rows copied per table, in copy order. */
export interface CopyReport {
  table: string;
  rows: number;
}

/**
 * Copies every row of every table from `from` to `to` (empty), in foreign-key order and batches.
 * `onTable` hears each table once copied. Run both inside the caller's transactions.
 */
export async function copyTables(from: Queryable, to: Queryable, opts: { onTable?: (r: CopyReport) => void } = {}): Promise<CopyReport[]> {
  const target = x(to).name;
  const report: CopyReport[] = [];
  for (const info of tableOrder()) {
    const t: AnyTable = tables(to)[info.key];
    // The trigger on `repos` made rows here already (and, on SQLite, their FTS rows).
    if (info.name === "repo_search_docs") {
      if (target === "sqlite") await x(to).run(sql`DELETE FROM repo_search`);
      await x(to).run(sql`DELETE FROM repo_search_docs`);
    }
    const limit = Math.max(1, Math.min(BATCH, Math.floor(MAX_PARAMS / info.columns)));
    let after: unknown[] | null = null;
    let rows = 0;
    for (;;) {
      const batch = await page(from, info, after, limit);
      if (!batch.length) break;
      await (to as AnyTable).insert(t).values(batch);
      rows += batch.length;
      const last = batch[batch.length - 1]!;
      after = info.primaryKey.map((k) => last[k]);
      if (batch.length < limit) break;
    }
    if (info.identity && target === "pg") {
      const name = sql.identifier(info.name);
      const col = sql.identifier(info.identity);
      await x(to).run(sql`SELECT setval(pg_get_serial_sequence(${info.name}, ${info.identity}), coalesce((SELECT max(${col}) FROM ${name}), 0) + 1, false)`);
    }
    const r = { table: info.name, rows };
    report.push(r);
    opts.onTable?.(r);
  }
  if (target === "sqlite") {
    await x(to).run(
      sql`INSERT INTO repo_search (rowid, name, description) SELECT d.docid, r.name, coalesce(r.description, '') FROM repos r JOIN repo_search_docs d ON d.repo_id = r.id`,
    );
  }
  return report;
}

/** Row count and a checksum of the primary keys of one table on one side. */
export interface TableDigest {
  rows: number;
  /** sha256 (hex) of the sorted primary keys, one JSON array per row. */
  keys: string;
}

/** Counts the rows of `info`'s table on `q` and hashes its sorted primary keys. */
export async function digestTable(q: Queryable, info: TableInfo): Promise<TableDigest> {
  const t: AnyTable = tables(q)[info.key];
  const fields = Object.fromEntries(info.primaryKey.map((k) => [k, t[k]]));
  const rows: Record<string, unknown>[] = await (q as AnyTable).select(fields).from(t);
  // Sorted here, not by the database: the two sides' collations differ.
  const lines = rows.map((r) => JSON.stringify(info.primaryKey.map((k) => normal(r[k])))).sort();
  const hash = createHash("sha256");
  for (const line of lines) hash.update(line).update("\n");
  return { rows: rows.length, keys: hash.digest("hex") };
}

function normal(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (Buffer.isBuffer(v)) return v.toString("hex");
  return v;
}

/** One table's counts on both sides after a copy. */
export interface TableCheck {
  table: string;
  source: number;
  target: number;
  /** Counts equal and the primary-key checksums equal. */
  ok: boolean;
}

/** Compares every table of `from` and `to` by row count and primary-key checksum. */
export async function verifyTables(from: Queryable, to: Queryable): Promise<TableCheck[]> {
  const out: TableCheck[] = [];
  for (const info of tableOrder()) {
    const [a, b] = [await digestTable(from, info), await digestTable(to, info)];
    out.push({ table: info.name, source: a.rows, target: b.rows, ok: a.rows === b.rows && a.keys === b.keys });
  }
  return out;
}

/** Two or more rows that one case-folded unique index would hold as one value on PostgreSQL. */
export interface FoldCollision {
  table: string;
  index: string;
  /** The colliding rows' values of the index's columns, as stored. */
  values: string[];
}

type ColumnLike = { name: string };

/** How one part of an index key reads a row: a plain column, `lower(col)` or `coalesce(col, '')`. */
function keyPart(part: unknown, render: (s: SQL) => string, cols: Map<unknown, string>): { key: string; fold: (v: unknown) => unknown } {
  if (!is(part, SQL)) {
    const key = cols.get(part);
    if (!key) throw new Error(`src/db/copy.ts: index column ${(part as ColumnLike).name} not in its table`);
    return { key, fold: (v) => v };
  }
  const inner = (part as unknown as { queryChunks: unknown[] }).queryChunks.map((c) => cols.get(c)).filter((k): k is string => !!k);
  const text = render(part).replace(/\s+/g, "");
  if (inner.length !== 1) throw new Error(`src/db/copy.ts: index expression ${text} is not understood`);
  const key = inner[0]!;
  if (/^lower\(/i.test(text)) return { key, fold: (v) => (typeof v === "string" ? v.toLowerCase() : v) };
  if (/^coalesce\(.*,''\)$/i.test(text)) return { key, fold: (v) => v ?? "" };
  throw new Error(`src/db/copy.ts: index expression ${text} is not understood`);
}

/**
 * The rows of a SQLite `q` that PostgreSQL's unique indexes over `lower(...)` would refuse:
 * SQLite's lower() folds ASCII only, PostgreSQL's (UTF-8 databases) every letter, so "Straße" and
 * "STRASSE" differ on both but "Émile" and "émile" are one name on PostgreSQL only. Folded here
 * with JavaScript's Unicode toLowerCase (what PostgreSQL's lower does on a UTF-8 locale).
 */
export async function foldCollisions(q: Queryable): Promise<FoldCollision[]> {
  const { SQLiteSyncDialect } = await import("drizzle-orm/sqlite-core");
  const dialect = new SQLiteSyncDialect();
  const render = (s: SQL) => dialect.sqlToQuery(s).sql;
  const found: FoldCollision[] = [];
  for (const [key, table] of sqliteTables) {
    const c = getTableConfig(table);
    const cols = new Map<unknown, string>(Object.entries(getTableColumns(table)).map(([k, col]) => [col as unknown, k]));
    for (const ix of c.indexes) {
      const ic = ix.config as unknown as { name: string; unique: boolean; columns: unknown[]; where?: SQL };
      if (!ic.unique || !ic.columns.some((p) => is(p, SQL))) continue;
      const parts = ic.columns.map((p) => keyPart(p, render, cols));
      const t: AnyTable = tables(q)[key as TableKey];
      const fields = Object.fromEntries(parts.map((p) => [p.key, t[p.key]]));
      const base = (q as AnyTable).select(fields).from(t);
      const rows: Record<string, unknown>[] = await (ic.where ? base.where(ic.where) : base);
      const groups = new Map<string, string[]>();
      for (const r of rows) {
        const folded = parts.map((p) => p.fold(r[p.key]));
        // NULLs are distinct in a unique index.
        if (folded.some((v) => v === null || v === undefined)) continue;
        const k = JSON.stringify(folded);
        const shown = parts.map((p) => String(r[p.key] ?? "")).join("/");
        const g = groups.get(k);
        if (g) g.push(shown);
        else groups.set(k, [shown]);
      }
      for (const values of groups.values()) if (values.length > 1) found.push({ table: c.name, index: ic.name, values });
    }
  }
  return found;
}
