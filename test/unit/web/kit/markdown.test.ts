// The GitHub-flavoured Markdown renderer (issue 33): each allowed element and attribute kept, each
// refused one dropped, heading ids and anchors, task lists, tables, relative URLs resolved inside
// the repository, fenced code highlighted within its budget, and the hostile corpus inert.
import { describe, expect, test } from "bun:test";
import { MARKDOWN_HIGHLIGHT_BUDGET, mapSrcset, markdownToHtml, renderMarkdown, resolveRelative } from "../../../../src/http/web/kit/markdown.ts";
import { slugOf, uniqueSlug } from "../../../../src/http/web/kit/markdown-rules.ts";
import { FENCE_HIGHLIGHTER } from "../../../../src/http/web/repos/markdown-fence.ts";
import { DEEP, HOSTILE } from "../../../fixtures/markdown/hostile.ts";
import { inspect } from "../../../fixtures/markdown/inert.ts";

const base = { repo: "/o/r", ref: "main", dir: "docs" };
const render = (s: string) => markdownToHtml(s, base, { fence: FENCE_HIGHLIGHTER });

describe("allowed inline HTML", () => {
  const kept: [string, string][] = [
    ["<details open><summary>More</summary>\n\nbody\n\n</details>", "<details open><summary>More</summary>"],
    [
      '<picture><source srcset="a.png 1x, b.png 2x" media="(prefers-color-scheme: dark)" type="image/png"><img src="c.png" alt="c"></picture>',
      '<source srcset="/o/r/raw/main/docs/a.png 1x, /o/r/raw/main/docs/b.png 2x" media="(prefers-color-scheme: dark)" type="image/png" /><img src="/o/r/raw/main/docs/c.png" alt="c" /></picture>',
    ],
    [
      '<img src="logo.png" alt="Logo" title="t" width="120" height="40%" align="right">',
      '<img src="/o/r/raw/main/docs/logo.png" alt="Logo" title="t" width="120" height="40%" align="right" />',
    ],
    ["<kbd>Ctrl</kbd>+<kbd>C</kbd>", "<kbd>Ctrl</kbd>+<kbd>C</kbd>"],
    ["H<sub>2</sub>O x<sup>2</sup>", "H<sub>2</sub>O x<sup>2</sup>"],
    ["<ins>new</ins> <del>old</del> <s>gone</s> <mark>hi</mark>", "<ins>new</ins> <del>old</del> <s>gone</s> <mark>hi</mark>"],
    ['<abbr title="HyperText">HTML</abbr>', '<abbr title="HyperText">HTML</abbr>'],
    ["<dl><dt>term</dt><dd>def</dd></dl>", "<dl><dt>term</dt><dd>def</dd></dl>"],
    ["a<br>b<wbr>c\n\n<hr>", "<p>a<br />b<wbr />c</p>\n<hr />"],
    [
      '<p align="center">c</p><div align="right">r</div><h1 align="center">T</h1>',
      '<p align="center">c</p><div align="right">r</div><h1 align="center">T</h1>',
    ],
    [
      '<table align="center"><tr><th align="left">h</th><td align="right" colspan="2">d</td></tr></table>',
      '<table align="center"><tr><th align="left">h</th><td align="right" colspan="2">d</td></tr></table>',
    ],
    [
      '<a name="intro"></a><a id="x" href="https://example.com">e</a>',
      '<a name="user-content-intro"></a><a id="user-content-x" href="https://example.com" rel="nofollow noopener noreferrer">e</a>',
    ],
    ["<span>s</span>", "<span>s</span>"],
    ['<a href="mailto:a@example.com">m</a>', '<a href="mailto:a@example.com">m</a>'],
  ];
  for (const [source, want] of kept)
    test(`kept: ${source.slice(0, 50)}`, () => {
      const out = render(source);
      expect(out).toContain(want);
      expect(inspect(out).problems).toEqual([]);
    });
});

describe("refused HTML", () => {
  const refused: [string, RegExp][] = [
    ["<script>x()</script>", /<script|x\(\)/],
    ['<img src="a.png" onerror="x()">', /onerror/],
    ['<p style="color:red">s</p>', /style=/],
    ['<span class="sr">s</span><div class="box">b</div>', /class=/],
    ['<iframe src="https://example.com"></iframe>', /<iframe/],
    ["<svg><circle/></svg>", /<svg|<circle/],
    ["<math><mi>x</mi></math>", /<math|<mi/],
    ['<object data="x"></object><embed src="x">', /<object|<embed/],
    ['<meta http-equiv="refresh" content="0">', /<meta/],
    ['<base href="https://evil.example/">', /<base/],
    ['<form action="/x"><input type="text" name="q"><button>Go</button></form>', /<form|<input|<button/],
    ['<input type="checkbox" disabled>', /<input/],
    ['<a href="javascript:x()">j</a>', /href=/],
    ['<img src="data:image/png;base64,AA">', /src=/],
    ['<a href="https://x.example" target="_blank">t</a>', /target=/],
    ['<details ontoggle="x()"><summary>s</summary></details>', /ontoggle/],
    ["<style>*{}</style>", /<style|\*\{\}/],
    ['<img src="a.png" width="1;x" height="auto">', /width=|height=/],
    ['<p align="javascript">a</p><span align="left">b</span>', /align=/],
    ['<pre tabindex="-1">x</pre><div tabindex="0">y</div>', /tabindex/],
  ];
  for (const [source, bad] of refused)
    test(`refused: ${source.slice(0, 50)}`, () => {
      const out = render(source);
      expect(out).not.toMatch(bad);
      expect(inspect(out).problems).toEqual([]);
    });
});

