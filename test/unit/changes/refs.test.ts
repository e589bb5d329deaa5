// `#N`, `org/repo#N` and `@handle` in rendered comment markup (services/changes/refs.ts): found and
// linked in text only, and only when the change or person exists (and, for another repository,
// when the caller gave it as linkable).
import { describe, expect, test } from "bun:test";
import { collectRefs, linkRefs, MAX_REF_REPOS, MAX_REFS } from "../../../src/services/changes/refs.ts";

const to = { repoPath: "/acme/app", changes: new Set([2, 12]), people: new Map([["bo", "Bo"]]) };

describe("refs", () => {
  test("collects numbers and handles from text, not from code, links or entities", () => {
    const markup = '<p>see #2, #12 and #999; ask @bo or @Nobody &#39; a@b.c <code>#3 @x</code> <a href="/y">#4 @z</a></p><pre><code>#5</code></pre>';
    expect(collectRefs(markup)).toEqual({ numbers: [2, 12, 999], handles: ["bo", "Nobody"], repos: new Map() });
  });
  test("links the existing ones and leaves the rest as text", () => {
    expect(linkRefs("<p>see #2 and #999, @BO and @nobody</p>", to)).toBe(
      '<p>see <a href="/acme/app/changes/2">#2</a> and #999, <a href="/Bo">@BO</a> and @nobody</p>',
    );
    expect(linkRefs('<p><code>#2</code> <a href="/x">@bo</a> x#2 mail@bo</p>', to)).toBe('<p><code>#2</code> <a href="/x">@bo</a> x#2 mail@bo</p>');
  });
  test("org/repo#N: collected by repository (names as written, keyed lower-case), never from code, links or bad names", () => {
    const org40 = "o".repeat(40);
    const repo101 = "r".repeat(101);
    const markup = [
      "<p>see acme/api#3, (Acme/API#4) and ops/x.y_z-1#1.",
      '<code>acme/api#5</code> <a href="/q">acme/api#6</a></p><pre><code>acme/api#7\n</code></pre>',
      `<p>acme/api#0 acme/api#01 acme/api#3x a.b/c#1 -x/y#1 x-/y#1 x/..#1 x/y.git#1 ${org40}/r#1 o/${repo101}#1 o/r/s#1 @o/r#1 x#1/y#1 acme/api#1234567890</p>`,
    ].join("");
    const got = collectRefs(markup);
    expect(got.numbers).toEqual([]);
    expect([...got.repos.entries()]).toEqual([
      ["acme/api", { org: "acme", repo: "api", numbers: [3, 4] }],
      ["ops/x.y_z-1", { org: "ops", repo: "x.y_z-1", numbers: [1] }],
    ]);
    // Beside this repository's #N: each read once, as what it is.
    expect(collectRefs("<p>acme/api#3 #3 x/y-#4</p>")).toEqual({
      numbers: [3],
      handles: [],
      repos: new Map([
        ["acme/api", { org: "acme", repo: "api", numbers: [3] }],
        ["x/y-", { org: "x", repo: "y-", numbers: [4] }],
      ]),
    });
  });
  test("org/repo#N links only to the repositories and changes given; the rest, and its #N, stay text", () => {
    const repos = new Map([["acme/api", { repoPath: "/acme/api", changes: new Set([3]) }]]);
    expect(linkRefs("<p>Acme/API#3, acme/api#4, secret/vault#3 and #2; <code>acme/api#3</code></p>", { ...to, repos })).toBe(
      '<p><a href="/acme/api/changes/3">Acme/API#3</a>, acme/api#4, secret/vault#3 and <a href="/acme/app/changes/2">#2</a>; <code>acme/api#3</code></p>',
    );
    // Nothing given for other repositories: their #N is never read as this repository's (2 exists here).
    expect(linkRefs("<p>secret/vault#2 x/y-#2</p>", to)).toBe("<p>secret/vault#2 x/y-#2</p>");
  });
  test("at most MAX_REF_REPOS repositories and MAX_REFS cross references are collected", () => {
    const many = Array.from({ length: 30 }, (_, i) => `o${i}/r#1 o0/r#${i + 1} o1/r#${i + 1}`).join(" ");
    const got = collectRefs(`<p>${many}</p>`);
    expect(got.repos.size).toBe(MAX_REF_REPOS);
    expect([...got.repos.values()].reduce((n, r) => n + r.numbers.length, 0)).toBe(MAX_REFS);
  });
  test("at most MAX_REFS of each are collected", () => {
    const many = Array.from({ length: 80 }, (_, i) => `#${i + 1} @u${i}`).join(" ");
    const r = collectRefs(`<p>${many}</p>`);
    expect(r.numbers.length).toBe(MAX_REFS);
    expect(r.handles.length).toBe(MAX_REFS);
  });
});
