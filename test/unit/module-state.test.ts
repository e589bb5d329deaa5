// Module state (issue 26 plan §3.3): runtime state lives on the context (`src/runtime.ts`
// builds it), never in a module. A module-level `let`, a Map or Set made at import, an unfrozen
// table or a registration into a process-wide registry is state every context of the process
// shares: two contexts in one process (tests, the CLI beside a server) see each other's, and
// nothing stops or flushes it with its context.
//
// The scan reads every top-level statement of src/**/*.ts (column 0; the formatter keeps them
// there). Allowed: function/class/type/interface/enum; a `const` bound to a primitive, regex,
// template, arrow function or a call; tables that cannot change (`as const`, `Object.freeze(…)`,
// or typed ReadonlySet/ReadonlyMap/readonly T[]); `new TextEncoder|TextDecoder|URL`. Flagged:
// any `let`/`var`; `const X = new …(…)` not typed read-only; unfrozen `[…]`/`{…}` literals;
// metrics registered at import (`metrics.counter|gauge|histogram(…)`, plan §3.1 row 20);
// non-`readonly` `static` fields. Exceptions: ALLOWED (with the reason), the
// `// module-state: scratch` marker (covering the declarations after it up to a blank line; only
// under src/git/: synchronous scratch buffers of the engine), and KNOWN, the ratchet of what issue 26 still moves onto the context.
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