describe("heading anchors", () => {
  test("GitHub's slugs: lower case, punctuation dropped, spaces as hyphens, duplicates numbered", () => {
    expect(slugOf("Hello, World!")).toBe("hello-world");
    expect(slugOf("  API: v2 (beta)")).toBe("--api-v2-beta");
    expect(slugOf("Über café_1")).toBe("über-café_1");
    expect(slugOf("a.b/c?d")).toBe("abcd");
    const seen = new Map<string, number>();
    expect(["Intro", "Intro", "Intro-1", "Intro"].map((t) => uniqueSlug(seen, t))).toEqual(["intro", "intro-1", "intro-1-1", "intro-2"]);
  });
  test("ids prefixed, a permalink per heading, in-document links follow, code in headings counts", () => {
    const out = render(
      "# Getting `started`\n\n## Install\n\n## Install\n\n- [Start](#getting-started)\n- [Again](#install-1)\n- [Out](https://x.example/#install)\n- [Top](#)",
    );
    // The permalink beside the heading, not inside it: the heading's accessible name stays its text.
    expect(out).toContain(
      '<div class="markdown-heading"><h1 id="user-content-getting-started">Getting <code>started</code></h1><a class="anchor" href="#user-content-getting-started" aria-label="Permalink: Getting started">#</a></div>',
    );
    expect(out).toContain('<h2 id="user-content-install-1">');
    expect(out).toContain('<a href="#user-content-getting-started">Start</a>');
    expect(out).toContain('<a href="#user-content-install-1">Again</a>');
    expect(out).toContain('href="https://x.example/#install"');
    expect(out).toContain('<a href="#">Top</a>');
  });
  test("a heading with no slug characters gets no id", () => {
    expect(render("## !!!")).toBe("<h2>!!!</h2>\n");
  });
});

describe("GFM", () => {
  test("task lists: disabled checkboxes named by their text, checked state kept", () => {
    const out = render("- [ ] write *tests*\n- [x] ship\n- not a task [ ]\n");
    expect(out).toContain('<ul class="contains-task-list">');
    expect(out).toContain(
      '<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" disabled aria-label="write tests" /> write <em>tests</em></li>',
    );
    expect(out).toContain('<input type="checkbox" class="task-list-item-checkbox" disabled checked aria-label="ship" /> ship');
    expect(out).toContain("<li>not a task [ ]</li>");
    expect(inspect(out).problems).toEqual([]);
  });
  test("tables with alignment, strikethrough, autolinks", () => {
    const out = render("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n\n~~old~~ https://example.com/x\n");
    expect(out).toContain('<th align="left">a</th>');
    expect(out).toContain('<td align="center">2</td>');
    expect(out).toContain('<td align="right">3</td>');
    expect(out).toContain("<s>old</s>");
    expect(out).toContain('<a href="https://example.com/x" rel="nofollow noopener noreferrer">https://example.com/x</a>');
    const www = render("see www.example.com/a?b=1. and (www.x.org) but not README.md, wwwfoo.com or xwww.example.com");
    expect(www).toContain(
      '<a href="http://www.example.com/a?b=1" rel="nofollow noopener noreferrer">www.example.com/a?b=1</a>. and (<a href="http://www.x.org" rel="nofollow noopener noreferrer">www.x.org</a>)',
    );
    expect(www).toContain("README.md, wwwfoo.com or xwww.example.com");
  });
});

