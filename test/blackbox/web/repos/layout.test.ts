// The repository layout's forms over HTTP (issue 33): Watch, Fork and Sync now answer by the one
// posted-form policy (CSRF first; anonymous: the sign-in form; a refusal the page can show: the
// fork page again with the reason; others: the error page with the API's status), each through
// the API's service; the layout's facts enter an immutable page's validator; a hostile
// description and homepage stay inert; a mirror has no Changes tab and its Sync now follows
// repo:sync; a private parent's name never reaches a fork's banner for someone who cannot read it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, startServer, type RunningServer } from "../../../helpers/server.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { csrfOf, getPage, postForm, textOf } from "../../../helpers/web.ts";

let server: RunningServer;
let g: GitSandbox;
let owner: { cookie: string; token: string };
let viewer: { cookie: string };
let outsider: { cookie: string };
let head = "";

const EVIL = `<script>alert("d")</script><img src=x onerror=alert(1)>`;
const get = (path: string, cookie?: string, headers: Record<string, string> = {}) => getPage(server, path, cookie, headers);

beforeAll(async () => {
  server = await startServer({ env: { SVC_MIRROR_ALLOW_PRIVATE: "1" } });
  g = gitSandbox("svc-web-layout-");
  const u = await createUser(server, { org: "layco", handle: "lay", email: "owner@layco.example" });
  const cookie = await login(server, u.email, u.password);
  owner = { cookie, token: (await mintTokenWithId(server, cookie, "layco", { scopes: ["repo:write"], label: "web" })).token };
  const v = await createUser(server, { org: "layco", handle: "vee", email: "viewer@layco.example", role: "viewer" });
  viewer = { cookie: await login(server, v.email, v.password) };
  const o = await createUser(server, { org: "elsewhere", handle: "oscar", email: "someone@elsewhere.example" });
  outsider = { cookie: await login(server, o.email, o.password) };
  const api = client(server, { token: owner.token });
  expect((await api.post("/v1/orgs/layco/repos", { name: "open", public: true, description: EVIL, homepage: "https://example.com/?q=<b>" })).status).toBe(201);
  expect((await api.post("/v1/orgs/layco/repos", { name: "hidden", public: false })).status).toBe(201);
  const dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  head = await commitFiles(g, dir, { "a.txt": "a\n" }, "first");
  for (const repo of ["open", "hidden"]) await g.ok(["push", "-q", repoUrl(server, "layco", repo, owner.token), "main"], { cwd: dir });
  const m = await client(server, { cookie }).post(
    "/v1/orgs/layco/repos",
    { name: "mirror", kind: "mirror", public: true, origin_url: `${server.url}/nobody/none.git` },
    { origin: server.url },
  );
  expect(m.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
});

describe("the layout", () => {
  test("a hostile description and homepage stay text; the homepage is a nofollow link", async () => {
    const r = await get("/layco/open");
    expect(r.status).toBe(200);
    expect(r.text).not.toMatch(/<script>alert|<img src=x/);
    expect(textOf(r.text)).toContain(EVIL);
    expect(r.text).toContain(`href="https://example.com/?q=&lt;b&gt;" rel="nofollow noreferrer ugc"`);
  });

  test("anonymous: counts and sign-in links, no forms", async () => {
    const r = await get("/layco/open");
    expect(r.text).not.toContain('action="/layco/open/watch"');
    expect(r.text).not.toContain('action="/layco/open/fork"');
    expect(r.text).toContain('href="/login?next=%2Flayco%2Fopen"');
    expect(textOf(r.text)).toContain("Watch 0 watchers");
    expect(textOf(r.text)).toContain("Fork 0 forks");
  });

  test("a mirror: no Changes tab; Sync now for writers only", async () => {
    const ownerPage = await get("/layco/mirror", owner.cookie);
    expect(ownerPage.status).toBe(200);
    const nav = /<nav class="tabs repo-tabs" aria-label="Repository">([\s\S]*?)<\/nav>/.exec(ownerPage.text)![1]!;
    expect(textOf(nav)).not.toContain("Changes");
    expect(textOf(nav)).toContain("Issues");
    expect(ownerPage.text).toContain('action="/layco/mirror/sync"');
    const viewerPage = await get("/layco/mirror", viewer.cookie);
    expect(viewerPage.text).not.toContain('action="/layco/mirror/sync"');
    // The post itself is refused by the API's rule, shown on the error page.
    const refused = await postForm(server, "/layco/mirror/sync", { csrf: csrfOf(viewerPage.text) }, { cookie: viewer.cookie });
    expect(refused.status).toBe(403);
    expect(textOf(refused.text)).toContain("syncing layco/mirror needs write access");
    const ok = await postForm(server, "/layco/mirror/sync", { csrf: csrfOf(ownerPage.text) }, { cookie: owner.cookie });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/layco/mirror");
    // Not a mirror: the API's 422 on the error page.
    const open = await get("/layco/open", owner.cookie);
    const notMirror = await postForm(server, "/layco/open/sync", { csrf: csrfOf(open.text) }, { cookie: owner.cookie });
    expect(notMirror.status).toBe(422);
  });
});

describe("watch", () => {
  test("CSRF first, anonymous gets the sign-in form, a private repository stays masked", async () => {
    const page = await get("/layco/open", viewer.cookie);
    expect((await postForm(server, "/layco/open/watch", { watch: "1" }, { cookie: viewer.cookie })).status).toBe(403);
    expect(
      (await postForm(server, "/layco/open/watch", { watch: "1", csrf: csrfOf(page.text) }, { cookie: viewer.cookie, origin: "https://evil.example" })).status,
    ).toBe(403);
    const anon = await postForm(server, "/layco/open/watch", { watch: "1" });
    expect(anon.status).toBe(401);
    expect(anon.text).toContain('action="/login"');
    const other = await get("/layco/open", outsider.cookie);
    const masked = await postForm(server, "/layco/hidden/watch", { watch: "1", csrf: csrfOf(other.text) }, { cookie: outsider.cookie });
    expect(masked.status).toBe(404);
    expect(textOf(masked.text)).not.toContain("hidden");
  });

  test("watch, back to the page it was pressed on, the count and state change; unwatch", async () => {
    const page = await get("/layco/open/commits/main", viewer.cookie);
    expect(textOf(page.text)).toContain("Watch 0 watchers");
    const on = await postForm(server, "/layco/open/watch", { watch: "1", csrf: csrfOf(page.text) }, { cookie: viewer.cookie });
    expect(on.status).toBe(303);
    // No Referer here: the repository's page.
    expect(on.headers.get("location")).toBe("/layco/open");
    const after = await get("/layco/open/issues", viewer.cookie);
    expect(textOf(after.text)).toContain("Unwatch 1 watcher");
    expect(after.text).toContain('name="watch" value="0"');
    expect((await client(server, { token: owner.token }).get("/v1/orgs/layco/repos/open")).body.watcher_count).toBe(1);
    const referred = await fetch(`${server.url}/layco/open/watch`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie: viewer.cookie,
        origin: server.url,
        referer: `${server.url}/layco/open/issues?state=closed`,
      },
      body: new URLSearchParams({ watch: "0", csrf: csrfOf(after.text) }).toString(),
      redirect: "manual",
    });
    expect(referred.status).toBe(303);
    expect(referred.headers.get("location")).toBe("/layco/open/issues?state=closed");
    expect(textOf((await get("/layco/open", viewer.cookie)).text)).toContain("Watch 0 watchers");
  });

  test("a page at a commit id is drawn again once the viewer's watch state changes (its validator covers the layout)", async () => {
    const path = `/layco/open/tree/${head}`;
    const first = await get(path, viewer.cookie);
    const etag = first.headers.get("etag")!;
    expect((await get(path, viewer.cookie, { "if-none-match": etag })).status).toBe(304);
    await postForm(server, "/layco/open/watch", { watch: "1", csrf: csrfOf(first.text) }, { cookie: viewer.cookie });
    const again = await get(path, viewer.cookie, { "if-none-match": etag });
    expect(again.status).toBe(200);
    expect(textOf(again.text)).toContain("Unwatch 1 watcher");
  });
});

