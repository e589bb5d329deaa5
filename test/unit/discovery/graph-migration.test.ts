// Migration 0013_contribution_graph moves the per-(day, repository) rows into per-day blobs: the
// same counts under per-person slots, nothing left of the old tables.
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { migrations } from "../../../src/db/migrations.ts";
import { countsOf } from "../../../src/services/discovery/graph.ts";

const apply = (db: Database, sql: string) => {
  for (const stmt of sql.split("--> statement-breakpoint")) if (stmt.trim()) db.exec(stmt);
};

test("old day rows become one blob per person and day, slots numbered per person", () => {
  const db = new Database(":memory:");
  const at = migrations.findIndex((m) => m.tag === "0013_contribution_graph");
  expect(at).toBeGreaterThan(0);
  for (const m of migrations.slice(0, at)) apply(db, m.sql);
  // Foreign keys off: the rows stand alone. The old triggers fill the per-person repository list
  // and totals as they did in production.
  db.exec("PRAGMA foreign_keys = OFF");
  const row = db.prepare("INSERT INTO contribution_days (user_id, day, repo_id, count) VALUES (?, ?, ?, ?)");
  for (const [u, day, repo, n] of [
    ["ada", 100, "r-b", 2],
    ["ada", 100, "r-a", 5],
    ["ada", 101, "r-b", 70_000],
    ["bob", 100, "r-a", 1],
  ] as const)
    row.run(u, day, repo, n);
  apply(db, migrations[at]!.sql);

  const slots = db.query("SELECT user_id, repo_id, slot FROM contribution_slots ORDER BY user_id, slot").all();
  expect(slots).toEqual([
    { user_id: "ada", repo_id: "r-a", slot: 0 },
    { user_id: "ada", repo_id: "r-b", slot: 1 },
    { user_id: "bob", repo_id: "r-a", slot: 0 },
  ]);
  expect(db.query("SELECT user_id, next_slot, version FROM contribution_people ORDER BY user_id").all()).toEqual([
    { user_id: "ada", next_slot: 2, version: 1 },
    { user_id: "bob", next_slot: 1, version: 1 },
  ]);
  const blobs = db
    .query<{ user_id: string; day: number; counts: Uint8Array }, []>("SELECT user_id, day, counts FROM contribution_counts ORDER BY user_id, day")
    .all();
  expect(blobs.map((b) => [b.user_id, b.day, countsOf(b.counts).sort((x, y) => x[0] - y[0])])).toEqual([
    [
      "ada",
      100,
      [
        [0, 5],
        [1, 2],
      ],
    ],
    ["ada", 101, [[1, 70_000]]],
    ["bob", 100, [[0, 1]]],
  ]);
  const left = db
    .query("SELECT name FROM sqlite_master WHERE name IN ('contribution_days', 'contribution_totals', 'contribution_repos') OR name LIKE 'contribution_days_%'")
    .all();
  expect(left).toEqual([]);
});
