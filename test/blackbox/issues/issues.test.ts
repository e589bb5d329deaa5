// Issues, black-box (issue 32): the real server, real git pushes, every route through HTTP with the
// credentials people really hold (sessions, tokens of each scope, a service token, another org's
// token), webhooks to a local receiver, the notification inbox.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commitFiles, createRepo, initRepo, mintTokenWithId, repoUrl } from "../../helpers/git.ts";
import { newRepo, startWorld, type TestRepo, type World } from "../../helpers/content.ts";
import { caller, expectError, type Who } from "../../helpers/api.ts";
import { startReceiver, type Receiver } from "../../helpers/receiver.ts";
import { until } from "../ci/helpers.ts";

const ORG = "tracker";
let w: World;
let rx: Receiver;
let serviceToken: string;
let ownerOtherOrgToken: string;
let ownerReadToken: string;
const handles: Record<string, string> = {};

beforeAll(async () => {
  w = await startWorld(ORG, { env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1", SVC_NOTIFY_MAIL_DELAY_MS: "0" } });
  rx = startReceiver();
  serviceToken = (await mintTokenWithId(w.server, w.owner.cookie, ORG, { scopes: ["repo:write"], label: "svc", kind: "service" })).token;
  ownerReadToken = w.ownerReadToken;
  // The outsider owns another org: a token minted there, used on this org's public repository.
  ownerOtherOrgToken = w.outsider.token;
  for (const [k, p] of Object.entries({ owner: w.owner, admin: w.admin, member: w.member, viewer: w.viewer, outsider: w.outsider })) {
    const me = await caller(w.server, p.token).get("/v1/auth/me");
    handles[k] = me.body.handle;
  }
});
afterAll(async () => {
  rx?.stop();
  await w?.close();
});

const as = (who: Who) => caller(w.server, who);
const issuesOf = (repo: TestRepo) => `${repo.api.base}/issues`;

async function open(repo: TestRepo, body: Record<string, unknown>, who: Who = w.owner.token) {
  const r = await as(who).post(issuesOf(repo), body);
  if (r.status !== 201) throw new Error(`open failed ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A repository with `main` pushed by real git. */
async function seeded(name: string, isPublic = false): Promise<{ repo: TestRepo; dir: string }> {
  const repo = await newRepo(w, name, isPublic);
  const dir = await initRepo(w.g, name);
  await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  await commitFiles(w.g, dir, { "a.txt": "a\n" }, "seed");
  await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
  return { repo, dir };
}

describe("opening and reading", () => {
  test("an issue: 201 with the whole shape; numbers shared with changes", async () => {
    const { repo, dir } = await seeded("numbers");
    const first = await open(repo, { title: "  First bug  ", body: "It **breaks**" });
    expect(first).toEqual({
      number: 1,
      title: "First bug",
      body: "It **breaks**",
      body_html: "<p>It <strong>breaks</strong></p>\n",
      state: "open",
      close_reason: null,
      closed_by: null,
      labels: [],
      assignees: [],
      author: { user_id: expect.any(String), handle: handles.owner },
      comments: 0,
      created_at: expect.any(Number),
      updated_at: first.created_at,
      closed_at: null,
    });
    await w.g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
    await commitFiles(w.g, dir, { "b.txt": "b\n" }, "feature");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    const change = await repo.api.c.post(`${repo.api.base}/changes`, { title: "A change", branch: "feature" });
    expect(change.body.number).toBe(2);
    const third = await open(repo, { title: "Third" });
    expect(third.number).toBe(3);
    expect((await as(w.owner.token).get(`${issuesOf(repo)}/3`)).body.title).toBe("Third");
    expectError(await as(w.owner.token).get(`${issuesOf(repo)}/2`), 404);
    expectError(await as(w.owner.token).get(`${issuesOf(repo)}/x`), 404);
  });

  test("numbers stay unique when many are opened at once", async () => {
    const { repo } = await seeded("race");
    const all = await Promise.all(Array.from({ length: 12 }, (_, i) => open(repo, { title: `n${i}` })));
    expect(all.map((i) => i.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  test("bad titles and bodies are 422", async () => {
    const { repo } = await seeded("bad-input");
    expectError(await as(w.owner.token).post(issuesOf(repo), { title: "" }), 422);
    expectError(await as(w.owner.token).post(issuesOf(repo), { title: "a\nb" }), 422);
    expectError(await as(w.owner.token).post(issuesOf(repo), { title: "x".repeat(257) }), 422);
    expectError(await as(w.owner.token).post(issuesOf(repo), { title: "ok", body: "x".repeat(65_537) }), 422);
  });

  test("hostile Markdown stays inert; #N, org/repo#N and @handle become links", async () => {
    const { repo } = await seeded("markdown", true);
    await open(repo, { title: "target" });
    const body = [
      '<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">x</a>',
      '[click](javascript:alert(4)) <div onclick="alert(5)">d</div>',
      `See #1 and ${ORG}/markdown#1, thanks @${handles.member}; #99 stays text`,
    ].join("\n\n");
    const i = await open(repo, { title: "hostile", body });
    const html: string = i.body_html;
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<[a-z][^>]*\son\w+\s*=/i);
    // Inline HTML is sanitized, not shown as text (issue 33): img and div stay, without their handlers.
    expect(html).not.toMatch(/<(script|iframe|svg|form)\b/i);
    expect(html).not.toMatch(/<a\b[^>]*href\s*=\s*["']?\s*javascript:/i);
    expect(html).toContain(`<a href="/${ORG}/markdown/issues/1">#1</a>`);
    expect(html).toContain(`<a href="/${ORG}/markdown/issues/1">${ORG}/markdown#1</a>`);
    expect(html).toContain(`<a href="/${handles.member}">@${handles.member}</a>`);
    expect(html).toContain("#99");
    expect(html).not.toContain("/issues/99");
  });
});

