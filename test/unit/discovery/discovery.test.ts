// Pure pieces of discovery: the search scope agrees with the read decision, FTS query building,
// co-author trailers, contribution date ranges, profile text and URL checks.
import { describe, expect, test } from "bun:test";
import { decide, readableScope, type Facts } from "../../../src/services/access/access.ts";
import { hasCoAuthor, parseDay, rangeOf, formatDay } from "../../../src/services/discovery/contributions.ts";
import { checkLinks, checkText, checkUrl } from "../../../src/services/discovery/profiles.ts";
import { wordQuery } from "../../../src/services/discovery/search.ts";

describe("readableScope is the set form of decide(repo:read)", () => {
  const ORG = { id: "org-a", name: "a" };
  const OTHER = { id: "org-b", name: "b" };
  const callers: Facts["caller"][] = [
    { kind: "anonymous" },
    { kind: "person", userId: "u", confirmed: true, scopes: "all", tokenOrgId: null, tokenRepoId: null },
    { kind: "person", userId: "u", confirmed: false, scopes: ["repo:read"], tokenOrgId: "org-a", tokenRepoId: null },
    { kind: "person", userId: "u", confirmed: true, scopes: ["org:read"], tokenOrgId: "org-a", tokenRepoId: null },
    { kind: "person", userId: "u", confirmed: true, scopes: ["repo:write"], tokenOrgId: "org-a", tokenRepoId: "r1" },
    { kind: "person", userId: "u", confirmed: true, scopes: ["org:admin"], tokenOrgId: "org-b", tokenRepoId: null },
    { kind: "service", scopes: ["repo:read"], tokenOrgId: "org-a", tokenRepoId: null },
    { kind: "service", scopes: ["org:read"], tokenOrgId: "org-a", tokenRepoId: null },
    { kind: "service", scopes: ["repo:write"], tokenOrgId: "org-a", tokenRepoId: "r2" },
    { kind: "runner", runnerId: "m" },
    { kind: "runner-registration" },
  ];
  for (const [i, caller] of callers.entries()) {
    test(`caller ${i} (${caller.kind})`, () => {
      for (const role of [null, "viewer", "member", "admin", "owner"] as const) {
        const members = role ? ["org-a"] : [];
        const scope = readableScope(caller, members);
        for (const org of [ORG, OTHER]) {
          for (const repoId of ["r1", "r2"]) {
            for (const userGrant of [null, "viewer", "admin"] as const) {
              for (const isPublic of [false, true]) {
                const orgRole = org.id === "org-a" ? role : null;
                const facts: Facts = {
                  caller,
                  org,
                  orgRole,
                  repo: {
                    id: repoId,
                    fullName: `${org.name}/x`,
                    public: isPublic,
                    writeBlocked: null,
                    kind: "native",
                    userGrant: orgRole ? userGrant : null,
                    teamGrants: [],
                  },
                };
                const byDecide = decide(facts, "repo:read").allow;
                const bySet = scope !== null && (isPublic || (scope.orgIds.includes(org.id) && (scope.repoId === null || scope.repoId === repoId)));
                expect({ role, org: org.id, repoId, userGrant, isPublic, allowed: bySet }).toEqual({
                  role,
                  org: org.id,
                  repoId,
                  userGrant,
                  isPublic,
                  allowed: byDecide,
                });
              }
            }
          }
        }
      }
    });
  }
});

describe("search query words", () => {
  test("every word a quoted prefix, all required; FTS syntax is only text", () => {
    expect(wordQuery("Widget API")).toBe('"widget"* AND "api"*');
    expect(wordQuery('a" OR name:* NEAR(b)')).toBe('"a"* AND "or"* AND "name"* AND "near"* AND "b"*');
    expect(wordQuery("---")).toBeNull();
    expect(wordQuery("a b c d e f g h i j")!.split(" AND ")).toHaveLength(8);
  });
});

describe("co-author trailers", () => {
  test("a Co-Authored-By trailer in the last paragraph, any case", () => {
    expect(hasCoAuthor("fix\n\nCo-Authored-By: Bob <bob@example.com>\n")).toBe(true);
    expect(hasCoAuthor("fix\n\nSigned-off-by: A <a@x>\nco-authored-by: B <b@x>")).toBe(true);
    expect(hasCoAuthor("fix\n\nbody mentions Co-Authored-By: in prose\n\nSigned-off-by: A <a@x>")).toBe(false);
    expect(hasCoAuthor("Co-Authored-By: subject line only")).toBe(false);
    expect(hasCoAuthor("plain message")).toBe(false);
  });
});

describe("contribution ranges", () => {
  const today = parseDay("2025-06-15")!;
  test("dates are real calendar days", () => {
    expect(formatDay(parseDay("2024-02-29")!)).toBe("2024-02-29");
    for (const bad of ["2025-02-29", "2025-13-01", "2025-00-10", "2025-1-01", "20250101", "2025-01-01T00:00:00Z", ""]) expect(parseDay(bad)).toBeNull();
  });
  test("default is the 365 days ending today; at most 3653 days; never backwards", () => {
    expect(rangeOf({}, today)).toEqual({ from: today - 364, to: today });
    const r = rangeOf({ from: "2015-06-19", to: "2025-06-18" }, today);
    expect(r.to - r.from + 1).toBe(3653);
    expect(() => rangeOf({ from: "2015-06-18", to: "2025-06-18" }, today)).toThrow(/3653/);
    expect(() => rangeOf({ from: "2025-06-02", to: "2025-06-01" }, today)).toThrow(/ends before/);
    expect(() => rangeOf({ to: "tomorrow" }, today)).toThrow(/YYYY-MM-DD/);
  });
});

describe("profile checks", () => {
  test("text caps count characters, refuse control characters, fold blank to null", () => {
    expect(checkText("bio", "é".repeat(500), 500)).toBe("é".repeat(500));
    expect(() => checkText("bio", "é".repeat(501), 500)).toThrow(/longer than 500/);
    expect(checkText("bio", "a\nb\tc", 500, true)).toBe("a\nb\tc");
    expect(() => checkText("location", "a\nb", 100)).toThrow(/control/);
    expect(() => checkText("bio", "a\u001bb", 500, true)).toThrow(/control/);
    expect(() => checkText("bio", "a\u2028b", 500, true)).toThrow(/control/);
    expect(checkText("bio", "   ", 500)).toBeNull();
  });
  test("links are http(s), at most 5", () => {
    expect(checkUrl("u", " https://a.example.com/x ")).toBe("https://a.example.com/x");
    for (const bad of [
      "javascript:alert(1)",
      "data:text/html,x",
      "//a.example.com",
      "a.example.com",
      "https://",
      "mailto:a@b.c",
      "https://a.example.com/\u0000",
    ])
      expect(() => checkUrl("u", bad)).toThrow(/http/);
    expect(() => checkLinks(Array.from({ length: 6 }, () => ({ label: "x", url: "https://a.example.com" })))).toThrow(/at most 5/);
    expect(checkLinks(null)).toEqual([]);
  });
});