describe("fork", () => {
  test("someone who may create repositories only in their namespace forks at once; the fork says where it came from", async () => {
    const page = await get("/layco/open", viewer.cookie);
    const r = await postForm(server, "/layco/open/fork", { csrf: csrfOf(page.text) }, { cookie: viewer.cookie });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/vee/open");
    const fork = await get("/vee/open", viewer.cookie);
    expect(fork.status).toBe(200);
    expect(fork.text).toMatch(/forked from <a href="\/layco\/open">layco\/open<\/a>/);
  });

  test("someone who may create repositories in several namespaces is asked; a taken name is the page again with the reason", async () => {
    const page = await get("/layco/open", owner.cookie);
    const ask = await postForm(server, "/layco/open/fork", { csrf: csrfOf(page.text) }, { cookie: owner.cookie });
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('name="org" value="lay"');
    expect(ask.text).toContain('name="org" value="layco"');
    // layco/open exists: the service's 409, with the form and what was typed.
    const taken = await postForm(server, "/layco/open/fork", { csrf: csrfOf(page.text), org: "layco", name: "open" }, { cookie: owner.cookie });
    expect(taken.status).toBe(409);
    expect(textOf(taken.text)).toContain("repository layco/open already exists");
    expect(taken.text).toContain('name="org" value="layco" id="fork-org-1" checked');
    const made = await postForm(server, "/layco/open/fork", { csrf: csrfOf(page.text), org: "layco", name: "open-copy" }, { cookie: owner.cookie });
    expect(made.status).toBe(303);
    expect(made.headers.get("location")).toBe("/layco/open-copy");
  });

  test("anonymous: the sign-in form; the fork page needs a session", async () => {
    const anon = await postForm(server, "/layco/open/fork", {});
    expect(anon.status).toBe(401);
    expect((await get("/layco/open/fork")).status).toBe(401);
  });

  test("a private parent's fork names it only to those who can read it", async () => {
    const page = await get("/layco/hidden", owner.cookie);
    const r = await postForm(server, "/layco/hidden/fork", { csrf: csrfOf(page.text), org: "lay", name: "hidden" }, { cookie: owner.cookie });
    expect(r.status).toBe(303);
    const own = await get("/lay/hidden", owner.cookie);
    expect(own.text).toContain('forked from <a href="/layco/hidden">layco/hidden</a>');
  });
});
