// Comments and threads on changes, black-box (issue 28): the real server, branches pushed by real
// git, every route through HTTP with the credentials people really hold (sessions, tokens of each
// scope, a service token), the database read only to see recorded events.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commitFiles, initRepo, mintTokenWithId } from "../../helpers/git.ts";
import { newRepo, startWorld, type TestRepo, type World } from "../../helpers/content.ts";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { dbRows } from "../ci/helpers.ts";

const ORG = "talk";
let w: World;
let bo: Person;
let serviceToken: string;

beforeAll(async () => {
  w = await startWorld(ORG);
  bo = await person(w.server, ORG, "bo@talk.example.com", "member", { handle: "bo", name: "Bo" });
  serviceToken = (await mintTokenWithId(w.server, w.owner.cookie, ORG, { scopes: ["repo:write"], label: "svc", kind: "service" })).token;
});
afterAll(async () => w.close());

/** 30 numbered lines. */
const BASE_TEXT = Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join("");
/** The feature branch: line 10 rewritten, and a new file. */
const FEATURE_TEXT = BASE_TEXT.replace("line 10\n", "LINE TEN\n");

/** A repository with main (f.txt, other.txt) and a change #1 from `feature`, opened by the owner. */
async function seeded(name: string, isPublic = false): Promise<{ repo: TestRepo; dir: string; main: string; head: string }> {
  const repo = await newRepo(w, name, isPublic);
  const dir = await initRepo(w.g, name);
  await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  const main = await commitFiles(w.g, dir, { "f.txt": BASE_TEXT, "other.txt": "unchanged\n" }, "seed");
  await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
  await w.g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
  const head = await commitFiles(w.g, dir, { "f.txt": FEATURE_TEXT, "dir/new.md": "# new\n" }, "feature");
  await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
  const r = await repo.api.c.post(`${repo.api.base}/changes`, { title: "Rewrite line ten", branch: "feature" });
  if (r.status !== 201) throw new Error(`create failed ${r.status} ${JSON.stringify(r.body)}`);
  return { repo, dir, main, head };
}

const commentsOf = (repo: TestRepo, n = 1) => `${repo.api.base}/changes/${n}/comments`;
const as = (who: Parameters<typeof caller>[1]) => caller(w.server, who);

