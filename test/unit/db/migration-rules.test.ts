// Rolling upgrades (issue 27, plan-27 §3.5; README "Several nodes"): nodes one release apart run
// on one database, so a release's migrations only add. A migration that drops, renames, changes a
// column's type, makes a column NOT NULL or adds a NOT NULL column without a default (old nodes'
// INSERTs would fail) must be listed in migrations/contract.json with the release that stopped
// using the object: the contract step comes one release after the code stopped needing it.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../../..");
const DIRS = ["migrations", "migrations/pg"];

interface ContractEntry {
  migration: string;
  release: string;
  reason: string;
}
const contract = JSON.parse(readFileSync(join(ROOT, "migrations/contract.json"), "utf8")) as { contract: ContractEntry[] };

/** The rules, each a test of one statement (comments removed, whitespace folded). */
const RULES: readonly { name: string; test: (s: string) => boolean }[] = [
  { name: "DROP", test: (s) => /\bDROP\b/i.test(s) },
  { name: "RENAME", test: (s) => /\bRENAME\b/i.test(s) },
  { name: "ALTER … TYPE", test: (s) => /^ALTER\b/i.test(s) && /\bTYPE\b/i.test(s) },
  { name: "SET NOT NULL", test: (s) => /\bSET\s+NOT\s+NULL\b/i.test(s) },
  { name: "ADD COLUMN … NOT NULL without DEFAULT", test: (s) => /^ALTER\s+TABLE\b.*\bADD\b.*\bNOT\s+NULL\b/i.test(s) && !/\bDEFAULT\b/i.test(s) },
];

/** The statements of a migration's text: `--` comments removed (drizzle's breakpoints too), split at `;`. */
function statements(text: string): string[] {
  return text
    .replace(/--[^\n]*/g, " ")
    .split(";")
    .map((s) => s.replace(/\s+/g, " ").trim())
    .filter(Boolean);
}

/** The rules a statement breaks. */
function broken(statement: string): string[] {
  return RULES.filter((r) => r.test(statement)).map((r) => r.name);
}

/** Every migration file, as `migrations/…sql` paths. */
function migrationFiles(): string[] {
  return DIRS.flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((f) => f.endsWith(".sql"))
      .sort()
      .map((f) => `${dir}/${f}`),
  );
}

/** `path: rule: statement` for each contracting statement of each file. */
function contracting(files: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of files) {
    const found = statements(readFileSync(join(ROOT, file), "utf8")).flatMap((s) => broken(s).map((rule) => `${rule}: ${s.slice(0, 120)}`));
    if (found.length) out.set(file, found);
  }
  return out;
}

describe("migrations only add (rolling upgrades)", () => {
  test("every contracting migration is listed in migrations/contract.json", () => {
    const listed = new Set(contract.contract.map((e) => e.migration));
    const unlisted = [...contracting(migrationFiles())].filter(([file]) => !listed.has(file)).map(([file, found]) => `${file}: ${found.join(" | ")}`);
    expect(unlisted).toEqual([]);
  });

  test("each listed entry names a migration that exists and contracts, with its release and reason", () => {
    const found = contracting(migrationFiles());
    for (const e of contract.contract) {
      expect(existsSync(join(ROOT, e.migration))).toBe(true);
      expect(found.has(e.migration)).toBe(true);
      expect(e.release).toMatch(/^\d+\.\d+\.\d+/);
      expect(e.reason.length).toBeGreaterThan(10);
    }
    expect(new Set(contract.contract.map((e) => e.migration)).size).toBe(contract.contract.length);
  });
});

describe("the detector", () => {
  test("flags what contracts", () => {
    const cases: [string, string][] = [
      ["DROP TABLE `signup_attempts`", "DROP"],
      ['ALTER TABLE "repos" DROP COLUMN "description"', "DROP"],
      ["DROP INDEX `x_idx`", "DROP"],
      ["ALTER TABLE `__new_runners` RENAME TO `runners`", "RENAME"],
      ['ALTER TABLE "repos" RENAME COLUMN "name" TO "title"', "RENAME"],
      ['ALTER TABLE "jobs" ALTER COLUMN "attempts" SET DATA TYPE bigint', "ALTER … TYPE"],
      ['ALTER TABLE "jobs" ALTER COLUMN "attempts" TYPE integer USING attempts::integer', "ALTER … TYPE"],
      ['ALTER TABLE "jobs" ALTER COLUMN "key" SET NOT NULL', "SET NOT NULL"],
      ['ALTER TABLE "jobs" ADD COLUMN "owner" text NOT NULL', "ADD COLUMN … NOT NULL without DEFAULT"],
    ];
    for (const [sql, rule] of cases) expect(statements(sql).flatMap(broken)).toContain(rule);
  });

  test("lets additive statements through (comments and breakpoints ignored)", () => {
    const text = [
      "-- DROP TABLE nothing: a comment",
      'CREATE TABLE "node_secrets" ("name" text PRIMARY KEY NOT NULL, "value" text NOT NULL);--> statement-breakpoint',
      'ALTER TABLE "webhooks" ADD COLUMN "last_seq" integer DEFAULT 0 NOT NULL;--> statement-breakpoint',
      'ALTER TABLE "repos" ADD COLUMN "topic" text;',
      'CREATE INDEX CONCURRENTLY "repos_topic_idx" ON "repos" ("topic");',
      "CREATE TYPE mood AS ENUM ('ok');",
      "CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();",
      'ALTER TABLE "a" ADD CONSTRAINT "a_b_fk" FOREIGN KEY ("b") REFERENCES "b"("id") ON DELETE cascade;',
    ].join("\n");
    expect(statements(text).flatMap(broken)).toEqual([]);
  });
});
