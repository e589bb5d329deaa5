// Starting svc on PostgreSQL (DECISIONS §5 "Several nodes"): SVC_DATABASE_URL selects it, any
// other scheme is refused at start, `svc migrate` applies the pg migrations once, and a database
// that cannot be reached stops the start with a clear line instead of a stack.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgMigrations } from "../../../src/db/migrations.ts";
import { type PostgresDatabase, postgresDatabase } from "../../helpers/postgres.ts";
import { runSvc } from "../../helpers/server.ts";

const dataDir = mkdtempSync(join(tmpdir(), "svc-pgstart-"));
const dbs: PostgresDatabase[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

test("another database's URL is refused at start, naming the setting", async () => {
  for (const url of ["mysql://svc@db/svc", "sqlite:///var/lib/svc/svc.db"]) {
    const r = await runSvc(["serve"], { SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_DATABASE_URL: url });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SVC_DATABASE_URL: (mysql|sqlite) is not supported; use a postgres:\/\//);
  }
});

test("svc migrate applies the PostgreSQL migrations once", async () => {
  const db = await postgresDatabase();
  dbs.push(db);
  const env = { SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: db.url };
  const first = await runSvc(["migrate"], env);
  expect({ code: first.code, stdout: first.stdout, stderr: first.stderr }).toEqual({
    code: 0,
    stdout: `applied ${pgMigrations.map((m) => m.tag).join(", ")}\n`,
    stderr: "",
  });
  const again = await runSvc(["migrate"], env);
  expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 0, stdout: "up to date\n" });
});

test("an unreachable PostgreSQL stops the start with one line", async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const r = await runSvc(["serve"], { SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_DATABASE_URL: `postgres://svc:x@127.0.0.1:${port}/svc` });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`SVC_DATABASE_URL: cannot connect (127.0.0.1:${port}/svc)`);
  expect(r.stderr.trim().split("\n").length).toBe(1);
});
