// Module state (issue 26 plan §3.3): runtime state lives on the context (`src/runtime.ts`
// builds it), never in a module. A module-level `let`, a Map or Set made at import, an unfrozen
// table or a registration into a process-wide registry is state every context of the process
// shares: two contexts in one process (tests, the CLI beside a server) see each other's, and
// nothing stops or flushes it with its context.
//
// The scan reads every top-level statement of src/**/*.ts (column 0; the formatter keeps them
// there). Allowed: function/class/type/interface/enum; a `const` bound to a primitive, regex,
// template, arrow function or a call; tables that cannot change (`as const`, `Object.freeze(…)`,
// or typed ReadonlySet/ReadonlyMap/Readonly<…>/readonly T[]); `new TextEncoder|TextDecoder|URL`. Flagged:
// any `let`/`var`; `const X = new …(…)` not typed read-only; unfrozen `[…]`/`{…}` literals;
// metrics registered at import (`metrics.counter|gauge|histogram(…)`, plan §3.1 row 20);
// non-`readonly` `static` fields. Exceptions: ALLOWED (with the reason), the
// `// module-state: scratch` marker (covering the declarations after it up to a blank line; only
// under src/git/: synchronous scratch buffers of the engine). Any other finding fails.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const SRC = join(ROOT, "src");

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return walk(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

/** The text from `start` to the end of its statement: brackets balanced (outside strings and comments), then a `;` or newline at depth 0. */
function statementFrom(text: string, start: number): string {
  let depth = 0;
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
      continue;
    }
    // A comment's apostrophes are not quotes: skip `//` to the line's end and `/* … */` whole.
    if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      i = (end < 0 ? text.length : end) - 1;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    else if (depth === 0 && (c === ";" || (c === "\n" && !/[=,(\[{:?|&+\-]\s*$/.test(text.slice(start, i)) && !/^\s*[.?:|&)]/.test(text.slice(i + 1, i + 40)))))
      return text.slice(start, i);
  }
  return text.slice(start);
}

export interface Finding {
  file: string;
  name: string;
  why: string;
}

/** The module-level state declarations of one file. */
export function scan(file: string, text: string): Finding[] {
  const out: Finding[] = [];
  const lines = text.split("\n");
  let offset = 0;
  // The marker covers the declarations after it up to the next blank line.
  let marked = false;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    const at = offset;
    offset += line.length + 1;
    if (/^\/\/ module-state: scratch\b/.test(line)) marked = true;
    else if (line.trim() === "") marked = false;
    const scratch = marked && file.startsWith("src/git/");
    const decl = /^(?:export\s+)?(let|var|const)\s+([A-Za-z_$][\w$]*)\s*(:[^=]+)?=\s*/.exec(line);
    if (decl) {
      const [whole, keyword = "", name = "", type] = decl;
      const rhs = statementFrom(text, at + whole.length).trim();
      let why: string | null = null;
      if (keyword !== "const") why = keyword;
      else if (type && /\b(Readonly(Set|Map|Array)?<|readonly\s)/.test(type)) why = null;
      else if (/^new\s+(TextEncoder|TextDecoder|URL)\b/.test(rhs)) why = null;
      else if (/^new\s/.test(rhs)) why = `new ${/^new\s+([\w$.]+)/.exec(rhs)?.[1] ?? "?"}`;
      else if (/^Object\.freeze\(/.test(rhs) || /\bas const(\s+satisfies\s[^;]*)?$/.test(rhs)) why = null;
      else if (/^[[{]/.test(rhs)) why = rhs.startsWith("[") ? "array literal" : "object literal";
      else if (/^metrics\.(counter|gauge|histogram)\(/.test(rhs)) why = "metric registered at import";
      if (why && !scratch) out.push({ file, name, why });
      continue;
    }
    const stat = /^\s+(?:(?:private|public|protected)\s+)?static\s+(?!readonly\b)(?!async\b)([A-Za-z_$][\w$]*)\s*[=:;]/.exec(line);
    if (stat && !scratch) out.push({ file, name: stat[1]!, why: "static field" });
  }
  return out;
}

/** Kept at module level on purpose, each with its reason (plan §3.1). */
const ALLOWED: Record<string, string> = {
  "src/util/clock.ts:clock": "a test seam (setClock), not state that differs between contexts: 165 now() calls, stores call it with a tx and no ctx",
  "src/log.ts:used": "fd 2 is per process: the stderr buffer is the process's",
  "src/log.ts:lines": "fd 2 is per process: the stderr buffer is the process's",
  "src/log.ts:timer": "fd 2 is per process: the stderr buffer is the process's",
  "src/thread-main.ts:credit": "the worker thread's own entry: one per thread",
  "src/thread-main.ts:waiting": "the worker thread's own entry: one per thread",
  "src/storage/fs-store.ts:handles": "file descriptors are a process resource (see its comment)",
  "src/git/buffer-pool.ts:holders": "process memory accounting",
  "src/db/statements.ts:byHandle": "keyed by the connection handle: prepared statements live and die with their connection",
  "src/db/dialect.ts:byHandle": "keyed by the handle or transaction: the dialect operations bound to it live and die with it",
  // Request-keyed side tables: they live and die with the Request (plan §3.1 row 31).
  "src/http/app.ts:requestIds": "a side table keyed by the Request: it lives and dies with it",
  "src/http/app.ts:routeTemplates": "a side table keyed by the Request: it lives and dies with it",
  "src/http/principal.ts:cache": "a side table keyed by the Request: it lives and dies with it",
  "src/http/source.ts:sources": "a side table keyed by the Request: it lives and dies with it",
  "src/http/web/kit/markdown.ts:md": "a configured renderer: markdown-it keeps no state between renders",
  // Side tables keyed by one request's objects: they live and die with them.
  "src/git/repo-snapshot.ts:refsByName": "a side table keyed by the snapshot: it lives and dies with it",
  "src/git/upload-request.ts:deepenNotSeen": "a side table keyed by the upload request: it lives and dies with it",
  "src/services/git/upload-thread.ts:threadStore": "the worker thread's own git store: one per thread",
};

const FILES = walk(SRC).map((f) => relative(ROOT, f));
const FINDINGS = FILES.flatMap((f) => scan(f, readFileSync(join(ROOT, f), "utf8")));
const key = (f: Finding) => `${f.file}:${f.name}`;

describe("module state (plan §3.3)", () => {
  test("the scanner sees let/var, new Map at import, unfrozen tables, metrics at import and static fields; it lets constants through", () => {
    const src = [
      'import { x } from "./x.ts";',
      "let counter = 0;",
      "export const cache = new Map<string, number>();",
      'const KINDS: ReadonlySet<string> = new Set(["a"]);',
      "const PKT: Readonly<Uint8Array> = new Uint8Array([1]);",
      "const BY: Readonly<Record<string, number>> = { a: 1 };",
      "const TABLE = [1, 2, 3];",
      "const FROZEN = Object.freeze({ a: 1 });",
      'const NAMES = ["a", "b"] as const;',
      'const BY_ID = { a: { name: "A" } } as const satisfies Record<string, { name: string }>;',
      "const LIMIT = 10;",
      "const RE = /x/g;",
      "const enc = new TextEncoder();",
      "const shape = Type.Object({ a: Type.String() });",
      'const waiting = metrics.gauge("x", "y");',
      "const fn = (a: number) => a + 1;",
      "const MULTI = {",
      "  // the table's comment, with an apostrophe",
      "  a: 1, /* and 'another' */",
      "} as const;",
      "class A {",
      "  static count = 0;",
      "  static readonly LIMIT = 1;",
      "  static async make() {}",
      "}",
      "// module-state: scratch",
      "const buf = new Uint8Array(64);",
      "let at = 0;",
      "",
      "let after = 0;",
    ].join("\n");
    expect(scan("src/services/x.ts", src).map((f) => `${f.name}: ${f.why}`)).toEqual([
      "counter: let",
      "cache: new Map",
      "TABLE: array literal",
      "waiting: metric registered at import",
      "count: static field",
      "buf: new Uint8Array",
      "at: let",
      "after: let",
    ]);
    // Under src/git/ the marker covers `buf` and `at` (up to the blank line), not `after`.
    expect(scan("src/git/x.ts", src).map((f) => f.name)).toEqual(["counter", "cache", "TABLE", "waiting", "count", "after"]);
  });

  test("every allowed exception still exists (a stale reason is removed with its state)", () => {
    const found = new Set(FINDINGS.map(key));
    expect(Object.keys(ALLOWED).filter((k) => !found.has(k))).toEqual([]);
  });

  test("module-level state is only what is allowed (each with its reason)", () => {
    const left = FINDINGS.map(key).filter((k) => !(k in ALLOWED));
    expect([...new Set(left)].sort()).toEqual([]);
  });
});
