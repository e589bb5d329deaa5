import { expect, test } from "bun:test";
import { checkRefFormat, isValidPushRefName } from "../../../src/git/ref-name.ts";

const NAMES = [
  "refs/heads/main",
  "heads/main",
  "main",
  "refs/heads/feature/x",
  "refs/tags/v1.0",
  "refs/heads/.hidden",
  "refs/heads/a..b",
  "refs/heads/a.",
  "refs/heads/a.lock",
  "refs/heads/a.lock/b",
  "refs/heads/a/.b",
  "refs/heads/a//b",
  "/refs/heads/a",
  "refs/heads/a/",
  "refs/heads/a b",
  "refs/heads/a\tb",
  "refs/heads/a~1",
  "refs/heads/a^",
  "refs/heads/a:b",
  "refs/heads/a?",
  "refs/heads/a*",
  "refs/heads/*",
  "refs/heads/a*b*",
  "refs/heads/a[b",
  "refs/heads/a\\b",
  "refs/heads/a@{1}",
  "refs/heads/a@b",
  "refs/heads/@",
  "@",
  "refs/heads/@{",
  "refs/heads/{a}",
  "refs/heads/ünïcödé",
  "refs/heads/a\x7f",
  "refs/heads/a\x01",
  "refs/heads/lock",
  "refs/heads/.lock",
  "refs/heads/a.lockx",
  "refs/heads/-dash",
  "refs/heads/a.b.c",
  "refs/..",
  "refs/.",
  ".",
  "..",
  "a/b/c/d/e/f",
  "HEAD",
  "refs/heads/HEAD",
  "refs/heads/a%b",
  'refs/heads/a"b',
  "refs/heads/a'b",
  "refs/heads/a<b>",
  "refs/heads/a|b",
  "refs/heads/a!b",
  "refs/heads/a,b",
  "refs/heads/a;b",
  "refs/heads/a=b",
  "refs/heads/a#b",
  "refs/heads/a$b",
  "refs/heads/a&b",
  "refs/heads/a(b)",
  "refs/heads/a+b",
  "refs/heads/a}b",
  "refs/heads/a@",
  "refs/heads/@@",
  "refs/heads/.",
  "refs/heads/..a",
  "refs/heads/a...b",
];

function gitSays(name: string, flags: string[]): boolean {
  const r = Bun.spawnSync(["git", "check-ref-format", ...flags, name], { stdout: "ignore", stderr: "ignore" });
  return r.exitCode === 0;
}

test("checkRefFormat agrees with git check-ref-format", () => {
  const variants: [string[], { allowOnelevel?: boolean; refspecPattern?: boolean }][] = [
    [[], {}],
    [["--allow-onelevel"], { allowOnelevel: true }],
    [["--refspec-pattern"], { refspecPattern: true }],
  ];
  const mismatches: string[] = [];
  for (const name of NAMES) {
    for (const [flags, opts] of variants) {
      if (checkRefFormat(name, opts) !== gitSays(name, flags)) mismatches.push(`${flags.join(" ")} ${JSON.stringify(name)}`);
    }
  }
  expect(mismatches).toEqual([]);
});

test("pushed ref names must be under refs/ and well formed", () => {
  expect(["refs/heads/main", "refs/foo", "refs/heads/a..b", "heads/main", "refs/x/y"].map(isValidPushRefName)).toEqual([true, false, false, false, true]);
});
