// The import directions of DESIGN.md "Layers and the direction of imports", checked by reading
// every module under src/: transports never touch drizzle or each other, services never import a
// transport or CLI library, git imports nothing from the rest, storage nothing from above it.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const SRC = join(ROOT, "src");

interface Import {
  /** The importing file, relative to the repository root (`src/http/app.ts`). */
  file: string;
  /** The specifier as written. */
  spec: string;
  /** For relative specifiers: the target relative to the repository root; else null. */
  target: string | null;
  /** `import type …` / `export type …` (erased at build time). */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|tsx|js|mjs)$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** Drops comments so commented-out code and prose are not mistaken for imports. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** Every static import/export-from, side-effect import, dynamic import() and require(). */
function importsOf(file: string): Import[] {
  const text = stripComments(readFileSync(file, "utf8"));
  const rel = relative(ROOT, file);
  const found: Import[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    const target = spec.startsWith(".") ? relative(ROOT, resolve(dirname(file), spec)) : null;
    found.push({ file: rel, spec, target, typeOnly });
  };
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+["']([^"']+)["']/gm)) {
    // `import { type A, type B } from` is type-only too when every named binding is a type.
    const names = /^\{([\s\S]*)\}$/.exec(m[3]!.trim());
    const allTypes = names !== null && names[1]!.split(",").map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith("type "));
    add(m[4]!, m[2] !== undefined || allTypes);
  }
  for (const m of text.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) add(m[1]!, false);
  for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) add(m[1]!, false);
  for (const m of text.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)) add(m[1]!, false);
  return found;
}

const FILES = sourceFiles(SRC);
const ALL = FILES.flatMap(importsOf);

const inLayer = (layer: string) => (i: Import) => i.file.startsWith(`src/${layer}/`);
const targetIn = (layer: string) => (i: Import) => i.target !== null && (i.target === `src/${layer}` || i.target.startsWith(`src/${layer}/`));
const pkg = (name: string) => (i: Import) => i.spec === name || i.spec.startsWith(`${name}/`);
const show = (list: Import[]) => list.map((i) => `${i.file} → ${i.spec}${i.typeOnly ? " (type)" : ""}`);

describe("layering (DESIGN.md)", () => {
  test("the scan sees the source tree and its imports", () => {
    expect(FILES.length).toBeGreaterThan(10);
    expect(ALL.some((i) => i.file === "src/http/app.ts" && i.spec === "elysia")).toBe(true);
    expect(ALL.some((i) => i.file === "src/services/access/access.ts" && i.target === "src/db/schema/index.ts")).toBe(true);
  });

  for (const layer of ["http", "ssh"]) {
    test(`src/${layer} never touches drizzle, bun:sqlite or the db client`, () => {
      const bad = ALL.filter(inLayer(layer)).filter(
        (i) => pkg("drizzle-orm")(i) || i.spec === "bun:sqlite" || (targetIn("db")(i) && !(i.typeOnly && /^src\/db\/schema(\/.*)?(\.ts)?$/.test(i.target!))),
      );
      expect(show(bad)).toEqual([]);
    });
  }

  test("src/http and src/ssh never import each other", () => {
    const bad = [...ALL.filter(inLayer("http")).filter(targetIn("ssh")), ...ALL.filter(inLayer("ssh")).filter(targetIn("http"))];
    expect(show(bad)).toEqual([]);
  });

  test("src/services never import elysia, ssh2, citty or nodemailer (nor a transport)", () => {
    const banned = ["elysia", "@elysiajs", "ssh2", "citty", "nodemailer"];
    const bad = ALL.filter(inLayer("services")).filter((i) => banned.some((b) => pkg(b)(i)) || targetIn("http")(i) || targetIn("ssh")(i) || (i.target?.startsWith("cli/") ?? false));
    expect(show(bad)).toEqual([]);
  });

  test("src/git imports nothing outside src/git (node: builtins and bun allowed)", () => {
    const bad = ALL.filter(inLayer("git")).filter((i) => {
      if (i.target !== null) return !targetIn("git")(i);
      return !(i.spec.startsWith("node:") || i.spec === "bun");
    });
    expect(show(bad)).toEqual([]);
  });

  test("src/storage imports nothing from services, http, ssh or db", () => {
    const bad = ALL.filter(inLayer("storage")).filter((i) => ["services", "http", "ssh", "db"].some((l) => targetIn(l)(i)) || pkg("drizzle-orm")(i) || i.spec === "bun:sqlite");
    expect(show(bad)).toEqual([]);
  });

  test("nothing under src/ imports the CLI", () => {
    const bad = ALL.filter((i) => i.target !== null && i.target.startsWith("cli/") && i.file !== "src/main.ts");
    expect(show(bad)).toEqual([]);
  });

  test("src/main.ts is only the entry point: nothing imports it", () => {
    const bad = ALL.filter((i) => i.target === "src/main.ts");
    expect(show(bad)).toEqual([]);
  });

  test("src/mail (transports) imports nothing from services, http, ssh or db", () => {
    const bad = ALL.filter(inLayer("mail")).filter((i) => ["services", "http", "ssh", "db"].some((l) => targetIn(l)(i)));
    expect(show(bad)).toEqual([]);
  });

  test("src/util and src/db import nothing from services, http, ssh, git or storage", () => {
    const bad = ALL.filter((i) => inLayer("util")(i) || inLayer("db")(i)).filter((i) => ["services", "http", "ssh", "git", "storage", "mail"].some((l) => targetIn(l)(i)));
    expect(show(bad)).toEqual([]);
  });
});