describe("permissions", () => {
  test("every row: reader, writer, admin, outsider, anonymous, service token, another org's token", async () => {
    const { repo } = await seeded("perm-private");
    const { repo: pub } = await seeded("perm-public", true);
    // Private: readers open and comment; outsiders and anonymous see nothing.
    await open(repo, { title: "by viewer" }, { cookie: w.viewer.cookie });
    expectError(await as(w.outsider.token).post(issuesOf(repo), { title: "x" }), 404);
    expectError(await as(undefined).post(issuesOf(repo), { title: "x" }), 401);
    expectError(await as(w.outsider.token).get(`${issuesOf(repo)}/1`), 404);
    expectError(await as(undefined).get(issuesOf(repo)), 401);
    expectError(await as(serviceToken).post(issuesOf(repo), { title: "x" }), 403, /person/);
    expectError(await as(ownerReadToken).post(issuesOf(repo), { title: "x" }), 403, /repo:write/);
    // Public: any signed-in person opens and comments; anonymous reads only.
    const byOutsider = await open(pub, { title: "outsider report" }, { cookie: w.outsider.cookie });
    expect(byOutsider.author.handle).toBe(handles.outsider);
    expect((await as(undefined).get(`${issuesOf(pub)}/${byOutsider.number}`)).status).toBe(200);
    expectError(await as(undefined).post(issuesOf(pub), { title: "x" }), 401);
    expectError(await as(ownerOtherOrgToken).post(issuesOf(pub), { title: "x" }), 403, /another organization/);
    const c = await as({ cookie: w.outsider.cookie }).post(`${issuesOf(pub)}/${byOutsider.number}/comments`, { body: "more detail" });
    expect(c.status).toBe(201);
    // The outsider edits and closes their own issue, but cannot label or assign.
    const own = await as({ cookie: w.outsider.cookie }).patch(`${issuesOf(pub)}/${byOutsider.number}`, { title: "outsider report (edited)" });
    expect(own.status).toBe(200);
    await as(w.owner.token).post(`${pub.api.base}/labels`, { name: "bug", color: "#ff0000" });
    expectError(await as({ cookie: w.outsider.cookie }).patch(`${issuesOf(pub)}/${byOutsider.number}`, { labels: ["bug"] }), 403);
    expectError(await as({ cookie: w.outsider.cookie }).post(issuesOf(pub), { title: "x", labels: ["bug"] }), 403);
    const closed = await as({ cookie: w.outsider.cookie }).patch(`${issuesOf(pub)}/${byOutsider.number}`, { state: "closed", close_reason: "not_planned" });
    expect(closed.body).toMatchObject({ state: "closed", close_reason: "not_planned", closed_by: { kind: "person", handle: handles.outsider } });
    // Someone else's issue: the outsider and a viewer cannot edit or close it; a member (writer) can.
    const mine = await open(pub, { title: "owner's" });
    expectError(await as({ cookie: w.outsider.cookie }).patch(`${issuesOf(pub)}/${mine.number}`, { state: "closed" }), 403);
    expectError(await as({ cookie: w.viewer.cookie }).patch(`${issuesOf(pub)}/${mine.number}`, { title: "nope" }), 403);
    expect((await as(w.member.token).patch(`${issuesOf(pub)}/${mine.number}`, { title: "triaged", labels: ["bug"] })).status).toBe(200);
    // Labels: writers only.
    expectError(await as({ cookie: w.viewer.cookie }).post(`${pub.api.base}/labels`, { name: "x", color: "000000" }), 403);
    expect((await as(w.member.token).post(`${pub.api.base}/labels`, { name: "ui", color: "00ff00" })).status).toBe(201);
    // Deleting: admins only.
    expectError(await as(w.member.token).delete(`${issuesOf(pub)}/${mine.number}`), 403);
    expect((await as(w.admin.token).delete(`${issuesOf(pub)}/${mine.number}`)).status).toBe(204);
    expectError(await as(w.admin.token).get(`${issuesOf(pub)}/${mine.number}`), 404);
    // Comments: the author edits; another reader cannot; an admin deletes.
    const cid = c.body.id;
    expectError(await as(w.member.token).patch(`${issuesOf(pub)}/${byOutsider.number}/comments/${cid}`, { body: "hijack" }), 403);
    const edited = await as({ cookie: w.outsider.cookie }).patch(`${issuesOf(pub)}/${byOutsider.number}/comments/${cid}`, { body: "more *detail*" });
    expect(edited.body).toMatchObject({ body: "more *detail*", body_html: "<p>more <em>detail</em></p>\n", edited_at: expect.any(Number) });
    expectError(await as(w.member.token).delete(`${issuesOf(pub)}/${byOutsider.number}/comments/${cid}`), 403);
    expect((await as(w.admin.token).delete(`${issuesOf(pub)}/${byOutsider.number}/comments/${cid}`)).status).toBe(204);
    const after = await as(w.owner.token).get(`${issuesOf(pub)}/${byOutsider.number}`);
    expect(after.body.comments).toBe(0);
  });
});

