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

/**
 * Drops comments so commented-out code and prose are not mistaken for calls. One pass from left
 * to right: a string is kept whole, a `//` comment ends at its line even when it holds a `/*`
 * (stripping block comments first let `// .svc/workflows/*.yml` swallow the code up to the next
 * block comment's end, which hid 45 imports in 4 files). Regex literals are not recognised; a
 * quote inside one can only pair with a later quote, which keeps text. Imports do not use this.
 */
function stripComments(text: string): string {
  return text.replace(
    /("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|\/\/[^\n]*|\/\*[\s\S]*?\*\//g,
    (m, str: string | undefined) => str ?? (m.startsWith("/*") ? m.replace(/[^\n]/g, "") : ""),
  );
}

const transpiler = new Bun.Transpiler({ loader: "ts" });

/**
 * Every static import/export-from, side-effect import, dynamic import() and require(). Value
 * imports come from Bun's own scanner (exact: it skips comments and strings, and drops
 * `import type` and imports whose every binding is `type X`). Type-only imports are the
 * column-0 `import`/`export … from` lines (the formatter keeps top-level imports there) whose
 * specifier the scanner did not report; they are read without stripping comments, so a comment
 * can add an import but never hide one.
 */
function importsOf(file: string, text = readFileSync(file, "utf8")): Import[] {
  const rel = relative(ROOT, file);
  const found: Import[] = [];
  const seen = new Set<string>();
  const add = (spec: string, typeOnly: boolean) => {
    if (seen.has(spec)) return;
    seen.add(spec);
    const target = spec.startsWith(".") ? relative(ROOT, resolve(dirname(file), spec)) : null;
    found.push({ file: rel, spec, target, typeOnly });
  };
  for (const i of transpiler.scanImports(text)) add(i.path, false);
  for (const m of text.matchAll(/^(?:import|export)\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+)\s+from\s+["']([^"']+)["']/gm))
    add(m[1]!, true);
  return found;
}

const FILES = sourceFiles(SRC);
const ALL = FILES.flatMap((f) => importsOf(f));

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
    const bad = ALL.filter(inLayer("services")).filter(
      (i) => banned.some((b) => pkg(b)(i)) || targetIn("http")(i) || targetIn("ssh")(i) || (i.target?.startsWith("cli/") ?? false),
    );
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
    const bad = ALL.filter(inLayer("storage")).filter(
      (i) => ["services", "http", "ssh", "db"].some((l) => targetIn(l)(i)) || pkg("drizzle-orm")(i) || i.spec === "bun:sqlite",
    );
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
    const bad = ALL.filter((i) => inLayer("util")(i) || inLayer("db")(i)).filter((i) =>
      ["services", "http", "ssh", "git", "storage", "mail"].some((l) => targetIn(l)(i)),
    );
    expect(show(bad)).toEqual([]);
  });
});

describe("the import scanner", () => {
  const SAMPLE = [
    "// Runs .svc/workflows/*.yml on push (a `//` comment holding a block comment's opening).",
    'import { a } from "./a.ts";',
    'import type { B } from "./b.ts";',
    'import { type C, type D } from "./c.ts";',
    'import { type E, f } from "./e.ts";',
    'export { g } from "./g.ts";',
    'export type { H } from "./h.ts";',
    "/* a block comment */",
    'import "./side.ts";',
    'const lazy = () => import("./dyn.ts");',
    '// import { gone } from "./commented.ts";',
    "const s = \"import { x } from './in-a-string.ts'\";",
  ].join("\n");

  test("a // comment holding /* hides no import; type-only imports are told apart", () => {
    const found = importsOf(join(SRC, "services/x/sample.ts"), SAMPLE).map((i) => `${i.spec}${i.typeOnly ? " (type)" : ""}`);
    expect(found.sort()).toEqual(["./a.ts", "./b.ts (type)", "./c.ts (type)", "./dyn.ts", "./e.ts", "./g.ts", "./h.ts (type)", "./side.ts"]);
  });

  test("stripComments keeps the code after a // comment holding /*, and strings whole", () => {
    const out = stripComments(SAMPLE);
    expect(out).toContain('import { a } from "./a.ts";');
    expect(out).toContain('import "./side.ts";');
    expect(out).not.toContain("commented.ts");
    expect(out).not.toContain("block comment");
    expect(out).toContain("in-a-string.ts");
  });
});

/**
 * The services floor, bottom first (docs/architecture.md "Domain order"): a folder imports only
 * folders before it. `src/services/*.ts` (context, paging, schemas, names) sit under all of them.
 */
const SERVICE_ORDER = [
  "events",
  "jobs",
  "telemetry",
  "mail", // platform floor
  "access",
  "audit",
  "billing",
  "metrics",
  "people",
  "orgs",
  "git",
  "ci",
  "lfs", // reads git objects and access; signs with the secrets key (ci)
  "mirrors",
  "repos",
  "changes",
  "issues",
  "hooks",
  "notify",
  "discovery",
  "ops",
  "web",
] as const;
type Folder = (typeof SERVICE_ORDER)[number];

