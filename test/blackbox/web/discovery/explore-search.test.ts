// The explore and search pages over real HTTP (issue 33): explore lists public repositories by
// recent activity (a push moves a repository to the top), never a private one, a page at a time;
// search finds what the API's search finds for the same caller, issues only in a repository the
// caller may read (a hidden one is the same answer as a missing one), and every typed value is
// escaped and bounded.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, person, type Person } from "../../../helpers/api.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { startServer, type RunningServer } from "../../../helpers/server.ts";

const T = 120_000;
let server: RunningServer;
let g: GitSandbox;
let ada: Person;
let cy: Person;
let adaToken = "";

async function get(path: string, who?: Person) {
  const res = await fetch(server.url + path, { headers: who ? { cookie: who.cookie } : {}, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** `org/name` of each repository listed on a page, in order. */
function listed(text: string): string[] {
  return [...text.matchAll(/<li><a href="\/([^/"]+)\/([^/"]+)"><strong>/g)].map((m) => `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`);
}

function nextLink(text: string): string | null {
  const m = /<a href="(\/(?:explore|search)\?[^"]*cursor=[^"]+)">More /.exec(text);
  return m ? m[1]!.replaceAll("&amp;", "&") : null;
}

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox("svc-explore-");
  ada = await person(server, "acme", "ada@example.com", "owner", { handle: "ada" });
  cy = await person(server, "beta", "cy@example.com", "owner", { handle: "cy" });
  adaToken = (await mintTokenWithId(server, ada.cookie, "acme", { scopes: ["repo:write"], label: "git" })).token;
  const a = caller(server, ada);
  const c = caller(server, cy);
  // One at a time: explore's order is the order of creation until something is pushed.
  for (const [who, org, name, pub, description] of [
    [a, "acme", "alpha", true, "first public widget"],
    [a, "acme", "bravo", true, "second"],
    [a, "acme", "hidden-widget", false, "a private widget"],
    [c, "beta", "charlie", true, "third"],
    [c, "beta", "secret-widget", false, "beta's private widget"],
  ] as const) {
    expect((await who.post(`/v1/orgs/${org}/repos`, { name, public: pub, description })).status).toBe(201);
  }
  for (const [org, repo, title, who] of [
    ["acme", "hidden-widget", "Gizmo breaks on Tuesdays", a],
    ["acme", "alpha", "Gizmo is slow", a],
    ["acme", "alpha", "Unrelated crash", a],
  ] as const) {
    expect((await who.post(`/v1/orgs/${org}/repos/${repo}/issues`, { title })).status).toBe(201);
  }
}, T);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
});

describe("explore", () => {
  test("public repositories, most recently active first; a push moves one to the top; private never listed", async () => {
    const before = await get("/explore", ada);
    expect(before.status).toBe(200);
    expect(listed(before.text)).toEqual(["beta/charlie", "acme/bravo", "acme/alpha"]);
    const dir = await initRepo(g);
    await commitFiles(g, dir, { "README.md": "# alpha\n" }, "first");
    await g.ok(["push", "-q", repoUrl(server, "acme", "alpha", adaToken), "main"], { cwd: dir });
    // A push to a private repository moves it too, but it is still never listed.
    await g.ok(["push", "-q", repoUrl(server, "acme", "hidden-widget", adaToken), "main"], { cwd: dir });
    for (const who of [undefined, ada, cy]) {
      const after = await get("/explore", who);
      expect(listed(after.text)).toEqual(["acme/alpha", "beta/charlie", "acme/bravo"]);
      expect(after.text).not.toContain("hidden-widget");
      expect(after.text).not.toContain("secret-widget");
    }
  });

  test("pages by cursor: each public repository once, in order", async () => {
    const a = caller(server, ada);
    for (let i = 0; i < 32; i += 8) {
      await Promise.all(Array.from({ length: 8 }, (_, j) => a.post("/v1/orgs/acme/repos", { name: `bulk-${String(i + j).padStart(2, "0")}`, public: true })));
    }
    const seen: string[] = [];
    let path: string | null = "/explore";
    for (let n = 0; path && n < 5; n++) {
      const r = await get(path);
      expect(r.status).toBe(200);
      seen.push(...listed(r.text));
      path = nextLink(r.text);
    }
    expect(path).toBeNull();
    expect(seen.length).toBe(35);
    expect(new Set(seen).size).toBe(35);
    expect(seen.slice(-3)).toEqual(["acme/alpha", "beta/charlie", "acme/bravo"]);
  });

  test("a cursor it did not make is refused", async () => {
    const r = await get("/explore?cursor=bm9wZQ");
    expect(r.status).toBe(400);
    expect(r.text).toContain("invalid cursor");
  });
});