async function post(repo: TestRepo, body: Record<string, unknown>, who: Parameters<typeof caller>[1] = w.owner.token, n = 1) {
  return as(who).post(commentsOf(repo, n), body);
}
async function postOk(repo: TestRepo, body: Record<string, unknown>, who: Parameters<typeof caller>[1] = w.owner.token, n = 1) {
  const r = await post(repo, body, who, n);
  if (r.status !== 201) throw new Error(`comment failed ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
const list = async (repo: TestRepo, query = "", who: Parameters<typeof caller>[1] = w.owner.token) => as(who).get(`${commentsOf(repo)}${query}`);

describe("posting", () => {
  test("a general comment: 201 with the whole Comment shape; listed; change.commented and change.opened recorded", async () => {
    const { repo } = await seeded("general");
    const c = await postOk(repo, { body: "Looks **good**" });
    expect(c).toEqual({
      id: expect.any(String),
      author: { user_id: expect.any(String), handle: expect.any(String) },
      body: "Looks **good**",
      body_html: "<p>Looks <strong>good</strong></p>\n",
      path: null,
      line: null,
      start_line: null,
      side: null,
      patchset: 1,
      in_reply_to: null,
      thread_id: c.id,
      review_id: null,
      resolved: false,
      outdated: false,
      current_line: null,
      current_start_line: null,
      anchor_text: null,
      context_text: null,
      suggestion: null,
      draft: false,
      created_at: expect.any(Number),
      updated_at: c.created_at,
      edited_at: null,
    });
    const l = await list(repo);
    expect(l.status).toBe(200);
    expect(l.body).toEqual({ comments: [c], next_cursor: null });
    const events = dbRows<{ kind: string; payload: string }>(w.server, "SELECT kind, payload FROM events WHERE kind LIKE 'change.%' ORDER BY created_at").map(
      (e) => ({
        kind: e.kind,
        payload: JSON.parse(e.payload),
      }),
    );
    expect(events).toContainEqual({
      kind: "change.commented",
      payload: { change: 1, comment: { id: c.id, author: c.author, path: null, line: null, side: null, in_reply_to: null } },
    });
    expect(events).toContainEqual({
      kind: "change.opened",
      payload: { change: 1, title: "Rewrite line ten", branch: "feature", target: "main", author: c.author, source: null },
    });
  });

  test("line comments: one line and a range on the new side, one line on the old side, with their text", async () => {
    const { repo, head, main } = await seeded("lines");
    const one = await postOk(repo, { body: "why?", path: "f.txt", line: 10 });
    expect(one).toMatchObject({
      path: "f.txt",
      line: 10,
      start_line: null,
      side: "new",
      patchset: 1,
      current_line: 10,
      current_start_line: null,
      outdated: false,
    });
    expect(one.anchor_text).toBe("LINE TEN\n");
    expect(one.context_text).toBe("line 7\nline 8\nline 9\n");
    const range = await postOk(repo, { body: "these", path: "f.txt", start_line: 8, line: 12, side: "new" });
    expect(range).toMatchObject({ start_line: 8, line: 12, current_start_line: 8, current_line: 12 });
    expect(range.anchor_text).toBe("line 8\nline 9\nLINE TEN\nline 11\nline 12\n");
    const old = await postOk(repo, { body: "was fine", path: "f.txt", line: 10, side: "old" });
    expect(old).toMatchObject({ side: "old", line: 10, anchor_text: "line 10\n" });
    // A file the change adds, in a directory.
    expect(await postOk(repo, { body: "title", path: "dir/new.md", line: 1 })).toMatchObject({ path: "dir/new.md", anchor_text: "# new\n" });
    expect(head).not.toBe(main);
  });

  test("a viewer (signed in) may comment; a reply joins the thread", async () => {
    const { repo } = await seeded("viewer");
    const root = await postOk(repo, { body: "root", path: "f.txt", line: 10 });
    const reply = await postOk(repo, { body: "a viewer's reply", in_reply_to: root.id }, { cookie: w.viewer.cookie });
    expect(reply).toMatchObject({ in_reply_to: root.id, thread_id: root.id, path: null, line: null, side: null, outdated: false });
    // A reply to a reply belongs to the same thread.
    const deeper = await postOk(repo, { body: "and again", in_reply_to: reply.id });
    expect(deeper).toMatchObject({ in_reply_to: reply.id, thread_id: root.id });
  });
});

describe("who may", () => {
  test("outsider on a private repo: 404 for GET and POST, the same answer as a repository that does not exist", async () => {
    const { repo } = await seeded("private");
    const missing = await as(w.outsider.token).get(`/v1/orgs/${ORG}/repos/nothing-here/changes/1/comments`);
    const g = await as(w.outsider.token).get(commentsOf(repo));
    const p = await as(w.outsider.token).post(commentsOf(repo), { body: "hi" });
    expectError(g, 404);
    expectError(p, 404);
    expect(g.body).toEqual(missing.body);
    expect(p.body).toEqual(missing.body);
  });

  test("anonymous: 401 on a private repo; reads a public one, 401 to post there", async () => {
    const { repo } = await seeded("anon");
    expectError(await as(undefined).get(commentsOf(repo)), 401);
    expectError(await as(undefined).post(commentsOf(repo), { body: "hi" }), 401);
    const pub = await seeded("anon-public", true);
    await postOk(pub.repo, { body: "public talk" });
    const l = await as(undefined).get(commentsOf(pub.repo));
    expect(l.status).toBe(200);
    expect(l.body.comments.map((c: { body: string }) => c.body)).toEqual(["public talk"]);
    expectError(await as(undefined).post(commentsOf(pub.repo), { body: "hi" }), 401);
  });

  test("a service token and read-only personal tokens: 403 (they may still read)", async () => {
    const { repo } = await seeded("tokens");
    expectError(await post(repo, { body: "bot" }, serviceToken), 403, /person/);
    expectError(await post(repo, { body: "read-only" }, w.ownerReadToken), 403, /repo:write/);
    expectError(await post(repo, { body: "viewer token" }, w.viewer.token), 403, /repo:write/);
    expect((await list(repo, "", w.ownerReadToken)).status).toBe(200);
    expect((await list(repo, "", serviceToken)).status).toBe(200);
    expect(dbRows(w.server, "SELECT id FROM change_comments WHERE body IN ('bot', 'read-only', 'viewer token')")).toEqual([]);
  });

  test("a change that does not exist: 404", async () => {
    const { repo } = await seeded("nochange");
    expectError(await post(repo, { body: "x" }, w.owner.token, 9), 404);
    expectError(await as(w.owner.token).get(commentsOf(repo, 9)), 404);
  });
});

describe("422s", () => {
  test("each bad comment is refused with a reason, and nothing is written", async () => {
    const { repo, dir } = await seeded("refusals");
    // Another change, to reply across changes.
    await w.g.ok(["checkout", "-q", "-b", "second", "main"], { cwd: dir });
    await commitFiles(w.g, dir, { "z.txt": "z\n" }, "second");
    await w.g.ok(["push", "-q", repo.url, "second"], { cwd: dir });
    expect((await repo.api.c.post(`${repo.api.base}/changes`, { title: "second", branch: "second" })).status).toBe(201);
    const elsewhere = await postOk(repo, { body: "on #2" }, w.owner.token, 2);

    const cases: [Record<string, unknown>, RegExp][] = [
      [{ body: "x", path: "f.txt", line: 31 }, /outside f\.txt/],
      [{ body: "x", path: "f.txt", line: 0 }, /line/],
      [{ body: "x", path: "other.txt", line: 1 }, /not part of the diff/],
      [{ body: "x", path: "missing.txt", line: 1 }, /not part of the diff/],
      [{ body: "x", path: "f.txt", line: 25 }, /not part of the diff/],
      // Again: the hunk mask now comes from the node's anchor cache, and refuses the same.
      [{ body: "x", path: "f.txt", line: 25, side: "new" }, /not part of the diff/],
      [{ body: "x", path: "f.txt", start_line: 12, line: 10 }, /start_line/],
      [{ body: "x", path: "f.txt", start_line: 1, line: 600 }, /at most 500 lines/],
      [{ body: "x", path: "dir/new.md", line: 1, side: "old" }, /no old side/],
      [{ body: "x", path: "f.txt" }, /line is required/],
      [{ body: "x", line: 3 }, /need a path/],
      [{ body: "x", path: "../f.txt", line: 1 }, /path/],
      [{ body: "x", path: "f.txt", line: 10, patchset: 2 }, /no patchset 2/],
      [{ body: "" }, /empty/],
      [{ body: "   \n" }, /empty/],
      [{ body: "x".repeat(65_537) }, /65536/],
      [{ body: "x", in_reply_to: elsewhere.id }, /in_reply_to/],
      [{ body: "x", in_reply_to: "no-such-comment" }, /in_reply_to/],
    ];
    for (const [body, message] of cases) {
      const r = await post(repo, body);
      expect({ body: { ...body, body: String(body.body).slice(0, 10) }, status: r.status }).toEqual({
        body: { ...body, body: String(body.body).slice(0, 10) },
        status: 422,
      });
      expectError(r, 422, message);
    }
    // Exactly 65,536 characters is fine; lines in the 3 lines of context are fine.
    expect((await post(repo, { body: "y".repeat(65_536) })).status).toBe(201);
    expect((await post(repo, { body: "x", path: "f.txt", start_line: 7, line: 13 })).status).toBe(201);
    const root = await postOk(repo, { body: "root", path: "f.txt", line: 10 });
    expectError(await post(repo, { body: "x", in_reply_to: root.id, path: "f.txt", line: 10 }), 422, /reply/);
    // A malformed body is a 400 (schema), not a 422.
    expect((await post(repo, { body: 5 })).status).toBe(400);
    expect((await list(repo)).body.comments.length).toBe(3);
  });
});

describe("edit, resolve, delete", () => {
  test("edit: the author 200 (re-rendered, edited_at); anyone else 403", async () => {
    const { repo } = await seeded("edit");
    const c = await postOk(repo, { body: "first" }, { cookie: bo.cookie });
    const url = `${commentsOf(repo)}/${c.id}`;
    const e = await as({ cookie: bo.cookie }).patch(url, { body: "*second*" });
    expect(e.status).toBe(200);
    expect(e.body).toMatchObject({ id: c.id, body: "*second*", body_html: "<p><em>second</em></p>\n", edited_at: expect.any(Number) });
    expectError(await as(w.owner.token).patch(url, { body: "hijack" }), 403, /author/);
    expectError(await as(w.admin.token).patch(url, { body: "hijack" }), 403);
    expectError(await as(w.owner.token).patch(`${commentsOf(repo)}/nope`, { body: "x" }), 404);
    expectError(await as({ cookie: bo.cookie }).patch(url, {}), 422);
    expectError(await as({ cookie: bo.cookie }).patch(url, { body: "" }), 422);
  });

  test("resolve: the change's author and a writer may, a viewer may not; a reply's id resolves its thread", async () => {
    const { repo } = await seeded("resolve");
    const root = await postOk(repo, { body: "root", path: "f.txt", line: 10 }, { cookie: bo.cookie });
    const r2 = await postOk(repo, { body: "reply", in_reply_to: root.id }, { cookie: w.viewer.cookie });
    // The change's author (the owner opened it) resolves through the reply's id.
    const byAuthor = await as(w.owner.token).patch(`${commentsOf(repo)}/${r2.id}`, { resolved: true });
    expect(byAuthor.status).toBe(200);
    expect(byAuthor.body).toMatchObject({ id: r2.id, resolved: true });
    const listed = (await list(repo)).body.comments as { id: string; resolved: boolean }[];
    expect(listed.find((c) => c.id === root.id)!.resolved).toBe(true);
    // A writer who is not the change's author reopens it; a viewer may not touch it.
    expect((await as(w.member.token).patch(`${commentsOf(repo)}/${root.id}`, { resolved: false })).body.resolved).toBe(false);
    expectError(await as({ cookie: w.viewer.cookie }).patch(`${commentsOf(repo)}/${root.id}`, { resolved: true }), 403, /write access/);
    // A viewer's own comment: they may edit its body but not resolve its thread.
    expect((await as({ cookie: w.viewer.cookie }).patch(`${commentsOf(repo)}/${r2.id}`, { body: "edited" })).status).toBe(200);
  });

  test("delete: the author 204, an admin 204, anyone else 403; a root with replies becomes a tombstone", async () => {
    const { repo } = await seeded("delete");
    const mine = await postOk(repo, { body: "bo's" }, { cookie: bo.cookie });
    expectError(await as(w.member.token).delete(`${commentsOf(repo)}/${mine.id}`), 403, /author or a repository admin/);
    expect((await as({ cookie: bo.cookie }).delete(`${commentsOf(repo)}/${mine.id}`)).status).toBe(204);
    expectError(await as({ cookie: bo.cookie }).delete(`${commentsOf(repo)}/${mine.id}`), 404);
    const other = await postOk(repo, { body: "bo's second" }, { cookie: bo.cookie });
    expect((await as(w.admin.token).delete(`${commentsOf(repo)}/${other.id}`)).status).toBe(204);

    const root = await postOk(repo, { body: "root", path: "f.txt", line: 10 }, { cookie: bo.cookie });
    const reply = await postOk(repo, { body: "reply", in_reply_to: root.id });
    expect((await as({ cookie: bo.cookie }).delete(`${commentsOf(repo)}/${root.id}`)).status).toBe(204);
    let listed = (await list(repo)).body.comments;
    expect(listed.map((c: { id: string; body: string | null; body_html: string | null }) => [c.id, c.body, c.body_html])).toEqual([
      [root.id, null, null],
      [reply.id, "reply", "<p>reply</p>\n"],
    ]);
    expect(listed[0]).toMatchObject({ path: "f.txt", line: 10 });
    // The tombstone's last reply deleted: the thread is gone.
    expect((await as(w.owner.token).delete(`${commentsOf(repo)}/${reply.id}`)).status).toBe(204);
    listed = (await list(repo)).body.comments;
    expect(listed).toEqual([]);
  });
});

describe("markdown", () => {
  test("script dropped, javascript: links dropped, #N and @handle linked only when they exist, never in code", async () => {
    const { repo, dir } = await seeded("markdown");
    await w.g.ok(["checkout", "-q", "-b", "second", "main"], { cwd: dir });
    await commitFiles(w.g, dir, { "z.txt": "z\n" }, "second");
    await w.g.ok(["push", "-q", repo.url, "second"], { cwd: dir });
    expect((await repo.api.c.post(`${repo.api.base}/changes`, { title: "second", branch: "second" })).status).toBe(201);
    const c = await postOk(repo, {
      // The script on its own line: a line starting with <script> is an HTML block (CommonMark), not Markdown.
      body: "<script>alert(1)</script>\n\n[x](javascript:alert(1)) see #2 and #999, ask @bo or @nobody; `#2 @bo` mail bo@example.com",
    });
    const h: string = c.body_html;
    expect(h).not.toContain("<script");
    // Inline HTML is sanitized (issue 33): the script element goes with its content.
    expect(h).not.toContain("alert(1)</");
    expect(h).not.toMatch(/href="\s*javascript:/i);
    expect(h).toContain(`<a href="/${ORG}/markdown/changes/2">#2</a>`);
    expect(h).toContain("#999");
    expect(h).not.toContain("changes/999");
    expect(h).toContain(`<a href="/bo">@bo</a>`);
    expect(h).toContain("@nobody");
    expect(h).not.toContain('href="/nobody"');
    expect(h).toContain("<code>#2 @bo</code>");
  });

  test("org/repo#N links a public repository's change and this repository's own; a private repository's stays text, even for its owner", async () => {
    const [{ repo }] = await Promise.all([seeded("refs-here"), seeded("refs-public", true), seeded("refs-private")]);
    const c = await postOk(repo, {
      body: `see ${ORG}/refs-public#1, ${ORG.toUpperCase()}/Refs-Public#9, ${ORG}/refs-private#1, ${ORG}/refs-here#1, nobody/nothing#1; \`${ORG}/refs-public#1\``,
    });
    const h: string = c.body_html;
    expect(h).toContain(`<a href="/${ORG}/refs-public/changes/1">${ORG}/refs-public#1</a>`);
    expect(h).toContain(`<a href="/${ORG}/refs-here/changes/1">${ORG}/refs-here#1</a>`);
    // No such change, a private repository (the comment may be read by someone who cannot see it), no such repository.
    for (const text of [`${ORG.toUpperCase()}/Refs-Public#9`, `${ORG}/refs-private#1`, "nobody/nothing#1"]) expect(h).toContain(`${text}`);
    expect(h).not.toContain("refs-private/changes");
    expect(h).not.toContain("changes/9");
    expect(h).not.toContain("nobody/nothing/changes");
    expect(h).toContain(`<code>${ORG}/refs-public#1</code>`);
    expect(h.match(/<a /g)?.length).toBe(2);
  });
});