/** The text from `start` to the end of its statement: brackets balanced, then a `;` or newline at depth 0. */
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
    if (c === '"' || c === "'" || c === "`") quote = c;
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
      else if (type && /\b(Readonly(Set|Map|Array)<|readonly\s)/.test(type)) why = null;
      else if (/^new\s+(TextEncoder|TextDecoder|URL)\b/.test(rhs)) why = null;
      else if (/^new\s/.test(rhs)) why = `new ${/^new\s+([\w$.]+)/.exec(rhs)?.[1] ?? "?"}`;
      else if (/^Object\.freeze\(/.test(rhs) || /\bas const$/.test(rhs)) why = null;
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

/** Ratchet: declarations still to move onto the context (issue 26 §3); only shrinks. */
const KNOWN: readonly string[] = [
  // A2: runtime state onto the context (plan §3.1)
  "src/http/web/repos/highlight.ts:cache",
  "src/http/web/repos/highlight.ts:inFlight",
  "src/http/web/repos/highlight.ts:nextId",
  "src/http/web/repos/highlight.ts:running",
  "src/http/web/repos/highlight.ts:worker",

  // A constant byte table (a read-only view would do)
  "src/git/create-pack-file.ts:KEEPALIVE_PKT",
  "src/services/git/upload.ts:KEEPALIVE_PKT",

  // Process-wide spool accounting of large fetches -> ctx (wt/upload landed after A2 began)
  "src/services/git/upload.ts:spooledUnsent",

  // tables that never change: `as const`, Object.freeze or a read-only type (plan §3.1, ReadonlySet)
  "src/git/buffer-pool.ts:PROCESS",
  "src/git/capabilities.ts:RECEIVE_PACK_CAPABILITIES",
  "src/git/capabilities.ts:UPLOAD_PACK_CAPABILITIES",
  "src/git/capabilities.ts:V2_CAPABILITIES",
  "src/git/fsck.ts:FSCK_RULES",
  "src/git/object-list.ts:NO_PENDING",
  "src/git/object.ts:OBJECT_TYPES",
  "src/git/pack-entry.ts:TYPE_CODES",
  "src/http/git.ts:NO_CACHE",
  "src/http/git.ts:STATUS",
  "src/http/openapi.ts:INFO",
  "src/http/openapi.ts:serverError",
  "src/http/responses.ts:JSON_HEADERS",
  "src/http/routes/ops/ops.ts:NO_STORE",
  "src/http/web/account/activity-page.ts:UNITS",
  "src/http/web/account/activity-page.ts:VIA",
  "src/http/web/account/credentials-page.ts:SCOPES",
  "src/http/web/account/graph.ts:MONTHS",
  "src/http/web/account/home.ts:TABS",
  "src/http/web/account/links-routes.ts:LINK_HEADERS",
  "src/http/web/account/settings-page.ts:SECTIONS",
  "src/http/web/account/settings-routes.ts:NOTICES",
  "src/http/web/account/settings-routes.ts:TITLES",
  "src/http/web/admin/frame.ts:DONE",
  "src/http/web/admin/frame.ts:ORG_TABS",
  "src/http/web/changes/list-page.ts:LABELS",
  "src/http/web/ci/live-log.ts:LIMITS",
  "src/http/web/kit/assets.ts:SCRIPT",
  "src/http/web/kit/assets.ts:STYLE",
  "src/http/web/kit/html.ts:ESCAPES",
  "src/http/web/kit/icon.ts:ICON",
  "src/http/web/repos/highlight-engine.ts:BY_EXT",
  "src/http/web/repos/highlight-engine.ts:BY_NAME",
  "src/http/web/repos/highlight-engine.ts:CLASS",
  "src/http/web/repos/highlight-engine.ts:LANGUAGES",
  "src/http/web/repos/highlight.ts:queue",
  "src/services/access/access.ts:RANK",
  "src/services/access/access.ts:SCOPE_ROLE",
  "src/services/access/facts-store.ts:NO_PERSON",
  "src/services/access/principal.ts:ANONYMOUS",
  "src/services/billing/events.ts:AUDIT_ACTION",
  "src/services/billing/stripe.ts:PLAN_OF_STATUS",
  "src/services/changes/schemas.ts:CHANGE_EXAMPLE",
  "src/services/changes/schemas.ts:DIFF_EXAMPLE",
  "src/services/ci/workflow.ts:WORKFLOW_LIMITS",
  "src/services/ops/object-kinds.ts:CI_LOGS",
  "src/services/ops/object-kinds.ts:PACKS",
  "src/services/people/links.ts:LINK_TTL_MS",
  "src/services/people/links.ts:PREFIX",
  "src/services/people/links.ts:SHAPE",
  "src/services/people/recovery.ts:RESET_ACCEPTED",
  "src/services/people/schemas.ts:sshKeyExample",
  "src/services/people/schemas.ts:tokenExample",
  "src/services/people/schemas.ts:tokenFields",
  "src/services/people/signup.ts:SIGNUP_ACCEPTED",
  "src/services/people/ssh-keys.ts:ECDSA_CURVES",
  "src/services/repos/blob-read.ts:BLOB_READ_LIMITS",
  "src/services/repos/content.ts:CONTENT_TYPES",
  "src/services/repos/schemas.ts:REPO_EXAMPLE",
  "src/services/repos/schemas.ts:SUMMARY_EXAMPLE",
  "src/services/schemas.ts:ERROR_MEANING",
  "src/services/web/views.ts:README_NAMES",
  "src/ssh/host-keys.ts:KINDS",
  "src/ssh/server.ts:ALGORITHMS",
  "src/ssh/server.ts:WANTED",
  "src/storage/read-ahead.ts:READ_AHEAD_DEFAULTS",
  "src/storage/retry.ts:DEFAULT_RETRY",
];

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
      "const TABLE = [1, 2, 3];",
      "const FROZEN = Object.freeze({ a: 1 });",
      'const NAMES = ["a", "b"] as const;',
      "const LIMIT = 10;",
      "const RE = /x/g;",
      "const enc = new TextEncoder();",
      "const shape = Type.Object({ a: Type.String() });",
      'const waiting = metrics.gauge("x", "y");',
      "const fn = (a: number) => a + 1;",
      "const MULTI = {",
      "  a: 1,",
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

  test("module-level state is only what is allowed, or known and being moved onto the context", () => {
    const left = FINDINGS.map(key).filter((k) => !(k in ALLOWED));
    expect([...new Set(left)].sort()).toEqual([...KNOWN].sort());
  });
});
