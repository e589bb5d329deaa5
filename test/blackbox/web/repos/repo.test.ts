// The repository pages over HTTP against the real server and real git pushes: highlighting and
// escaping of hostile names, contents and messages; downloads; the commit page's diff (binary,
// too large, root); history's path filter; ETag/304 on pages at a commit id; the new-repository
// form (CSRF, who may, refusals); private repositories masked exactly as the API masks them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, startServer, type RunningServer } from "../../../helpers/server.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { csrfOf, getPage, postForm, textOf } from "../../../helpers/web.ts";

let server: RunningServer;
let g: GitSandbox;
let owner: { cookie: string; token: string };
let viewer: { cookie: string };
let outsider: { cookie: string };
let first = "";
let second = "";

const EVIL_FILE = `<img src=x onerror=alert(1)>.ts`;
const EVIL_CONTENT = `const s = "</script><script>alert('x')</script>";\n// <b onmouseover="alert(2)">hi</b> & more\n`;
const EVIL_MESSAGE = `add <script>alert("msg")</script>\n\nbody with <iframe src="//evil.example"></iframe>`;
const BIG = "x".repeat(1100 * 1024) + "\n";
// Small in bytes, long in lines: 30,000 lines (a mebibyte of them would be a million table rows).
const LINES = "\n".repeat(29_999) + "last\n";
const PLAIN = Array.from({ length: 15000 }, (_, i) => `export const v${i} = ${i}; // line ${i}`).join("\n") + "\n";

const get = (path: string, cookie?: string, headers: Record<string, string> = {}) => getPage(server, path, cookie, headers);

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox("svc-web-repo-");
  const u = await createUser(server, { org: "pageco", email: "owner@pageco.example" });
  const cookie = await login(server, u.email, u.password);
  const { token } = await mintTokenWithId(server, cookie, "pageco", { scopes: ["repo:write"], label: "web" });
  owner = { cookie, token };
  const v = await createUser(server, { org: "pageco", email: "viewer@pageco.example", role: "viewer" });
  viewer = { cookie: await login(server, v.email, v.password) };
  const o = await createUser(server, { org: "elsewhere", email: "someone@elsewhere.example" });
  outsider = { cookie: await login(server, o.email, o.password) };
  const api = client(server, { token });
  for (const [name, isPublic] of [
    ["open", true],
    ["hidden", false],
  ] as const)
    expect((await api.post("/v1/orgs/pageco/repos", { name, public: isPublic })).status).toBe(201);
  const dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  first = await commitFiles(
    g,
    dir,
    { "src/app.ts": "export const a = 1;\nexport const b = 2;\n", "docs/guide.md": "guide\n", [EVIL_FILE]: EVIL_CONTENT, "q\"uote & 'apos'.txt": "quoted\n" },
    "first",
  );
  second = await commitFiles(
    g,
    dir,
    { "src/app.ts": "export const a = 1;\nexport const b = 3;\n", "logo.bin": new Uint8Array([0, 1, 2, 0, 255]), "big.txt": BIG, "plain.ts": PLAIN },
    EVIL_MESSAGE,
  );
  for (const repo of ["open", "hidden"]) await g.ok(["push", "-q", repoUrl(server, "pageco", repo, token), "main"], { cwd: dir });
  // A wide directory on its own branch: 1,001 files and a README that sorts after all of them.
  await g.ok(["checkout", "-q", "-b", "wide"], { cwd: dir });
  const many: Record<string, string> = { "many/readme.md": "# Wide readme\n" };
  for (let i = 0; i <= 1000; i++) many[`many/f${String(i).padStart(4, "0")}.txt`] = `${i}\n`;
  await commitFiles(g, dir, many, "wide");
  await g.ok(["push", "-q", repoUrl(server, "pageco", "open", token), "wide"], { cwd: dir });
  // A file long in lines, on its own branch.
  await g.ok(["checkout", "-q", "-b", "long", "main"], { cwd: dir });
  await commitFiles(g, dir, { "lines.txt": LINES }, "long");
  await g.ok(["push", "-q", repoUrl(server, "pageco", "open", token), "long"], { cwd: dir });
  await g.ok(["checkout", "-q", "main"], { cwd: dir });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
});

