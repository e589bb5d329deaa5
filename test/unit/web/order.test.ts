// The web pages are grouped by feature (src/http/web/<feature>/, issue 26) in a declared order: a
// folder imports only folders before it, so a feature's pages never reach into a peer's, and the
// kit knows no feature. Type-only imports count too.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const WEB = resolve(import.meta.dir, "../../../src/http/web");

/** Bottom first; folders on one rank are peers and import neither each other. `index` is web/index.ts. */
const ORDER: readonly (readonly string[])[] = [["kit"], ["repos"], ["changes", "ci", "account", "notify", "issues"], ["admin", "discovery"], ["index"]];

const rankOf = (folder: string) => ORDER.findIndex((rank) => rank.includes(folder));

/** The web folder a path under src/http/web belongs to (`index` for files at its top). */
function folderOf(path: string): string {
  const rel = relative(WEB, path);
  return rel.includes("/") ? rel.split("/")[0]! : "index";
}

/**
 * The one exception: the kit's asset bundle (kit/assets.ts) gathers every feature's `styles.ts`
 * and `script.ts` (or a page's own `<page>-styles.ts`), string constants that import nothing
 * themselves (checked below).
 */
const LEAVES = /^(repos|changes|ci|account|admin|issues|discovery)\/([a-z]+-)?(styles|script)\.ts$/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith(".ts") ? [path] : [];
  });
}

/** Every relative import of a file (value and type, static and dynamic), resolved. */
function importsOf(path: string): string[] {
  const text = readFileSync(path, "utf8");
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => resolve(dirname(path), m[1]!));
}

const ALL = files(WEB);

describe("web folder order", () => {
  test("every folder under src/http/web has a place in the order", () => {
    const folders = [...new Set(ALL.map(folderOf))];
    expect(folders.filter((f) => rankOf(f) < 0)).toEqual([]);
    expect(folders.length).toBe(ORDER.flat().length);
  });

  test("no folder imports a folder at or above it (peers included)", () => {
    const bad: string[] = [];
    for (const file of ALL) {
      const from = folderOf(file);
      for (const target of importsOf(file)) {
        if (!target.startsWith(`${WEB}/`)) continue;
        const to = folderOf(target);
        if (to === from) continue;
        if (relative(WEB, file) === "kit/assets.ts" && LEAVES.test(relative(WEB, target))) continue;
        if (rankOf(to) >= rankOf(from)) bad.push(`${relative(WEB, file)} → ${relative(WEB, target)}`);
      }
    }
    expect(bad).toEqual([]);
  });

  test("the features' styles and scripts import nothing", () => {
    const leaves = ALL.filter((f) => LEAVES.test(relative(WEB, f)));
    expect(leaves.length).toBeGreaterThan(5);
    expect(leaves.filter((f) => /^\s*import\b/m.test(readFileSync(f, "utf8"))).map((f) => relative(WEB, f))).toEqual([]);
  });
});
