// A warm diff page reuses each file's drawn rows (bench §53): remembered beside the diff's marks,
// by the marks' key (every file's drawing, path and patch), the file's place and what the review
// hook's cells draw. Any other input must give the bytes a fresh drawing gives, never a stale hit;
// rows the hook adds its own to (threads, a form), or drawn plain for now, are not remembered.
import { afterAll, describe, expect, test } from "bun:test";
import { diffFileView, diffView, type DiffLines, type DiffOptions } from "../../../../src/http/web/repos/diff-view.ts";
import { HighlightThread } from "../../../../src/http/web/repos/highlight.ts";
import { trusted } from "../../../../src/http/web/kit/html.ts";
import type { Highlighter } from "../../../../src/services/context.ts";
import type { FileDiffs } from "../../../../src/services/git/diff.ts";
import type { DiffFile } from "../../../../src/services/git/schemas.ts";

const thread = new HighlightThread();
afterAll(() => thread.close());

/** The thread, counting the rows its memo answered. */
function counting(): { h: Highlighter; hits: () => number } {
  let hits = 0;
  const h = Object.assign(Object.create(thread), {
    recall(key: string) {
      const v = thread.recall(key);
      if (key.startsWith("rows:") && typeof v === "string") hits++;
      return v;
    },
  }) as Highlighter;
  return { h, hits: () => hits };
}

/** The same thread without a memo: every view draws every row (the reference bytes). */
const fresh = Object.assign(Object.create(thread), { recall: undefined, remember: undefined }) as Highlighter;

function file(path: string, patch: string): DiffFile {
  return {
    path,
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
}
const diffOf = (files: DiffFile[]): FileDiffs => ({ files, additions: files.length, deletions: files.length, truncated: false, truncation: null });

const A = "@@ -1,2 +1,2 @@\n const a = 1;\n-let b = 2;\n+let b = 3;\n";
const B = "@@ -10,2 +10,2 @@\n return a;\n-x = 1;\n+x = 2;\n";

/** A review hook like the files tab's: linked numbers named by `key`, rows after a line when `thread` names it. */
function review(prefix: string, o: { key?: boolean; thread?: number } = {}): DiffLines {
  return (_f, i) => ({
    cell: (side, n) => `<td class="${side === "old" ? "o" : "n"}" id="c-${i}-${side}-${n}"><a href="${prefix}${side}:${n}">${n}</a></td>`,
    after: o.thread === undefined ? null : (_a, b) => (b === o.thread ? `<tr class="thread-row"><td colspan="3">thread ${prefix}</td></tr>` : null),
    ...(o.key === false ? {} : { key: `${i}:${prefix}` }),
  });
}

/** A view drawn twice with the memo (the second must hit for every file) and the bytes a memo-less view draws. */
async function views(d: FileDiffs, o: DiffOptions = {}) {
  const { h, hits } = counting();
  const first = (await diffView(d, () => null, { ...o, highlighter: h })).value;
  const before = hits();
  const second = (await diffView(d, () => null, { ...o, highlighter: h })).value;
  const reference = (await diffView(d, () => null, { ...o, highlighter: fresh })).value;
  return { first, second, reference, hits: hits() - before };
}

describe("the diff rows memo", () => {
  test("a warm view is every file's remembered rows, the same bytes as a fresh drawing", async () => {
    const d = diffOf([file("src/a.ts", A), file("notes.txt", B), file("lib/x.rb", "@@ -1 +1 @@\n-def a; end\n+def b; end\n")]);
    const v = await views(d);
    expect(v.first).toContain('<span class="k">let</span>');
    expect(v.second).toBe(v.first);
    expect(v.first).toBe(v.reference);
    expect(v.hits).toBe(3);
  });

  test("any change to what the rows are drawn from gives a fresh drawing's bytes", async () => {
    const base = diffOf([file("src/a.ts", A), file("src/b.ts", B)]);
    const warm = await views(base);
    const variants: [string, FileDiffs, DiffOptions][] = [
      ["a patch", diffOf([file("src/a.ts", A.replace("let b = 3", "let b = 4")), file("src/b.ts", B)]), {}],
      ["a path's language", diffOf([file("src/a.txt", A), file("src/b.ts", B)]), {}],
      ["the files' order", diffOf([file("src/b.ts", B), file("src/a.ts", A)]), {}],
      ["a file more before", diffOf([file("z.ts", A), file("src/a.ts", A), file("src/b.ts", B)]), {}],
      ["the drawing (collapsed)", base, { collapse: { full: 3, open: () => false, collapsed: () => trusted("folded") } }],
      ["linked numbers", base, { lines: review("/x?c=") }],
      ["another link prefix", base, { lines: review("/y?c=") }],
    ];
    for (const [what, d, o] of variants) {
      const v = await views(d, o);
      expect(v.first, what).toBe(v.reference);
      expect(v.second, what).toBe(v.reference);
      expect(v.first, what).not.toBe(warm.first);
    }
    // The two prefixes' views differ from each other too (each remembered under its own key).
    const x = await views(base, { lines: review("/x?c=") });
    const y = await views(base, { lines: review("/y?c=") });
    expect(x.second).not.toBe(y.second);
    expect(y.second).toContain('href="/y?c=new:2"');
  });

  test("rows with the hook's own rows, or cells without a key, are drawn every time", async () => {
    const d = diffOf([file("src/a.ts", A)]);
    for (const lines of [review("/t?c=", { thread: 2 }), review("/k?c=", { key: false })]) {
      const v = await views(d, { lines });
      expect(v.hits).toBe(0);
      expect(v.second).toBe(v.reference);
    }
    const t1 = await views(d, { lines: review("/t?c=", { thread: 2 }) });
    expect(t1.second).toContain("thread /t?c=");
  });

  test("a file alone (Load diff) is remembered under its own view's key", async () => {
    const d = diffOf([file("src/a.ts", A), file("src/b.ts", B)]);
    const { h, hits } = counting();
    const one = (await diffFileView(d, 2, () => null, { highlighter: h }))!.value;
    const again = (await diffFileView(d, 2, () => null, { highlighter: h }))!.value;
    expect(again).toBe(one);
    expect(hits()).toBe(1);
    expect(one).toBe((await diffFileView(d, 2, () => null, { highlighter: fresh }))!.value);
    expect(one).toContain('id="diff-2"');
  });

  test("rows drawn plain because the thread was busy are not remembered", async () => {
    const d = diffOf([file("src/busy.ts", "@@ -1 +1 @@\n-let busy = 1;\n+let busy = 2;\n")]);
    const busy = Object.assign(Object.create(thread), { cached: () => undefined, highlight: () => undefined }) as Highlighter;
    let plain = 0;
    const first = (await diffView(d, () => null, { highlighter: busy, onPlain: () => plain++ })).value;
    expect(plain).toBe(1);
    expect(first).not.toMatch(/<span class="[a-z]">/);
    const later = (await diffView(d, () => null, { highlighter: thread })).value;
    expect(later).toContain('<span class="k">let</span>');
  });
});