describe("labels and assignees", () => {
  test("validation: colors, names, unknown labels, assignees who cannot write", async () => {
    const { repo } = await seeded("labels");
    const base = `${repo.api.base}/labels`;
    expect((await as(w.owner.token).post(base, { name: "Bug", color: "#D73A4A", description: "broken" })).body).toEqual({
      name: "Bug",
      color: "d73a4a",
      description: "broken",
    });
    expectError(await as(w.owner.token).post(base, { name: "bug", color: "ffffff" }), 409);
    expectError(await as(w.owner.token).post(base, { name: "x", color: "red" }), 422);
    expectError(await as(w.owner.token).post(base, { name: "a,b", color: "ffffff" }), 422);
    expectError(await as(w.owner.token).post(base, { name: "", color: "ffffff" }), 422);
    expect((await as(w.owner.token).post(base, { name: "ui", color: "00ff00" })).status).toBe(201);
    expect((await as(w.owner.token).get(base)).body.labels.map((l: { name: string }) => l.name)).toEqual(["Bug", "ui"]);
    expect((await as(w.owner.token).patch(`${base}/ui`, { name: "UX", color: "0000ff" })).body).toEqual({ name: "UX", color: "0000ff", description: null });
    expectError(await as(w.owner.token).patch(`${base}/ux`, { name: "bug" }), 409);
    expectError(await as(w.owner.token).patch(`${base}/nope`, { color: "000000" }), 404);

    expectError(await as(w.owner.token).post(issuesOf(repo), { title: "x", labels: ["missing"] }), 422, /missing/);
    expectError(await as(w.owner.token).post(issuesOf(repo), { title: "x", assignees: [handles.viewer] }), 422, /cannot write/);
    expectError(await as(w.owner.token).post(issuesOf(repo), { title: "x", assignees: [handles.outsider] }), 422, /cannot write/);
    expectError(await as(w.owner.token).post(issuesOf(repo), { title: "x", assignees: ["no-such-person"] }), 422);
    const i = await open(repo, { title: "labelled", labels: ["bug", "UX"], assignees: [handles.member] });
    expect(i.labels.map((l: { name: string }) => l.name)).toEqual(["Bug", "UX"]);
    expect(i.assignees).toEqual([{ user_id: expect.any(String), handle: handles.member }]);
    const p = await as(w.owner.token).patch(`${issuesOf(repo)}/${i.number}`, { labels: ["ux"], assignees: [handles.admin] });
    expect(p.body.labels.map((l: { name: string }) => l.name)).toEqual(["UX"]);
    expect(p.body.assignees.map((a: { handle: string }) => a.handle)).toEqual([handles.admin]);
    const ev = await as(w.owner.token).get(`${issuesOf(repo)}/${i.number}/events`);
    expect(
      ev.body.events.map((e: { kind: string; data: Record<string, unknown> }) => [e.kind, e.data.label ?? (e.data.assignee as { handle: string })?.handle]),
    ).toEqual(
      expect.arrayContaining([
        ["unlabeled", "Bug"],
        ["assigned", handles.admin],
        ["unassigned", handles.member],
      ]),
    );
    // Deleting a label takes it off issues.
    expect((await as(w.owner.token).delete(`${base}/UX`)).status).toBe(204);
    expect((await as(w.owner.token).get(`${issuesOf(repo)}/${i.number}`)).body.labels).toEqual([]);
  });
});

