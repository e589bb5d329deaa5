// The change page as a review page, over HTTP against the real server and real git pushes: the
// conversation and files tabs (links with aria-current), the title and close/reopen forms (the API's
// PATCH service: who may, CSRF), line numbers as links that draw a comment form without any script
// (`?comment=path:side:line`), and private repositories masked like the API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, startServer, type RunningServer } from "../../../helpers/server.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { csrfOf, getPage, postForm, textOf } from "../../../helpers/web.ts";

let server: RunningServer;
let g: GitSandbox;
let owner: { cookie: string; token: string };
let author: { cookie: string; token: string };
let viewer: { cookie: string };
let outsider: { cookie: string };
let dir = "";

const get = (path: string, cookie?: string) => getPage(server, path, cookie);
const api = () => client(server, { token: owner.token });
/** A page without its <template> (the script's form lives there; the tests look at what is drawn). */
const drawn = (page: string) => page.replace(/<template[\s\S]*?<\/template>/g, "");
const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox("svc-web-review-");
  const u = await createUser(server, { org: "rev", email: "owner@rev.example", handle: "ada" });
  const cookie = await login(server, u.email, u.password);
  owner = { cookie, token: (await mintTokenWithId(server, cookie, "rev", { scopes: ["repo:write"], label: "web" })).token };
  const v = await createUser(server, { org: "rev", email: "viewer@rev.example", role: "viewer", handle: "vic" });
  viewer = { cookie: await login(server, v.email, v.password) };
  const w = await createUser(server, { org: "rev", email: "bo@rev.example", role: "member", handle: "bo" });
  const wc = await login(server, w.email, w.password);
  author = { cookie: wc, token: (await mintTokenWithId(server, wc, "rev", { scopes: ["repo:write"], label: "bo" })).token };
  const o = await createUser(server, { org: "far", email: "someone@far.example" });
  outsider = { cookie: await login(server, o.email, o.password) };
  for (const [name, isPublic] of [
    ["pub", true],
    ["priv", false],
  ] as const)
    expect((await api().post("/v1/orgs/rev/repos", { name, public: isPublic })).status).toBe(201);
  dir = await initRepo(g);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  const main = await commitFiles(g, dir, { "src/a:b.txt": `${LINES.join("\n")}\n`, "keep.txt": "k\n" }, "seed");
  for (const repo of ["pub", "priv"]) await g.ok(["push", "-q", repoUrl(server, "rev", repo, owner.token), "main"], { cwd: dir });
  await g.ok(["checkout", "-q", "-b", "topic", main], { cwd: dir });
  const changed = [...LINES];
  changed[11] = "line twelve";
  await commitFiles(g, dir, { "src/a:b.txt": `${changed.join("\n")}\n` }, "twelve");
  for (const repo of ["pub", "priv"]) {
    await g.ok(["push", "-q", repoUrl(server, "rev", repo, owner.token), "topic"], { cwd: dir });
    // Opened by bo (a member), so "the author" and "a writer" are two people.
    const opened = await client(server, { token: author.token }).post(`/v1/orgs/rev/repos/${repo}/changes`, {
      title: "Twelve in words",
      branch: "topic",
      description: "Spells **twelve**.",
    });
    expect(opened.status).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
});

describe("two tabs", () => {
  test("conversation: description, timeline and status; the tab links mark the current one", async () => {
    const r = await get("/rev/pub/changes/1");
    expect(r.status).toBe(200);
    expect(r.text).toContain(
      `<nav class="tabs" aria-label="Change"><a href="/rev/pub/changes/1" aria-current="page">Conversation</a><a href="/rev/pub/changes/1/files">Files changed</a></nav>`,
    );
    expect(r.text).toContain("Spells <strong>twelve</strong>.");
    const text = textOf(r.text);
    expect(text).toContain("bo opened this change");
    expect(text).toContain("Open: not queued to land yet.");
    expect(r.text).not.toContain("line twelve");
  });

  test("files: the diff, with the files tab current", async () => {
    const r = await get("/rev/pub/changes/1/files");
    expect(r.status).toBe(200);
    expect(r.text).toContain(`<a href="/rev/pub/changes/1">Conversation</a><a href="/rev/pub/changes/1/files" aria-current="page">Files changed</a>`);
    expect(r.text).toContain(`<td class="c">+line twelve</td>`);
  });
});