describe("search page", () => {
  test("repositories: the same visibility as the API, with a count", async () => {
    const anon = await get("/search?q=widget");
    expect(anon.status).toBe(200);
    expect(listed(anon.text)).toEqual(["acme/alpha"]);
    expect(anon.text).toContain("1 repository");
    const mine = await get("/search?q=widget", ada);
    expect(listed(mine.text).sort()).toEqual(["acme/alpha", "acme/hidden-widget"]);
    expect(mine.text).not.toContain("secret-widget");
    expect(mine.text).toContain("2 repositories");
    const theirs = await get("/search?q=widget", cy);
    expect(listed(theirs.text).sort()).toEqual(["acme/alpha", "beta/secret-widget"]);
    const api = await caller(server, cy).get("/v1/search/repos?q=widget");
    expect(api.body.hits.map((h: { org: string; name: string }) => `${h.org}/${h.name}`).sort()).toEqual(listed(theirs.text).sort());
  });

  test("pages repository results by cursor", async () => {
    const seen: string[] = [];
    let path: string | null = "/search?q=bulk";
    for (let n = 0; path && n < 4; n++) {
      const r = await get(path);
      expect(r.status).toBe(200);
      expect(r.text).toContain("32 repositories");
      seen.push(...listed(r.text));
      path = nextLink(r.text);
    }
    expect(seen).toEqual(Array.from({ length: 32 }, (_, i) => `acme/bulk-${String(i).padStart(2, "0")}`));
  });

  test("issues of one repository; a hidden repository is the same answer as a missing one", async () => {
    const pub = await get("/search?type=issues&repo=acme/alpha&q=gizmo");
    expect(pub.status).toBe(200);
    expect(pub.text).toContain("Gizmo is slow");
    expect(pub.text).not.toContain("Unrelated crash");
    expect(pub.text).toContain("1 issue, open and closed");
    // The header box on this page keeps the scope.
    expect(pub.text).toContain(`<input type="hidden" name="repo" value="acme/alpha">`);
    const mine = await get("/search?type=issues&repo=acme/hidden-widget&q=gizmo", ada);
    expect(mine.text).toContain("Gizmo breaks on Tuesdays");
    const hidden = await get("/search?type=issues&repo=acme/hidden-widget&q=gizmo", cy);
    const missing = await get("/search?type=issues&repo=acme/no-such&q=gizmo", cy);
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.text).not.toContain("Tuesdays");
    expect(hidden.text.replaceAll("hidden-widget", "X")).toBe(missing.text.replaceAll("no-such", "X"));
    const anon = await get("/search?type=issues&repo=acme/hidden-widget&q=gizmo");
    expect(anon.status).toBe(404);
    expect(anon.text).not.toContain("Tuesdays");
    // Unscoped, the issues tab says how to pick a repository; code is said not to be searched.
    expect((await get("/search?type=issues&q=gizmo")).text).toContain("Issues are searched one repository at a time");
    expect((await get("/search?type=code&q=gizmo")).text).toContain("Code is not searched");
  });

  test("empty, hostile, too long and malformed queries", async () => {
    const empty = await get("/search");
    expect(empty.status).toBe(200);
    expect(empty.text).toContain("Type words to search");
    const hostile = `"><script>alert(1)</script><img src=x onerror=alert(2)>`;
    for (const type of ["repos", "issues", "code"]) {
      const r = await get(`/search?type=${type}&q=${encodeURIComponent(hostile)}&repo=${encodeURIComponent(hostile)}`);
      expect(r.text).not.toContain("<script>alert");
      expect(r.text).not.toContain("<img src=x");
      expect(r.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
    }
    const long = await get(`/search?q=${"a".repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.text).toContain("longer than 200 characters");
    const huge = await get(`/search?q=${"a".repeat(6000)}`);
    expect(huge.status).toBe(400);
    const badCursor = await get("/search?q=widget&cursor=bm9wZQ");
    expect(badCursor.status).toBe(400);
    expect(badCursor.text).toContain("invalid cursor");
  });

  test("the header carries the search box and the Explore link on every page", async () => {
    for (const path of ["/", "/explore", "/acme/alpha", "/login"]) {
      const r = await get(path);
      expect(r.text).toContain(`<form class="top-search" method="get" action="/search" role="search"`);
      expect(r.text).toContain(`<a href="/explore">Explore</a>`);
    }
  });

  test("explore and search are reserved: no org can take them", async () => {
    for (const name of ["explore", "search"]) {
      const r = await server.cli([
        "user-create",
        "--org",
        name,
        "--email",
        `${name}@example.com`,
        "--name",
        name,
        "--password",
        "correct horse battery staple",
      ]);
      expect(r.code).not.toBe(0);
    }
  });
});
