// The issue pages over HTTP against the real server: the list (state tabs with counts, filters,
// paging with each issue once), the new-issue form (readers without pickers, writers with them),
// the issue page (timeline in words, hostile Markdown inert, #N links), its forms (comment, edit
// and delete a comment, title, labels, assignees, close with a reason, reopen, delete) with CSRF,
// the labels page, the nav's open count, `/issues/N` of a change, and masking like the API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, startServer, type RunningServer } from "../../../helpers/server.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { csrfOf, getPage, postForm, textOf } from "../../../helpers/web.ts";

let server: RunningServer;
let g: GitSandbox;
let owner: { cookie: string; token: string; handle: string };
let writer: { cookie: string; handle: string };
let viewer: { cookie: string; handle: string };
let outsider: { cookie: string };

const get = (path: string, cookie?: string) => getPage(server, path, cookie);
const api = () => client(server, { token: owner.token });
const EVIL = `Hi <script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) <a href="#" onclick="alert(4)">y</a>`;

/** Posts a page's form with the session's token. */
async function post(path: string, cookie: string, fields: Record<string, string | string[]>, from = path) {
  const csrf = csrfOf((await get(from, cookie)).text);
  const body = new URLSearchParams({ csrf });
  for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: server.url },
    body: body.toString(),
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox("svc-web-issues-");
  const o = await createUser(server, { org: "iss", handle: "ada", email: "ada@iss.example" });
  const oc = await login(server, o.email, o.password);
  owner = { cookie: oc, handle: o.handle, token: (await mintTokenWithId(server, oc, "iss", { scopes: ["repo:write"], label: "web" })).token };
  const w = await createUser(server, { org: "iss", handle: "bo", email: "bo@iss.example", role: "member" });
  writer = { cookie: await login(server, w.email, w.password), handle: w.handle };
  const v = await createUser(server, { org: "iss", handle: "cy", email: "cy@iss.example", role: "viewer" });
  viewer = { cookie: await login(server, v.email, v.password), handle: v.handle };
  const x = await createUser(server, { org: "far", email: "x@far.example" });
  outsider = { cookie: await login(server, x.email, x.password) };
  for (const [name, isPublic] of [
    ["pub", true],
    ["priv", false],
  ] as const)
    expect((await api().post("/v1/orgs/iss/repos", { name, public: isPublic })).status).toBe(201);
  const dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  await commitFiles(g, dir, { "a.txt": "a\n" }, "seed");
  await g.ok(["push", "-q", repoUrl(server, "iss", "pub", owner.token), "main"], { cwd: dir });
  await g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
  await commitFiles(g, dir, { "b.txt": "b\n" }, "feature");
  await g.ok(["push", "-q", repoUrl(server, "iss", "pub", owner.token), "feature"], { cwd: dir });
  // #1 is a change: issues continue the numbers.
  expect((await api().post("/v1/orgs/iss/repos/pub/changes", { title: "A change", branch: "feature" })).status).toBe(201);
  for (const [name, color] of [
    ["bug", "d73a4a"],
    ["ui", "0e8a16"],
  ])
    expect((await api().post("/v1/orgs/iss/repos/pub/labels", { name, color })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
});

