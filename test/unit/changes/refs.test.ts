// `#N` and `@handle` in rendered comment markup (services/changes/refs.ts): found and linked in
// text only, and only when the change or person exists.
import { describe, expect, test } from "bun:test";
import { collectRefs, linkRefs, MAX_REFS } from "../../../src/services/changes/refs.ts";

const to = { repoPath: "/acme/app", changes: new Set([2, 12]), people: new Map([["bo", "Bo"]]) };

describe("refs", () => {
  test("collects numbers and handles from text, not from code, links or entities", () => {
    const markup = '<p>see #2, #12 and #999; ask @bo or @Nobody &#39; a@b.c <code>#3 @x</code> <a href="/y">#4 @z</a></p><pre><code>#5</code></pre>';
    expect(collectRefs(markup)).toEqual({ numbers: [2, 12, 999], handles: ["bo", "Nobody"] });
  });
  test("links the existing ones and leaves the rest as text", () => {
    expect(linkRefs("<p>see #2 and #999, @BO and @nobody</p>", to)).toBe(
      '<p>see <a href="/acme/app/changes/2">#2</a> and #999, <a href="/Bo">@BO</a> and @nobody</p>',
    );
    expect(linkRefs('<p><code>#2</code> <a href="/x">@bo</a> x#2 mail@bo</p>', to)).toBe('<p><code>#2</code> <a href="/x">@bo</a> x#2 mail@bo</p>');
  });
  test("at most MAX_REFS of each are collected", () => {
    const many = Array.from({ length: 80 }, (_, i) => `#${i + 1} @u${i}`).join(" ");
    const r = collectRefs(`<p>${many}</p>`);
    expect(r.numbers.length).toBe(MAX_REFS);
    expect(r.handles.length).toBe(MAX_REFS);
  });
});
