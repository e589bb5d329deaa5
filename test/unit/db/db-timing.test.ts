// The statement timing wrapper (db/database.ts timeStatements), which also caches statements by
// their text per connection: results unchanged for statements
// of any parameter count in any order (bun:sqlite specialises methods per statement), each call
// reported once when a sink is set, nothing reported without one.
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { timeStatements } from "../../../src/db/database.ts";

test("statements answer exactly as without the wrapper, and each run is timed", () => {
  const db = new Database(":memory:", { strict: true });
  db.exec("CREATE TABLE t(x INTEGER, y TEXT)");
  const times: number[] = [];
  let on = false;
  timeStatements(db, () => (on ? (s) => void times.push(s) : null));
  // A parameterless statement first: a shared wrapper would then drop later parameters.
  expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 });
  db.prepare("INSERT INTO t VALUES (?, ?)").run(1, "a");
  db.prepare("INSERT INTO t VALUES ($x, $y)").run({ x: 2, y: "b" });
  on = true;
  expect(db.prepare("SELECT x FROM t WHERE x > ? ORDER BY x").all(0)).toEqual([{ x: 1 }, { x: 2 }]);
  expect(db.prepare("SELECT y FROM t WHERE x = ? AND y = ?").values(2, "b")).toEqual([["b"]]);
  expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 2 });
  expect(db.prepare("DELETE FROM t WHERE x = ?").run(1).changes).toBe(1);
  expect(times).toHaveLength(4);
  for (const s of times) expect(s).toBeGreaterThanOrEqual(0);
});

test("a statement is compiled once per text and connection: the same one again, still timed, answers fresh data", () => {
  const db = new Database(":memory:", { strict: true });
  db.exec("CREATE TABLE t(x INTEGER)");
  const times: number[] = [];
  timeStatements(db, () => (s) => void times.push(s));
  const count = "SELECT count(*) AS n FROM t";
  const first = db.prepare(count);
  expect(first.get()).toEqual({ n: 0 });
  db.prepare("INSERT INTO t VALUES (?)").run(1);
  db.prepare("INSERT INTO t VALUES (?)").run(2);
  const again = db.prepare(count);
  expect(again).toBe(first);
  expect(again.get()).toEqual({ n: 2 });
  // A statement whose run ended early (get of many rows) is reset before its next run.
  expect(db.prepare("SELECT x FROM t ORDER BY x").get()).toEqual({ x: 1 });
  expect(db.prepare("SELECT x FROM t ORDER BY x").all()).toEqual([{ x: 1 }, { x: 2 }]);
  expect(times).toHaveLength(6);
  // Another connection compiles its own.
  const other = new Database(":memory:", { strict: true });
  other.exec("CREATE TABLE t(x INTEGER)");
  timeStatements(other, () => null);
  expect(other.prepare(count)).not.toBe(first);
});