describe("opening an issue", () => {
  test("a reader gets the form without pickers; it opens the issue and goes to its page, hostile Markdown inert", async () => {
    const form = await get("/iss/pub/issues/new", viewer.cookie);
    expect(form.status).toBe(200);
    expect(form.text).toContain(`action="/iss/pub/issues"`);
    expect(form.text).not.toContain(`name="labels"`);
    const r = await post("/iss/pub/issues", viewer.cookie, { title: "<b>Crash</b> on upload", body: `${EVIL}\n\nSee #1 and @ada.` }, "/iss/pub/issues/new");
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: "/iss/pub/issues/2" });
    const page = await get("/iss/pub/issues/2");
    expect(page.status).toBe(200);
    // Inline HTML passes the sanitizer's allow-list: no script, event attribute or javascript: link reaches the markup.
    expect(page.text).not.toMatch(/<script>alert|onerror|onclick|href="javascript:/i);
    expect(page.text).toContain("&lt;b&gt;Crash&lt;/b&gt; on upload");
    expect(page.text).toContain(`href="/iss/pub/changes/1"`);
    expect(page.text).toContain(`href="/ada"`);
  });

  test("a writer's form has the pickers; labels and assignees are set at once", async () => {
    const form = await get("/iss/pub/issues/new", writer.cookie);
    expect(form.text).toContain(`name="labels" value="bug"`);
    expect(form.text).toContain(`name="assignees" value="bo"`);
    // A viewer cannot be assigned (read only): not offered.
    expect(form.text).not.toContain(`name="assignees" value="cy"`);
    const r = await post(
      "/iss/pub/issues",
      writer.cookie,
      { title: "Dark theme contrast", body: "", labels: ["ui", "bug"], assignees: ["bo"] },
      "/iss/pub/issues/new",
    );
    expect(r.status).toBe(303);
    expect((await api().get("/v1/orgs/iss/repos/pub/issues/3")).body).toMatchObject({
      labels: [{ name: "bug" }, { name: "ui" }],
      assignees: [{ handle: "bo" }],
    });
  });

  test("a refusal is the form again with the reason at its status; cross-site posts and strangers are refused", async () => {
    const again = await post("/iss/pub/issues", writer.cookie, { title: "  ", body: "kept text" }, "/iss/pub/issues/new");
    expect(again.status).toBe(422);
    expect(again.text).toContain("title must be");
    expect(again.text).toContain("kept text");
    const token = csrfOf((await get("/iss/pub/issues/new", writer.cookie)).text);
    for (const [origin, fields] of [
      ["https://evil.example", { csrf: token }],
      [server.url, {}],
    ] as const) {
      const r = await postForm(server, "/iss/pub/issues", { ...fields, title: "x" }, { cookie: writer.cookie, origin });
      expect(r.status).toBe(403);
    }
    // Anonymous: the sign-in form (a private repository too, as the API answers 401); the outsider gets 404, form or page.
    expect((await get("/iss/pub/issues/new")).status).toBe(401);
    expect((await get("/iss/priv/issues/new")).status).toBe(401);
    expect((await get("/iss/priv/issues/new", outsider.cookie)).status).toBe(404);
    expect((await get("/iss/priv/issues", outsider.cookie)).status).toBe(404);
    expect((await get("/iss/pub/issues/99")).status).toBe(404);
    expect((await api().get("/v1/orgs/iss/repos/pub/issues?state=all")).body.issues.length).toBe(2);
  });
});

