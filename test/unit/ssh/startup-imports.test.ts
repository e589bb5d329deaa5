// `svc serve` with SSH off must not load ssh2: its crypto keeps a WebAssembly module alive that
// lets the heap grow further between collections (about +15 MB of peak RSS over 100,000 API
// requests, +6 MB idle; bench/README.md section 0). The SSH server and the host keys are loaded
// on demand (`await import`), so ssh2 may appear only behind a dynamic import. This walks the
// static imports from the entry point, as the process loads them.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../../..");
const transpiler = new Bun.Transpiler({ loader: "ts" });

/** Every module reached from `entry` by static value imports: our files and the packages they name. */
function staticClosure(entry: string): { files: Map<string, string>; packages: Map<string, string> } {
  const files = new Map<string, string>([[entry, "(entry)"]]);
  const packages = new Map<string, string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.shift()!;
    for (const i of transpiler.scanImports(readFileSync(file, "utf8"))) {
      if (i.kind !== "import-statement") continue;
      if (!i.path.startsWith(".")) {
        const name = i.path.startsWith("@") ? i.path.split("/").slice(0, 2).join("/") : i.path.split("/")[0]!;
        if (!packages.has(name)) packages.set(name, relative(ROOT, file));
        continue;
      }
      const base = resolve(dirname(file), i.path);
      const target = [base, `${base}.ts`, join(base, "index.ts")].find((p) => /\.(ts|js|mjs)$/.test(p) && existsSync(p));
      // Why not the others: JSON and text imports hold no imports.
      if (!target || files.has(target)) continue;
      files.set(target, relative(ROOT, file));
      queue.push(target);
    }
  }
  return { files, packages };
}

describe("what every svc process loads at start", () => {
  const { files, packages } = staticClosure(join(ROOT, "src/main.ts"));

  test("the walk sees the CLI and the server", () => {
    expect(files.has(join(ROOT, "cli/index.ts"))).toBe(true);
    expect(files.has(join(ROOT, "src/http/app.ts"))).toBe(true);
    expect(packages.has("elysia")).toBe(true);
  });

  test("ssh2 is not among them (only behind `await import`, when SSH is on)", () => {
    const chain = (file: string) => {
      const out = [relative(ROOT, file)];
      for (let f = files.get(file); f && f !== "(entry)"; f = files.get(join(ROOT, f))) out.push(f);
      return out.reverse().join(" → ");
    };
    const importer = packages.get("ssh2");
    expect(importer ? `${chain(join(ROOT, importer))} → ssh2` : null).toBeNull();
  });
});
