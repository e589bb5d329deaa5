// The compare pages over HTTP against the real server and real git pushes (issue 33): the pickers
// and their redirect, a comparison of branches with slashes, tags and ids, two dots and the short
// form redirected, "nothing to compare", unknown refs and bad specs at the API's status, the
// "Open a change" form for writers only (its post opening the change, which the page then links
// to), big files collapsed, hostile branch and file names escaped, private repositories masked
// exactly as the API masks them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, startServer, type RunningServer } from "../../../helpers/server.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { csrfOf, getPage, postForm, textOf } from "../../../helpers/web.ts";

let server: RunningServer;
let g: GitSandbox;
let owner: { cookie: string; token: string };
let viewer: { cookie: string };
let outsider: { cookie: string };
let root = "";
let featureTip = "";

const EVIL_FILE = `<img src=x onerror=alert(1)>.ts`;
const EVIL_BRANCH = `x"><script>alert(1)</script>`;
const BIG = Array.from({ length: 2000 }, (_, i) => `line ${i}`).join("\n") + "\n";

const get = (path: string, cookie?: string) => getPage(server, path, cookie);
/** The page's text with runs of white space as one space. */
const words = (markup: string) => textOf(markup).replace(/\s+/g, " ");

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox("svc-web-compare-");
  const u = await createUser(server, { org: "cmp", email: "owner@cmp.example" });
  const cookie = await login(server, u.email, u.password);
  const { token } = await mintTokenWithId(server, cookie, "cmp", { scopes: ["repo:write"], label: "web" });
  owner = { cookie, token };
  const v = await createUser(server, { org: "cmp", email: "viewer@cmp.example", role: "viewer" });
  viewer = { cookie: await login(server, v.email, v.password) };
  const o = await createUser(server, { org: "elsewhere", email: "someone@elsewhere.example" });
  outsider = { cookie: await login(server, o.email, o.password) };
  const api = client(server, { token });
  for (const [name, isPublic] of [
    ["open", true],
    ["hidden", false],
    ["empty", true],
  ] as const)
    expect((await api.post("/v1/orgs/cmp/repos", { name, public: isPublic })).status).toBe(201);
  const dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  root = await commitFiles(g, dir, { "src/app.ts": "export const a = 1;\n" }, "first");
  await g.ok(["tag", "v1.0"], { cwd: dir });
  await g.ok(["checkout", "-q", "-b", "feature/upload"], { cwd: dir });
  await commitFiles(g, dir, { "src/app.ts": "export const a = 2;\n", [EVIL_FILE]: "evil\n" }, "Raise a\n\nBecause two is better.");
  featureTip = await commitFiles(g, dir, { "big.txt": BIG }, "Grow <b>big</b>");
  await g.ok(["checkout", "-q", "-b", EVIL_BRANCH], { cwd: dir });
  await commitFiles(g, dir, { "evil.txt": "x\n" }, "evil branch");
  await g.ok(["checkout", "-q", "main"], { cwd: dir });
  await commitFiles(g, dir, { "docs.md": "docs\n" }, "docs on main");
  await g.ok(["checkout", "-q", "-b", "solo"], { cwd: dir });
  await commitFiles(g, dir, { "solo.txt": "solo\n" }, "Fix the solo thing\n\nIt was <i>lonely</i>.");
  await g.ok(["checkout", "-q", "main"], { cwd: dir });
  for (const repo of ["open", "hidden"])
    await g.ok(["push", "-q", repoUrl(server, "cmp", repo, token), "main", "feature/upload", EVIL_BRANCH, "solo", "v1.0"], { cwd: dir });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
});

describe("the pickers", () => {
  test("the form offers the branches and tags, the default branch as base; sent, it leads to the comparison's address", async () => {
    const r = await get("/cmp/open/compare");
    expect(r.status).toBe(200);
    expect(r.text).toContain('<form class="compare-pick" method="get" action="/cmp/open/compare"');
    expect(r.text).toContain('id="compare-base" type="text" name="base" list="compare-refs" value="main"');
    expect(r.text).toContain('value="feature/upload"');
    expect(r.text).toContain('<option value="v1.0">tag</option>');
    // The repository layout, on its Code tab.
    expect(r.text).toMatch(/<a href="\/cmp\/open" aria-current="page">[^<]*(<svg[\s\S]*?<\/svg>)?\s*Code<\/a>/);
    const sent = await get("/cmp/open/compare?base=main&head=feature%2Fupload");
    expect({ status: sent.status, location: sent.headers.get("location") }).toEqual({ status: 302, location: "/cmp/open/compare/main...feature/upload" });
    // Only a head: the default branch is the base.
    expect((await get("/cmp/open/compare?head=v1.0")).headers.get("location")).toBe("/cmp/open/compare/main...v1.0");
  });

  test("an empty repository: the pickers say there is nothing to compare yet; any spec is the unknown ref's 404", async () => {
    const r = await get("/cmp/empty/compare");
    expect(r.status).toBe(200);
    expect(words(r.text)).toContain("This repository has no branches yet: push two to compare them.");
    expect((await get("/cmp/empty/compare/main...topic")).status).toBe(404);
  });

  test("two dots and the short form lead to the three-dot address; an empty spec is the pickers", async () => {
    const two = await get("/cmp/open/compare/main..feature/upload");
    expect({ status: two.status, location: two.headers.get("location") }).toEqual({ status: 302, location: "/cmp/open/compare/main...feature/upload" });
    expect((await get("/cmp/open/compare/feature/upload")).headers.get("location")).toBe("/cmp/open/compare/main...feature/upload");
    expect((await get("/cmp/open/compare/")).status).toBe(200);
  });
});