describe("filters and paging", () => {
  test("state, labels (all of them), assignee, author, text; counts per state", async () => {
    const { repo } = await seeded("filters");
    await as(w.owner.token).post(`${repo.api.base}/labels`, { name: "bug", color: "ff0000" });
    await as(w.owner.token).post(`${repo.api.base}/labels`, { name: "ui", color: "00ff00" });
    const a = await open(repo, { title: "Crash on login", body: "the login page crashes", labels: ["bug", "ui"], assignees: [handles.member] });
    const b = await open(repo, { title: "Slow search", labels: ["bug"] });
    const c = await open(repo, { title: "Button colour", body: "crashing colours", labels: ["ui"] }, w.member.token);
    await as(w.owner.token).patch(`${issuesOf(repo)}/${b.number}`, { state: "closed" });
    const numbers = async (q: string) => {
      const r = await as(w.owner.token).get(`${issuesOf(repo)}${q}`);
      expect(r.status).toBe(200);
      return { n: r.body.issues.map((i: { number: number }) => i.number), counts: r.body.counts };
    };
    expect(await numbers("")).toEqual({ n: [c.number, a.number], counts: { open: 2, closed: 1 } });
    expect(await numbers("?state=all")).toEqual({ n: [c.number, b.number, a.number], counts: { open: 2, closed: 1 } });
    expect(await numbers("?state=closed")).toEqual({ n: [b.number], counts: { open: 2, closed: 1 } });
    expect(await numbers("?state=all&label=bug,ui")).toEqual({ n: [a.number], counts: { open: 1, closed: 0 } });
    expect(await numbers("?state=all&label=BUG")).toEqual({ n: [b.number, a.number], counts: { open: 1, closed: 1 } });
    expect(await numbers(`?assignee=${handles.member}`)).toEqual({ n: [a.number], counts: { open: 1, closed: 0 } });
    expect(await numbers("?assignee=none")).toEqual({ n: [c.number], counts: { open: 1, closed: 1 } });
    expect(await numbers(`?state=all&author=${handles.member}`)).toEqual({ n: [c.number], counts: { open: 1, closed: 0 } });
    expect(await numbers("?q=crash")).toEqual({ n: [c.number, a.number], counts: { open: 2, closed: 0 } });
    expect(await numbers("?q=login+crash")).toEqual({ n: [a.number], counts: { open: 1, closed: 0 } });
    expect(await numbers("?q=nothing-like-this")).toEqual({ n: [], counts: { open: 0, closed: 0 } });
    expect(await numbers("?label=nope")).toEqual({ n: [], counts: { open: 0, closed: 0 } });
    expect(await numbers("?direction=asc")).toEqual({ n: [a.number, c.number], counts: { open: 2, closed: 1 } });
    expectError(await as(w.owner.token).get(`${issuesOf(repo)}?state=bogus`), 422);
    expectError(await as(w.owner.token).get(`${issuesOf(repo)}?sort=bogus`), 422);
    expectError(await as(w.owner.token).get(`${issuesOf(repo)}?cursor=bogus`), 400);
  });

  test("each issue appears exactly once across pages while issues are updated between pages", async () => {
    const { repo } = await seeded("paging");
    const all: number[] = [];
    for (let i = 0; i < 25; i++) all.push((await open(repo, { title: `issue ${i}` })).number);
    for (const sort of ["updated", "comments", "created"]) {
      for (const direction of ["desc", "asc"]) {
        const seen: number[] = [];
        let cursor: string | null = null;
        let round = 0;
        do {
          const r: { body: { issues: { number: number }[]; next_cursor: string | null } } = await as(w.owner.token).get(
            `${issuesOf(repo)}?sort=${sort}&direction=${direction}&limit=4${cursor ? `&cursor=${cursor}` : ""}`,
          );
          seen.push(...r.body.issues.map((i) => i.number));
          cursor = r.body.next_cursor;
          // Between pages: comment on one issue already seen and one not yet seen (both move in
          // updated and comments order), and open a new one (it does not join this list).
          const unseen = all.find((n) => !seen.includes(n));
          const some = seen[seen.length - 1]!;
          for (const n of [some, unseen].filter((x): x is number => x !== undefined))
            expect((await as(w.owner.token).post(`${issuesOf(repo)}/${n}/comments`, { body: `bump ${round}` })).status).toBe(201);
          round++;
        } while (cursor);
        expect([...seen].sort((a, b) => a - b)).toEqual([...all].sort((a, b) => a - b));
      }
    }
  });
});

