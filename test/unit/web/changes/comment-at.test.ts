// `?comment=path:side:line[-start]` of the review page's files tab: read from the right (a path may
// hold `:`), bounded, and written back by commentAtParam.
import { expect, test } from "bun:test";
import { commentAtParam, parseCommentAt } from "../../../../src/services/web/changes.ts";

test("parses paths with colons, both sides, single lines and ranges", () => {
  expect(parseCommentAt("src/a.ts:new:12")).toEqual({ path: "src/a.ts", side: "new", line: 12, startLine: null });
  expect(parseCommentAt("a:b:c.txt:old:3-7")).toEqual({ path: "a:b:c.txt", side: "old", line: 7, startLine: 3 });
  // A range that is not one (start ≥ end) is the single last line.
  expect(parseCommentAt("x:new:7-7")).toEqual({ path: "x", side: "new", line: 7, startLine: null });
  expect(parseCommentAt("x:new:9-7")).toEqual({ path: "x", side: "new", line: 7, startLine: null });
});

test("anything else is no line", () => {
  for (const raw of [
    undefined,
    "",
    "x",
    "x:new",
    "x:mid:3",
    ":new:3",
    "x:new:0",
    "x:new:-3",
    "x:new:03",
    "x:new:1e3",
    "x:new:1234567890",
    `${"p".repeat(5000)}:new:1`,
  ])
    expect({ raw, at: parseCommentAt(raw) }).toEqual({ raw, at: null });
});

test("commentAtParam is its inverse", () => {
  for (const at of [
    { path: "src/a.ts", side: "new" as const, line: 12, startLine: null },
    { path: "a:b.txt", side: "old" as const, line: 9, startLine: 2 },
  ])
    expect(parseCommentAt(commentAtParam(at))).toEqual(at);
});