describe("the issue page's forms", () => {
  test("comment, edit and delete one's comment; another's comment has no edit form", async () => {
    const r = await post("/iss/pub/issues/2/comments", writer.cookie, { body: "Seen on **main** too, #3." }, "/iss/pub/issues/2");
    expect(r.status).toBe(303);
    expect(r.location).toMatch(/^\/iss\/pub\/issues\/2#comment-/);
    const id = r.location!.split("#comment-")[1]!;
    const page = await get("/iss/pub/issues/2", writer.cookie);
    expect(page.text).toContain("<strong>main</strong>");
    expect(page.text).toContain(`href="/iss/pub/issues/3"`);
    expect(page.text).toContain(`action="/iss/pub/issues/2/comments/${id}/edit"`);
    expect((await get("/iss/pub/issues/2", viewer.cookie)).text).not.toContain(`/comments/${id}/edit`);
    // Someone else's comment: the service refuses (403), drawn as the page with the reason.
    const refused = await post(`/iss/pub/issues/2/comments/${id}/edit`, viewer.cookie, { body: "mine now" }, "/iss/pub/issues/2");
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("only its author can edit a comment");
    expect((await post(`/iss/pub/issues/2/comments/${id}/edit`, writer.cookie, { body: "Seen on main too." }, "/iss/pub/issues/2")).status).toBe(303);
    expect(textOf((await get("/iss/pub/issues/2")).text)).toContain("Seen on main too.");
    expect((await post(`/iss/pub/issues/2/comments/${id}/delete`, writer.cookie, {}, "/iss/pub/issues/2")).status).toBe(303);
    expect(textOf((await get("/iss/pub/issues/2")).text)).not.toContain("Seen on main too.");
  });

  test("labels, assignees, title, close as not planned and reopen, each an event in words", async () => {
    const at = "/iss/pub/issues/2";
    expect((await post(`${at}/labels`, writer.cookie, { set: "1", labels: ["bug"] }, at)).status).toBe(303);
    expect((await post(`${at}/assignees`, writer.cookie, { set: "1", assignees: ["bo", "ada"] }, at)).status).toBe(303);
    expect((await post(`${at}/assignees`, writer.cookie, { set: "1", assignees: ["ada"] }, at)).status).toBe(303);
    expect((await post(`${at}/edit`, writer.cookie, { title: "Crash on upload" }, at)).status).toBe(303);
    expect((await post(`${at}/close`, writer.cookie, { reason: "not_planned" }, at)).status).toBe(303);
    let text = textOf((await get(at)).text).replace(/\s+/g, " ");
    for (const words of [
      "bo added the bug label",
      "bo self-assigned this",
      "bo assigned ada",
      "bo removed their assignment",
      "bo changed the title from <b>Crash</b> on upload to Crash on upload",
      "bo closed this as not planned",
      "Closed as not planned by bo",
    ])
      expect(text).toContain(words);
    expect((await post(`${at}/reopen`, writer.cookie, {}, at)).status).toBe(303);
    text = textOf((await get(at)).text).replace(/\s+/g, " ");
    expect(text).toContain("bo reopened this");
    // Clearing a picker: no box checked is the empty set.
    expect((await post(`${at}/labels`, writer.cookie, { set: "1" }, at)).status).toBe(303);
    expect((await api().get("/v1/orgs/iss/repos/pub/issues/2")).body).toMatchObject({ state: "open", labels: [], assignees: [{ handle: "ada" }] });
  });

  test("who sees which form: readers comment, the author closes their own, writers triage, admins delete", async () => {
    const mine = (await get("/iss/pub/issues/2", viewer.cookie)).text;
    expect(mine).toContain(`action="/iss/pub/issues/2/comments"`);
    expect(mine).toContain(`action="/iss/pub/issues/2/close"`);
    expect(mine).not.toContain(`action="/iss/pub/issues/2/labels"`);
    expect(mine).not.toContain(`action="/iss/pub/issues/2/delete"`);
    const other = (await get("/iss/pub/issues/3", viewer.cookie)).text;
    expect(other).not.toContain(`action="/iss/pub/issues/3/close"`);
    const anon = (await get("/iss/pub/issues/3")).text;
    expect(anon).not.toContain(`method="post" action="/iss/pub/issues/3/`);
    expect(anon).toContain("Sign in</a> to comment");
    expect((await get("/iss/pub/issues/3", writer.cookie)).text).not.toContain(`action="/iss/pub/issues/3/delete"`);
    // A reader's label post is refused by the service (403) and drawn with the reason.
    const refused = await post("/iss/pub/issues/3/labels", viewer.cookie, { set: "1", labels: ["bug"] }, "/iss/pub/issues/3");
    expect(refused.status).toBe(403);
    // A writer assigning someone who cannot write: 422 with the service's reason.
    const bad = await post("/iss/pub/issues/3/assignees", writer.cookie, { set: "1", assignees: ["cy"] }, "/iss/pub/issues/3");
    expect(bad.status).toBe(422);
    expect(bad.text).toContain("cannot be assigned");
  });

  test("`/issues/N` of a change is that change's page and back; the change list and repository pages count open issues", async () => {
    const r = await get("/iss/pub/issues/1");
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/iss/pub/changes/1" });
    const back = await get("/iss/pub/changes/2");
    expect({ status: back.status, location: back.headers.get("location") }).toEqual({ status: 303, location: "/iss/pub/issues/2" });
    expect((await get("/iss/pub/changes/99")).status).toBe(404);
    expect((await get("/iss/priv/changes/2", outsider.cookie)).status).toBe(404);
    for (const path of ["/iss/pub", "/iss/pub/changes", "/iss/pub/changes/1", "/iss/pub/issues", "/iss/pub/labels"]) {
      const text = textOf((await get(path)).text).replace(/\s+/g, " ");
      expect({ path, count: text.includes("Issues 2 open") }).toEqual({ path, count: true });
    }
  });
});

describe("the list", () => {
  test("state tabs count per state; filters by label, assignee, author and words; each issue once across pages", async () => {
    // 40 more issues (a page is 30), opened through the API by the owner.
    for (let i = 0; i < 40; i++) expect((await api().post("/v1/orgs/iss/repos/pub/issues", { title: `Batch ${i} gadget` })).status).toBe(201);
    await api().patch("/v1/orgs/iss/repos/pub/issues/3", { state: "closed" });
    const first = await get("/iss/pub/issues");
    const text = textOf(first.text).replace(/\s+/g, " ");
    expect(text).toContain("Open 41");
    expect(text).toContain("Closed 1");
    expect(text).toContain("All 42");
    const seen: number[] = [];
    let path: string | null = "/iss/pub/issues";
    while (path) {
      const p = await get(path);
      for (const m of p.text.matchAll(/<li class="issue-row"><div><a href="\/iss\/pub\/issues\/(\d+)"/g)) seen.push(Number(m[1]));
      const next = /<a href="([^"]+)">More issues<\/a>/.exec(p.text)?.[1];
      path = next ? next.replace(/&amp;/g, "&") : null;
    }
    expect(seen.length).toBe(41);
    expect(new Set(seen).size).toBe(41);
    const numbersOf = async (q: string) =>
      [...(await get(`/iss/pub/issues?${q}`)).text.matchAll(/<li class="issue-row"><div><a href="\/iss\/pub\/issues\/(\d+)"/g)].map((m) => Number(m[1]));
    expect(await numbersOf("state=closed")).toEqual([3]);
    expect(await numbersOf("state=all&label=bug")).toEqual([3]);
    expect(await numbersOf("assignee=ada")).toEqual([2]);
    expect(await numbersOf("author=cy")).toEqual([2]);
    expect(await numbersOf("q=upload")).toEqual([2]);
    expect((await numbersOf("q=gadget&sort=oldest")).slice(0, 2)).toEqual([4, 5]);
    expect(textOf((await get("/iss/pub/issues?label=nosuch")).text)).toContain("No issues match these filters.");
    // Hostile query values are bounded and escaped.
    const evil = await get(`/iss/pub/issues?q=${encodeURIComponent('"><script>x</script>')}&sort=bogus&state=bogus`);
    expect(evil.status).toBe(200);
    expect(evil.text).not.toContain("<script>x");
  });
});