describe("comments, webhooks and notifications", () => {
  test("issue.opened, issue.commented, issue.closed reach a webhook; author, assignee and mentioned people are notified", async () => {
    const { repo } = await seeded("hooks");
    const hook = await as(w.owner.token).post(`${repo.api.base}/webhooks`, {
      url: `${rx.url}/issues-hook`,
      events: ["issue.opened", "issue.closed", "issue.commented"],
    });
    expect(hook.status).toBe(201);
    rx.secret("/issues-hook", hook.body.secret);
    const i = await open(repo, { title: "Hooked", body: `cc @${handles.viewer}`, assignees: [handles.member] });
    const c = await as(w.admin.token).post(`${issuesOf(repo)}/${i.number}/comments`, { body: "on it" });
    expect(c.status).toBe(201);
    await as(w.member.token).patch(`${issuesOf(repo)}/${i.number}`, { state: "closed" });
    await rx.until((r) => r.filter((x) => x.path === "/issues-hook").length >= 3);
    const got = rx.of("/issues-hook").map((r) => ({ event: r.event, signed: r.signed, payload: r.body.payload }));
    expect(got).toEqual([
      {
        event: "issue.opened",
        signed: true,
        payload: {
          issue: {
            number: i.number,
            title: "Hooked",
            state: "open",
            author: { user_id: expect.any(String), handle: handles.owner },
            labels: [],
            assignees: [handles.member],
          },
        },
      },
      {
        event: "issue.commented",
        signed: true,
        payload: {
          issue: { number: i.number, title: "Hooked", state: "open" },
          comment: { id: c.body.id, author: { user_id: expect.any(String), handle: handles.admin }, body: "on it" },
        },
      },
      {
        event: "issue.closed",
        signed: true,
        payload: {
          issue: { number: i.number, title: "Hooked", state: "closed" },
          reason: "completed",
          closed_by: { kind: "person", user_id: expect.any(String) },
        },
      },
    ]);
    // The inbox: the owner (author), the member (assignee), the viewer (mentioned) hear of it.
    for (const [who, reason] of [
      [w.owner.token, "author"],
      [w.member.token, "assign"],
      [w.viewer.token, "mention"],
    ] as const) {
      const n = await until(`a notification (${reason})`, async () => {
        const r = await as(who).get("/v1/notifications");
        return (
          r.body.notifications?.find((x: { subject: { kind: string; number: number } }) => x.subject.kind === "issue" && x.subject.number === i.number) ?? null
        );
      });
      expect(n).toMatchObject({ reason, subject: { kind: "issue", number: i.number, title: "Hooked" } });
    }
  });

  test("creation is rate limited per person: 429 with Retry-After", async () => {
    const w2 = await startWorld("limited", { env: { SVC_ISSUE_RATE_LIMIT: "3" } });
    try {
      const repo = await newRepo(w2, "r");
      const c = caller(w2.server, w2.owner.token);
      expect((await c.post(`${repo.api.base}/issues`, { title: "1" })).status).toBe(201);
      expect((await c.post(`${repo.api.base}/issues`, { title: "2" })).status).toBe(201);
      expect((await c.post(`${repo.api.base}/issues/1/comments`, { body: "3" })).status).toBe(201);
      const over = await c.post(`${repo.api.base}/issues/1/comments`, { body: "4" });
      expectError(over, 429);
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
      expectError(await c.post(`${repo.api.base}/issues`, { title: "5" }), 429);
      // Another person is not limited by it.
      expect((await caller(w2.server, w2.member.token).post(`${repo.api.base}/issues`, { title: "6" })).status).toBe(201);
    } finally {
      await w2.close();
    }
  });
});