describe("line comments without a script", () => {
  test("signed-in readers get every line number as a link; anonymous readers get plain numbers", async () => {
    const mine = (await get("/rev/pub/changes/1/files", viewer.cookie)).text;
    // The path holds a colon: the parameter is read from its right end.
    expect(mine).toContain(
      `<td class="n" id="c-1-new-12"><a href="/rev/pub/changes/1/files?comment=src%2Fa%3Ab.txt%3Anew%3A12#c-1-new-12" aria-label="Comment on line 12 (new)">12</a></td>`,
    );
    expect(mine).toContain(`id="c-1-old-12"`);
    const anon = (await get("/rev/pub/changes/1/files")).text;
    expect(anon).not.toContain("comment=");
    expect(anon).toContain(`<tr class="add"><td class="o"></td><td class="n">12</td><td class="c">+line twelve</td></tr>`);
  });

  test("?comment= draws the form at that line, with the anchor as hidden fields", async () => {
    const got = await get("/rev/pub/changes/1/files?comment=src%2Fa%3Ab.txt%3Anew%3A12", viewer.cookie);
    expect(got.status).toBe(200);
    const r = { text: drawn(got.text) };
    const form = /<tr class="comment-row">[\s\S]*?<\/tr>/.exec(r.text)?.[0] ?? "";
    expect(form).toContain(`action="/rev/pub/changes/1/comments"`);
    for (const [name, value] of [
      ["path", "src/a:b.txt"],
      ["side", "new"],
      ["line", "12"],
      ["patchset", "1"],
    ])
      expect(form).toContain(`name="${name}" value="${value}"`);
    expect(form).toContain(`name="csrf" value="${csrfOf(r.text)}"`);
    expect(textOf(form)).toContain("Comment on line 12 (new) of src/a:b.txt");
    // Cancel goes back to the line with its file open (a big change's later files are collapsed).
    expect(form).toContain(`<a href="/rev/pub/changes/1/files?file=src%2Fa%3Ab.txt#c-1-new-12">Cancel</a>`);
    // Drawn right after line 12's row, not elsewhere.
    expect(r.text.indexOf(`<tr class="comment-row">`)).toBeGreaterThan(r.text.indexOf(`+line twelve`));
    expect(r.text.indexOf(`<tr class="comment-row">`)).toBeLessThan(r.text.indexOf(` line 13</td>`));
    // A range: start-line; the form says so and keeps the start.
    const range = { text: drawn((await get("/rev/pub/changes/1/files?comment=src%2Fa%3Ab.txt%3Aold%3A10-12", viewer.cookie)).text) };
    expect(textOf(range.text)).toContain("Comment on lines 10–12 (old)");
    expect(range.text).toContain(`name="start_line" value="10"`);
    // Nonsense parameters draw no form and no error.
    for (const bad of ["nope", "x:mid:3", "src%2Fa%3Ab.txt%3Anew%3A0", "src%2Fa%3Ab.txt%3Anew%3A999"]) {
      const page = await get(`/rev/pub/changes/1/files?comment=${bad}`, viewer.cookie);
      expect({ bad, status: page.status, form: drawn(page.text).includes("comment-row") }).toEqual({ bad, status: 200, form: false });
    }
    // Anonymous readers get no form (a comment needs a person).
    expect((await get("/rev/pub/changes/1/files?comment=src%2Fa%3Ab.txt%3Anew%3A12")).text).not.toContain("comment-row");
  });
});

describe("title, close and reopen", () => {
  test("writers and the author get the forms; viewers do not, and their posts are refused like the API", async () => {
    for (const cookie of [owner.cookie, author.cookie]) {
      const page = (await get("/rev/pub/changes/1", cookie)).text;
      expect(page).toContain(`action="/rev/pub/changes/1/edit"`);
      expect(page).toContain(`action="/rev/pub/changes/1/close"`);
    }
    const page = (await get("/rev/pub/changes/1", viewer.cookie)).text;
    expect(page).not.toContain("/edit");
    expect(page).not.toContain("/close");
    const r = await postForm(server, "/rev/pub/changes/1/edit", { csrf: csrfOf(page), title: "hijacked" }, { cookie: viewer.cookie });
    expect(r.status).toBe(403);
    expect((await api().get("/v1/orgs/rev/repos/pub/changes/1")).body.title).toBe("Twelve in words");
  });

  test("the author renames it; an empty title is refused with the service's reason", async () => {
    const page = (await get("/rev/pub/changes/1", author.cookie)).text;
    const r = await postForm(server, "/rev/pub/changes/1/edit", { csrf: csrfOf(page), title: "Line twelve, spelled" }, { cookie: author.cookie });
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/rev/pub/changes/1" });
    expect((await api().get("/v1/orgs/rev/repos/pub/changes/1")).body.title).toBe("Line twelve, spelled");
    const empty = await postForm(server, "/rev/pub/changes/1/edit", { csrf: csrfOf(page), title: " " }, { cookie: author.cookie });
    expect(empty.status).toBeGreaterThanOrEqual(400);
    expect((await api().get("/v1/orgs/rev/repos/pub/changes/1")).body.title).toBe("Line twelve, spelled");
  });

  test("close, then reopen: the state, the button and the timeline follow", async () => {
    const page = (await get("/rev/pub/changes/1", owner.cookie)).text;
    const closed = await postForm(server, "/rev/pub/changes/1/close", { csrf: csrfOf(page) }, { cookie: owner.cookie });
    expect({ status: closed.status, location: closed.headers.get("location") }).toEqual({ status: 303, location: "/rev/pub/changes/1" });
    expect((await api().get("/v1/orgs/rev/repos/pub/changes/1")).body.state).toBe("closed");
    const after = (await get("/rev/pub/changes/1", owner.cookie)).text;
    expect(after).toContain(`action="/rev/pub/changes/1/reopen"`);
    expect(textOf(after)).toContain("Reopen change");
    const reopened = await postForm(server, "/rev/pub/changes/1/reopen", { csrf: csrfOf(after) }, { cookie: owner.cookie });
    expect(reopened.status).toBe(303);
    expect((await api().get("/v1/orgs/rev/repos/pub/changes/1")).body.state).toBe("open");
  });

  test("cross-site posts and posts without the session's token change nothing", async () => {
    const token = csrfOf((await get("/rev/pub/changes/1", owner.cookie)).text);
    for (const [name, path, fields, origin] of [
      ["cross-site close", "/rev/pub/changes/1/close", { csrf: token }, "https://evil.example"],
      ["close without token", "/rev/pub/changes/1/close", {}, server.url],
      ["edit without origin", "/rev/pub/changes/1/edit", { csrf: token, title: "x" }, null],
    ] as const) {
      const r = await postForm(server, path, fields, { cookie: owner.cookie, origin });
      expect({ name, status: r.status }).toEqual({ name, status: 403 });
    }
    expect((await api().get("/v1/orgs/rev/repos/pub/changes/1")).body).toMatchObject({ state: "open", title: "Line twelve, spelled" });
  });
});