describe("the labels page", () => {
  test("writers create, edit and delete labels; readers only read; refusals redraw the form", async () => {
    expect((await get("/iss/pub/labels", viewer.cookie)).text).not.toContain(`action="/iss/pub/labels"`);
    const made = await post("/iss/pub/labels", writer.cookie, { name: "docs", color: "#0075ca", description: "Documentation" }, "/iss/pub/labels");
    expect(made.status).toBe(303);
    const dup = await post("/iss/pub/labels", writer.cookie, { name: "DOCS", color: "#0075ca", description: "" }, "/iss/pub/labels");
    expect(dup.status).toBe(409);
    expect(dup.text).toContain("exists");
    const badColor = await post("/iss/pub/labels/docs/edit", writer.cookie, { name: "docs", color: "blue", description: "" }, "/iss/pub/labels");
    expect(badColor.status).toBe(422);
    expect(badColor.text).toContain("color must be");
    expect(
      (await post("/iss/pub/labels/docs/edit", writer.cookie, { name: "documentation", color: "0075ca", description: "Docs" }, "/iss/pub/labels")).status,
    ).toBe(303);
    const page = textOf((await get("/iss/pub/labels")).text);
    expect(page).toContain("documentation");
    expect(page).toContain("Docs");
    expect((await post("/iss/pub/labels/documentation/delete", viewer.cookie, {}, "/iss/pub/labels")).status).toBe(403);
    expect((await post("/iss/pub/labels/documentation/delete", writer.cookie, {}, "/iss/pub/labels")).status).toBe(303);
    expect((await api().get("/v1/orgs/iss/repos/pub/labels")).body.labels.map((l: { name: string }) => l.name)).toEqual(["bug", "ui"]);
  });

  test("labels with URL characters in their names: chips, filter links and the edit and delete forms reach the right label", async () => {
    const names = ["area/web", "50% done", "a?b#c", "good first issue", "ünï"];
    for (const name of names) expect((await api().post("/v1/orgs/iss/repos/pub/labels", { name, color: "c5def5" })).status).toBe(201);
    expect((await api().post("/v1/orgs/iss/repos/pub/issues", { title: "Labelled oddly", labels: names })).status).toBe(201);
    const labels = await get("/iss/pub/labels", writer.cookie);
    for (const name of names) expect(labels.text).toContain(`href="/iss/pub/issues?label=${encodeURIComponent(name)}"`);
    for (const name of names) {
      const list = await get(`/iss/pub/issues?state=all&label=${encodeURIComponent(name)}`);
      expect({ name, found: textOf(list.text).includes("Labelled oddly") }).toEqual({ name, found: true });
    }
    for (const name of names) {
      const r = await post(
        `/iss/pub/labels/${encodeURIComponent(name)}/edit`,
        writer.cookie,
        { name: `${name}!`, color: "c5def5", description: "" },
        "/iss/pub/labels",
      );
      expect({ name, status: r.status }).toEqual({ name, status: 303 });
    }
    const now = (await api().get("/v1/orgs/iss/repos/pub/labels")).body.labels.map((l: { name: string }) => l.name);
    for (const name of names) expect(now).toContain(`${name}!`);
    for (const name of names)
      expect((await post(`/iss/pub/labels/${encodeURIComponent(`${name}!`)}/delete`, writer.cookie, {}, "/iss/pub/labels")).status).toBe(303);
    expect((await api().get("/v1/orgs/iss/repos/pub/labels")).body.labels.map((l: { name: string }) => l.name)).toEqual(["bug", "ui"]);
  });

  test("an admin deletes an issue from its page", async () => {
    expect((await get("/iss/pub/issues/4", owner.cookie)).text).toContain(`action="/iss/pub/issues/4/delete"`);
    const r = await post("/iss/pub/issues/4/delete", owner.cookie, {}, "/iss/pub/issues/4");
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: "/iss/pub/issues" });
    expect((await get("/iss/pub/issues/4")).status).toBe(404);
  });
});