describe("references from code", () => {
  test("a pushed commit references an issue; `fixes #N` pushed to the default branch closes it", async () => {
    const { repo, dir } = await seeded("push-fixes");
    const a = await open(repo, { title: "Referenced only" });
    const b = await open(repo, { title: "Fixed by a push" });
    const c = await open(repo, { title: "Fixed on a side branch first" });
    await w.g.ok(["checkout", "-q", "-b", "side"], { cwd: dir });
    const side = await commitFiles(w.g, dir, { "s.txt": "s\n" }, `Work on it\n\nfixes #${c.number}, see #${a.number}`);
    await w.g.ok(["push", "-q", repo.url, "side"], { cwd: dir });
    const kindsOf = async (n: number) => (await as(w.owner.token).get(`${issuesOf(repo)}/${n}/events`)).body.events;
    await until("a referenced event", async () => (await kindsOf(a.number)).length > 0);
    expect(await kindsOf(a.number)).toEqual([
      {
        id: expect.any(String),
        kind: "referenced",
        actor: { user_id: expect.any(String), handle: handles.owner },
        data: { commit: side, message: "Work on it" },
        created_at: expect.any(Number),
      },
    ]);
    // A side branch does not close.
    await until("c referenced", async () => (await kindsOf(c.number)).length > 0);
    expect((await as(w.owner.token).get(`${issuesOf(repo)}/${c.number}`)).body.state).toBe("open");
    await w.g.ok(["checkout", "-q", "main"], { cwd: dir });
    const fix = await commitFiles(w.g, dir, { "f.txt": "f\n" }, `Fix the crash (Fixes #${b.number})`);
    await w.g.ok(["merge", "-q", "--no-edit", "side"], { cwd: dir });
    await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
    const closedB = await until("b closed", async () => {
      const r = (await as(w.owner.token).get(`${issuesOf(repo)}/${b.number}`)).body;
      return r.state === "closed" ? r : null;
    });
    expect(closedB).toMatchObject({ close_reason: "completed", closed_by: { kind: "commit", sha: fix } });
    const closedC = await until("c closed", async () => {
      const r = (await as(w.owner.token).get(`${issuesOf(repo)}/${c.number}`)).body;
      return r.state === "closed" ? r : null;
    });
    expect(closedC.closed_by).toEqual({ kind: "commit", sha: side });
    expect((await as(w.owner.token).get(`${issuesOf(repo)}/${a.number}`)).body.state).toBe("open");
  });

  test("a change that says `closes #N` references it when opened and closes it when it lands", async () => {
    const { repo, dir } = await seeded("land-fixes");
    const i = await open(repo, { title: "Fixed by a change" });
    await w.g.ok(["checkout", "-q", "-b", "fix"], { cwd: dir });
    await commitFiles(w.g, dir, { "fix.txt": "fixed\n" }, "the fix");
    await w.g.ok(["push", "-q", repo.url, "fix"], { cwd: dir });
    const change = await repo.api.c.post(`${repo.api.base}/changes`, { title: "Fix it", description: `Closes #${i.number}.`, branch: "fix" });
    expect(change.status).toBe(201);
    const events = async () => (await as(w.owner.token).get(`${issuesOf(repo)}/${i.number}/events`)).body.events;
    await until("referenced by the change", async () => (await events()).some((e: { kind: string }) => e.kind === "referenced"));
    expect((await events()).find((e: { kind: string }) => e.kind === "referenced").data).toEqual({ change: change.body.number, title: "Fix it" });
    expect((await as(w.owner.token).get(`${issuesOf(repo)}/${i.number}`)).body.state).toBe("open");
    // A comment on the change links the issue where it lives (numbers are shared).
    const note = await repo.api.c.post(`${repo.api.base}/changes/${change.body.number}/comments`, { body: `for #${i.number}` });
    expect(note.body.body_html).toContain(`<a href="/${ORG}/land-fixes/issues/${i.number}">#${i.number}</a>`);
    expect((await repo.api.c.post(`${repo.api.base}/changes/${change.body.number}/land`)).status).toBe(202);
    const landed = await until("landed", async () => {
      const c = (await repo.api.c.get(`${repo.api.base}/changes/${change.body.number}`)).body;
      return c.state === "landed" ? c : null;
    });
    const closed = await until("closed by the change", async () => {
      const r = (await as(w.owner.token).get(`${issuesOf(repo)}/${i.number}`)).body;
      return r.state === "closed" ? r : null;
    });
    expect(closed.closed_by).toEqual({ kind: "change", number: change.body.number, commit: landed.landed_commit });
    const closedEvent = (await events()).find((e: { kind: string }) => e.kind === "closed");
    expect(closedEvent.data).toEqual({ reason: "completed", change: change.body.number, commit: landed.landed_commit });
  });
});

