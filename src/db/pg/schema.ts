// The PostgreSQL tables, derived at load from the one definition (the sqlite-core tables of
// src/db/schema): same JS keys, same SQL names, same row types. Why derived rather than written
// twice or generated into a file: nothing to keep in step, and a table a PostgreSQL handle uses is
// by construction its SQLite twin (plan-27 §1.1). drizzle-kit reads this module through
// `src/db/pg/kit-schema.ts` (drizzle.pg.config.ts) to generate migrations/pg.
//
// Column map: integer → bigint (epoch ms, sizes, counters), integer boolean → boolean,
// autoincrement → identity, text → text, text json → jsonb (values passed through: Bun.sql
// encodes them; drizzle's own jsonb() would send a JSON string), blob → bytea. Index expressions
// (`lower(${t.name})`, partial `where`) are rebuilt over the pg columns.
import { getTableColumns, is, SQL, sql } from "drizzle-orm";
import { bigint, boolean, customType, foreignKey, index, type PgTableWithColumns, pgTable, primaryKey, text, unique, uniqueIndex } from "drizzle-orm/pg-core";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as source from "../schema/index.ts";

/** jsonb whose values go to the driver as they are (Bun.sql encodes objects and arrays itself). */
const jsonb = customType<{ data: unknown; driverData: unknown }>({
  dataType: () => "jsonb",
  toDriver: (v) => v,
  fromDriver: (v) => v,
});

/** bytea as Buffer both ways (the sqlite blob columns are `mode: "buffer"`). */
const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)),
});

// The builders of every column type meet here.
type AnyBuilder = any;
// A derived table's columns are looked up by key.
type AnyTable = PgTableWithColumns<any>;
interface SqlChunks {
  queryChunks: unknown[];
}
interface StringChunkLike {
  value: string[];
}

/** The sqlite tables of the definition, by their export key. */
export type SqliteSchema = typeof source;
type TableKeys = { [K in keyof SqliteSchema]: SqliteSchema[K] extends SQLiteTable ? K : never }[keyof SqliteSchema];

function isStringChunk(c: unknown): c is StringChunkLike {
  return typeof c === "object" && c !== null && Array.isArray((c as StringChunkLike).value) && !is(c, SQL);
}

/** The text of an `sql` chunk list made only of strings (defaults like `sql\`'[]'\``). */
function literalText(s: SQL): string {
  return (s as unknown as SqlChunks).queryChunks.map((c) => (isStringChunk(c) ? c.value.join("") : "")).join("");
}

function columnBuilder(col: ReturnType<typeof getTableConfig>["columns"][number]): AnyBuilder {
  const c = col as unknown as { autoIncrement?: boolean };
  let b: AnyBuilder;
  switch (col.columnType) {
    case "SQLiteInteger":
    case "SQLiteTimestamp":
      b = bigint(col.name, { mode: "number" });
      if (c.autoIncrement) b = b.generatedByDefaultAsIdentity();
      break;
    case "SQLiteBoolean":
      b = boolean(col.name);
      break;
    case "SQLiteText":
      b = text(col.name);
      break;
    case "SQLiteTextJson":
      b = jsonb(col.name);
      break;
    case "SQLiteBlobBuffer":
      b = bytea(col.name);
      break;
    default:
      throw new Error(`src/db/pg/schema.ts: no PostgreSQL type for ${col.name} (${col.columnType})`);
  }
  if (col.primary) b = b.primaryKey();
  if (col.notNull) b = b.notNull();
  if (col.isUnique) b = b.unique(col.uniqueName);
  if (col.hasDefault && col.default !== undefined) {
    const d = col.default;
    if (is(d, SQL)) b = b.default(col.columnType === "SQLiteTextJson" ? sql.raw(`${literalText(d)}::jsonb`) : d);
    else if (col.columnType === "SQLiteBoolean") b = b.default(!!d);
    else b = b.default(d);
  }
  return b;
}

