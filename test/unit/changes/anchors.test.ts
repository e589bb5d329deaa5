// Where a commented range goes after an edit (services/changes/anchors.ts): a table of edits, and
// the hunk check that decides which lines take comments.
import { describe, expect, test } from "bun:test";
import { splitLines } from "../../../src/git/line-diff.ts";
import { mapRange, mapRanges, nearHunks } from "../../../src/services/changes/anchors.ts";

const text = (n: number, f = (i: number) => `line ${i}`) => Array.from({ length: n }, (_, i) => `${f(i + 1)}\n`).join("");
const BASE = text(20);
const lines = (s: string) => splitLines(s);
const edit = (s: string, at: number, replace: number, insert: string[]) => {
  const l = lines(s);
  l.splice(at - 1, replace, ...insert.map((x) => `${x}\n`));
  return l.join("");
};

describe("mapRange", () => {
  const cases: { name: string; after: string; start: number; end: number; expect: { start: number; end: number } | null }[] = [
    { name: "same text: identity", after: BASE, start: 5, end: 7, expect: { start: 5, end: 7 } },
    { name: "insertion before: shifted", after: edit(BASE, 2, 0, ["a", "b", "c"]), start: 5, end: 7, expect: { start: 8, end: 10 } },
    { name: "insertion just before: shifted", after: edit(BASE, 5, 0, ["a"]), start: 5, end: 7, expect: { start: 6, end: 8 } },
    { name: "insertion just after: unchanged", after: edit(BASE, 8, 0, ["a"]), start: 5, end: 7, expect: { start: 5, end: 7 } },
    { name: "insertion inside: outdated", after: edit(BASE, 6, 0, ["a"]), start: 5, end: 7, expect: null },
    { name: "deletion before: shifted up", after: edit(BASE, 1, 2, []), start: 5, end: 7, expect: { start: 3, end: 5 } },
    { name: "deletion of a line of it: outdated", after: edit(BASE, 7, 1, []), start: 5, end: 7, expect: null },
    { name: "replacement of its first line: outdated", after: edit(BASE, 5, 1, ["five"]), start: 5, end: 7, expect: null },
    { name: "replacement after: unchanged", after: edit(BASE, 12, 1, ["twelve"]), start: 5, end: 7, expect: { start: 5, end: 7 } },
    { name: "one line, edit elsewhere", after: edit(BASE, 1, 1, ["one", "uno"]), start: 10, end: 10, expect: { start: 11, end: 11 } },
    { name: "emptied file: outdated", after: "", start: 1, end: 1, expect: null },
    { name: "range beyond the old text: null", after: BASE, start: 19, end: 21, expect: null },
  ];
  for (const c of cases) test(c.name, () => expect(mapRange(lines(BASE), lines(c.after), c.start, c.end)).toEqual(c.expect));

  test("CRLF lines keep their ends; a line that only changed its ending is an edit", () => {
    const crlf = "a\r\nb\r\nc\r\n";
    expect(mapRange(lines(crlf), lines(`x\r\n${crlf}`), 2, 3)).toEqual({ start: 3, end: 4 });
    expect(mapRange(lines(crlf), lines("a\r\nb\nc\r\n"), 2, 2)).toBeNull();
  });

  test("the mapped range's text equals the original (random edits)", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      let after = BASE;
      for (let k = rand(4); k >= 0; k--)
        after = edit(
          after,
          1 + rand(lines(after).length + 1),
          rand(3),
          Array.from({ length: rand(3) }, () => `x${rand(5)}`),
        );
      const start = 1 + rand(20);
      const end = Math.min(20, start + rand(4));
      const m = mapRange(lines(BASE), lines(after), start, end);
      if (m) expect(lines(after).slice(m.start - 1, m.end)).toEqual(lines(BASE).slice(start - 1, end));
    }
  });

  test("mapRanges: one diff for many ranges", () => {
    expect(
      mapRanges(BASE, edit(BASE, 3, 1, ["three"]), [
        { start: 1, end: 2 },
        { start: 3, end: 3 },
        { start: 10, end: 12 },
      ]),
    ).toEqual([{ start: 1, end: 2 }, null, { start: 10, end: 12 }]);
  });
});

describe("nearHunks", () => {
  const after = edit(BASE, 10, 1, ["TEN"]);
  test("changed lines and 3 lines of context take comments, on both sides", () => {
    const r = (s: number, e = s) => ({ start: s, end: e });
    expect(nearHunks(BASE, after, "new", [r(10), r(7), r(13), r(6), r(14), r(7, 13), r(6, 10), r(21)])).toEqual([
      true,
      true,
      true,
      false,
      false,
      true,
      false,
      false,
    ]);
    expect(nearHunks(BASE, after, "old", [r(10), r(7), r(14)])).toEqual([true, true, false]);
  });
  test("a pure deletion: the new side around where it was", () => {
    const del = edit(BASE, 10, 2, []);
    // New lines 7-9 and 10-12 are the context git shows around the gap after new line 9.
    const r = (s: number) => ({ start: s, end: s });
    expect(nearHunks(BASE, del, "new", [r(7), r(9), r(10), r(12), r(6), r(13)])).toEqual([true, true, true, true, false, false]);
    expect(nearHunks(BASE, del, "old", [{ start: 10, end: 11 }])).toEqual([true]);
  });
  test("an added file: every line", () => {
    expect(nearHunks("", "a\nb\nc\nd\ne\nf\ng\nh\n", "new", [{ start: 1, end: 8 }])).toEqual([true]);
  });
});