describe("reviews, reviewers and checks", () => {
  test("the author may only comment: approving their own change is refused with the service's reason", async () => {
    const page = (await get("/rev/pub/changes/1", author.cookie)).text;
    expect(page).toContain(`action="/rev/pub/changes/1/reviews"`);
    expect(page).not.toContain(`value="approve"`);
    const r = await postForm(server, "/rev/pub/changes/1/reviews", { csrf: csrfOf(page), verdict: "approve", body: "" }, { cookie: author.cookie });
    expect(r.status).toBe(422);
    expect(r.text).toContain(`role="alert"`);
    expect((await api().get("/v1/orgs/rev/repos/pub/changes/1/reviews")).body.reviews).toEqual([]);
  });

  test("a writer asks a reviewer; the reviewer approves from the form; the timeline and the box say so", async () => {
    const page = (await get("/rev/pub/changes/1", owner.cookie)).text;
    expect(textOf(page)).toContain("No checks reported for this head.");
    const asked = await postForm(server, "/rev/pub/changes/1/reviewers", { csrf: csrfOf(page), handles: "vic" }, { cookie: owner.cookie });
    expect({ status: asked.status, location: asked.headers.get("location") }).toEqual({ status: 303, location: "/rev/pub/changes/1#reviewers-h" });
    const unknown = await postForm(server, "/rev/pub/changes/1/reviewers", { csrf: csrfOf(page), handles: "nobody-here" }, { cookie: owner.cookie });
    expect(unknown.status).toBe(422);
    const vics = (await get("/rev/pub/changes/1", viewer.cookie)).text;
    expect(textOf(vics)).toContain("vic asked to review");
    expect(vics).toContain(`value="approve"`);
    const r = await postForm(
      server,
      "/rev/pub/changes/1/reviews",
      { csrf: csrfOf(vics), verdict: "approve", body: "Looks **right**." },
      { cookie: viewer.cookie },
    );
    expect(r.status).toBe(303);
    const reviews = (await api().get("/v1/orgs/rev/repos/pub/changes/1/reviews")).body.reviews;
    expect(reviews.map((x: { verdict: string; author: { handle: string } }) => [x.verdict, x.author.handle])).toEqual([["approve", "vic"]]);
    expect(r.headers.get("location")).toBe(`/rev/pub/changes/1#review-${reviews[0].id}`);
    const after = (await get("/rev/pub/changes/1")).text;
    expect(after).toContain(`id="review-${reviews[0].id}"`);
    expect(textOf(after)).toContain("vic approved these changes on patchset 1");
    expect(after).toContain("Looks <strong>right</strong>.");
    expect(textOf(after)).toContain("vic approved");
  });

  test("an admin dismisses the approval; a writer takes a request back", async () => {
    const page = (await get("/rev/pub/changes/1", owner.cookie)).text;
    const id = (await api().get("/v1/orgs/rev/repos/pub/changes/1/reviews")).body.reviews[0].id;
    expect(page).toContain(`action="/rev/pub/changes/1/reviews/${id}/dismiss"`);
    expect((await get("/rev/pub/changes/1", author.cookie)).text).not.toContain("/dismiss");
    const r = await postForm(server, `/rev/pub/changes/1/reviews/${id}/dismiss`, { csrf: csrfOf(page) }, { cookie: owner.cookie });
    expect(r.status).toBe(303);
    expect((await api().get("/v1/orgs/rev/repos/pub/changes/1/reviews")).body.reviews[0].dismissed).toBe(true);
    expect(textOf((await get("/rev/pub/changes/1")).text)).toContain("dismissed");
    const bo = (await get("/rev/pub/changes/1", author.cookie)).text;
    expect(bo).toContain(`action="/rev/pub/changes/1/reviewers/vic/remove"`);
    const gone = await postForm(server, "/rev/pub/changes/1/reviewers/vic/remove", { csrf: csrfOf(bo) }, { cookie: author.cookie });
    expect(gone.status).toBe(303);
    const reviewers = (await api().get("/v1/orgs/rev/repos/pub/changes/1")).body.reviewers;
    expect(reviewers.find((x: { handle: string; requested: boolean }) => x.handle === "vic")?.requested ?? false).toBe(false);
  });
});