describe("listing", () => {
  test("oldest first, paged by cursor, filtered by patchset and path", async () => {
    const { repo, dir } = await seeded("listing");
    const a = await postOk(repo, { body: "a" });
    const b = await postOk(repo, { body: "b", path: "f.txt", line: 10 });
    const reply = await postOk(repo, { body: "b reply", in_reply_to: b.id });
    // Patchset 2.
    await commitFiles(w.g, dir, { "g.txt": "g\n" }, "more");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    const d = await postOk(repo, { body: "d", path: "g.txt", line: 1 });
    expect(d.patchset).toBe(2);
    const p1 = await list(repo, "?limit=2");
    expect(p1.body.comments.map((c: { id: string }) => c.id)).toEqual([a.id, b.id]);
    expect(p1.body.next_cursor).toBeString();
    const p2 = await list(repo, `?limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body.comments.map((c: { id: string }) => c.id)).toEqual([reply.id, d.id]);
    expect(p2.body.next_cursor).toBeNull();
    expect((await list(repo, "?patchset=2")).body.comments.map((c: { id: string }) => c.id)).toEqual([d.id]);
    expect((await list(repo, "?path=f.txt")).body.comments.map((c: { id: string }) => c.id)).toEqual([b.id, reply.id]);
    expect((await list(repo, "?patchset=x")).status).toBe(400);
    expect((await list(repo, "?cursor=bogus")).status).toBe(400);
    // A comment on patchset 1's lines still posts after the push.
    expect(await postOk(repo, { body: "late", path: "f.txt", line: 10, patchset: 1 })).toMatchObject({ patchset: 1, current_line: 10, outdated: false });
  });
});

describe("suggestions", () => {
  test("a ```suggestion on new lines is kept structured; on the old side or twice: 422; a general comment keeps none", async () => {
    const { repo } = await seeded("suggest");
    const body = "Try this:\n```suggestion\nLINE 10\n```\n";
    const c = await postOk(repo, { body, path: "f.txt", line: 10 });
    expect(c.suggestion).toEqual({ text: "LINE 10\n", applicable: true, applied_commit: null });
    expect(c.body_html).toContain("<code");
    expectError(await post(repo, { body, path: "f.txt", line: 10, side: "old" }), 422, /new side/);
    expectError(await post(repo, { body: `${body}\n${body}`, path: "f.txt", line: 10 }), 422, /one suggestion/);
    expect((await postOk(repo, { body })).suggestion).toBeNull();
    // Editing the body re-reads the block.
    const e = await as(w.owner.token).patch(`${commentsOf(repo)}/${c.id}`, { body: "no longer" });
    expect(e.body.suggestion).toBeNull();
  });
});

describe("thread activity", () => {
  test("a comment's author takes part as `comment`, people it mentions as `mention`; a description's mentions too", async () => {
    const { repo } = await seeded("activity");
    const c = await postOk(repo, { body: "cc @bo and @nobody" }, { cookie: w.member.cookie });
    const change = dbRows<{ id: string }>(
      w.server,
      "SELECT c.id FROM changes c JOIN repos r ON r.id = c.repo_id WHERE r.name = 'activity' AND c.number = 1",
    )[0]!;
    const parts = () =>
      dbRows<{ user_id: string; reason: string }>(
        w.server,
        "SELECT user_id, reason FROM thread_participants WHERE subject_id = ? ORDER BY reason",
        change.id,
      ).map((p) => [p.user_id, p.reason]);
    expect(parts()).toContainEqual([c.author.user_id, "comment"]);
    expect(parts()).toContainEqual([bo.id, "mention"]);
    const kinds = dbRows<{ kind: string; summary: string }>(
      w.server,
      "SELECT kind, summary FROM thread_activity WHERE subject_id = ? ORDER BY created_at",
      change.id,
    );
    expect(kinds.map((k) => k.kind)).toEqual(["opened", "commented"]);
    expect(JSON.parse(kinds[1]!.summary)).toMatchObject({ excerpt: "cc @bo and @nobody", comment_ids: [c.id] });

    const second = await repo.api.c.post(`${repo.api.base}/changes`, {
      title: "Mentions",
      branch: "feature",
      target: "main",
      description: "ping @bo, not `@ada`",
    });
    expect(second.status).toBe(201);
    const id = dbRows<{ id: string }>(w.server, "SELECT c.id FROM changes c JOIN repos r ON r.id = c.repo_id WHERE r.name = 'activity' AND c.number = 2")[0]!
      .id;
    // bo is mentioned; `@ada` in code is not a mention.
    expect(dbRows<{ user_id: string; reason: string }>(w.server, "SELECT user_id, reason FROM thread_participants WHERE subject_id = ?", id)).toEqual(
      expect.arrayContaining([{ user_id: bo.id, reason: "mention" }]),
    );
    expect(dbRows(w.server, "SELECT user_id FROM thread_participants WHERE subject_id = ?", id).length).toBe(2);
  });
});
