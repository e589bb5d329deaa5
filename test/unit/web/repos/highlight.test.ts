// Highlighting: the language from the file name, per-line markup that stays well-formed when a
// token spans lines, hostile source kept as text through both engines (speed-highlight and the
// highlight.js fallback), the bounds, the cache, the thread's time limit and the page's wait, and
// the download header's name.
import { afterAll, describe, expect, test } from "bun:test";
import { HIGHLIGHT_LIMIT, HIGHLIGHT_LIMIT_HLJS, HIGHLIGHT_LINE_LIMIT, HighlightThread, highlightLines } from "../../../../src/http/web/repos/highlight.ts";
import { LANGUAGES, languageOf, markupLines, splitMarkupLines } from "../../../../src/http/web/repos/highlight-engine.ts";
import { attachment } from "../../../../src/http/web/repos/routes.ts";
import type { Logger } from "../../../../src/services/context.ts";
import { TOKEN_CLASSES, type TokenClass } from "../../../../src/http/web/kit/highlight-classes.ts";

/** Whether every <span …> of a fragment is closed within it, in order. */
function balanced(fragment: string): boolean {
  let depth = 0;
  for (const m of fragment.matchAll(/<span[^>]*>|<\/span>/g)) {
    depth += m[0] === "</span>" ? -1 : 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/** The text a fragment shows: tags dropped, entities decoded. */
function textOf(fragment: string): string {
  return fragment
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, "&");
}

/** A fragment with our whitelisted spans removed: what is left must be text only. */
const withoutSpans = (fragment: string) => fragment.replace(/<span class="[a-z]">|<\/span>/g, "");

/** Hostile source: markup, attributes, entities, quotes of every kind, unterminated comments and strings, fence names that are Object's members. */
const HOSTILE = [
  `const a = "</td></tr><script>alert(1)</script>";`,
  `// <img src=x onerror=alert(2)> " ' & &amp; &lt;`,
  `<a href="javascript:alert(3)" onclick='alert(4)'>x</a> <!-- <b> -->`,
  "let t = `<svg onload=alert(5)> ${ '<i>' + \"</i>\" }`;",
  "```constructor",
  "<script>x</script>",
  "```",
  "```__proto__",
  "<style>body{}</style>",
  "```",
  `/* unterminated <em> comment`,
  `'unterminated <string & more`,
  `# [x](javascript:alert(6)) **<b>** "quoted" $HOME \${x} <<EOF`,
];

const logger = (warnings: Record<string, unknown>[]): Logger => ({
  enabled: () => true,
  info() {},
  error() {},
  debug() {},
  warn: (msg, fields) => warnings.push({ msg, ...fields }),
});

describe("languageOf", () => {
  test("by extension or file name; unknown, plain text and Object's member names are null", () => {
    expect(languageOf("src/app.ts")).toBe("ts");
    expect(languageOf("a/b/C.TSX")).toBe("ts");
    expect(languageOf("x.py")).toBe("py");
    expect(languageOf("Makefile")).toBe("make");
    expect(languageOf("build/Dockerfile")).toBe("docker");
    expect(languageOf("lib/x.rb")).toBe("ruby");
    expect(languageOf("Gemfile")).toBe("ruby");
    expect(languageOf("CMakeLists.txt")).toBeNull();
    expect(languageOf("notes.txt")).toBeNull();
    expect(languageOf("LICENSE")).toBeNull();
    expect(languageOf("data.nonsense-ext")).toBeNull();
    expect(languageOf("x.constructor")).toBeNull();
    expect(languageOf("__proto__")).toBeNull();
    expect(languageOf("a.toString")).toBeNull();
  });
});

describe("markupLines", () => {
  test("every language keeps hostile source as text: only whitelisted spans, every line well-formed, nothing lost", () => {
    const code = HOSTILE.join("\n");
    for (const language of Object.keys(LANGUAGES)) {
      const lines = markupLines(code, language);
      expect({ language, ok: lines !== null }).toEqual({ language, ok: true });
      expect({ language, count: lines!.length }).toEqual({ language, count: HOSTILE.length });
      const bad = lines!.filter((l) => !balanced(l) || /[<>"]/.test(withoutSpans(l)));
      expect({ language, bad }).toEqual({ language, bad: [] });
      expect({ language, text: lines!.map(textOf) }).toEqual({ language, text: HOSTILE });
    }
  });

  test("speed-highlight: escaped with escapeHtml, classes from the whitelist only", () => {
    const lines = markupLines(HOSTILE.join("\n"), "ts")!;
    expect(lines[0]).toBe(`<span class="k">const</span> a = <span class="s">&quot;&lt;/td&gt;&lt;/tr&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;</span>;`);
    expect(lines[1]).toBe(`<span class="m">// &lt;img src=x onerror=alert(2)&gt; &quot; &#39; &amp; &amp;amp; &amp;lt;</span>`);
    for (const l of lines) for (const m of l.matchAll(/<span class="([^"]*)">/g)) expect(TOKEN_CLASSES).toContain(m[1] as TokenClass);
  });

  test("a block comment, a template string and a Python docstring spanning lines: each line closes and reopens its span", () => {
    const ts = markupLines(["/* a comment", "   over <three> lines", "*/ const s = `template", "${x} & more`;"].join("\n"), "ts")!;
    expect(ts[0]).toBe(`<span class="m">/* a comment</span>`);
    expect(ts[1]).toBe(`<span class="m">   over &lt;three&gt; lines</span>`);
    expect(ts[2]).toStartWith(`<span class="m">*/</span> <span class="k">const</span> s = <span class="s">\`template</span>`);
    expect(ts[3]).toStartWith(`<span class="k">\${</span>x<span class="k">}</span><span class="s"> &amp; more\`</span>`);
    const py = markupLines([`def f():`, `    """Doc <b>`, `    more "quotes"`, `    """`, `    return 1`].join("\n"), "py")!;
    expect(py.slice(1, 4)).toEqual([
      `    <span class="m">&quot;&quot;&quot;Doc &lt;b&gt;</span>`,
      `<span class="m">    more &quot;quotes&quot;</span>`,
      `<span class="m">    &quot;&quot;&quot;</span>`,
    ]);
    for (const l of [...ts, ...py]) expect(balanced(l)).toBe(true);
  });

  test("highlight.js (the fallback): a multi-line comment is split into well-formed lines", () => {
    const rb = markupLines(["=begin", "<b>doc</b>", "=end", "puts 'hi'"].join("\n"), "ruby")!;
    expect(rb.length).toBe(4);
    expect(rb[1]).toBe(`<span class="m">&lt;b&gt;doc&lt;/b&gt;</span>`);
    for (const l of rb) expect(balanced(l)).toBe(true);
  });
});

describe("splitMarkupLines", () => {
  test("a span open across a line break is closed and reopened", () => {
    const lines = splitMarkupLines(`a<span class="hljs-comment">/* one\ntwo */</span>b\nc`);
    expect(lines).toEqual([`a<span class="m">/* one</span>`, `<span class="m">two */</span>b`, "c"]);
  });

  test("scopes become our classes; one without a class is drawn without its span, its text kept", () => {
    const lines = splitMarkupLines(
      `<span class="hljs-string">"a<span class="hljs-subst">#{<span class="hljs-number">1</span>\n}</span>"</span><span class="hljs-punctuation">;</span>`,
    );
    expect(lines).toEqual([`<span class="s">"a#{<span class="d">1</span></span>`, `<span class="s">}"</span>;`]);
  });
});

// One context's highlighter for the whole file (the queue test below meets the thread the earlier ones warmed).
const highlighter = new HighlightThread();
afterAll(() => highlighter.close());

describe("highlightLines", () => {
  test("highlights on the thread without blocking the event loop; lines are neither lost nor reordered", async () => {
    const src = ["/* a comment", "   over <three> lines */", "const s = `template", "${x} & more`;", "// end"];
    // Off the event loop: the answer comes back as a message from the thread (a macrotask), so it
    // cannot be there after this call's microtasks. (A timer raced against that message used to
    // decide this test: it failed whenever the thread answered first.)
    let settled = false;
    const pending = highlightLines(highlighter, "0".repeat(40), "x.ts", src).then((v) => {
      settled = true;
      return v;
    });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(settled).toBe(false);
    const out = await pending;
    expect(out).toMatchObject({ language: "TypeScript", settled: true });
    expect(out.lines.length).toBe(src.length);
    for (const l of out.lines) expect(balanced(l.value)).toBe(true);
    expect(out.lines.map((l) => textOf(l.value))).toEqual(src);
  });

  test("hostile source stays text on the page path too", async () => {
    const out = await highlightLines(highlighter, "1".repeat(40), "evil.html", HOSTILE);
    expect(out.language).toBe("HTML");
    const joined = out.lines.map((l) => l.value).join("\n");
    expect(withoutSpans(joined)).not.toMatch(/[<>"]/);
    expect(joined).toContain(`&lt;<span class="d">script</span>&gt;`);
    expect(out.lines.map((l) => textOf(l.value))).toEqual(HOSTILE);
  });

  test("plain (escaped, no spans) above the size bounds, with a very long line, or with no language", async () => {
    const big = Array.from({ length: Math.ceil(HIGHLIGHT_LIMIT / 20) + 10 }, (_, i) => `const v${i} = ${i};`);
    const bigRuby = Array.from({ length: Math.ceil(HIGHLIGHT_LIMIT_HLJS / 10) + 10 }, (_, i) => `v${i} = ${i}`);
    const long = ["const x = 1;", "y".repeat(HIGHLIGHT_LINE_LIMIT + 1)];
    for (const [name, lines] of [
      ["big.ts", big],
      ["big.rb", bigRuby],
      ["min.js", long],
      ["a.txt", ["<b>"]],
      ["CMakeLists.txt", ["project(x)"]],
    ] as const) {
      const out = await highlightLines(highlighter, "2".repeat(40), name, [...lines]);
      expect({ name, language: out.language, settled: out.settled }).toEqual({ name, language: null, settled: true });
      expect(out.lines.some((l) => l.value.includes("<span"))).toBe(false);
    }
    expect((await highlightLines(highlighter, "3".repeat(40), "a.txt", ["<b>"])).lines[0]!.value).toBe("&lt;b&gt;");
    expect((await highlightLines(highlighter, "3".repeat(40), "small.rb", ["x = 1"])).language).toBe("Ruby");
  });

  test("a Dockerfile is highlighted (it used to fail the page)", async () => {
    const out = await highlightLines(highlighter, "5".repeat(40), "Dockerfile", ["FROM debian:stable", "RUN echo <hi> && make"]);
    expect(out.language).toBe("Dockerfile");
    expect(out.lines[0]!.value).toStartWith(`<span class="k">FROM</span>`);
  });

  test("the same blob and language is served from the cache, keyed by blob id", async () => {
    const a = await highlightLines(highlighter, "4".repeat(40), "c.ts", ["let q = 1;"]);
    // The same blob id cannot hold other bytes: the cached markup answers, with no wait at all.
    const b = await highlightLines(highlighter, "4".repeat(40), "c.ts", ["let z = 2;"], { waitMs: 0 });
    expect(b.lines.map((l) => l.value)).toEqual(a.lines.map((l) => l.value));
    expect(b.settled).toBe(true);
  });

  test("a page that stops waiting shows plain text, unsettled; the work goes on and fills the cache", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `export const v${i} = "${i}"; // line ${i}`);
    const early = await highlightLines(highlighter, "6".repeat(40), "w.ts", lines, { waitMs: 0 });
    expect({ language: early.language, settled: early.settled }).toEqual({ language: null, settled: false });
    expect(early.lines[0]!.value).toBe(`export const v0 = &quot;0&quot;; // line 0`);
    const later = await highlightLines(highlighter, "6".repeat(40), "w.ts", lines);
    expect({ language: later.language, settled: later.settled }).toEqual({ language: "TypeScript", settled: true });
  });

  test("a file that backtracks past the time limit is abandoned, logged, shown plain from then on; the next file still highlights", async () => {
    // speed-highlight's HTML tag pattern backtracks on this: ~4.7 s of CPU for these 24 KB (0.5 s
    // for 8 KB, 2.1 s for 16 KB), 15× the limit given here.
    const evil = Array.from({ length: 300 }, () => "<a b=".repeat(16));
    const warnings: Record<string, unknown>[] = [];
    let ticked = false;
    const timer = setInterval(() => (ticked = true), 5);
    const out = await highlightLines(highlighter, "7".repeat(40), "evil.html", evil, { timeLimitMs: 300, waitMs: 60_000, log: logger(warnings) });
    clearInterval(timer);
    expect(ticked).toBe(true);
    expect({ language: out.language, settled: out.settled }).toEqual({ language: null, settled: true });
    expect(out.lines[0]!.value).toStartWith("&lt;a b=&lt;a b=");
    expect(warnings).toMatchObject([{ msg: "highlighting abandoned, shown plain", language: "html", problem: "time limit" }]);
    const again = await highlightLines(highlighter, "7".repeat(40), "evil.html", evil, { waitMs: 0 });
    expect(again.settled).toBe(true);
    expect(warnings.length).toBe(1);
    const next = await highlightLines(highlighter, "8".repeat(40), "ok.ts", ["const ok = true;"]);
    expect(next.lines[0]!.value).toBe(`<span class="k">const</span> ok = <span class="d">true</span>;`);
  }, 60_000);
});

test("past 16 files waiting for the thread, a page shows plain text at once, unsettled and not remembered", async () => {
  // Every call queues its file before its first await, so these 18 calls meet a busy thread and a full queue.
  const calls = Array.from({ length: 18 }, (_, i) => highlightLines(highlighter, String(i).padStart(40, "q"), "q.ts", [`const q = ${i};`]));
  const shown = await Promise.all(calls);
  expect(shown.slice(0, 17).every((s) => s.language === "TypeScript" && s.settled)).toBe(true);
  expect({ language: shown[17]!.language, settled: shown[17]!.settled, line: shown[17]!.lines[0]!.value }).toEqual({
    language: null,
    settled: false,
    line: "const q = 17;",
  });
  const again = await highlightLines(highlighter, "17".padStart(40, "q"), "q.ts", ["const q = 17;"]);
  expect({ language: again.language, settled: again.settled }).toEqual({ language: "TypeScript", settled: true });
});

describe("the compiled binary", () => {
  test("bundles the highlighting thread's module (a Worker's file is bundled only as a named entry point)", async () => {
    expect(await Bun.file(new URL("../../../../scripts/build.ts", import.meta.url)).text()).toContain("src/http/web/repos/highlight-worker.ts");
  });
});

describe("attachment", () => {
  test("quotes, backslashes, control and non-ASCII characters cannot break the header", () => {
    expect(attachment(`a"b\\c.txt`)).toBe(`attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b%5Cc.txt`);
    expect(attachment("naïve\r\nx.txt")).toBe(`attachment; filename="na_ve__x.txt"; filename*=UTF-8''na%C3%AFve%0D%0Ax.txt`);
  });
});