describe("comments and threads", () => {
  const FILE = "src/a:b.txt";
  const comments = async () => (await api().get("/v1/orgs/rev/repos/pub/changes/1/comments")).body.comments;

  test("the no-script line form posts a comment through the API's service; 303 back to the thread on the files tab", async () => {
    const page = (await get("/rev/pub/changes/1/files?comment=src%2Fa%3Ab.txt%3Anew%3A12", viewer.cookie)).text;
    const r = await postForm(
      server,
      "/rev/pub/changes/1/comments",
      { csrf: csrfOf(page), view: "files", path: FILE, side: "new", line: "12", start_line: "", patchset: "1", body: "Why **words**?" },
      { cookie: viewer.cookie },
    );
    const [c] = await comments();
    expect(c).toMatchObject({ path: FILE, side: "new", line: 12, start_line: null, body: "Why **words**?", author: { handle: "vic" } });
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({
      status: 303,
      location: `/rev/pub/changes/1/files?file=src%2Fa%3Ab.txt#t-${c.id}`,
    });
    // The files tab draws the thread right under line 12; the conversation shows it with its code.
    const files = (await get("/rev/pub/changes/1/files")).text;
    const at = files.indexOf(`id="t-${c.id}"`);
    expect(at).toBeGreaterThan(files.indexOf("+line twelve"));
    expect(at).toBeLessThan(files.indexOf(" line 13</td>"));
    expect(files).toContain("Why <strong>words</strong>?");
    const talk = (await get("/rev/pub/changes/1")).text;
    expect(talk).toContain(`id="t-${c.id}"`);
    expect(textOf(talk)).toContain(`${FILE} line 12 (new)`);
    expect(talk).toContain("<mark>line twelve");
  });

  test("a refused line comment is the files tab again with the reason and the form at the line", async () => {
    const page = (await get("/rev/pub/changes/1/files", viewer.cookie)).text;
    const r = await postForm(
      server,
      "/rev/pub/changes/1/comments",
      { csrf: csrfOf(page), view: "files", path: FILE, side: "new", line: "12", patchset: "1", body: "" },
      { cookie: viewer.cookie },
    );
    expect(r.status).toBe(422);
    expect(r.text).toContain(`role="alert"`);
    expect(drawn(r.text)).toContain(`<tr class="comment-row">`);
    expect((await comments()).length).toBe(1);
  });

  test("sent by the script (X-Svc-Fragment): the answer is the thread alone, drawn by the same renderer", async () => {
    const [root] = await comments();
    const page = (await get("/rev/pub/changes/1/files", owner.cookie)).text;
    const res = await fetch(`${server.url}/rev/pub/changes/1/comments`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: owner.cookie, origin: server.url, "x-svc-fragment": "1" },
      body: new URLSearchParams({ csrf: csrfOf(page), view: "files", in_reply_to: root.id, body: "Because the spec spells it." }).toString(),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text.startsWith(`<div class="thread" id="t-${root.id}">`)).toBe(true);
    expect(text).not.toContain("<html");
    expect(textOf(text)).toContain("Because the spec spells it.");
    // A refusal sent by the script is its reason alone.
    const bad = await fetch(`${server.url}/rev/pub/changes/1/comments`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: owner.cookie, origin: server.url, "x-svc-fragment": "1" },
      body: new URLSearchParams({ csrf: csrfOf(page), view: "files", path: "nope.txt", side: "new", line: "1", body: "x" }).toString(),
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/^<p class="error" role="alert">/);
  });

  test("edit (its author only), resolve (writers and the change's author) collapses the thread, delete", async () => {
    const [root, reply] = await comments();
    const vics = (await get("/rev/pub/changes/1", viewer.cookie)).text;
    expect(vics).toContain(`action="/rev/pub/changes/1/comments/${root.id}/edit"`);
    expect(vics).not.toContain(`action="/rev/pub/changes/1/comments/${reply.id}/edit"`);
    // A viewer may not resolve; bo (the change's author) may.
    expect(vics).not.toContain("/resolve");
    const edited = await postForm(
      server,
      `/rev/pub/changes/1/comments/${root.id}/edit`,
      { csrf: csrfOf(vics), view: "conversation", body: "Why words, really?" },
      { cookie: viewer.cookie },
    );
    expect({ status: edited.status, location: edited.headers.get("location") }).toEqual({ status: 303, location: `/rev/pub/changes/1#t-${root.id}` });
    const notMine = await postForm(server, `/rev/pub/changes/1/comments/${reply.id}/edit`, { csrf: csrfOf(vics), body: "mine now" }, { cookie: viewer.cookie });
    expect(notMine.status).toBe(403);
    const bos = (await get("/rev/pub/changes/1", author.cookie)).text;
    const resolved = await postForm(
      server,
      `/rev/pub/changes/1/comments/${root.id}/resolve`,
      { csrf: csrfOf(bos), view: "conversation" },
      { cookie: author.cookie },
    );
    expect(resolved.status).toBe(303);
    const after = (await get("/rev/pub/changes/1")).text;
    expect(after).toContain(`<details class="thread resolved" id="t-${root.id}">`);
    expect(textOf(after)).toContain("Resolved conversation started by vic · 2 comments");
    expect(textOf(after)).toContain("Why words, really?");
    const again = await postForm(
      server,
      `/rev/pub/changes/1/comments/${root.id}/unresolve`,
      { csrf: csrfOf(bos), view: "conversation" },
      { cookie: author.cookie },
    );
    expect(again.status).toBe(303);
    expect((await comments())[0].resolved).toBe(false);
    // The owner (an admin) deletes the reply.
    const own = (await get("/rev/pub/changes/1", owner.cookie)).text;
    const del = await postForm(
      server,
      `/rev/pub/changes/1/comments/${reply.id}/delete`,
      { csrf: csrfOf(own), view: "conversation", thread: root.id },
      { cookie: owner.cookie },
    );
    expect({ status: del.status, location: del.headers.get("location") }).toEqual({ status: 303, location: `/rev/pub/changes/1#t-${root.id}` });
    expect((await comments()).map((c: { id: string }) => c.id)).toEqual([root.id]);
  });

  test("a general comment from the conversation's form joins the timeline", async () => {
    const page = (await get("/rev/pub/changes/1", viewer.cookie)).text;
    expect(page).toContain(`data-append="#timeline"`);
    const r = await postForm(
      server,
      "/rev/pub/changes/1/comments",
      { csrf: csrfOf(page), view: "conversation", body: "Ship it after the fix." },
      { cookie: viewer.cookie },
    );
    expect(r.status).toBe(303);
    expect(textOf((await get("/rev/pub/changes/1")).text)).toContain("Ship it after the fix.");
    // Anonymous readers see threads, never a form.
    const anon = (await get("/rev/pub/changes/1")).text;
    expect(anon).not.toContain(`action="/rev/pub/changes/1/comments"`);
  });

  test("a push that changes the commented line makes the thread outdated, linked to its patchset", async () => {
    const [root] = await comments();
    await g.ok(["checkout", "-q", "topic"], { cwd: dir });
    const again = [...LINES];
    again[11] = "line 12, twelve";
    await commitFiles(g, dir, { "src/a:b.txt": `${again.join("\n")}\n` }, "again");
    await g.ok(["push", "-q", repoUrl(server, "rev", "pub", owner.token), "topic"], { cwd: dir });
    const deadline = Date.now() + 30_000;
    while ((await api().get("/v1/orgs/rev/repos/pub/changes/1")).body.patchset !== 2) {
      if (Date.now() > deadline) throw new Error("no patchset 2");
      await Bun.sleep(50);
    }
    const talk = (await get("/rev/pub/changes/1")).text;
    expect(talk).toContain(
      `<span class="badge outdated">outdated</span> <a href="/rev/pub/changes/1/files?ps=1&amp;file=src%2Fa%3Ab.txt#t-${root.id}">on patchset 1</a>`,
    );
    // The files tab lists it under the file, not on a line; on patchset 1 it is back on line 12.
    const files = (await get("/rev/pub/changes/1/files")).text;
    expect(textOf(files)).toContain("1 conversation not on these lines");
    const old = (await get("/rev/pub/changes/1/files?ps=1")).text;
    const at = old.indexOf(`id="t-${root.id}"`);
    expect(at).toBeGreaterThan(old.indexOf("+line twelve"));
    expect(at).toBeLessThan(old.indexOf(" line 13</td>"));
  });

  test("a suggestion is drawn as a small diff; a writer applies it from the page (a new patchset); the batch form takes checkboxes", async () => {
    const page = (await get("/rev/pub/changes/1/files", viewer.cookie)).text;
    for (const [line, text] of [
      ["12", "line twelve (12)"],
      ["10", "line ten"],
    ] as const)
      expect(
        (
          await postForm(
            server,
            "/rev/pub/changes/1/comments",
            { csrf: csrfOf(page), view: "files", path: FILE, side: "new", line, patchset: "2", body: `Try:\n\n\`\`\`suggestion\n${text}\n\`\`\`\n` },
            { cookie: viewer.cookie },
          )
        ).status,
      ).toBe(303);
    const all = await comments();
    const [twelve, ten] = all.slice(-2);
    expect(twelve.suggestion).toMatchObject({ text: "line twelve (12)\n", applicable: true });
    // Viewers see the diff, not the buttons; writers get Apply and the batch checkbox.
    const vics = (await get("/rev/pub/changes/1/files", viewer.cookie)).text;
    expect(vics).toContain(`<tr class="del"><td class="c">-line 12, twelve</td></tr><tr class="add"><td class="c">+line twelve (12)</td></tr>`);
    expect(vics).not.toContain("/suggestions/apply");
    const own = (await get("/rev/pub/changes/1/files", owner.cookie)).text;
    expect(own).toContain(`<form id="apply-batch"`);
    expect(own).toContain(`<input type="checkbox" name="comment_ids" value="${ten.id}" form="apply-batch">`);
    const head = (await api().get("/v1/orgs/rev/repos/pub/changes/1")).body.head;
    // A page whose head moved applies nothing (409, the files tab again with the reason).
    const stale = await postForm(
      server,
      "/rev/pub/changes/1/suggestions/apply",
      { csrf: csrfOf(own), comment_ids: twelve.id, head: "0".repeat(40) },
      { cookie: owner.cookie },
    );
    expect(stale.status).toBe(409);
    expect(stale.text).toContain(`role="alert"`);
    const r = await postForm(server, "/rev/pub/changes/1/suggestions/apply", { csrf: csrfOf(own), comment_ids: twelve.id, head }, { cookie: owner.cookie });
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({
      status: 303,
      location: `/rev/pub/changes/1/files?file=src%2Fa%3Ab.txt#t-${twelve.id}`,
    });
    const after = await api().get("/v1/orgs/rev/repos/pub/changes/1");
    expect(after.body.patchset).toBe(3);
    const applied = (await comments()).find((c: { id: string }) => c.id === twelve.id);
    expect(applied.suggestion.applied_commit).toBe(after.body.head);
    const files = (await get("/rev/pub/changes/1/files", owner.cookie)).text;
    expect(files).toContain(`+line twelve (12)</td>`);
    expect(textOf(files)).toContain(`Applied in ${after.body.head.slice(0, 10)}`);
  });

  test("cross-site comment posts change nothing", async () => {
    const token = csrfOf((await get("/rev/pub/changes/1", viewer.cookie)).text);
    const before = (await comments()).length;
    for (const [name, fields, origin] of [
      ["cross-site", { csrf: token, body: "x" }, "https://evil.example"],
      ["no token", { body: "x" }, server.url],
    ] as const) {
      const r = await postForm(server, "/rev/pub/changes/1/comments", fields, { cookie: viewer.cookie, origin });
      expect({ name, status: r.status }).toEqual({ name, status: 403 });
    }
    expect((await comments()).length).toBe(before);
  });
});

