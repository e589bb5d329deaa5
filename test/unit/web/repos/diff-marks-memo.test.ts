// A warm diff page reuses its parsed highlighting (bench §53): the marks of a diff are remembered
// by every file's drawing, path and patch, so the second view neither rebuilds the parts' JSON nor
// parses the thread's answer again — and any other patch is a miss.
import { afterAll, expect, test } from "bun:test";
import { diffView } from "../../../../src/http/web/repos/diff-view.ts";
import { HighlightThread } from "../../../../src/http/web/repos/highlight.ts";
import type { FileDiffs } from "../../../../src/services/git/diff.ts";
import type { DiffFile } from "../../../../src/services/git/schemas.ts";

const thread = new HighlightThread();
afterAll(() => thread.close());

function diffOf(patch: string): FileDiffs {
  const f: DiffFile = {
    path: "src/a.ts",
    status: "modified",
    old_mode: "100644",
    new_mode: "100644",
    old_oid: "a".repeat(40),
    new_oid: "b".repeat(40),
    binary: false,
    additions: 1,
    deletions: 1,
    patch,
    patch_truncated: false,
  };
  return { files: [f], additions: 1, deletions: 1, truncated: false, truncation: null };
}

test("the second view of the same diff is a memo hit; another patch is not", async () => {
  let lookups = 0;
  // The thread itself, counting its cache lookups (each a parts' JSON built and hashed).
  const counted = Object.assign(Object.create(thread), {
    cached(key: string) {
      lookups++;
      return thread.cached(key);
    },
  }) as HighlightThread;
  const d = diffOf("@@ -1,2 +1,2 @@\n const a = 1;\n-let b = 2;\n+let b = 3;\n");
  const first = (await diffView(d, () => null, { highlighter: counted })).value;
  expect(first).toContain('<span class="k">let</span>');
  const after1 = lookups;
  expect(after1).toBeGreaterThan(0);
  const second = (await diffView(d, () => null, { highlighter: counted })).value;
  expect(second).toBe(first);
  expect(lookups).toBe(after1);
  const other = (await diffView(diffOf("@@ -1,2 +1,2 @@\n const a = 1;\n-let c = 2;\n+let c = 3;\n"), () => null, { highlighter: counted })).value;
  expect(other).toContain("c = <span");
  expect(lookups).toBeGreaterThan(after1);
});