describe("references from another repository", () => {
  test("`org/repo#N` in a pushed commit adds a referenced event there, shown only to readers of the source; it never closes", async () => {
    const { repo: target } = await seeded("xref-target", true);
    const { repo: pubSrc, dir: pubDir } = await seeded("xref-public-src", true);
    const { repo: secret, dir: secretDir } = await seeded("xref-secret-src");
    const issue = await open(target, { title: "Mentioned from elsewhere" });
    const ref = `${ORG}/xref-target#${issue.number}`;
    const fromPublic = await commitFiles(w.g, pubDir, { "p.txt": "p\n" }, `Work around ${ref}`);
    await w.g.ok(["push", "-q", pubSrc.url, "main"], { cwd: pubDir });
    const fromSecret = await commitFiles(w.g, secretDir, { "s.txt": "s\n" }, `Secret plan: fixes ${ref}`);
    await w.g.ok(["push", "-q", secret.url, "main"], { cwd: secretDir });
    const eventsAs = async (who: Who | undefined) => (await caller(w.server, who).get(`${issuesOf(target)}/${issue.number}/events`)).body.events;
    const owners = await until("both references", async () => {
      const e = await eventsAs(w.owner.token);
      return e.length === 2 ? e : null;
    });
    const bySha = (events: { data: { commit: string } }[], sha: string) => events.find((e) => e.data.commit === sha);
    expect(bySha(owners, fromPublic)).toMatchObject({
      kind: "referenced",
      actor: { handle: handles.owner },
      data: { commit: fromPublic, message: `Work around ${ref}`, source: { repo_id: expect.any(String), org: ORG, repo: "xref-public-src" } },
    });
    expect(bySha(owners, fromSecret)).toMatchObject({ kind: "referenced", data: { commit: fromSecret, source: { org: ORG, repo: "xref-secret-src" } } });
    // A reader of the private source (the viewer) sees it; an outsider and anonymous see only the public one.
    expect((await eventsAs({ cookie: w.viewer.cookie })).map((e: { data: { commit: string } }) => e.data.commit).sort()).toEqual(
      [fromPublic, fromSecret].sort(),
    );
    for (const who of [w.outsider.token, undefined] as const)
      expect((await eventsAs(who)).map((e: { data: { commit: string } }) => e.data.commit)).toEqual([fromPublic]);
    // The web timeline alike: the outsider's page has neither the secret commit nor its repository's name.
    const page = async (cookie: string) =>
      await (await fetch(`${w.server.url}/${ORG}/xref-target/issues/${issue.number}`, { headers: cookie ? { cookie } : {} })).text();
    const outsiderPage = await page(w.outsider.cookie);
    expect(outsiderPage).toContain(fromPublic.slice(0, 10));
    expect(outsiderPage).not.toContain(fromSecret.slice(0, 10));
    expect(outsiderPage).not.toContain("xref-secret-src");
    const ownerPage = await page(w.owner.cookie);
    expect(ownerPage).toContain(`href="/${ORG}/xref-secret-src/commit/${fromSecret}"`);
    // `fixes org/repo#N` does not close another repository's issue.
    expect((await as(w.owner.token).get(`${issuesOf(target)}/${issue.number}`)).body.state).toBe("open");
  });

  test("a pusher's `org/repo#N` reaches only repositories the pusher may read", async () => {
    const { repo: pub } = await seeded("xref-open-target", true);
    const { repo: priv } = await seeded("xref-closed-target");
    const seen = await open(pub, { title: "public" });
    const hidden = await open(priv, { title: "private" });
    const o = w.outsider;
    await createRepo(w.server, { org: o.org, email: o.email, cookie: o.cookie, token: o.token }, "mine", true);
    const dir = await initRepo(w.g, "outsider-mine");
    await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
    await commitFiles(w.g, dir, { "m.txt": "m\n" }, `See ${ORG}/xref-closed-target#${hidden.number} and ${ORG}/xref-open-target#${seen.number}`);
    await w.g.ok(["push", "-q", repoUrl(w.server, o.org, "mine", o.token), "main"], { cwd: dir });
    // One job writes both or neither: once the public one has its event, the private one's is
    // settled (the source is public, so the owner would see an event there).
    await until("the public issue referenced", async () => (await as(w.owner.token).get(`${issuesOf(pub)}/${seen.number}/events`)).body.events.length > 0);
    expect((await as(w.owner.token).get(`${issuesOf(priv)}/${hidden.number}/events`)).body.events).toEqual([]);
  });

  test("a change in another repository that mentions `org/repo#N` references it", async () => {
    const { repo: target } = await seeded("xref-change-target", true);
    const issue = await open(target, { title: "Mentioned by a change" });
    const { repo: src, dir } = await seeded("xref-change-src", true);
    await w.g.ok(["checkout", "-q", "-b", "topic"], { cwd: dir });
    await commitFiles(w.g, dir, { "t.txt": "t\n" }, "topic");
    await w.g.ok(["push", "-q", src.url, "topic"], { cwd: dir });
    const change = await src.api.c.post(`${src.api.base}/changes`, {
      title: "Touch it",
      description: `See ${ORG}/xref-change-target#${issue.number}`,
      branch: "topic",
    });
    expect(change.status).toBe(201);
    const events = await until("the change's reference", async () => {
      const e = (await as(w.outsider.token).get(`${issuesOf(target)}/${issue.number}/events`)).body.events;
      return e.length ? e : null;
    });
    expect(events).toEqual([
      expect.objectContaining({
        kind: "referenced",
        data: { change: change.body.number, title: "Touch it", source: { repo_id: expect.any(String), org: ORG, repo: "xref-change-src" } },
      }),
    ]);
  });
});

describe("deleting an issue", () => {
  test("its notifications go with it; another issue's stay", async () => {
    const { repo } = await seeded("delete-notified");
    const gone = await open(repo, { title: "To be deleted", assignees: [handles.member] });
    const kept = await open(repo, { title: "To be kept", assignees: [handles.member] });
    const inbox = async () =>
      ((await as(w.member.token).get("/v1/notifications")).body.notifications as { subject: { kind: string; number: number }; repository?: unknown }[]).filter(
        (n) => n.subject.kind === "issue" && [gone.number, kept.number].includes(n.subject.number) && JSON.stringify(n).includes("delete-notified"),
      );
    await until("both notifications", async () => (await inbox()).length === 2);
    expect((await as(w.admin.token).delete(`${issuesOf(repo)}/${gone.number}`)).status).toBe(204);
    expect((await inbox()).map((n) => n.subject.number)).toEqual([kept.number]);
  });
});