describe("references on change pages", () => {
  test("`#N` naming an issue links to the issue page in a change's description, reviews and comments", async () => {
    const issue = (await api().post("/v1/orgs/iss/repos/pub/issues", { title: "Named from a change" })).body.number;
    const base = "/v1/orgs/iss/repos/pub/changes/1";
    expect((await api().patch(base, { description: `Description names #${issue} and @${writer.handle}; \`#${issue}\` stays code.` })).status).toBe(200);
    expect((await api().post(`${base}/reviews`, { verdict: "comment", body: `Review names #${issue}.` })).status).toBe(201);
    expect((await api().post(`${base}/comments`, { body: `Comment names #${issue}.` })).status).toBe(201);
    const page = (await get("/iss/pub/changes/1", viewer.cookie)).text;
    const link = `<a href="/iss/pub/issues/${issue}">#${issue}</a>`;
    expect(page).toContain(`Description names ${link} and <a href="/${writer.handle}">@${writer.handle}</a>`);
    expect(page).toContain(`<code>#${issue}</code>`);
    expect(page).toContain(`Review names ${link}.`);
    expect(page).toContain(`Comment names ${link}.`);
    // An unknown number stays text.
    expect((await api().patch(base, { description: "Names #999." })).status).toBe(200);
    expect((await get("/iss/pub/changes/1", viewer.cookie)).text).toContain("Names #999.");
  });
});
