// Highlighting: the language from the file name, per-line markup that stays well-formed when a
// token spans lines, hostile source kept as text, the bounds, and the download header's name.
import { describe, expect, test } from "bun:test";
import { HIGHLIGHT_LIMIT, HIGHLIGHT_LINE_LIMIT, highlightLines, languageOf, splitMarkupLines } from "../../../src/http/routes/web/highlight.ts";
import { attachment } from "../../../src/http/routes/web/repo-routes.ts";

/** Whether every <span …> of a fragment is closed within it, in order. */
function balanced(fragment: string): boolean {
  let depth = 0;
  for (const m of fragment.matchAll(/<span[^>]*>|<\/span>/g)) {
    depth += m[0] === "</span>" ? -1 : 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}

describe("languageOf", () => {
  test("by extension, alias or file name; unknown and plain text are null", () => {
    expect(languageOf("src/app.ts")).toBe("ts");
    expect(languageOf("a/b/C.TSX")).toBe("typescript");
    expect(languageOf("x.py")).toBe("py");
    expect(languageOf("Makefile")).toBe("makefile");
    expect(languageOf("Dockerfile")).toBe("dockerfile");
    expect(languageOf("notes.txt")).toBeNull();
    expect(languageOf("LICENSE")).toBeNull();
    expect(languageOf("data.nonsense-ext")).toBeNull();
  });
});

describe("splitMarkupLines", () => {
  test("a span open across a line break is closed and reopened", () => {
    const lines = splitMarkupLines(`a<span class="c">/* one\ntwo */</span>b\nc`);
    expect(lines).toEqual([`a<span class="c">/* one</span>`, `<span class="c">two */</span>b`, "c"]);
  });

  test("every line of a highlighted file is well-formed on its own, and lines are not lost", () => {
    const src = ["/* a comment", "   over <three> lines */", "const s = `template", "${x} & more`;", "// end"];
    const out = highlightLines("0".repeat(40), "x.ts", src);
    expect(out.language).toBe("TypeScript");
    expect(out.lines.length).toBe(src.length);
    for (const l of out.lines) expect(balanced(l.value)).toBe(true);
    expect(out.lines.map((l) => l.value.replace(/<[^>]+>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"))).toEqual(src);
  });
});

describe("highlightLines", () => {
  test("hostile source stays text: no tag but highlight.js's spans", () => {
    const src = [`const a = "</td></tr><script>alert(1)</script>";`, `// <img src=x onerror=alert(2)> " ' &`];
    const out = highlightLines("1".repeat(40), "evil.js", src);
    const joined = out.lines.map((l) => l.value).join("\n");
    expect(joined.replace(/<span class="hljs-[a-z_ .-]+">|<\/span>/g, "")).not.toMatch(/[<>]/);
    expect(joined).toContain("&lt;script&gt;");
  });

  test("plain (escaped, no spans) above the size bound, with a very long line, or with no language", () => {
    const big = Array.from({ length: Math.ceil(HIGHLIGHT_LIMIT / 20) + 10 }, (_, i) => `const v${i} = ${i};`);
    const long = ["const x = 1;", "y".repeat(HIGHLIGHT_LINE_LIMIT + 1)];
    for (const [name, lines] of [["big.ts", big], ["min.js", long], ["a.txt", ["<b>"]]] as const) {
      const out = highlightLines("2".repeat(40), name, [...lines]);
      expect({ name, language: out.language }).toEqual({ name, language: null });
      expect(out.lines.some((l) => l.value.includes("<span"))).toBe(false);
    }
    expect(highlightLines("3".repeat(40), "a.txt", ["<b>"]).lines[0]!.value).toBe("&lt;b&gt;");
  });

  test("the same blob and language is served from the cache (the same markup)", () => {
    const a = highlightLines("4".repeat(40), "c.ts", ["let q = 1;"]);
    const b = highlightLines("4".repeat(40), "c.ts", ["let q = 1;"]);
    expect(b.lines.map((l) => l.value)).toEqual(a.lines.map((l) => l.value));
  });
});

describe("attachment", () => {
  test("quotes, backslashes, control and non-ASCII characters cannot break the header", () => {
    expect(attachment(`a"b\\c.txt`)).toBe(`attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b%5Cc.txt`);
    expect(attachment("naïve\r\nx.txt")).toBe(`attachment; filename="na_ve__x.txt"; filename*=UTF-8''na%C3%AFve%0D%0Ax.txt`);
  });
});
