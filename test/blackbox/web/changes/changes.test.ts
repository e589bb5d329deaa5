// The change pages over HTTP against the real server, real git pushes and the real lander: list
// filters, the open-a-change form, the change page (conversation tab; files tab: diff, patchsets,
// compare), its stack and queue, the
// land button (CSRF, who may, a head that moved), escaping and masking like the API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, startServer, type RunningServer } from "../../../helpers/server.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { csrfOf, getPage, postForm, textOf } from "../../../helpers/web.ts";

let server: RunningServer;
let g: GitSandbox;
let owner: { cookie: string; token: string };
let viewer: { cookie: string };
let outsider: { cookie: string };
let dir = "";
let main = "";

const EVIL_TITLE = `<script>alert("title")</script>`;
const EVIL_DESC = `Fixes **it**.\n\n<img src=x onerror=alert(1)> [x](javascript:alert(2))`;
const get = (path: string, cookie?: string, headers: Record<string, string> = {}) => getPage(server, path, cookie, headers);
const api = () => client(server, { token: owner.token });

/** Commits on a branch from `from` and pushes it to `repo`; answers the head. */
async function pushBranch(repo: string, name: string, from: string, files: Record<string, string>, message = name): Promise<string> {
  await g.ok(["checkout", "-q", "-B", name, from], { cwd: dir });
  const head = await commitFiles(g, dir, files, message);
  await g.ok(["push", "-q", "-f", repoUrl(server, "chg", repo, owner.token), name], { cwd: dir });
  return head;
}

/** Polls the API until change `n` is in one of `states`. */
async function settled(repo: string, n: number, states: string[]): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const c = (await api().get(`/v1/orgs/chg/repos/${repo}/changes/${n}`)).body;
    if (states.includes(c.state)) return c;
    if (Date.now() > deadline) throw new Error(`change #${n} still ${c.state}`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox("svc-web-changes-");
  const u = await createUser(server, { org: "chg", email: "owner@chg.example" });
  const cookie = await login(server, u.email, u.password);
  owner = { cookie, token: (await mintTokenWithId(server, cookie, "chg", { scopes: ["repo:write"], label: "web" })).token };
  const v = await createUser(server, { org: "chg", email: "viewer@chg.example", role: "viewer" });
  viewer = { cookie: await login(server, v.email, v.password) };
  const o = await createUser(server, { org: "far", email: "someone@far.example" });
  outsider = { cookie: await login(server, o.email, o.password) };
  for (const [name, isPublic] of [
    ["pub", true],
    ["priv", false],
  ] as const)
    expect((await api().post("/v1/orgs/chg/repos", { name, public: isPublic })).status).toBe(201);
  dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  main = await commitFiles(g, dir, { "a.txt": "a\n", "b.txt": "b\n" }, "seed");
  for (const repo of ["pub", "priv"]) await g.ok(["push", "-q", repoUrl(server, "chg", repo, owner.token), "main"], { cwd: dir });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
});

describe("opening a change from the form", () => {
  test("writers get the form; it opens a change through the API's service and goes to its page", async () => {
    await pushBranch("pub", "feature", main, { "c.txt": "one\ntwo\n" });
    const list = await get("/chg/pub/changes", owner.cookie);
    expect(list.text).toContain(`action="/chg/pub/changes"`);
    expect(list.text).toContain("<option selected>feature</option>");
    expect((await get("/chg/pub/changes", viewer.cookie)).text).not.toContain(`action="/chg/pub/changes"`);
    const r = await postForm(
      server,
      "/chg/pub/changes",
      { csrf: csrfOf(list.text), title: EVIL_TITLE, branch: "feature", target: "main", description: EVIL_DESC },
      { cookie: owner.cookie },
    );
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/chg/pub/changes/1" });
    expect((await api().get("/v1/orgs/chg/repos/pub/changes/1")).body).toMatchObject({
      number: 1,
      title: EVIL_TITLE,
      branch: "feature",
      state: "open",
      patchset: 1,
    });
  });

  test("a refusal is the form again with the service's status and reason; cross-site posts are refused", async () => {
    const token = csrfOf((await get("/chg/pub/changes", owner.cookie)).text);
    const same = await postForm(server, "/chg/pub/changes", { csrf: token, title: "t", branch: "main", target: "main" }, { cookie: owner.cookie });
    expect(same.status).toBe(422);
    expect(same.text).toContain("branch and target are the same branch");
    for (const [origin, fields] of [
      ["https://evil.example", { csrf: token }],
      [server.url, {}],
    ] as const) {
      const r = await postForm(server, "/chg/pub/changes", { ...fields, title: "x", branch: "feature", target: "main" }, { cookie: owner.cookie, origin });
      expect(r.status).toBe(403);
    }
    expect((await api().get("/v1/orgs/chg/repos/pub/changes?state=open")).body.changes.length).toBe(1);
  });
});

