// The diff as a page draws it (src/http/web/repos/diff-view.ts): a page of 300 files and 20,000
// lines is built in slices, so the event loop turns while it is drawn (issue 28: a change's files
// tab never holds the loop), and what it draws is every file, in order, with its numbered lines.
import { describe, expect, test } from "bun:test";
import { diffView, PAGE_DIFF_LINES, type DiffLines } from "../../../../src/http/web/repos/diff-view.ts";
import { html } from "../../../../src/http/web/kit/html.ts";
import type { FileDiffs } from "../../../../src/services/git/diff.ts";

/** `files` files of `lines` changed lines each (a hunk of additions after one context line). */
function bigDiff(files: number, lines: number): FileDiffs {
  const patch = (f: number) => `@@ -1,1 +1,${lines + 1} @@\n ctx\n${Array.from({ length: lines }, (_, i) => `+file ${f} line ${i + 2} <b>&</b>`).join("\n")}\n`;
  return {
    files: Array.from({ length: files }, (_, f) => ({
      path: `dir/f${f}.txt`,
      status: "modified",
      old_mode: "100644",
      new_mode: "100644",
      old_oid: "a".repeat(40),
      new_oid: "b".repeat(40),
      binary: false,
      additions: lines,
      deletions: 0,
      patch: patch(f),
      patch_truncated: false,
    })),
    additions: files * lines,
    deletions: 0,
    truncated: false,
    truncation: null,
  };
}

describe("diffView", () => {
  test("draws every file in order with escaped lines and review links", async () => {
    const lines: DiffLines = (f, i) => ({
      cell: (side, n) => `<td class="${side === "old" ? "o" : "n"}" id="c-${i}-${side}-${n}"><a href="?comment=${f.path}:${side}:${n}">${n}</a></td>`,
      after: i === 2 ? (_o, n) => (n === 3 ? `<tr class="thread-row"><td>thread</td></tr>` : null) : null,
    });
    const out = (await diffView(bigDiff(3, 4), () => null, { lines })).value;
    expect([...out.matchAll(/<h3 class="inh path" id="diff-\d+-h">([^<]+)</g)].map((m) => m[1])).toEqual(["dir/f0.txt", "dir/f1.txt", "dir/f2.txt"]);
    expect(out).toContain("+file 1 line 2 &lt;b&gt;&amp;&lt;/b&gt;");
    expect(out).not.toContain("<b>&</b>");
    expect(out).toContain('id="c-2-new-3"><a href="?comment=dir/f1.txt:new:3">3</a>');
    expect(out.match(/thread-row/g)?.length).toBe(1);
  });

  test("a page of 300 files and the whole line budget yields to the event loop while it is drawn", async () => {
    let turns = 0;
    let done = false;
    const spin = () => {
      if (done) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const d = bigDiff(300, Math.floor(PAGE_DIFF_LINES / 300));
    const started = turns;
    const out = await diffView(d, (f) => `/o/r/blob/x/${f.path}`).finally(() => {
      done = true;
    });
    // Drawn whole (every file under the budget)…
    expect(out.value.match(/<section class="box" id="diff-/g)?.length).toBe(300);
    // …and not in one go: macrotasks ran between slices (without the slices, none would run before it returns).
    expect(turns - started).toBeGreaterThan(0);
  }, 60_000);

  test("collapsing: files are drawn in full until the budget is spent (the last may overrun it); later ones, and any longer than the budget, collapsed unless asked for", async () => {
    const d = bigDiff(4, 1000);
    d.files[3]!.patch = `@@ -1,1 +1,3001 @@\n ctx\n${Array.from({ length: 3000 }, (_, i) => `+big ${i}`).join("\n")}\n`;
    const drawnOf = async (open: (path: string) => boolean, moveBigFirst = false) => {
      const dd = moveBigFirst ? { ...d, files: [d.files[3]!, ...d.files.slice(0, 3)] } : d;
      const out = (
        await diffView(dd, () => null, {
          collapse: { full: 1500, open: (f) => open(f.path), collapsed: (f, i) => html`<p class="folded">${i}:${f.path}</p>` },
        })
      ).value;
      return [...out.matchAll(/<section class="box( collapsed)?" id="diff-(\d+)"/g)].map((m) => `${m[2]}${m[1] ? "-" : "+"}`);
    };
    expect(await drawnOf(() => false)).toEqual(["1+", "2+", "3-", "4-"]);
    expect(await drawnOf((p) => p === "dir/f2.txt" || p === "dir/f3.txt")).toEqual(["1+", "2+", "3+", "4+"]);
    expect(await drawnOf(() => false, true)).toEqual(["1-", "2+", "3+", "4-"]);
  });

  test("an ASCII diff draws an all-Latin-1 page (one non-Latin-1 character makes the whole page a two-byte string)", async () => {
    const out = (await diffView(bigDiff(3, 4), () => null)).value;
    expect(out).toContain('<span class="dels" title="0 deletions">&minus;0</span>');
    expect([...out].filter((c) => c.charCodeAt(0) > 0xff)).toEqual([]);
  });
});