describe("private repositories", () => {
  test("both tabs and every form answer an outsider or anonymous caller exactly like the API", async () => {
    for (const [name, cookie] of [
      ["anonymous", undefined],
      ["outsider", outsider.cookie],
    ] as const) {
      const apiAnswer = await client(server, cookie ? { cookie } : undefined).get("/v1/orgs/rev/repos/priv/changes/1");
      for (const path of ["/rev/priv/changes/1", "/rev/priv/changes/1/files", "/rev/priv/changes/1/files?comment=src%2Fa%3Ab.txt%3Anew%3A12"]) {
        const r = await get(path, cookie);
        expect({ name, path, status: r.status }).toEqual({ name, path, status: apiAnswer.status });
        expect(r.text).toContain(apiAnswer.body.error);
        expect(r.text).not.toContain("Twelve in words");
      }
      if (cookie) {
        const token = csrfOf((await get("/", cookie)).text);
        for (const action of [
          "edit",
          "close",
          "reopen",
          "reviews",
          "reviewers",
          "reviewers/ada/remove",
          "comments",
          "comments/x/edit",
          "comments/x/resolve",
          "suggestions/apply",
        ]) {
          const r = await postForm(server, `/rev/priv/changes/1/${action}`, { csrf: token, title: "x" }, { cookie });
          expect({ name, action, status: r.status }).toEqual({ name, action, status: 404 });
        }
      }
    }
    expect((await api().get("/v1/orgs/rev/repos/priv/changes/1")).body).toMatchObject({ state: "open", title: "Twelve in words" });
  });
});

