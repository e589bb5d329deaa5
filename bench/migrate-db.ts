// How fast the table copier moves metadata (src/db/copy.ts; `svc migrate-db`, backup of a
// PostgreSQL installation): a SQLite database with --rows audit events (json column), --rows
// rate events (identity ids) and --rows/10 users (json, boolean) is copied into an empty
// PostgreSQL database (one transaction, verified per table: what `svc migrate-db` does after its
// checks) and back into a fresh SQLite file (what `svc backup` does on PostgreSQL):
//
//   bun bench/migrate-db.ts [--rows 100000]
//
// PostgreSQL from test/helpers/postgres.ts (fsync off: a test server). Prints JSON.
import { Database as Sqlite } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate, openDatabase } from "../src/db/client.ts";
import { copyTables, verifyTables } from "../src/db/copy.ts";
import type { Queryable } from "../src/db/database.ts";
import { openPg } from "../src/db/pg/client.ts";
import * as schema from "../src/db/schema/index.ts";
import { tables } from "../src/db/tables.ts";
import { copyIntoPg, pgTarget } from "../src/services/ops/migrate-db.ts";
import { startPostgres } from "../test/helpers/postgres.ts";
import { machine } from "./lib/machine.ts";

const { values: opt } = parseArgs({ args: process.argv.slice(2), options: { rows: { type: "string", default: "100000" } } });
const rows = Number(opt.rows);
const load0 = loadavg();
const dir = mkdtempSync(join(tmpdir(), "svc-bench-migratedb-"));
const pgServer = await startPostgres();
try {
  const src = openDatabase(dir);
  migrate(src.sqlite);
  const T0 = 1_790_000_000_000;
  await src.db.transaction(async (tx) => {
    const { users, auditEvents, rateEvents } = tables(tx);
    for (let i = 0; i < rows / 10; i += 500) {
      await tx.insert(users).values(
        Array.from({ length: Math.min(500, rows / 10 - i) }, (_, k) => ({
          id: `u${i + k}`,
          handle: `user${i + k}`,
          email: `user${i + k}@example.com`,
          name: `User ${i + k}`,
          passwordHash: "x".repeat(60),
          links: [{ label: "site", url: `https://u${i + k}.example` }],
          contribPrivateOptin: (i + k) % 2 === 0,
          createdAt: T0 + i + k,
        })),
      );
    }
    for (let i = 0; i < rows; i += 1000) {
      const n = Math.min(1000, rows - i);
      await tx.insert(auditEvents).values(
        Array.from({ length: n }, (_, k) => ({
          id: `a${String(i + k).padStart(9, "0")}`,
          orgId: "o1",
          action: "repo.create",
          actorKind: "user",
          actorId: "u1",
          target: `acme/r${i + k}`,
          data: { n: i + k, public: false },
          createdAt: T0 + i + k,
        })),
      );
      await tx
        .insert(rateEvents)
        .values(Array.from({ length: n }, (_, k) => ({ bucket: "signup", address: `10.0.${k % 250}.${k % 200}`, createdAt: T0 + i + k })));
    }
  });
  const total = rows * 2 + rows / 10;
  const db = await pgServer.createDatabase();
  let t = performance.now();
  const copy = await copyIntoPg(src.db.read, pgTarget(db.url));
  const toPgSeconds = (performance.now() - t) / 1000;
  if (!copy.checks.every((c) => c.ok)) throw new Error("copy did not verify");
  // Back into a fresh SQLite file (svc backup on PostgreSQL), verified too.
  const pg = openPg({ url: db.url, name: db.name, pool: 2 });
  const file = new Sqlite(join(dir, "snapshot.db"), { create: true, strict: true });
  migrate(file);
  const target = drizzle(file, { schema }) as unknown as Queryable;
  t = performance.now();
  await (pg.db.read as any).transaction(
    async (tx: Queryable) => {
      file.exec("BEGIN");
      await copyTables(tx, target);
      file.exec("COMMIT");
      if (!(await verifyTables(tx, target)).every((c) => c.ok)) throw new Error("snapshot did not verify");
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
  const toSqliteSeconds = (performance.now() - t) / 1000;
  file.close();
  await pg.close();
  src.close();
  console.log(
    JSON.stringify(
      {
        machine: machine(),
        load: { before: load0.map((l) => +l.toFixed(2)), after: loadavg().map((l) => +l.toFixed(2)) },
        postgres: pgServer.version,
        rows: total,
        sqliteToPg: { seconds: +toPgSeconds.toFixed(2), rowsPerSecond: Math.round(total / toPgSeconds) },
        pgToSqlite: { seconds: +toSqliteSeconds.toFixed(2), rowsPerSecond: Math.round(total / toSqliteSeconds) },
      },
      null,
      1,
    ),
  );
} finally {
  await pgServer.stop();
  rmSync(dir, { recursive: true, force: true });
}
