// Every table has a primary key: backup onto PostgreSQL and `svc migrate-db` copy tables row by
// row keyed by it (src/db/copy.ts refuses a table without one, at run time). A table added
// without one failed only in the cluster tests; this catches it where the table is defined.
import { expect, test } from "bun:test";
import { getTableColumns } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../../../src/db/schema/index.ts";

test("every table of the schema has a primary key (src/db/copy.ts copies by it)", () => {
  const tables: SQLiteTable[] = (Object.values(schema) as unknown[]).filter((v): v is SQLiteTable => v instanceof SQLiteTable);
  expect(tables.length).toBeGreaterThan(20);
  const without = tables
    .filter((t) => getTableConfig(t).primaryKeys.length === 0 && !Object.values(getTableColumns(t)).some((c) => c.primary))
    .map((t) => getTableConfig(t).name);
  expect(without).toEqual([]);
});