describe("pending comments (Start a review)", () => {
  const FILE = "src/a:b.txt";
  const asVic = () => client(server, { cookie: viewer.cookie });
  const vicComments = async () => (await asVic().get("/v1/orgs/rev/repos/priv/changes/1/comments")).body.comments;

  test("the line form's Start a review writes a pending comment, drawn for its author alone; the review box counts and publishes them", async () => {
    const form = (await get("/rev/priv/changes/1/files?comment=src%2Fa%3Ab.txt%3Anew%3A12", viewer.cookie)).text;
    expect(drawn(form)).toContain(`<button type="submit" name="intent" value="review" data-draft>Start a review</button>`);
    const r = await postForm(
      server,
      "/rev/priv/changes/1/comments",
      { csrf: csrfOf(form), view: "files", path: FILE, side: "new", line: "12", start_line: "", patchset: "1", body: "Pending thought", intent: "review" },
      { cookie: viewer.cookie },
    );
    const [d] = await vicComments();
    expect(d).toMatchObject({ body: "Pending thought", draft: true, line: 12 });
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({
      status: 303,
      location: `/rev/priv/changes/1/files?file=src%2Fa%3Ab.txt#t-${d.id}`,
    });
    // Drawn under its line for vic, labelled, with no reply or resolve; the review box counts it.
    const mine = drawn((await get("/rev/priv/changes/1/files", viewer.cookie)).text);
    const thread = mine.slice(mine.indexOf(`id="t-${d.id}"`), mine.indexOf("</tr>", mine.indexOf(`id="t-${d.id}"`)));
    expect(thread).toContain(`<span class="badge pending">Pending</span>`);
    expect(thread).toContain(`/comments/${d.id}/edit`);
    expect(thread).toContain(`/comments/${d.id}/delete`);
    expect(thread).not.toContain("in_reply_to");
    expect(thread).not.toContain("/resolve");
    expect(textOf(mine)).toContain("1 pending comment will be published with this review.");
    // Nobody else sees it.
    for (const cookie of [owner.cookie, author.cookie]) {
      const other = (await get("/rev/priv/changes/1/files", cookie)).text;
      expect(other).not.toContain(`t-${d.id}`);
      expect(other).not.toContain("Pending thought");
      // The template of the script's form: their own button still starts a review.
      expect(other).toContain("data-draft>Start a review</button>");
    }

    // Sent by the script: the answer carries the new count for the review box and the buttons.
    const res = await fetch(`${server.url}/rev/priv/changes/1/comments`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: viewer.cookie, origin: server.url, "x-svc-fragment": "1" },
      body: new URLSearchParams({
        csrf: csrfOf(form),
        view: "files",
        path: FILE,
        side: "new",
        line: "11",
        patchset: "1",
        body: "Second",
        intent: "review",
      }).toString(),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-svc-pending")).toBe("2");
    expect(await res.text()).toContain(`<span class="badge pending">Pending</span>`);
    const talk = (await get("/rev/priv/changes/1", viewer.cookie)).text;
    expect(textOf(talk)).toContain("2 pending comments will be published with this review.");

    // The review form (a comment review, no body) publishes both in one review.
    const sent = await postForm(server, "/rev/priv/changes/1/reviews", { csrf: csrfOf(talk), verdict: "comment", body: "" }, { cookie: viewer.cookie });
    expect(sent.status).toBe(303);
    const published = await vicComments();
    expect(published.map((c: { body: string; draft: boolean }) => [c.body, c.draft])).toEqual([
      ["Pending thought", false],
      ["Second", false],
    ]);
    const [review] = (await api().get("/v1/orgs/rev/repos/priv/changes/1/reviews")).body.reviews;
    expect(sent.headers.get("location")).toBe(`/rev/priv/changes/1#review-${review.id}`);
    expect(review.comments.map((c: { id: string }) => c.id)).toEqual(published.map((c: { id: string }) => c.id));
    const seen = (await get("/rev/priv/changes/1", owner.cookie)).text;
    expect(seen).toContain("Pending thought");
    expect(seen).not.toContain(`<span class="badge pending">`);
    // Nothing pending now: the note is hidden (the script shows it again after the next draft).
    expect((await get("/rev/priv/changes/1", viewer.cookie)).text).toContain(`<p class="pending-note" data-pending-note hidden>`);
  });
});