describe("the change page", () => {
  test("shows the change escaped, its description as sanitized Markdown, and its diff per file on the files tab", async () => {
    const r = await get("/chg/pub/changes/1");
    expect(r.status).toBe(200);
    expect(r.text).not.toMatch(/<script>alert|<img src=x|href="javascript:/);
    expect(r.text).toContain("&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt;");
    expect(r.text).toContain("<strong>it</strong>");
    // The conversation tab never draws the diff (it is the files tab's).
    expect(r.text).not.toContain("+one");
    const files = await get("/chg/pub/changes/1/files");
    expect(files.status).toBe(200);
    expect(files.text).not.toMatch(/<script>alert|<img src=x|href="javascript:/);
    expect(files.text).toContain("&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt;");
    expect(textOf(files.text)).toContain("1 file changed, +2 −0");
    expect(files.text).toContain(`<tr class="add"><td class="o"></td><td class="n">1</td><td class="c">+one</td></tr>`);
    expect(files.text).toMatch(/<h3[^>]*>c\.txt<\/h3><span class="badge">added<\/span>/);
  });

  test("the list filters by state", async () => {
    expect((await get("/chg/pub/changes")).text).toContain(`href="/chg/pub/changes/1"`);
    expect((await get("/chg/pub/changes?state=open")).text).toContain(`href="/chg/pub/changes/1"`);
    expect((await get("/chg/pub/changes?state=landed")).text).not.toContain(`href="/chg/pub/changes/1"`);
    expect((await get("/chg/pub/changes?state=all")).text).toContain(`href="/chg/pub/changes/1"`);
  });

  test("a push adds a patchset: switch to an older one, or compare two (the interdiff)", async () => {
    await g.ok(["checkout", "-q", "feature"], { cwd: dir });
    await commitFiles(g, dir, { "c.txt": "one\nTWO\n" }, "second");
    await g.ok(["push", "-q", repoUrl(server, "chg", "pub", owner.token), "feature"], { cwd: dir });
    expect((await api().get("/v1/orgs/chg/repos/pub/changes/1")).body.patchset).toBe(2);
    const ps = (await api().get("/v1/orgs/chg/repos/pub/changes/1/patchsets")).body.patchsets;
    expect(ps.map((p: { patchset: number }) => p.patchset)).toEqual([1, 2]);
    const now = await get("/chg/pub/changes/1/files");
    expect(now.text).toContain(`href="/chg/pub/changes/1/files?ps=1"`);
    expect(now.text).toContain("+TWO");
    // The conversation's timeline tells of the push, linking to the patchset and the interdiff.
    const talk = textOf((await get("/chg/pub/changes/1")).text);
    expect(talk).toContain("Pushed patchset 2");
    expect((await get("/chg/pub/changes/1")).text).toContain(`href="/chg/pub/changes/1/files?ps=2&amp;against=1"`);
    const old = await get("/chg/pub/changes/1/files?ps=1");
    expect(old.text).toContain("Patchset 1 (not the current one)");
    expect(old.text).toContain("+two");
    expect(old.text).not.toContain("+TWO");
    const inter = await get("/chg/pub/changes/1/files?ps=2&against=1");
    expect(inter.text).toContain("Changes from patchset 1 to patchset 2");
    expect(inter.text).toContain(`<td class="c">-two</td>`);
    expect(inter.text).toContain(`<td class="c">+TWO</td>`);
    expect(textOf(inter.text)).toContain("1 file changed, +1 −1");
    // An unknown patchset falls back to the current one; the API says 404.
    expect((await get("/chg/pub/changes/1/files?ps=9")).text).toContain("+TWO");
    expect((await api().get("/v1/orgs/chg/repos/pub/changes/1/patchsets/9/diff")).status).toBe(404);
    expect((await api().get("/v1/orgs/chg/repos/pub/changes/1/patchsets/2/diff?against=1")).body.files[0].patch).toBe("@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
  });

  test("a stack shows the changes beneath and above", async () => {
    const lower = (await api().get("/v1/orgs/chg/repos/pub/changes/1")).body.head;
    await pushBranch("pub", "on-top", lower, { "d.txt": "d\n" });
    const top = await api().post("/v1/orgs/chg/repos/pub/changes", { title: "on top", branch: "on-top", depends_on: 1 });
    expect(top.status).toBe(201);
    const page = (await get(`/chg/pub/changes/${top.body.number}`)).text;
    expect(page).toContain(`id="stack-h"`);
    expect(page).toContain(`href="/chg/pub/changes/1"`);
    const lowerPage = (await get("/chg/pub/changes/1")).text;
    expect(lowerPage).toContain(`href="/chg/pub/changes/${top.body.number}"`);
    // Closed again so the land tests below land #1 alone.
    expect((await api().patch(`/v1/orgs/chg/repos/pub/changes/${top.body.number}`, { state: "closed" })).status).toBe(200);
  });
});

describe("the land button", () => {
  test("shown to writers only; a viewer's post is refused like the API (403)", async () => {
    expect((await get("/chg/pub/changes/1", owner.cookie)).text).toContain(`action="/chg/pub/changes/1/land"`);
    for (const cookie of [viewer.cookie, outsider.cookie, undefined]) expect((await get("/chg/pub/changes/1", cookie)).text).not.toContain("/land");
    const page = (await get("/chg/pub/changes/1", viewer.cookie)).text;
    const r = await postForm(server, "/chg/pub/changes/1/land", { csrf: csrfOf(page) }, { cookie: viewer.cookie });
    expect(r.status).toBe(403);
    expect((await api().get("/v1/orgs/chg/repos/pub/changes/1")).body.state).toBe("open");
  });

  test("cross-site posts and posts without the session's token queue nothing", async () => {
    const token = csrfOf((await get("/chg/pub/changes/1", owner.cookie)).text);
    for (const [name, fields, origin] of [
      ["cross-site", { csrf: token }, "https://evil.example"],
      ["no origin", { csrf: token }, null],
      ["no token", {}, server.url],
    ] as const) {
      const r = await postForm(server, "/chg/pub/changes/1/land", fields, { cookie: owner.cookie, origin });
      expect({ name, status: r.status }).toEqual({ name, status: 403 });
    }
    expect((await api().get("/v1/orgs/chg/repos/pub/changes/1")).body.state).toBe("open");
  });

  test("a page whose head is no longer the change's lands nothing (409)", async () => {
    const page = (await get("/chg/pub/changes/1", owner.cookie)).text;
    const r = await postForm(server, "/chg/pub/changes/1/land", { csrf: csrfOf(page), head: main }, { cookie: owner.cookie });
    expect(r.status).toBe(409);
    expect(r.text).toContain("moved to patchset 2 since this page was loaded");
    expect((await api().get("/v1/orgs/chg/repos/pub/changes/1")).body.state).toBe("open");
  });

  test("the button queues the change; the lander lands it; the page says so", async () => {
    const page = (await get("/chg/pub/changes/1", owner.cookie)).text;
    const head = /name="head" value="([0-9a-f]{40})"/.exec(page)![1]!;
    const r = await postForm(server, "/chg/pub/changes/1/land", { csrf: csrfOf(page), head }, { cookie: owner.cookie });
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/chg/pub/changes/1" });
    const done = await settled("pub", 1, ["landed", "ejected"]);
    expect(done.state).toBe("landed");
    const after = (await get("/chg/pub/changes/1", owner.cookie)).text;
    expect(after).toContain("<strong>Landed</strong>");
    expect(after).toContain(`href="/chg/pub/commit/${done.landed_commit}"`);
    expect(after).not.toContain("/land");
    expect((await get("/chg/pub/changes?state=landed")).text).toContain(`href="/chg/pub/changes/1"`);
  });
});

describe("private repositories", () => {
  test("change pages and forms answer an outsider or anonymous caller exactly like the API", async () => {
    await pushBranch("priv", "secret-work", main, { "s.txt": "secret\n" });
    expect((await api().post("/v1/orgs/chg/repos/priv/changes", { title: "secret change", branch: "secret-work" })).status).toBe(201);
    for (const [name, cookie] of [
      ["anonymous", undefined],
      ["outsider", outsider.cookie],
    ] as const) {
      const c = client(server, cookie ? { cookie } : undefined);
      const apiAnswer = await c.get("/v1/orgs/chg/repos/priv/changes/1");
      for (const path of ["/chg/priv/changes", "/chg/priv/changes/1", "/chg/priv/changes/1/files", "/chg/priv/changes/1/files?ps=1&comment=s.txt:new:1"]) {
        const r = await get(path, cookie);
        expect({ name, path, status: r.status }).toEqual({ name, path, status: apiAnswer.status });
        expect(r.text).toContain(apiAnswer.body.error);
        expect(r.text).not.toContain("secret change");
      }
      if (cookie) {
        const token = csrfOf((await get("/", cookie)).text);
        const land = await postForm(server, "/chg/priv/changes/1/land", { csrf: token }, { cookie });
        expect({ name, status: land.status }).toEqual({ name, status: 404 });
      }
    }
    expect((await api().get("/v1/orgs/chg/repos/priv/changes/1")).body.state).toBe("open");
    expect((await get("/chg/priv/changes/1", viewer.cookie)).status).toBe(200);
  });
});
