// The branch glob matcher shared by workflow filters and protections (issue 25 row 3): what the
// wildcards mean, agreement with a backtracking reference on small cases, and linear time on the
// patterns that made the RegExp version backtrack for seconds.
import { describe, expect, test } from "bun:test";
import { compileGlob, globMatch } from "../../../src/util/glob.ts";
import { Rand } from "../../fuzz/lib.ts";
import { referenceGlob } from "../../fuzz/text-targets.ts";

describe("globMatch", () => {
  test.each([
    ["main", "main", true],
    ["main", "mainx", false],
    ["release/*", "release/1.0", true],
    ["release/*", "release/a/b", false],
    ["release/**", "release/a/b", true],
    ["release/**", "release/", true],
    ["**", "", true],
    ["*", "", true],
    ["*", "a/b", false],
    ["feature-*-x", "feature-abc-x", true],
    ["v?.x", "v1.x", true],
    ["v?.x", "v/.x", false],
    ["a.b", "axb", false],
    ["a**b", "a/x/b", true],
    ["a***b", "a/x/b", true],
    ["*/*", "a/b", true],
    ["*/*", "a/b/c", false],
    ["**/end", "a/b/end", true],
    ["(x)+[y]", "(x)+[y]", true],
  ] as const)("%p against %p: %p", (pattern, value, want) => {
    expect(globMatch(pattern, value)).toBe(want);
  });

  test("agrees with the backtracking reference on 20,000 random small cases", () => {
    const r = new Rand(25);
    const alphabet = ["a", "b", "/", "*", "**", "?", ".", "-"];
    const letters = ["a", "b", "/", ".", "-"];
    for (let n = 0; n < 20_000; n++) {
      let pattern = "";
      for (let i = r.int(8); i > 0; i--) pattern += r.pick(alphabet);
      let value = "";
      for (let i = r.int(10); i > 0; i--) value += r.pick(letters);
      expect({ pattern, value, got: globMatch(pattern, value) }).toEqual({ pattern, value, got: referenceGlob(pattern, value) });
    }
  });

  test("the patterns that backtracked for seconds answer at once (the RegExp version runs past this test's timeout)", () => {
    const name = "a".repeat(60);
    for (const pattern of [`${"*a".repeat(15)}*b`, `${"**a".repeat(15)}**b`, `${"?*".repeat(30)}b`]) {
      const glob = compileGlob(pattern);
      expect(glob.match(name)).toBe(false);
      expect(glob.match(`${name}b`)).toBe(true);
    }
  }, 5_000);
});