/** Derives every pg table; the result is keyed like src/db/schema's exports. */
function derive(): Record<string, AnyTable> {
  const out: Record<string, AnyTable> = {};
  // sqlite column object → its table's SQL name and its JS key, for index expressions and FKs.
  const where = new Map<unknown, { table: string; key: string; boolean: boolean }>();
  const made = new Map<string, AnyTable>();
  const entries = Object.entries(source as Record<string, unknown>).filter((e): e is [string, SQLiteTable] => is(e[1], SQLiteTable));
  for (const [, table] of entries) {
    const name = getTableConfig(table).name;
    for (const [key, col] of Object.entries(getTableColumns(table))) where.set(col, { table: name, key, boolean: col.columnType === "SQLiteBoolean" });
  }
  // An sql chunk list re-pointed at the pg columns of `t`. `${boolColumn} = 1` becomes
  // `${boolColumn}` (pg refuses boolean = integer; the bare column is valid in both).
  const repoint = (s: SQL, t: AnyTable): SQL => {
    const chunks = (s as unknown as SqlChunks).queryChunks;
    const next: unknown[] = [];
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i];
      const m = where.get(c);
      if (m) {
        next.push(t[m.key]);
        const after = chunks[i + 1];
        if (m.boolean && isStringChunk(after) && /^\s*=\s*1\b/.test(after.value.join(""))) {
          next.push(new (after.constructor as new (v: string) => unknown)(after.value.join("").replace(/^\s*=\s*1\b/, "")));
          i++;
        }
      } else if (is(c, SQL)) next.push(repoint(c, t));
      else next.push(c);
    }
    return new SQL(next as SQL["queryChunks"]);
  };
  for (const [exportKey, table] of entries) {
    const config = getTableConfig(table);
    const columns: Record<string, AnyBuilder> = {};
    const keyOf = new Map<string, string>();
    for (const [key, col] of Object.entries(getTableColumns(table))) {
      keyOf.set(col.name, key);
      columns[key] = columnBuilder(col as unknown as ReturnType<typeof getTableConfig>["columns"][number]);
    }
    const col = (t: AnyTable, c: { name: string }) => t[keyOf.get(c.name)!];
    const pg: AnyTable = (pgTable as AnyBuilder)(config.name, columns, (t: AnyTable) => [
      ...config.indexes.map((ix) => {
        const ic = ix.config as unknown as { name: string; unique: boolean; columns: unknown[]; where?: SQL };
        const on = ic.columns.map((x) => (is(x, SQL) ? repoint(x, t) : col(t, x as { name: string })));
        let b = (ic.unique ? uniqueIndex(ic.name) : index(ic.name)).on(...(on as [AnyBuilder]));
        if (ic.where) b = b.where(repoint(ic.where, t));
        return b;
      }),
      ...config.primaryKeys.map((pk) => primaryKey({ name: pk.getName(), columns: pk.columns.map((x) => col(t, x)) as [AnyBuilder] })),
      ...config.uniqueConstraints.map((u) => unique(u.name).on(...(u.columns.map((x) => col(t, x)) as [AnyBuilder]))),
      ...config.foreignKeys.map((fk) => {
        const r = fk.reference();
        const foreign = r.foreignColumns.map((x) => {
          const m = where.get(x)!;
          const target = made.get(m.table) ?? (m.table === config.name ? t : undefined);
          if (!target) throw new Error(`src/db/pg/schema.ts: ${config.name} references ${m.table}, defined later`);
          return target[m.key];
        });
        let b = foreignKey({ name: fk.getName(), columns: r.columns.map((x) => col(t, x)) as [AnyBuilder], foreignColumns: foreign as [AnyBuilder] });
        if (fk.onDelete) b = b.onDelete(fk.onDelete);
        if (fk.onUpdate && fk.onUpdate !== "no action") b = b.onUpdate(fk.onUpdate);
        return b;
      }),
    ]);
    made.set(config.name, pg);
    out[exportKey] = pg;
  }
  return Object.freeze(out);
}

/**
 * The pg twin of every sqlite table, typed as the sqlite table: store code is typed against the
 * sqlite-core tables, and the row types are the same by the column map above (number, boolean,
 * T for json, Buffer). Only src/db hands these to a query.
 */
export const pgTables = derive() as unknown as { readonly [K in TableKeys]: SqliteSchema[K] };

/** The same tables as pg-core objects (drizzle-kit, the pg client's schema). */
export const pgCoreTables = pgTables as unknown as Readonly<Record<TableKeys, AnyTable>>;