describe("a big change's files tab", () => {
  // Sorted as the diff lists them: a.txt (1,400 lines) and b.txt (200) are drawn in full and spend
  // the page's budget (FILES_TAB_FULL_LINES, 1,500), so the third file, whose name needs escaping
  // everywhere it goes (HTML, a URL), is drawn collapsed with "Load diff".
  const ODD = `big/c <"&> ü.txt`;
  const ODD_Q = encodeURIComponent(ODD);
  const ODD_H = `big/c &lt;&quot;&amp;&gt; ü.txt`;
  let thread = "";

  beforeAll(async () => {
    await g.ok(["checkout", "-q", "-B", "big", "main"], { cwd: dir });
    const many = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}`).join("\n") + "\n";
    await commitFiles(g, dir, { "big/a.txt": many(1400, "a"), "big/b.txt": many(200, "b"), [ODD]: many(5, "c <b>") }, "big");
    for (const repo of ["pub", "priv"]) {
      await g.ok(["push", "-q", repoUrl(server, "rev", repo, owner.token), "big"], { cwd: dir });
      const opened = await api().post(`/v1/orgs/rev/repos/${repo}/changes`, { title: "Big one", branch: "big" });
      expect(opened.status).toBe(201);
      expect(opened.body.number).toBe(2);
    }
    const c = await api().post("/v1/orgs/rev/repos/pub/changes/2/comments", { body: "Odd name, *odd* line.", path: ODD, side: "new", line: 2 });
    expect(c.status).toBe(201);
    thread = c.body.id;
  }, 120_000);

  test("later files are collapsed with a Load diff link and their conversations counted; the name is escaped", async () => {
    const page = (await get("/rev/pub/changes/2/files", viewer.cookie)).text;
    expect(page).toContain(`<table class="diff" data-path="big/a.txt" data-file="1">`);
    expect(page).toContain(`<table class="diff" data-path="big/b.txt" data-file="2">`);
    expect(page).toContain(`<section class="box collapsed" id="diff-3" aria-labelledby="diff-3-h"><header><h3 class="inh path" id="diff-3-h">${ODD_H}</h3>`);
    expect(page).toContain(
      `<a href="/rev/pub/changes/2/files?file=${ODD_Q}#diff-3" data-load-diff>Load diff</a> <span class="muted">5 changed lines · 1 conversation</span>`,
    );
    expect(page).not.toContain(`t-${thread}`);
    expect(page).not.toContain("c <b>");
    expect(page).not.toContain(`<"&>`);
    expect(textOf(page)).toContain(`1 file is collapsed to keep this page quick`);
  });

  test("?file= draws that file in full, its thread under its line, links with the name encoded", async () => {
    const page = (await get(`/rev/pub/changes/2/files?file=${ODD_Q}`, viewer.cookie)).text;
    expect(page).toContain(`<table class="diff" data-path="${ODD_H}" data-file="3">`);
    expect(page).toContain(
      `<td class="n" id="c-3-new-2"><a href="/rev/pub/changes/2/files?comment=${ODD_Q}%3Anew%3A2#c-3-new-2" aria-label="Comment on line 2 (new)">2</a></td><td class="c">+c &lt;b&gt; 2</td></tr><tr class="thread-row">`,
    );
    expect(page).toContain(`id="t-${thread}"`);
    expect(page).not.toContain("c <b>");
    // The comment link's `?comment=` keeps the file open too (the form is drawn at its line).
    const form = (await get(`/rev/pub/changes/2/files?comment=${ODD_Q}%3Anew%3A4`, viewer.cookie)).text;
    expect(drawn(form)).toContain(`<input type="hidden" name="path" value="${ODD_H}">`);
  });

  test("with X-Svc-Fragment the same address answers the file's section alone; an unknown file is 404", async () => {
    const r = await getPage(server, `/rev/pub/changes/2/files?file=${ODD_Q}`, viewer.cookie, { "x-svc-fragment": "1" });
    expect(r.status).toBe(200);
    expect(r.headers.get("vary")).toContain("X-Svc-Fragment");
    expect(r.text.slice(0, 40)).toBe(`<section class="box" id="diff-3" aria-la`);
    expect(r.text).not.toContain("<html");
    expect(r.text).toContain(`id="t-${thread}"`);
    expect((await getPage(server, "/rev/pub/changes/2/files?file=nope.txt", viewer.cookie, { "x-svc-fragment": "1" })).status).toBe(404);
  });

  test("a private repository's fragment is masked like the page and the API", async () => {
    for (const [name, cookie] of [
      ["anonymous", undefined],
      ["outsider", outsider.cookie],
    ] as const) {
      const apiAnswer = await client(server, cookie ? { cookie } : undefined).get("/v1/orgs/rev/repos/priv/changes/2");
      for (const headers of [{}, { "x-svc-fragment": "1" }] as Record<string, string>[]) {
        const r = await getPage(server, `/rev/priv/changes/2/files?file=${ODD_Q}`, cookie, headers);
        expect({ name, headers, status: r.status }).toEqual({ name, headers, status: apiAnswer.status });
        expect(r.text).toContain(apiAnswer.body.error);
        expect(r.text).not.toContain("Big one");
        expect(r.text).not.toContain("big/");
      }
    }
  });
});
