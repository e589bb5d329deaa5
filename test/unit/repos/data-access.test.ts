// The repos, git and metrics domains keep their queries in their stores (issue 10): no other
// module of those services, nor the repos routes, builds a query or touches the database client.
// Table types from db/schema may still be named (type-only imports).
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../../..");
const DIRS = ["src/services/repos", "src/services/git", "src/services/metrics", "src/http/routes/repos"];

/** Every .ts module of the directories above except the stores. */
const modules = DIRS.flatMap((dir) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith(".ts") && !/^store(-.*)?\.ts$/.test(f))
    .map((f) => `${dir}/${f}`),
);

/** The import statements of a module (comments dropped), as written. */
function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+["'][^"']+["']/gm)].map((m) => m[0].trim().replace(/\s+/g, " "));
}

describe("queries live in the stores (repos, git, metrics)", () => {
  test("the scan sees the modules", () => {
    expect(modules).toContain("src/services/repos/commits.ts");
    expect(modules).toContain("src/services/git/publish.ts");
    expect(modules).not.toContain("src/services/repos/store.ts");
  });

  test("no module but a store imports drizzle-orm, bun:sqlite or the db client, or a table as a value", () => {
    const bad = modules.flatMap((file) =>
      imports(file)
        .filter(
          (i) =>
            /from ["'](drizzle-orm(\/[^"']*)?|bun:sqlite)["']/.test(i) ||
            /db\/client(\.ts)?["']/.test(i) ||
            (/db\/schema(\/[^"']*)?["']/.test(i) && !/^(import|export) type /.test(i)),
        )
        .map((i) => `${file}: ${i}`),
    );
    expect(bad).toEqual([]);
  });
});
