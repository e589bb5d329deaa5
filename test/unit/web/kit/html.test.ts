// The template helper escapes by construction; the Markdown renderer drops script; refs with slashes split right.
import { describe, expect, test } from "bun:test";
import { html, trusted } from "../../../../src/http/web/kit/html.ts";
import { renderMarkdown } from "../../../../src/http/web/kit/markdown.ts";
import { splitRefPath } from "../../../../src/services/web/views.ts";

describe("html``", () => {
  test("every value is escaped unless it is Html; arrays and empty values", () => {
    const name = `<a href="x" onclick='y'>&`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      `<p title="&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;">&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;</p>`,
    );
    expect(html`<ul>${["<1>", html`<li>2</li>`]}</ul>${null}${undefined}${false}${0}`.value).toBe("<ul>&lt;1&gt;<li>2</li></ul>0");
    expect(html`${trusted("<b>ok</b>")}`.value).toBe("<b>ok</b>");
  });
});

describe("renderMarkdown", () => {
  const base = { repo: "/o/r", ref: "main", dir: "docs" };
  test("raw HTML is text, script URLs are dropped, relative links resolve inside the repository", () => {
    const out = renderMarkdown(
      `<script>x</script>\n\n[a](javascript:alert(1)) [b](../README.md) [c](https://example.com) ![i](../img/a.png) ![j](data:image/png;base64,AA==)\n\n<img src=x onerror=alert(1)>`,
      base,
    ).value;
    expect(out).not.toMatch(/<script|href="javascript:|onerror=alert\(1\)>|src="data:/);
    expect(out).toContain(`href="/o/r/blob/main/README.md"`);
    expect(out).toContain(`src="/o/r/raw/main/img/a.png"`);
    expect(out).toContain(`<a href="https://example.com" rel="nofollow noopener noreferrer">c</a>`);
  });
});

describe("splitRefPath", () => {
  const choices = [
    { kind: "branch", name: "main" },
    { kind: "branch", name: "release/1.0" },
    { kind: "tag", name: "v1" },
    { kind: "tag", name: "main" },
  ] as const;
  test("the longest branch name wins, then tags, else the first segment is a commit", () => {
    expect(splitRefPath([...choices], ["release", "1.0", "src", "a.ts"])).toEqual({
      ref: { short: "release/1.0", full: "refs/heads/release/1.0" },
      path: "src/a.ts",
    });
    expect(splitRefPath([...choices], ["main", "x"])).toEqual({ ref: { short: "main", full: "refs/heads/main" }, path: "x" });
    expect(splitRefPath([...choices], ["v1"])).toEqual({ ref: { short: "v1", full: "refs/tags/v1" }, path: "" });
    expect(splitRefPath([...choices], ["abc1234", "d"])).toEqual({ ref: { short: "abc1234", full: "abc1234" }, path: "d" });
  });
});