describe("data access (issue 10)", () => {
  /** Service modules that may build queries: each domain's store modules. */
  const isStore = (file: string) => /^src\/services\/[^/]+\/(store(-[\w-]+)?|[\w-]+-store)\.ts$/.test(file);

  test("drizzle query builders are imported only by store modules (and src/db)", () => {
    const bad = ALL.filter((i) => i.file.startsWith("src/") && !i.file.startsWith("src/db/") && !isStore(i.file) && pkg("drizzle-orm")(i) && !i.typeOnly);
    expect(show(bad)).toEqual([]);
  });
});

describe("one git service behind thin transports (issue 10)", () => {
  /** The only engine modules a transport may use: request parsing (URL, exec command, version). */
  const TRANSPORT_GIT_MODULES = ["src/git/service-request.ts"];
  const transports = (i: Import) => inLayer("http")(i) || inLayer("ssh")(i);
  const transportFiles = FILES.filter((f) => /^src\/(http|ssh)\//.test(relative(ROOT, f)));

  test(`src/http and src/ssh import from src/git only ${TRANSPORT_GIT_MODULES.join(", ")}`, () => {
    const bad = ALL.filter(transports).filter((i) => targetIn("git")(i) && !TRANSPORT_GIT_MODULES.includes(i.target!));
    expect(show(bad)).toEqual([]);
  });

  test("src/http and src/ssh decide no authority: no access.ts or lookup.ts, no authorize/decide/requireRepo calls", () => {
    const bad = ALL.filter(transports).filter((i) => !i.typeOnly && /^src\/services\/access\/(access|lookup)\.ts$/.test(i.target ?? ""));
    const calls = /\b(authorize|decide|requireRepo|requireRepoFor|buildFacts|loadPersonInOrg)\s*\(/;
    const offenders = transportFiles.filter((f) => calls.test(stripComments(readFileSync(f, "utf8")))).map((f) => relative(ROOT, f));
    expect({ imports: show(bad), calls: offenders }).toEqual({ imports: [], calls: [] });
  });

  /** Signs of pkt-line framing done by hand: hex lengths, the flush packet, ERR and service lines. */
  const FRAMING = [/\.toString\(16\)\s*\.padStart\(4\b/, /\.padStart\(4,\s*["'`]0["'`]\)/, /["'`]000[0-2]["'`]/, /["'`]# service=/, /["'`]ERR /, /\.length \+ 4\)/];

  test("the framing detector recognises a hand-made pkt-line", () => {
    const sample = 'const pkt = (s) => Buffer.concat([Buffer.from((b.length + 4).toString(16).padStart(4, "0")), b]); parts.push(pkt(`# service=${x}`), Buffer.from("0000"), pkt(`ERR ${m}`));';
    expect(FRAMING.filter((re) => re.test(sample)).length).toBe(FRAMING.length);
  });

  test("nothing outside src/git frames pkt-lines by hand", () => {
    const offenders: string[] = [];
    for (const file of FILES) {
      const rel = relative(ROOT, file);
      if (rel.startsWith("src/git/")) continue;
      const text = stripComments(readFileSync(file, "utf8"));
      for (const re of FRAMING) if (re.test(text)) offenders.push(`${rel}: ${re}`);
    }
    expect(offenders).toEqual([]);
  });

  test("only the git service runs the engine's services (upload-pack, receive-pack, the advertisement)", () => {
    const engine = ["src/git/upload-pack.ts", "src/git/upload-pack-v2.ts", "src/git/receive-pack.ts", "src/git/advertise.ts"];
    const bad = ALL.filter((i) => !i.file.startsWith("src/git/") && i.file !== "src/services/git/serve.ts" && !i.typeOnly && engine.includes(i.target ?? ""));
    expect(show(bad)).toEqual([]);
  });
});

describe("git is served by our own engine", () => {
  /** Ways a module could run the git binary. */
  const GIT_SPAWN = [
    /\bspawn(Sync)?\(\s*\[\s*["'`](\/usr\/bin\/)?git["'`]/,
    /\bspawn(Sync)?\(\s*["'`](\/usr\/bin\/)?git["'`]/,
    /\bexec(File)?(Sync)?\(\s*["'`](\/usr\/bin\/)?git\b/,
    /\$`\s*(\/usr\/bin\/)?git\b/,
    /\bcmd:\s*\[\s*["'`](\/usr\/bin\/)?git["'`]/,
  ];

  test("the detector recognises the usual spellings", () => {
    const samples = ['Bun.spawn(["git", "clone"])', 'Bun.spawnSync(["git","init"])', 'execFile("git", ["log"])', "await $`git rev-parse HEAD`", 'spawn("git", args)', 'Bun.spawn({ cmd: ["git", "x"] })'];
    for (const s of samples) expect(GIT_SPAWN.some((re) => re.test(s))).toBe(true);
    expect(GIT_SPAWN.some((re) => re.test('Bun.spawn(["sh", "-c", step.run])'))).toBe(false);
  });

  test("nothing in src/ spawns the git binary", () => {
    const offenders: string[] = [];
    for (const file of FILES) {
      const text = stripComments(readFileSync(file, "utf8"));
      for (const re of GIT_SPAWN) if (re.test(text)) offenders.push(`${relative(ROOT, file)}: ${re}`);
    }
    expect(offenders).toEqual([]);
  });

  test("nothing in src/git or src/services imports child_process", () => {
    const bad = ALL.filter((i) => (inLayer("git")(i) || inLayer("services")(i)) && /^(node:)?child_process$/.test(i.spec));
    expect(show(bad)).toEqual([]);
  });
});
