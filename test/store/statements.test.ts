// Prepared statements on either database (src/db/statements.ts): one raw text with SQLite's
// parameters serves both, or one text per database; drizzle queries prepared once per handle.
import { expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { pgParameters, statementCache } from "../../src/db/statements.ts";
import { tables } from "../../src/db/tables.ts";
import { describeBoth } from "../helpers/db.ts";

const { stmt, query } = statementCache("test");

test("SQLite parameters become PostgreSQL's, quoted text left alone", () => {
  expect(pgParameters("SELECT * FROM t WHERE a = ? AND b = ?")).toBe("SELECT * FROM t WHERE a = $1 AND b = $2");
  expect(pgParameters("UPDATE t SET s = ?2, f = ?3 WHERE id = ?1 AND (s IS DISTINCT FROM ?2)")).toBe(
    "UPDATE t SET s = $2, f = $3 WHERE id = $1 AND (s IS DISTINCT FROM $2)",
  );
  expect(pgParameters(`SELECT '?' AS "q?", x FROM t WHERE y = ?`)).toBe(`SELECT '?' AS "q?", x FROM t WHERE y = $1`);
});

describeBoth("statements", (dialect, open) => {
  test("a raw statement: get, all, run; integers as numbers, flags as the database gives them", async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      await stmt(tx, "addOrg", "INSERT INTO orgs (id, name, kind, created_at, paid_seats) VALUES (?, ?, 'org', ?, ?)").run("o1", "Acme", 1_795_000_000_000, 3);
      await stmt(tx, "addOrg", "INSERT INTO orgs (id, name, kind, created_at, paid_seats) VALUES (?, ?, 'org', ?, ?)").run("o2", "Beta", 2, 0);
    });
    const byId = stmt(db.read, "orgById", 'SELECT id, name, created_at AS "createdAt", paid_seats AS seats FROM orgs WHERE id = ?1');
    expect(await byId.get("o1")).toEqual({ id: "o1", name: "Acme", createdAt: 1_795_000_000_000, seats: 3 });
    expect(await byId.get("nope")).toBeNull();
    const per = stmt(db.read, "orgsSeats", {
      sqlite: "SELECT name, max(paid_seats, ?1) AS s FROM orgs ORDER BY name",
      pg: "SELECT name, greatest(paid_seats, $1) AS s FROM orgs ORDER BY name",
    });
    expect(await per.all(1)).toEqual([
      { name: "Acme", s: 3 },
      { name: "Beta", s: 1 },
    ]);
    expect(dialect).toBe(db.dialect);
  });

  test("a drizzle query prepared once per handle, with placeholders", async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      const { orgs } = tables(tx);
      await tx
        .insert(orgs)
        .values({ id: "o3", name: "Gamma", kind: "org", createdAt: 7, runnerPolicy: { hosted: "all", self_hosted: "none", self_hosted_repos: ["x"] } });
    });
    const { orgs } = tables(db.read);
    const build = (q: typeof db.read) =>
      q
        .select({ name: orgs.name, policy: orgs.runnerPolicy, createdAt: orgs.createdAt })
        .from(orgs)
        .where(eq(orgs.id, sql.placeholder("id")));
    const first = query(db.read, "orgName", build);
    expect(query(db.read, "orgName", build)).toBe(first);
    expect(await first.get({ id: "o3" })).toEqual({ name: "Gamma", policy: { hosted: "all", self_hosted: "none", self_hosted_repos: ["x"] }, createdAt: 7 });
    expect(await first.all({ id: "none" })).toEqual([]);
  });
});
