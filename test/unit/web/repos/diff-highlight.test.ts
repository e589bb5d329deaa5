// Diffs highlighted per language (issue 33): each hunk's sides tokenized alone on the highlighting
// thread, the rows, numbers and review anchors exactly those of the plain diff (take the spans out
// and the page is the same), files past the budget, of unknown languages or with minified lines plain.
import { afterAll, describe, expect, test } from "bun:test";
import { DIFF_HIGHLIGHT_BUDGET, diffFileView, diffView, type DiffLines } from "../../../../src/http/web/repos/diff-view.ts";
import { HighlightThread } from "../../../../src/http/web/repos/highlight.ts";
import type { FileDiffs } from "../../../../src/services/git/diff.ts";
import type { DiffFile } from "../../../../src/services/git/schemas.ts";

const highlighter = new HighlightThread();
afterAll(() => highlighter.close());

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
function diffOf(files: DiffFile[]): FileDiffs {
  return { files, additions: files.length, deletions: files.length, truncated: false, truncation: null };
}
const unspan = (s: string) => s.replace(/<span class="[^"]*">|<\/span>/g, "");

const TS = `@@ -1,3 +1,3 @@
 const a = 1;
-let b = "<old>";
+let b = "<new>";
 /* opened here
@@ -20,2 +20,2 @@
-x = 2;
+x = 3;
 return a;
\\ No newline at end of file
`;

describe("highlighted diffs", () => {
  test("rows, numbers and review anchors as in the plain diff; each side's tokens coloured", async () => {
    const lines: DiffLines = (_f, i) => ({ cell: (side, n) => `<td class="${side === "old" ? "o" : "n"}" id="l-${i}-${side}-${n}">${n}</td>`, after: null });
    const d = diffOf([file("src/a.ts", TS), file("README.txt", "@@ -1 +1 @@\n-a\n+b\n"), file("lib/x.rb", "@@ -1 +1 @@\n-def a; end\n+def b; end\n")]);
    const plain = (await diffView(d, () => null, { lines })).value;
    const coloured = (await diffView(d, () => null, { lines, highlighter })).value;
    expect(coloured).not.toBe(plain);
    expect(unspan(coloured)).toBe(unspan(plain));
    expect(coloured).toContain(
      '<tr class="del"><td class="o" id="l-1-old-2">2</td><td class="n"></td><td class="c">-<span class="k">let</span> b = <span class="s">&quot;&lt;old&gt;&quot;</span>;</td></tr>',
    );
    expect(coloured).toContain('<td class="c">+<span class="k">let</span> b = <span class="s">&quot;&lt;new&gt;&quot;</span>;</td>');
    // The second hunk is tokenized alone: the comment opened at the end of the first does not run on.
    expect(coloured).toContain('<td class="c">-x = <span class="d">2</span>;</td>');
    expect(coloured).toContain('<span class="k">def</span>');
    expect(coloured).toContain('<td class="c">+b</td>');
  });

  test("a file alone (Load diff) is highlighted too", async () => {
    const d = diffOf([file("src/a.ts", TS)]);
    const one = (await diffFileView(d, 1, () => null, { highlighter }))!.value;
    expect(one).toContain('<span class="k">const</span>');
  });

  test("past the page's budget, and with minified lines, files are plain", async () => {
    const n = Math.ceil(DIFF_HIGHLIGHT_BUDGET / 100);
    const big = `@@ -1,1 +1,${n} @@\n${`+let q = 1; // ${"x".repeat(84)}\n`.repeat(n)}`;
    const d = diffOf([file("a.ts", "@@ -1 +1 @@\n-let a;\n+let b;\n"), file("big.ts", big), file("min.js", `@@ -1 +1 @@\n-a\n+${"x=1;".repeat(1200)}\n`)]);
    const out = (await diffView(d, () => null, { highlighter })).value;
    const [first, second, third] = out.split('<section class="box').slice(1);
    expect(first).toContain('<span class="k">');
    expect(second).toContain("let q = 1;");
    expect(second).not.toMatch(/<span class="[a-z]">/);
    expect(third).toContain("x=1;");
    expect(third).not.toMatch(/<span class="[a-z]">/);
  });

  test("hostile lines stay escaped text", async () => {
    const d = diffOf([file("x.html", '@@ -1 +1 @@\n-<script>alert(1)</script>\n+<img src=x onerror="alert(2)">\n')]);
    const out = (await diffView(d, () => null, { highlighter })).value;
    expect(out).not.toMatch(/<script|<img/);
    expect(unspan(out)).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;");
  });
});