describe("relative URLs", () => {
  test("resolved in the repository, never above its root, as a browser reads the path", () => {
    expect(resolveRelative("docs", "../../../../x.md")).toBe("x.md");
    expect(resolveRelative("docs", "%2e%2e/%2E%2e/%2e%2e/admin")).toBe("admin");
    expect(resolveRelative("docs/a", "..\\..\\..\\b#frag")).toBe("b#frag");
    expect(resolveRelative("", "./a/./b/../c?x=../..")).toBe("a/c?x=../..");
  });
  test("markdown and raw HTML links, images and srcset go to the blob and raw views", () => {
    const out = render(
      '[a](guide.md) ![i](img/a.png) <a href="../README.md">r</a> <img src="../logo.png" alt="l"> <picture><source srcset="d.png, e.png 2x"><img src="f.png" alt="f"></picture> [abs](/x/y)',
    );
    expect(out).toContain('href="/o/r/blob/main/docs/guide.md"');
    expect(out).toContain('src="/o/r/raw/main/docs/img/a.png"');
    expect(out).toContain('href="/o/r/blob/main/README.md"');
    expect(out).toContain('src="/o/r/raw/main/logo.png"');
    expect(out).toContain('srcset="/o/r/raw/main/docs/d.png, /o/r/raw/main/docs/e.png 2x"');
    expect(out).toContain('href="/x/y"');
  });
  test("srcset candidates keep their descriptors; a URL with commas is one URL", () => {
    expect(mapSrcset("a.png 1x,b.png  2x , c,d.png 100w", (u) => `[${u}]`)).toBe("[a.png] 1x, [b.png] 2x, [c,d.png] 100w");
    expect(mapSrcset("a.png,, b.png", (u) => `[${u}]`)).toBe("[a.png], [b.png]");
  });
});

describe("fenced code", () => {
  test("highlighted by language (speed-highlight and highlight.js), escaped, class from the info string", () => {
    const out = render('```ts\nconst a = "<b>";\n```\n\n```ruby\ndef x; end\n```\n\n```nosuchlang\n<i>\n```\n\n```\nplain\n```');
    expect(out).toContain(
      '<pre tabindex="0"><code class="language-ts"><span class="k">const</span> a = <span class="s">&quot;&lt;b&gt;&quot;</span>;\n</code></pre>',
    );
    expect(out).toContain('<code class="language-ruby"><span class="k">def</span>');
    expect(out).toContain('<code class="language-nosuchlang">&lt;i&gt;\n</code>');
    expect(out).toContain('<pre tabindex="0"><code>plain\n</code></pre>');
    expect(inspect(out).problems).toEqual([]);
  });
  test("highlighted blocks go back where their fences were; a document's own look-alike marks stay text", () => {
    const out = render("```ts\nlet a;\n```\n\nsvc-hl-0-0-end `svc-hl-x-0-end`\n\n```js\nlet b;\n```\n\n<textarea>\n\n```ts\nlet hidden;\n```\n\n</textarea>");
    expect(out).toContain('<code class="language-ts"><span class="k">let</span> a;\n</code>');
    expect(out).toContain('<code class="language-js"><span class="k">let</span> b;\n</code>');
    expect(out).toContain("<p>svc-hl-0-0-end <code>svc-hl-x-0-end</code></p>");
    expect(out).not.toContain("hidden");
    expect(inspect(out).problems).toEqual([]);
  });
  test("without a highlighter (the event loop's renders) fences are plain", () => {
    expect(renderMarkdown("```ts\nconst a = 1;\n```", base).value).toBe('<pre tabindex="0"><code class="language-ts">const a = 1;\n</code></pre>\n');
  });
  test("past the document's budget, and for minified lines, code is plain", () => {
    const lines = Math.floor(MARKDOWN_HIGHLIGHT_BUDGET / 2 / 11) - 1;
    const block = `\`\`\`js\n${"let a = 1;\n".repeat(lines)}\`\`\`\n\n`;
    const out = render(block + block + block);
    // Two blocks fit the budget, the third is plain.
    expect(out.split('<span class="k">let</span>').length - 1).toBe(2 * lines);
    const minified = render(`\`\`\`js\n${"a=1;".repeat(2000)}\n\`\`\``);
    expect(minified).not.toContain("<span");
    const names = render("```constructor\nx\n```\n\n```__proto__\nx\n```\n\n```toString\nx\n```");
    expect(names).not.toContain("<span");
  });
});

describe("hostile corpus", () => {
  for (const [name, source] of Object.entries({ ...HOSTILE, ...DEEP }))
    test(`inert: ${name}`, () => {
      const out = render(source);
      const { problems, urls } = inspect(out);
      expect(problems).toEqual([]);
      // Nothing climbs out of /o/r: every relative URL the page follows stays under it.
      for (const u of urls) {
        const at = new URL(u, "https://h.example/o/r/blob/main/docs/README.md");
        if (at.host === "h.example" && !u.startsWith("/")) expect(at.pathname.startsWith("/o/r/")).toBe(true);
      }
    });
  test("relative escaping: every link and image lands inside the repository", () => {
    const { urls } = inspect(render(HOSTILE["relative escaping"]!));
    expect(urls.length).toBe(7);
    for (const u of urls) expect(new URL(u, "https://h.example/").pathname).toMatch(/^\/o\/r\/(blob|raw)\/main\//);
  });
});
