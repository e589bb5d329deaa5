// AppError's stable code (issue 26): the status derives from the code in one place, and nothing
// outside the transports' renderers switches on an error's numeric status.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import {
  AppError,
  codeOfStatus,
  Conflict,
  Forbidden,
  Invalid,
  NotFound,
  PaymentRequired,
  RateLimited,
  STATUS_OF,
  TooLarge,
  Unauthorized,
  Unprocessable,
  UnsupportedMediaType,
  type ErrorCode,
} from "../../src/errors.ts";

const ROOT = join(import.meta.dir, "..", "..");

describe("AppError codes", () => {
  test("each helper sets its code and the status derived from it", () => {
    const made: [AppError, ErrorCode, number][] = [
      [Invalid("x"), "invalid", 400],
      [Unauthorized(), "unauthenticated", 401],
      [PaymentRequired("x"), "payment_required", 402],
      [Forbidden("x"), "forbidden", 403],
      [NotFound(), "not_found", 404],
      [Conflict("x", { a: 1 }), "conflict", 409],
      [TooLarge(), "too_large", 413],
      [UnsupportedMediaType("x"), "unsupported_media_type", 415],
      [Unprocessable("x"), "unprocessable", 422],
      [new RateLimited("x", 3), "rate_limited", 429],
    ];
    for (const [e, code, status] of made) expect({ code: e.code, status: e.status }).toEqual({ code, status });
    expect(Conflict("x", { a: 1 }).extra).toEqual({ a: 1 });
  });

  test("a code and its status name the same error, either way it is built", () => {
    for (const [code, status] of Object.entries(STATUS_OF) as [ErrorCode, number][]) {
      const byCode = new AppError(code, "m");
      const byStatus = new AppError(status as Parameters<typeof codeOfStatus>[0], "m");
      expect({ code: byStatus.code, status: byCode.status }).toEqual({ code, status });
    }
  });

  test("every code has its own status", () => {
    const statuses = Object.values(STATUS_OF);
    expect(new Set(statuses).size).toBe(statuses.length);
  });
});

/**
 * Why: a page, a throttle or the git service that compares `error.status === 404` decides by a
 * transport's number; they switch on `error.code`. Only the renderers that turn a code into a
 * status (http/errors.ts, http/git.ts) read the number, and they may pass it on, not compare it.
 */
describe("nothing switches on an AppError's numeric status", () => {
  const ALLOWED = new Set(["src/http/errors.ts", "src/http/git.ts"]);
  const COMPARE =
    /(?:\(([A-Za-z_$][\w$]*) as AppError[^)]*\)|\b([A-Za-z_$][\w$]*))\??\.status\s*(?:===|!==|==|!=|<=|>=|<|>)\s*\d|\d\s*(?:===|!==|==|!=|<=|>=|<|>)\s*([A-Za-z_$][\w$]*)\??\.status\b|\.includes\(\s*([A-Za-z_$][\w$]*)\??\.status\s*\)|\[\s*([A-Za-z_$][\w$]*)\??\.status\s*\]|switch\s*\(\s*([A-Za-z_$][\w$]*)\??\.status\s*\)/g;

  /** The names a file binds to an AppError: `catch (x)`, `x: AppError`, `x instanceof AppError`, `x as AppError`. */
  function errorNames(text: string): Set<string> {
    const names = new Set<string>();
    for (const re of [
      /catch\s*\(\s*([A-Za-z_$][\w$]*)/g,
      /([A-Za-z_$][\w$]*)\??\s*:\s*(?:[\w.]*\.)?(?:AppError|RateLimited)\b/g,
      /([A-Za-z_$][\w$]*)\s+instanceof\s+(?:AppError|RateLimited)\b/g,
      /([A-Za-z_$][\w$]*)\s+as\s+(?:AppError|RateLimited)\b/g,
    ]) {
      for (const m of text.matchAll(re)) names.add(m[1]!);
    }
    return names;
  }

  /** `file:line: text` for every comparison of an AppError's `.status` in `text`. */
  function offenders(file: string, text: string): string[] {
    if (!/\b(AppError|RateLimited)\b/.test(text)) return [];
    const names = errorNames(text);
    const out: string[] = [];
    const lines = text.split("\n");
    lines.forEach((line, n) => {
      for (const m of line.matchAll(COMPARE)) {
        const name = m.slice(1).find((g) => g !== undefined);
        if (m[1] !== undefined || (name && names.has(name))) out.push(`${file}:${n + 1}: ${line.trim()}`);
      }
    });
    return out;
  }

  function sources(dir: string): string[] {
    const out: string[] = [];
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) out.push(...sources(path));
      else if (name.endsWith(".ts")) out.push(path);
    }
    return out;
  }

  test("the detector finds the usual spellings and leaves fetch responses alone", () => {
    const sample = [
      "try { x() } catch (error) { if (error instanceof AppError && error.status === 404) return; }",
      "const retry = (e: AppError) => e.status === 400 || e.status !== 409;",
      "if (![400, 402].includes(error.status)) throw error;",
      "const r = TABLE[error.status];",
      "if ((error as AppError | null)?.status === 401) fail();",
      "if (err.status >= 500) throw err; } catch (err) {",
    ].join("\n");
    expect(offenders("sample.ts", `import { AppError } from "x";\n${sample}`).length).toBe(7);
    const fetches =
      'import { AppError } from "x";\nconst res = await fetch(u);\nif (res.status === 404) throw new AppError("not_found", "gone");\nif (response.status >= 400) log();';
    expect(offenders("fetch.ts", fetches)).toEqual([]);
  });

  test("src/ and cli/ compare codes, not statuses (outside the renderers)", () => {
    const bad: string[] = [];
    for (const top of ["src", "cli"]) {
      for (const path of sources(join(ROOT, top))) {
        const file = relative(ROOT, path);
        if (!ALLOWED.has(file)) bad.push(...offenders(file, readFileSync(path, "utf8")));
      }
    }
    expect(bad).toEqual([]);
  });
});
