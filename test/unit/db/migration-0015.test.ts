// Migration 0015 rewrites the predicate of runner_groups_default_uq from `is_default = 1` (an
// integer comparison PostgreSQL refuses on a boolean) to `is_default` (valid in both): a fresh
// database and one upgraded from 0014 both end with the new index, and it still allows one
// default group per org and any number of others.
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../../src/db/client.ts";
import { migrations } from "../../../src/db/migrations.ts";

function indexSql(db: Database): string {
  return db.query<{ sql: string }, []>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'runner_groups_default_uq'").get()!.sql;
}

function withDb(fn: (db: Database) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "svc-m15-"));
  const db = new Database(join(dir, "svc.db"), { create: true, strict: true });
  try {
    fn(db);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function expectOneDefaultPerOrg(db: Database): void {
  db.exec("PRAGMA foreign_keys = OFF");
  const add = db.prepare(
    "INSERT INTO runner_groups (id, org_id, name, repo_access, allow_public, is_default, created_at, updated_at) VALUES (?, ?, ?, 'all', 0, ?, 0, 0)",
  );
  add.run("g1", "o1", "Default", 1);
  add.run("g2", "o1", "a", 0);
  add.run("g3", "o1", "b", 0);
  add.run("g4", "o2", "Default", 1);
  expect(() => add.run("g5", "o1", "Other", 1)).toThrow(/UNIQUE/);
  expect(db.query("SELECT id FROM runner_groups WHERE org_id = 'o1' AND is_default").all()).toEqual([{ id: "g1" }]);
}

test("the journal embeds 0015 after 0014", () => {
  const tags = migrations.map((m) => m.tag);
  expect(tags.indexOf("0015_default_group_index")).toBe(tags.indexOf("0014_work_engine") + 1);
});

test("a fresh database ends with the boolean predicate", () => {
  withDb((db) => {
    expect(migrate(db)).toContain("0015_default_group_index");
    expect(indexSql(db)).toMatch(/WHERE "runner_groups"\."is_default"$/);
    expectOneDefaultPerOrg(db);
  });
});

test("a database at 0014 (with a default group) is upgraded to the same index", () => {
  withDb((db) => {
    // Apply 0000…0014 the way migrate() does, then record them as applied.
    db.exec("CREATE TABLE IF NOT EXISTS svc_migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
    for (const m of migrations.slice(
      0,
      migrations.findIndex((m) => m.tag === "0015_default_group_index"),
    )) {
      for (const stmt of m.sql.split("--> statement-breakpoint")) if (stmt.trim()) db.exec(stmt);
      db.query("INSERT INTO svc_migrations (tag, applied_at) VALUES (?, 0)").run(m.tag);
    }
    expect(indexSql(db)).toContain("= 1");
    // 0015 and every later migration (0016_node_secrets, …)
    expect(migrate(db)).toEqual(migrations.slice(migrations.findIndex((m) => m.tag === "0015_default_group_index")).map((m) => m.tag));
    expect(indexSql(db)).toMatch(/WHERE "runner_groups"\."is_default"$/);
    expectOneDefaultPerOrg(db);
  });
});