describe("a comparison", () => {
  test("summary, merge base, commits oldest first, the diff, and the prefilled form for a writer", async () => {
    const r = await get("/cmp/open/compare/main...feature/upload", owner.cookie);
    expect(r.status).toBe(200);
    const text = words(r.text);
    expect(text).toContain("feature/upload is 2 commits ahead of and 1 commit behind main.");
    expect(r.text).toContain(`href="/cmp/open/commit/${root}"`);
    expect(text.indexOf("Raise a")).toBeLessThan(text.indexOf("Grow <b>big</b>"));
    expect(r.text).not.toContain("<b>big</b>");
    expect(r.text).toContain(`href="/cmp/open/commit/${featureTip}"`);
    // The diff is from the merge base: main's own file is not in it.
    expect(text).toContain("3 files changed");
    expect(r.text).not.toContain("docs.md");
    // The form: branch and target hidden, the title from the branch, the subjects listed.
    expect(r.text).toContain('<form class="stack-wide pad" method="post" action="/cmp/open/changes">');
    expect(r.text).toContain('<input type="hidden" name="branch" value="feature/upload"><input type="hidden" name="target" value="main">');
    expect(r.text).toContain('name="title" required maxlength="200" value="Upload"');
    expect(r.text).toContain("- Raise a\n- Grow &lt;b&gt;big&lt;/b&gt;</textarea>");
  });

  test("one commit prefills its subject and body; an id as a side gives no form", async () => {
    const r = await get("/cmp/open/compare/main...solo", owner.cookie);
    expect(r.text).toContain('name="title" required maxlength="200" value="Fix the solo thing"');
    expect(r.text).toContain(">It was &lt;i&gt;lonely&lt;/i&gt;.</textarea>");
    const byId = await get(`/cmp/open/compare/${featureTip}~1...feature/upload`, owner.cookie);
    expect(byId.status).toBe(200);
    expect(byId.text).not.toContain('action="/cmp/open/changes"');
    expect(words(byId.text)).toContain("is 1 commit ahead of");
  });

  test("tags, abbreviated ids and ancestry suffixes compare too", async () => {
    for (const spec of ["v1.0...main", `${root.slice(0, 10)}...feature/upload`, "main~1...main"]) {
      const r = await get(`/cmp/open/compare/${spec}`);
      expect({ spec, status: r.status }).toEqual({ spec, status: 200 });
    }
    expect(words((await get("/cmp/open/compare/v1.0...main")).text)).toContain("main is 1 commit ahead of and 0 commits behind v1.0.");
  });

  test("nothing to compare: 200 with the reason and a way to swap the sides", async () => {
    const r = await get("/cmp/open/compare/main...v1.0", owner.cookie);
    expect(r.status).toBe(200);
    expect(words(r.text)).toContain("There isn't anything to compare main already has every commit of v1.0.");
    expect(r.text).toContain('href="/cmp/open/compare/v1.0...main">Compare the other way</a>');
    expect(r.text).not.toContain('action="/cmp/open/changes"');
    const same = await get("/cmp/open/compare/main...main");
    expect(words(same.text)).toContain("main and main are the same commit.");
  });

  test("an unknown ref is the API's 404 and a bad spec its 400, with the pickers to try again", async () => {
    const api = client(server, { token: owner.token });
    for (const [spec, status] of [
      ["main...nope", 404],
      ["nope...main", 404],
      ["...main", 400],
    ] as const) {
      const r = await get(`/cmp/open/compare/${spec}`);
      const a = await api.get(`/v1/orgs/cmp/repos/open/compare/${spec}`);
      expect({ spec, page: r.status, api: a.status }).toEqual({ spec, page: status, api: status });
      expect(textOf(r.text)).toContain(a.body.error);
      expect(r.text).toContain('class="compare-pick"');
    }
    const long = await get(`/cmp/open/compare/main...${"a".repeat(2000)}`);
    expect(long.status).toBe(400);
  });

  test("readers see no form: anonymous a sign-in link back here, a signed-in reader why not", async () => {
    const anon = await get("/cmp/open/compare/main...feature/upload");
    expect(anon.status).toBe(200);
    expect(anon.text).not.toContain('action="/cmp/open/changes"');
    expect(anon.text).toContain(`<a href="/login?next=${encodeURIComponent("/cmp/open/compare/main...feature/upload")}">Sign in</a> to open a change`);
    const reader = await get("/cmp/open/compare/main...feature/upload", viewer.cookie);
    expect(reader.text).not.toContain('action="/cmp/open/changes"');
    expect(words(reader.text)).toContain("Opening a change here takes write access to cmp/open.");
  });

  test("the form's post opens the change and lands on its page", async () => {
    const r = await get("/cmp/open/compare/main...feature/upload", owner.cookie);
    const sent = await postForm(
      server,
      "/cmp/open/changes",
      { csrf: csrfOf(r.text), branch: "feature/upload", target: "main", title: "Upload", description: "- Raise a" },
      { cookie: owner.cookie },
    );
    expect(sent.status).toBe(303);
    const at = sent.headers.get("location")!;
    expect(at).toMatch(/^\/cmp\/open\/changes\/\d+$/);
    const change = await client(server, { token: owner.token }).get(`/v1/orgs/cmp/repos/open${at.slice("/cmp/open".length)}`);
    expect({ branch: change.body.branch, target: change.body.target, title: change.body.title }).toEqual({
      branch: "feature/upload",
      target: "main",
      title: "Upload",
    });
    // The comparison now links to it (and still offers the form).
    const again = await get("/cmp/open/compare/main...feature/upload", owner.cookie);
    expect(words(again.text)).toContain(`Already open from feature/upload onto main: #${change.body.number} Upload.`);
    expect(again.text).toContain(`<a href="${at}">`);
    expect(again.text).toContain('action="/cmp/open/changes"');
  });

  test("a reader who posts the form anyway gets the API's refusal, and no change is opened", async () => {
    const page = await get("/cmp/open/compare/main...solo", viewer.cookie);
    const sent = await postForm(
      server,
      "/cmp/open/changes",
      { csrf: csrfOf(page.text), branch: "solo", target: "main", title: "Sneaky", description: "" },
      { cookie: viewer.cookie },
    );
    expect(sent.status).toBe(403);
    const list = await client(server, { token: owner.token }).get("/v1/orgs/cmp/repos/open/changes?state=open");
    expect(list.body.changes.map((c: { title: string }) => c.title)).not.toContain("Sneaky");
  });

  test("a file past the page's line budget is collapsed; ?file= draws it", async () => {
    const r = await get("/cmp/open/compare/main...feature/upload");
    expect(r.text).toContain('<a href="/cmp/open/compare/main...feature/upload?file=big.txt#diff-2">Load diff</a>');
    expect(r.text).not.toContain("line 1999");
    const open = await get("/cmp/open/compare/main...feature/upload?file=big.txt");
    expect(open.text).toContain("+line 1999");
  });

  test("hostile branch and file names stay text", async () => {
    const r = await get(`/cmp/open/compare/main...${encodeURIComponent(EVIL_BRANCH).replace(/%2F/g, "/")}`, owner.cookie);
    expect(r.status).toBe(200);
    expect(r.text).not.toMatch(/<script>alert|<img src=x/);
    expect(r.text).toContain("&lt;img src=x onerror=alert(1)&gt;.ts");
    expect(r.text).toContain('value="x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    // The pickers' redirect keeps the name whole, escaped.
    const sent = await get(`/cmp/open/compare?base=main&head=${encodeURIComponent(EVIL_BRANCH)}`);
    expect(sent.headers.get("location")).toBe(`/cmp/open/compare/main...${encodeURIComponent('x"><script>alert(1)<')}/${encodeURIComponent("script>")}`);
  });
});

describe("private repositories", () => {
  test("the compare pages are masked like the API", async () => {
    const paths = [
      "/cmp/hidden/compare",
      "/cmp/hidden/compare/main...feature/upload",
      "/cmp/hidden/compare/main...nope",
      "/cmp/hidden/compare?base=main&head=x",
    ];
    for (const [name, cookie] of [
      ["anonymous", undefined],
      ["outsider", outsider.cookie],
    ] as const) {
      const api = await client(server, cookie ? { cookie } : undefined).get("/v1/orgs/cmp/repos/hidden/compare/main...feature/upload");
      for (const path of paths) {
        const r = await get(path, cookie);
        expect({ name, path, status: r.status }).toEqual({ name, path, status: api.status });
        expect(r.text).toContain(api.body.error);
        expect(r.text).not.toContain("feature/upload");
      }
    }
    expect((await get("/cmp/hidden/compare/main...feature/upload", viewer.cookie)).status).toBe(200);
  });
});
