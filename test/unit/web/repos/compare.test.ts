// The compare pages' pure parts: splitting `base...head` (and the two-dot form), and what the
// "Open a change" form is prefilled with.
import { expect, test } from "bun:test";
import { splitSpec } from "../../../../src/http/web/repos/compare-routes.ts";
import type { Comparison } from "../../../../src/services/changes/schemas.ts";
import { draftOf } from "../../../../src/services/web/compare.ts";

test("a spec splits at its first run of dots; two dots are told apart; none is null", () => {
  expect(splitSpec("main...feature/x")).toEqual({ base: "main", head: "feature/x", dots: 3 });
  expect(splitSpec("v1.0...abc1234~2")).toEqual({ base: "v1.0", head: "abc1234~2", dots: 3 });
  expect(splitSpec("main..topic")).toEqual({ base: "main", head: "topic", dots: 2 });
  expect(splitSpec("...main")).toEqual({ base: "", head: "main", dots: 3 });
  expect(splitSpec("release/1.0")).toBeNull();
});

const commit = (message: string) => ({
  sha: "a".repeat(40),
  message,
  author: { name: "Ada", email: "ada@example.com", date: 0, timezone: "+0000" },
  committer: { name: "Ada", email: "ada@example.com", date: 0, timezone: "+0000" },
  parents: [],
});
const comparison = (messages: string[], ahead = messages.length): Comparison => ({
  base: "b".repeat(40),
  head: "a".repeat(40),
  merge_base: null,
  files: [],
  additions: 0,
  deletions: 0,
  truncated: false,
  truncation: null,
  ahead,
  behind: 0,
  commits: messages.map(commit),
});

test("one commit: its subject and body; several: the branch's name and their subjects, the count of those left out", () => {
  expect(draftOf(comparison(["Fix the upload\n\nIt retried forever.\n"]), "fix/upload", "main")).toEqual({
    branch: "fix/upload",
    target: "main",
    title: "Fix the upload",
    description: "It retried forever.",
  });
  expect(draftOf(comparison(["One\n", "Two\n\nbody\n"]), "team/fix-upload_retries", "main")).toEqual({
    branch: "team/fix-upload_retries",
    target: "main",
    title: "Fix upload retries",
    description: "- One\n- Two",
  });
  const many = draftOf(comparison(["x\n", "y\n"], 300), "topic", "main");
  expect(many.description).toBe("- x\n- y\n- … and 298 earlier commits");
  // A subject longer than a change title may be is cut to the limit.
  expect(draftOf(comparison([`${"s".repeat(300)}\n`]), "topic", "main").title).toHaveLength(200);
});
