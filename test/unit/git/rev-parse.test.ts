// The revision forms the content routes accept (git/rev-parse.ts): ancestry suffixes parsed with
// bounds, abbreviated ids recognised; prefix lookup is exercised black-box in messages.test.ts.
import { describe, expect, test } from "bun:test";
import { MAX_REV_STEPS, isAbbreviatedOid, parseRevision } from "../../../src/git/rev-parse.ts";

describe("parseRevision", () => {
  const rows: [string, { base: string; steps: number[] } | null][] = [
    ["main", { base: "main", steps: [] }],
    ["main~", { base: "main", steps: [1] }],
    ["main~3", { base: "main", steps: [1, 1, 1] }],
    ["main^", { base: "main", steps: [1] }],
    ["main^2", { base: "main", steps: [2] }],
    ["main^0", { base: "main", steps: [0] }],
    ["v1.0^2~2^", { base: "v1.0", steps: [2, 1, 1, 1] }],
    ["refs/heads/a/b~1", { base: "refs/heads/a/b", steps: [1] }],
    ["~1", null],
    ["^", null],
    ["main~x", null],
    ["main~1x", null],
    ["main^65", null],
    [`main~${MAX_REV_STEPS + 1}`, null],
    ["main~99999999999999999999", null],
  ];
  test.each(rows)("%s", (rev, expected) => {
    const r = parseRevision(rev);
    expect(r ? { base: r.base, steps: r.steps.map((s) => s.parent) } : null).toEqual(expected);
  });
});

describe("isAbbreviatedOid", () => {
  test("4 to 40 hex digits, any case", () => {
    expect(isAbbreviatedOid("abcd")).toBe(true);
    expect(isAbbreviatedOid("ABCDEF012")).toBe(true);
    expect(isAbbreviatedOid("a".repeat(40))).toBe(true);
    expect(isAbbreviatedOid("abc")).toBe(false);
    expect(isAbbreviatedOid("a".repeat(41))).toBe(false);
    expect(isAbbreviatedOid("main")).toBe(false);
  });
});