const folderOf = (p: string): Folder | null => (/^src\/services\/([^/]+)\//.exec(p)?.[1] as Folder | undefined) ?? null;
const rank = (f: Folder) => SERVICE_ORDER.indexOf(f);
/** Service modules that may build queries: each domain's store modules. */
const isStore = (file: string) => /^src\/services\/[^/]+\/(store(-[\w-]+)?|[\w-]+-store)(\.ts)?$/.test(file);
const SERVICES = ALL.filter(inLayer("services"));
const sorted = (list: readonly string[]) => [...list].sort();

/**
 * Ratchet: the upward imports left against SERVICE_ORDER (issue 26 plan §1.3). Grouped by the
 * work package that removes them; each package deletes only its own lines. Empty when 26 is done.
 */
const KNOWN_UPWARD: readonly string[] = [
  // A (events, telemetry, jobs)
  // B (domain order)
  // C (web): none
];

/** Ratchet: imports of another domain's store module (plan §1.3), grouped like KNOWN_UPWARD. */
const KNOWN_STORE_IMPORTS: readonly string[] = [
  // A (events, telemetry, jobs)
  // B (domain order)
  // C (web): none
];

/** Ratchet: modules outside src/db that reach the SQLite driver (plan §3: one statement cache in src/db). */
const KNOWN_SQLITE: readonly string[] = [
  // A (state onto the context): none left (src/db/statements.ts)
];

describe("domain order (docs/architecture.md)", () => {
  test("SERVICE_ORDER names each folder once", () => {
    expect(new Set(SERVICE_ORDER).size).toBe(SERVICE_ORDER.length);
  });

  test("every folder under src/services has a place in SERVICE_ORDER", () => {
    const folders = readdirSync(join(SRC, "services"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => !(SERVICE_ORDER as readonly string[]).includes(f))).toEqual([]);
  });

  test("docs/architecture.md states the same order", () => {
    const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
    const stated = /^## Domain order\n[\s\S]*?^`([a-z <]+)`$/m.exec(doc)?.[1] ?? null;
    expect(stated).toBe(SERVICE_ORDER.join(" < "));
  });

  test("no services folder imports a folder at or above it (type-only imports too)", () => {
    const bad = SERVICES.filter((i) => {
      const a = folderOf(i.file),
        b = folderOf(i.target ?? "");
      return a !== null && b !== null && a !== b && rank(b) > rank(a);
    });
    expect(sorted(show(bad))).toEqual(sorted(KNOWN_UPWARD));
  });

  test("shared files (src/services/*.ts) import no folder; context.ts imports types only", () => {
    const bad = SERVICES.filter(
      (i) => /^src\/services\/[^/]+\.ts$/.test(i.file) && folderOf(i.target ?? "") !== null && !(i.file === "src/services/context.ts" && i.typeOnly),
    );
    expect(show(bad)).toEqual([]);
  });

  test("a domain never imports another domain's store module", () => {
    const bad = SERVICES.filter((i) => {
      const a = folderOf(i.file),
        b = folderOf(i.target ?? "");
      return a !== null && b !== null && a !== b && isStore(i.target!);
    });
    expect(sorted(show(bad))).toEqual(sorted(KNOWN_STORE_IMPORTS));
  });

  test("only src/db imports bun:sqlite or touches a connection's $client", () => {
    const importers = ALL.filter((i) => i.spec === "bun:sqlite" && !i.file.startsWith("src/db/")).map((i) => i.file);
    const touchers = FILES.map((f) => relative(ROOT, f)).filter(
      (f) => !f.startsWith("src/db/") && /\$client\b/.test(stripComments(readFileSync(join(ROOT, f), "utf8"))),
    );
    expect(sorted([...new Set([...importers, ...touchers])])).toEqual(sorted(KNOWN_SQLITE));
  });
});

describe("data access (issue 10)", () => {
  test("drizzle query builders are imported only by store modules (and src/db)", () => {
    const bad = ALL.filter((i) => i.file.startsWith("src/") && !i.file.startsWith("src/db/") && !isStore(i.file) && pkg("drizzle-orm")(i) && !i.typeOnly);
    expect(show(bad)).toEqual([]);
  });
});

/**
 * Ratchet (issue 27 stage 0): drizzle statements outside src/db that run only on SQLite, per file:
 * the plain bun:sqlite statements of `statementCache().raw` and the drizzle statements prepared
 * with `statementCache().prepared` (run synchronously with `.get(params)`/`.all(params)`). The
 * PostgreSQL database layer routes them per dialect and empties this list.
 */
const KNOWN_SYNC_STATEMENTS: readonly string[] = [
  // the SQLite branch of the contribution graph's one-statement read (PostgreSQL: three reads)
  "src/services/discovery/store.ts: raw 1",
];

describe("one schema, two dialects (issue 27)", () => {
  const outsideDb = FILES.map((f) => relative(ROOT, f)).filter((f) => !f.startsWith("src/db/"));
  const text = (f: string) => stripComments(readFileSync(join(ROOT, f), "utf8"));
  /** bun-sqlite's synchronous terminals: a builder's `.get()`/`.all()`/`.run()`, a handle's `q.all(sql…)`. */
  const SYNC = [/\.(get|all|run)\(\)/g, /\b(q|tx|db|read|writer)\s*\.\s*(get|all|run|values)\s*(<[^()]*>)?\(/g];

  test("the detector sees the synchronous spellings and lets the awaited ones through", () => {
    const sync = ["q.select().from(t).get()", "tx.insert(t).values(r).run()", "q.all<{ n: number }>(sql`SELECT 1`)", "tx.run(sql`DELETE FROM t`)"];
    for (const s of sync) expect(SYNC.some((re) => new RegExp(re.source).test(s))).toBe(true);
    const awaited = [
      "one(await q.select().from(t).limit(1))",
      "await tx.insert(t).values(r)",
      "await x(q).rows(sql`SELECT 1`)",
      "map.get(key)",
      "[...m.values()]",
    ];
    for (const s of awaited) expect(SYNC.some((re) => new RegExp(re.source).test(s))).toBe(false);
  });

  test("outside src/db no drizzle statement runs synchronously (awaited builders, x(q) for raw SQL)", () => {
    const bad: string[] = [];
    for (const f of outsideDb) {
      const t = text(f);
      for (const re of SYNC) for (const m of t.matchAll(re)) bad.push(`${f}: ${m[0]}`);
    }
    expect(bad).toEqual([]);
  });

  test("what still runs synchronously is the prepared statements of the KNOWN list", () => {
    const found: string[] = [];
    for (const f of outsideDb) {
      const t = text(f);
      for (const kind of ["raw", "prepared"]) {
        const n = [...t.matchAll(new RegExp(`\\b${kind}\\(\\s*(q|tx)\\s*,`, "g"))].length;
        if (n) found.push(`${f}: ${kind} ${n}`);
      }
    }
    expect(sorted(found)).toEqual(sorted(KNOWN_SYNC_STATEMENTS));
  });

  test("services import no dialect's core (sqlite-core, pg-core, bun:sqlite) and schema tables only as types", async () => {
    const { is } = await import("drizzle-orm");
    const { Table } = await import("drizzle-orm");
    const schema = (await import("../../src/db/schema/index.ts")) as Record<string, unknown>;
    const cores = ALL.filter(
      (i) =>
        inLayer("services")(i) &&
        (i.spec === "drizzle-orm/sqlite-core" || i.spec === "drizzle-orm/pg-core" || i.spec === "drizzle-orm/bun-sqlite" || i.spec === "bun:sqlite"),
    );
    // A value import of a table from src/db/schema: store code takes its tables from tables(q).
    const tableImports: string[] = [];
    for (const f of outsideDb.filter((f) => f.startsWith("src/services/"))) {
      const src = readFileSync(join(ROOT, f), "utf8");
      for (const m of src.matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+["']([^"']*db\/schema[^"']*)["']/gm)) {
        if (m[1]) continue;
        for (const spec of m[2]!.split(",").map((s) => s.trim())) {
          if (!spec || spec.startsWith("type ")) continue;
          const name = spec.split(/\s+as\s+/)[0]!;
          if (is(schema[name], Table)) tableImports.push(`${f}: ${name}`);
        }
      }
    }
    expect({ cores: show(cores), tableImports }).toEqual({ cores: [], tableImports: [] });
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
    const calls = /\b(authorize|decide|requireRepo|requireRepoFor|openRepoTarget|buildFacts|loadPersonInOrg)\s*\(/;
    const offenders = transportFiles.filter((f) => calls.test(stripComments(readFileSync(f, "utf8")))).map((f) => relative(ROOT, f));
    expect({ imports: show(bad), calls: offenders }).toEqual({ imports: [], calls: [] });
  });

  /** Signs of pkt-line framing done by hand: hex lengths, the flush packet, ERR and service lines. */
  const FRAMING = [
    /\.toString\(16\)\s*\.padStart\(4\b/,
    /\.padStart\(4,\s*["'`]0["'`]\)/,
    /["'`]000[0-2]["'`]/,
    /["'`]# service=/,
    /["'`]ERR /,
    /\.length \+ 4\)/,
  ];

  test("the framing detector recognises a hand-made pkt-line", () => {
    const sample =
      'const pkt = (s) => Buffer.concat([Buffer.from((b.length + 4).toString(16).padStart(4, "0")), b]); parts.push(pkt(`# service=${x}`), Buffer.from("0000"), pkt(`ERR ${m}`));';
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
    const samples = [
      'Bun.spawn(["git", "clone"])',
      'Bun.spawnSync(["git","init"])',
      'execFile("git", ["log"])',
      "await $`git rev-parse HEAD`",
      'spawn("git", args)',
      'Bun.spawn({ cmd: ["git", "x"] })',
    ];
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