describe("files", () => {
  test("a file is highlighted by its language, every line anchored; hostile names and contents stay text", async () => {
    const tree = await get("/pageco/open");
    expect(tree.text).toContain("&lt;img src=x onerror=alert(1)&gt;.ts");
    expect(tree.text).not.toContain("<img src=x");
    expect(tree.text).toContain("q&quot;uote &amp; &#39;apos&#39;.txt");
    const file = await get(`/pageco/open/blob/main/${encodeURIComponent(EVIL_FILE)}`);
    expect(file.status).toBe(200);
    expect(file.text).not.toMatch(/<script>alert|<b onmouseover|<img src=x/);
    expect(file.text).toContain(`<span class="s">&quot;&lt;/script&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;</span>`);
    expect(file.text).toContain(`<tr id="L2"><td class="n"><a href="#L2">2</a></td><td class="l"><span class="m">`);
    expect(textOf(file.text)).toContain(`// <b onmouseover="alert(2)">hi</b> & more`);
    expect(file.text).toContain("TypeScript");
  });

  test("a directory lists 1,000 entries a page, with links to the rest; its README is found wherever it sorts", async () => {
    const first = await get("/pageco/open/tree/wide/many");
    expect(first.status).toBe(200);
    expect(first.text).toContain(`href="/pageco/open/blob/wide/many/f0999.txt"`);
    expect(first.text).not.toContain(`href="/pageco/open/blob/wide/many/f1000.txt"`);
    expect(textOf(first.text)).toContain("Entries 1–1,000 of 1,002");
    expect(first.text).toContain(`href="/pageco/open/tree/wide/many?offset=1000"`);
    expect(first.text).toContain(`<h1 id="user-content-wide-readme">Wide readme</h1>`);
    const next = await get("/pageco/open/tree/wide/many?offset=1000");
    expect(next.text).toContain(`href="/pageco/open/blob/wide/many/f1000.txt"`);
    expect(next.text).toContain(`href="/pageco/open/blob/wide/many/readme.md"`);
    expect(next.text).not.toContain(`many/f0999.txt"`);
    expect(next.text).toContain(`href="/pageco/open/tree/wide/many?offset=0"`);
    expect(textOf(next.text)).toContain("Entries 1,001–1,002 of 1,002");
  });

  test("a file above the highlighting bound is shown as plain text, still anchored", async () => {
    const r = await get("/pageco/open/blob/main/plain.ts");
    expect(r.status).toBe(200);
    expect(r.text).toContain(`<tr id="L9000"><td class="n"><a href="#L9000">9000</a></td><td class="l">export const v8999 = 8999; // line 8999</td></tr>`);
    expect(r.text).not.toMatch(/class="hl(js)?-/);
  });

  test("a file too large to show inline links to raw; binary likewise", async () => {
    for (const [path, words] of [
      ["big.txt", "too large to show here"],
      ["logo.bin", "This file is binary."],
    ]) {
      const r = await get(`/pageco/open/blob/main/${path}`);
      expect(r.text).toContain(words!);
      expect(r.text).toContain(`href="/pageco/open/raw/main/${path}"`);
    }
    const long = await get("/pageco/open/blob/long/lines.txt");
    expect(long.text).toContain("This file has 30,000 lines, more than a page shows (20,000).");
    expect(long.text).toContain('href="/pageco/open/raw/long/lines.txt"');
    expect(long.text).not.toContain('id="L2"');
  });

  test("a file of more lines than a page draws: its blame page says so instead of drawing them (the API still answers)", async () => {
    const r = await get("/pageco/open/blame/long/lines.txt", owner.cookie);
    expect(r.status).toBe(200);
    expect(r.text).toContain("This file has 30,000 lines, more than a page shows (20,000).");
    expect(r.text).not.toContain('id="L2"');
    const api = await client(server, { token: owner.token }).get("/v1/orgs/pageco/repos/open/blame/long?path=lines.txt");
    expect(api.status).toBe(200);
    expect((api.body as { lines: number }).lines).toBe(30_000);
    // 15,000 lines are still drawn.
    expect((await get("/pageco/open/blame/main/plain.ts", owner.cookie)).text).toContain('id="L15000"');
  });

  test("download is the raw bytes as an attachment, its name safe in the header", async () => {
    const r = await fetch(`${server.url}/pageco/open/raw/main/${encodeURIComponent("q\"uote & 'apos'.txt")}?download=1`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-disposition")).toBe(`attachment; filename="q_uote & 'apos'.txt"; filename*=UTF-8''q%22uote%20%26%20'apos'.txt`);
    expect(await r.text()).toBe("quoted\n");
    const plain = await fetch(`${server.url}/pageco/open/raw/main/src/app.ts`);
    expect(plain.headers.get("content-disposition")).toBeNull();
    const page = (await get("/pageco/open/blob/main/src/app.ts")).text;
    expect(page).toContain(`href="/pageco/open/raw/main/src/app.ts?download=1" download`);
  });
});

describe("history and commits", () => {
  test("history filtered by a path (in the URL or from the filter form), each commit linking to its page", async () => {
    const all = (await get("/pageco/open/commits/main")).text;
    expect(all).toContain(`href="/pageco/open/commit/${second}"`);
    expect(all).toContain("add &lt;script&gt;alert(&quot;msg&quot;)&lt;/script&gt;");
    expect(all).not.toMatch(/<script>alert|<iframe/);
    const docs = (await get("/pageco/open/commits/main/docs")).text;
    expect(docs).toContain(`href="/pageco/open/commit/${first}"`);
    expect(docs).not.toContain(second);
    const form = await get("/pageco/open/commits/main?path=docs/");
    expect({ status: form.status, location: form.headers.get("location") }).toEqual({ status: 303, location: "/pageco/open/commits/main/docs" });
    const none = (await get("/pageco/open/commits/main/logo.bin")).text;
    expect(none).toContain(`href="/pageco/open/commit/${second}"`);
    expect(none).not.toContain(`/commit/${first}"`);
  });

  test("the commit page: message, parents, and the diff per file with counts, binary and too-large files", async () => {
    const r = await get(`/pageco/open/commit/${second}`);
    expect(r.status).toBe(200);
    expect(r.text).not.toMatch(/<script>alert|<iframe/);
    expect(r.text).toContain("body with &lt;iframe src=&quot;//evil.example&quot;&gt;&lt;/iframe&gt;");
    expect(r.text).toContain(`href="/pageco/open/commit/${first}"`);
    expect(textOf(r.text)).toContain("4 files changed, +15001 −1");
    // Diff lines are highlighted per language (spans inside the code cell): the rows without them are the plain diff.
    const app = /<section class="box" id="diff-\d+"[^>]*><header><h3[^>]*>src\/app\.ts<\/h3>[\s\S]*?<\/section>/
      .exec(r.text)![0]
      .replace(/<\/?span[^>]*>/g, "");
    expect(app).toContain(`<tr class="del"><td class="o">2</td><td class="n"></td><td class="c">-export const b = 2;</td></tr>`);
    expect(app).toContain(`<tr class="add"><td class="o"></td><td class="n">2</td><td class="c">+export const b = 3;</td></tr>`);
    expect(app).toContain(`href="/pageco/open/blob/${second}/src/app.ts"`);
    const bin = /<h3[^>]*>logo\.bin<\/h3>[\s\S]*?<\/section>/.exec(r.text)![0];
    expect(bin).toContain("Binary file not shown.");
    const big = /<h3[^>]*>big\.txt<\/h3>[\s\S]*?<\/section>/.exec(r.text)![0];
    expect(big).toContain("too large to show");
    expect(r.text).toContain("file(s) over 1048576 bytes are listed without counts or patch");
  });

  test("a root commit diffs against the empty tree; an abbreviation works; an unknown id is 404", async () => {
    const root = await get(`/pageco/open/commit/${first.slice(0, 10)}`);
    expect(root.status).toBe(200);
    expect(root.text).toContain("root commit");
    expect(textOf(root.text)).toContain("4 files changed, +6 −0");
    expect(root.headers.get("etag")).toBeNull();
    expect((await get(`/pageco/open/commit/${"0".repeat(40)}`)).status).toBe(404);
  });
});

describe("ETag and 304 on pages at a commit id", () => {
  const pinned = () => [`/pageco/hidden/blob/${second}/src/app.ts`, `/pageco/hidden/tree/${second}/src`, `/pageco/hidden/commit/${second}`];

  test("the page at a full commit id carries an ETag; If-None-Match answers 304 with no body", async () => {
    for (const path of pinned()) {
      const r = await get(path, owner.cookie);
      const etag = r.headers.get("etag");
      expect({ path, status: r.status, etag: /^W\/"[A-Za-z0-9_-]{27}"$/.test(etag ?? "") }).toEqual({ path, status: 200, etag: true });
      expect(r.headers.get("cache-control")).toBe("private, no-cache");
      const again = await get(path, owner.cookie, { "if-none-match": etag! });
      expect({ path, status: again.status, body: again.text }).toEqual({ path, status: 304, body: "" });
      expect(again.headers.get("etag")).toBe(etag);
    }
  });

  test("at a branch there is no ETag (the branch may move)", async () => {
    const r = await get("/pageco/hidden/blob/main/src/app.ts", owner.cookie);
    expect(r.headers.get("etag")).toBeNull();
  });

  test("the tag is per viewer, and access is checked before a 304: an outsider with the owner's tag gets the API's 404", async () => {
    for (const path of pinned()) {
      const etag = (await get(path, owner.cookie)).headers.get("etag")!;
      const theirs = await get(path, viewer.cookie, { "if-none-match": etag });
      expect({ path, status: theirs.status }).toEqual({ path, status: 200 });
      expect(theirs.headers.get("etag")).not.toBe(etag);
      const out = await get(path, outsider.cookie, { "if-none-match": etag });
      expect({ path, status: out.status }).toEqual({ path, status: 404 });
      expect((await get(path, undefined, { "if-none-match": etag })).status).toBe(401);
    }
  });
});

describe("private repositories", () => {
  test("commit pages, downloads and the new pages are masked like the API", async () => {
    const paths = [
      `/pageco/hidden/commit/${second}`,
      "/pageco/hidden/raw/main/src/app.ts?download=1",
      "/pageco/hidden/commits/main/docs",
      "/pageco/hidden/commits/main?path=docs",
    ];
    for (const [name, cookie] of [
      ["anonymous", undefined],
      ["outsider", outsider.cookie],
    ] as const) {
      const api = await client(server, cookie ? { cookie } : undefined).get(`/v1/orgs/pageco/repos/hidden/commits/${second}`);
      for (const path of paths) {
        const r = await get(path, cookie);
        expect({ name, path, status: r.status }).toEqual({ name, path, status: api.status });
        expect(r.text).toContain(api.body.error);
        expect(r.text).not.toContain("export const");
        expect(r.headers.get("content-disposition")).toBeNull();
      }
    }
    expect((await get(paths[0]!, viewer.cookie)).status).toBe(200);
  });
});

describe("the new-repository form", () => {
  test("shown on the org page to those who may create one, not to a viewer or an outsider", async () => {
    expect((await get("/pageco", owner.cookie)).text).toContain(`action="/pageco/new"`);
    for (const cookie of [viewer.cookie, outsider.cookie, undefined]) expect((await get("/pageco", cookie)).text).not.toContain(`action="/pageco/new"`);
  });

  test("creates the repository through the API's service and goes to it", async () => {
    const token = csrfOf((await get("/pageco", owner.cookie)).text);
    const r = await postForm(
      server,
      "/pageco/new",
      { csrf: token, name: "from-web", description: "made <here>", visibility: "public" },
      { cookie: owner.cookie },
    );
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/pageco/from-web" });
    const repo = await client(server, { token: owner.token }).get("/v1/orgs/pageco/repos/from-web");
    expect(repo.body).toMatchObject({ name: "from-web", public: true, description: "made <here>" });
    const page = await get("/pageco/from-web");
    expect(page.text).toContain("This repository is empty");
    expect(page.text).toContain("made &lt;here&gt;");
    const priv = await postForm(server, "/pageco/new", { csrf: token, name: "private-one", visibility: "private" }, { cookie: owner.cookie });
    expect(priv.status).toBe(303);
    expect((await client(server, { token: owner.token }).get("/v1/orgs/pageco/repos/private-one")).body.public).toBe(false);
  });

  test("a refusal re-renders the form with the service's status and message, values kept and escaped", async () => {
    const token = csrfOf((await get("/pageco", owner.cookie)).text);
    const taken = await postForm(server, "/pageco/new", { csrf: token, name: "open", description: `<b>"x"</b>` }, { cookie: owner.cookie });
    expect(taken.status).toBe(409);
    expect(taken.text).toContain("already exists");
    expect(taken.text).toContain(`value="&lt;b&gt;&quot;x&quot;&lt;/b&gt;"`);
    const bad = await postForm(server, "/pageco/new", { csrf: token, name: "<bad name>" }, { cookie: owner.cookie });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain(`value="&lt;bad name&gt;"`);
    expect(bad.text).not.toContain("<bad name>");
  });

  test("cross-site posts, posts without the session's token and a viewer's post are refused; nothing is created", async () => {
    const token = csrfOf((await get("/pageco", owner.cookie)).text);
    const cases: [string, Record<string, string>, string | undefined, string | null][] = [
      ["cross-site origin", { csrf: token, name: "x1" }, owner.cookie, "https://evil.example"],
      ["no origin", { csrf: token, name: "x2" }, owner.cookie, null],
      ["no token", { name: "x3" }, owner.cookie, server.url],
      ["another session's token", { csrf: csrfOf((await get("/pageco", viewer.cookie)).text), name: "x4" }, owner.cookie, server.url],
      ["viewer", { csrf: csrfOf((await get("/pageco", viewer.cookie)).text), name: "x5" }, viewer.cookie, server.url],
    ];
    for (const [name, fields, cookie, origin] of cases) {
      const r = await postForm(server, "/pageco/new", fields, { cookie, origin });
      expect({ name, status: r.status }).toEqual({ name, status: 403 });
      expect((await client(server, { token: owner.token }).get(`/v1/orgs/pageco/repos/${fields.name}`)).status).toBe(404);
    }
    const anon = await postForm(server, "/pageco/new", { name: "x6" });
    expect(anon.status).toBe(401);
    // Issue 26: a 401 is the sign-in form and the service's 403 the form again (both were error pages).
    expect(anon.text).toContain(`action="/login"`);
    const viewerToken = csrfOf((await get("/pageco", viewer.cookie)).text);
    const refused = await postForm(server, "/pageco/new", { csrf: viewerToken, name: "x7", description: "kept" }, { cookie: viewer.cookie });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain(`action="/pageco/new"`);
    expect(refused.text).toContain(`value="x7"`);
  });
});
