// The search page's query as read from the address (services/web/explore.ts searchQueryOf): every
// value bounded before anything reads it, unknown types falling back, the scope kept as typed.
import { describe, expect, test } from "bun:test";
import { searchHref } from "../../../../src/http/web/discovery/pages.ts";
import { searchQueryOf } from "../../../../src/services/web/explore.ts";

const of = (q: Record<string, string>) => searchQueryOf((name) => q[name]);

describe("searchQueryOf", () => {
  test("defaults: repositories, or issues when scoped to a repository", () => {
    expect(of({})).toEqual({ q: "", type: "repos", repo: "", cursor: undefined });
    expect(of({ q: "  widget  ", repo: "acme/app" })).toEqual({ q: "widget", type: "issues", repo: "acme/app", cursor: undefined });
    expect(of({ q: "x", type: "code" }).type).toBe("code");
    expect(of({ q: "x", type: "<script>" }).type).toBe("repos");
  });

  test("bounds: one character past the longest query is kept (so the page can say it is too long), counted in code points", () => {
    expect([...of({ q: "a".repeat(100_000) }).q].length).toBe(201);
    expect([...of({ q: "😀".repeat(300) }).q].length).toBe(201);
    expect(of({ q: "😀".repeat(200) }).q).toBe("😀".repeat(200));
    expect(of({ repo: "x".repeat(5000) }).repo.length).toBe(142);
    expect(of({ q: "x", cursor: "c".repeat(5000) }).cursor!.length).toBe(1024);
  });

  test("the page's links carry the query, the type and the scope, escaped as a query string", () => {
    const q = of({ q: `a&b="c"`, repo: "acme/app", type: "issues" });
    expect(searchHref(q, { type: "repos" })).toBe("/search?q=a%26b%3D%22c%22&type=repos&repo=acme%2Fapp");
    expect(searchHref(q, { cursor: "abc" })).toBe("/search?q=a%26b%3D%22c%22&type=issues&repo=acme%2Fapp&cursor=abc");
  });
});
