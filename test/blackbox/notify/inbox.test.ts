// The notification inbox (issue 28, DECISIONS §5 Notifications), black-box: the real server, a
// change opened from a branch pushed by git, people reviewing and asking for reviews through the
// API, each person's GET /v1/notifications. A fan-out is one transaction, so once one recipient
// (the `all` watcher `wat`, in every thread) sees an activity, everyone else's rows are written too:
// "nothing for X" is read only after that.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { castPerson, pushMainAndFeature, type Cast } from "../../helpers/cast.ts";
import { commitFiles, createRepo, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { client, startServer, type RunningServer } from "../../helpers/server.ts";
import { csrfOf, getPage, postForm, textOf } from "../../helpers/web.ts";

const ORG = "ntf";
let server: RunningServer;
let g: GitSandbox;

const people: Record<string, Cast> = {};

beforeAll(async () => {
  server = await startServer({ env: { SVC_NOTIFY_MAIL_DELAY_MS: "0" } });
  g = gitSandbox("svc-notify-");
  people.own = await castPerson(server, ORG, "own", "owner");
  const list = await Promise.all(["ada", "bo", "cy", "wat", "ign", "lea", "men", "par"].map((h) => castPerson(server, ORG, h, "member")));
  for (const p of list) people[p.handle] = p;
});
afterAll(async () => {
  await server.stop();
  g[Symbol.dispose]();
});

const as = (who: Cast) => client(server, { token: who.token });

/** A private repository watched by `wat` (all) and ignored by `ign`, with change #1 (by ada) from branch `feature`. */
async function thread(name: string): Promise<{ base: string; repo: string }> {
  await createRepo(server, { org: ORG, email: people.own!.email, cookie: people.own!.cookie, token: people.own!.token }, name);
  await pushMainAndFeature(g, name, repoUrl(server, ORG, name, people.ada!.token));
  const repoBase = `/v1/orgs/${ORG}/repos/${name}`;
  expect((await as(people.wat!).put(`${repoBase}/subscription`, { level: "all" })).status).toBe(200);
  expect((await as(people.ign!).put(`${repoBase}/subscription`, { level: "ignore" })).status).toBe(200);
  const r = await as(people.ada!).post(`${repoBase}/changes`, { title: `Change in ${name}`, branch: "feature" });
  expect(r.status).toBe(201);
  return { base: `${repoBase}/changes/1`, repo: name };
}

/** The notifications of `who` about `repo`. */
async function inbox(who: Cast, repo: string, query = "") {
  const r = await as(who).get(`/v1/notifications?repo=${ORG}/${repo}${query}`);
  expect(r.status).toBe(200);
  return r.body as { notifications: any[]; next_cursor: string | null; unread_count: number };
}

/** Waits until `who` has a notification about `repo` for which `ok` holds (polls the API; a fan-out is a job). */
async function waitFor(who: Cast, repo: string, ok: (n: any) => boolean = () => true, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await inbox(who, repo)).notifications.find(ok);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no notification for ${who.handle} about ${repo}`);
    await Bun.sleep(50);
  }
}

describe("notification inbox", () => {
  test("review_requested goes to the people asked only; a review notifies the reviewer's fellow participants and `all` watchers, never the actor or the ignoring", async () => {
    const t = await thread("reasons");
    // ada asks bo: only bo hears (only: the people asked), with reason review_requested.
    expect((await as(people.ada!).post(`${t.base}/reviewers`, { handles: ["bo"] })).status).toBe(200);
    const req = await waitFor(people.bo!, t.repo);
    expect(req).toEqual({
      id: expect.any(String),
      repo: { org: ORG, name: t.repo },
      subject: { kind: "change", number: 1, id: expect.any(String), title: "Change in reasons", url: `${server.url}/${ORG}/${t.repo}/changes/1` },
      reason: "review_requested",
      unread: true,
      updated_at: expect.any(Number),
    });
    // Timestamps are epoch milliseconds (DECISIONS §1), as on every other body.
    expect(Number.isSafeInteger(req.updated_at) && Math.abs(req.updated_at - Date.now()) < 3_600_000).toBe(true);
    // cy reviews: bo (participant) and wat (watching) hear; cy (the actor) and ign (ignoring) do not.
    expect((await as(people.cy!).post(`${t.base}/reviews`, { verdict: "comment", body: "a thought" })).status).toBe(201);
    const watching = await waitFor(people.wat!, t.repo);
    expect(watching.reason).toBe("watching");
    await waitFor(people.bo!, t.repo, (n) => n.updated_at !== req.updated_at || n.id !== req.id);
    expect((await inbox(people.bo!, t.repo)).notifications.map((n) => n.reason)).toEqual(["review_requested"]);
    expect((await inbox(people.cy!, t.repo)).notifications).toEqual([]);
    expect((await inbox(people.ign!, t.repo)).notifications).toEqual([]);
    // bo reviews: cy now hears with reason review (a participant by reviewing).
    expect((await as(people.bo!).post(`${t.base}/reviews`, { verdict: "approve" })).status).toBe(201);
    const cy = await waitFor(people.cy!, t.repo);
    expect(cy.reason).toBe("review");
    expect((await inbox(people.bo!, t.repo)).notifications.length).toBe(1);
  }, 120_000);

  test("author, comment and mention from comments; a `participating` watcher hears nothing of a thread they are not in", async () => {
    const t = await thread("comments");
    expect((await as(people.par!).put(`/v1/orgs/${ORG}/repos/${t.repo}/subscription`, { level: "participating" })).status).toBe(200);
    // cy comments on ada's change: ada hears as its author.
    expect((await as(people.cy!).post(`${t.base}/comments`, { body: "why this?" })).status).toBe(201);
    expect((await waitFor(people.ada!, t.repo)).reason).toBe("author");
    // bo replies mentioning men: cy hears as a commenter, men as mentioned.
    expect((await as(people.bo!).post(`${t.base}/comments`, { body: "because @men said so" })).status).toBe(201);
    expect((await waitFor(people.cy!, t.repo)).reason).toBe("comment");
    expect((await waitFor(people.men!, t.repo)).reason).toBe("mention");
    expect((await inbox(people.ada!, t.repo)).notifications.map((n) => n.reason)).toEqual(["author"]);
    expect((await inbox(people.par!, t.repo)).notifications).toEqual([]);
    expect((await inbox(people.bo!, t.repo)).notifications).toEqual([]);
  }, 120_000);

  test("closing and reopening a change tells its participants and `all` watchers, not the actor", async () => {
    const t = await thread("closing");
    expect((await as(people.cy!).post(`${t.base}/comments`, { body: "hmm" })).status).toBe(201);
    const first = await waitFor(people.wat!, t.repo);
    // ada (the author) closes it: cy (a commenter) and wat (watching) hear, ada does not.
    expect((await as(people.ada!).patch(t.base, { state: "closed" })).status).toBe(200);
    const closed = await waitFor(people.wat!, t.repo, (n) => n.updated_at > first.updated_at);
    expect(closed.reason).toBe("watching");
    expect((await waitFor(people.cy!, t.repo)).reason).toBe("comment");
    expect((await inbox(people.ada!, t.repo)).notifications.map((n) => n.reason)).toEqual(["author"]);
    // Reopened: wat's row moves on again.
    expect((await as(people.ada!).patch(t.base, { state: "open" })).status).toBe(200);
    await waitFor(people.wat!, t.repo, (n) => n.updated_at > closed.updated_at);
  }, 120_000);

  test("ci_activity: a failed CI run notifies whoever pushed it, and nobody else (not an `all` watcher)", async () => {
    const name = "ci";
    await createRepo(server, { org: ORG, email: people.own!.email, cookie: people.own!.cookie, token: people.own!.token }, name);
    const repoBase = `/v1/orgs/${ORG}/repos/${name}`;
    expect((await as(people.wat!).put(`${repoBase}/subscription`, { level: "all" })).status).toBe(200);
    const dir = await initRepo(g, name);
    await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
    // A workflow that cannot be read: its run fails as soon as the push is read.
    await commitFiles(g, dir, { ".svc/workflows/ci.yml": "on: [push\njobs: {" }, "broken workflow");
    await g.ok(["push", "-q", repoUrl(server, ORG, name, people.bo!.token), "main"], { cwd: dir });
    const n = await waitFor(people.bo!, name);
    expect(n.reason).toBe("ci_activity");
    expect(n.subject.kind).toBe("run");
    expect(n.subject.number).toBe(null);
    expect(n.subject.title).toContain("failed on main");
    expect(n.subject.url).toBe(`${server.url}/${ORG}/${name}/runs/${n.subject.id}`);
    const run = await as(people.own!).get(`${repoBase}/runs/${n.subject.id}`);
    expect(run.status).toBe(200);
    expect(run.body.state).toBe("failure");
    expect((await inbox(people.wat!, name)).notifications).toEqual([]);
    expect((await inbox(people.ada!, name)).notifications).toEqual([]);
  }, 120_000);

  test("PATCH unread, read-all, mute; unread_count and filters; another person's id is 404", async () => {
    const t = await thread("marks");
    expect((await as(people.cy!).post(`${t.base}/reviews`, { verdict: "comment", body: "first" })).status).toBe(201);
    const n = await waitFor(people.wat!, t.repo);
    const before = (await inbox(people.wat!, t.repo)).unread_count;
    expect(before).toBeGreaterThanOrEqual(1);
    const patched = await as(people.wat!).patch(`/v1/notifications/${n.id}`, { unread: false });
    expect(patched.status).toBe(200);
    expect(patched.body.unread).toBe(false);
    expect((await inbox(people.wat!, t.repo)).unread_count).toBe(before - 1);
    expect((await inbox(people.wat!, t.repo, "&unread=true")).notifications).toEqual([]);
    expect((await inbox(people.wat!, t.repo, "&reason=watching")).notifications.length).toBe(1);
    expect((await as(people.wat!).get("/v1/notifications?reason=nonsense")).status).toBe(400);
    expect((await as(people.bo!).patch(`/v1/notifications/${n.id}`, { unread: false })).status).toBe(404);
    expect((await as(people.bo!).put(`/v1/notifications/${n.id}/mute`)).status).toBe(404);
    expect((await as(people.wat!).patch(`/v1/notifications/${n.id}`, { unread: true })).body.unread).toBe(true);
    // `before` is epoch milliseconds: a time before the row's activity leaves it unread; a date string is 400.
    const read = (body: unknown) => as(people.wat!).post("/v1/notifications/read-all", body);
    expect((await read({ repo: `${ORG}/${t.repo}`, before: "2026-11-27T12:00:00Z" })).status).toBe(400);
    expect((await read({ repo: `${ORG}/${t.repo}`, before: n.updated_at - 1 })).status).toBe(204);
    expect((await inbox(people.wat!, t.repo, "&unread=true")).notifications.length).toBe(1);
    expect((await read({ repo: `${ORG}/${t.repo}`, before: n.updated_at })).status).toBe(204);
    expect((await inbox(people.wat!, t.repo, "&unread=true")).notifications).toEqual([]);
    expect((await as(people.wat!).patch(`/v1/notifications/${n.id}`, { unread: true })).body.unread).toBe(true);
    expect((await as(people.wat!).post("/v1/notifications/read-all", { repo: `${ORG}/${t.repo}` })).status).toBe(204);
    expect((await inbox(people.wat!, t.repo, "&unread=true")).notifications).toEqual([]);
    // Muted: the next review of the thread leaves wat's row read (bo's, in the same fan-out, shows it ran).
    expect((await as(people.wat!).put(`/v1/notifications/${n.id}/mute`)).status).toBe(204);
    expect((await as(people.bo!).post(`${t.base}/reviews`, { verdict: "comment", body: "second" })).status).toBe(201);
    await waitFor(people.cy!, t.repo);
    expect((await inbox(people.wat!, t.repo)).notifications.map((x) => x.unread)).toEqual([false]);
    // Unmuted: the next one reaches wat again.
    expect((await as(people.wat!).delete(`/v1/notifications/${n.id}/mute`)).status).toBe(204);
    expect((await as(people.cy!).post(`${t.base}/reviews`, { verdict: "comment", body: "third" })).status).toBe(201);
    await waitFor(people.wat!, t.repo, (x) => x.unread);
  }, 120_000);

  test("losing access hides the notification from the list and the count; anonymous 401; settings", async () => {
    const t = await thread("access");
    expect((await as(people.lea!).put(`/v1/orgs/${ORG}/repos/${t.repo}/subscription`, { level: "all" })).status).toBe(200);
    expect((await as(people.cy!).post(`${t.base}/reviews`, { verdict: "comment", body: "hello" })).status).toBe(201);
    await waitFor(people.lea!, t.repo);
    const all = await as(people.lea!).get("/v1/notifications");
    expect(all.body.notifications.some((n: any) => n.repo.name === t.repo)).toBe(true);
    const count = all.body.unread_count;
    // lea leaves the org: the private repository is no longer readable.
    expect((await client(server, { cookie: people.own!.cookie }).delete(`/v1/orgs/${ORG}/members/${people.lea!.id}`, { origin: server.url })).status).toBe(204);
    const after = await client(server, { cookie: people.lea!.cookie }).get("/v1/notifications");
    expect(after.status).toBe(200);
    expect(after.body.notifications.some((n: any) => n.repo.name === t.repo)).toBe(false);
    expect(after.body.unread_count).toBeLessThan(count);
    expect((await client(server).get("/v1/notifications")).status).toBe(401);
    const cookie = client(server, { cookie: people.ada!.cookie });
    expect((await cookie.get("/v1/notifications/settings")).body).toEqual({ email: true });
    expect((await cookie.put("/v1/notifications/settings", { email: false }, { origin: server.url })).body).toEqual({ email: false });
    expect((await cookie.get("/v1/notifications/settings")).body).toEqual({ email: false });
    expect((await cookie.put("/v1/notifications/settings", { email: "no" }, { origin: server.url })).status).toBe(400);
  }, 120_000);

  test("web: the header bell counts unread on every page; /notifications lists, marks read, mutes, reads all; /settings/notifications", async () => {
    const t = await thread("web");
    expect((await as(people.cy!).post(`${t.base}/reviews`, { verdict: "comment", body: "look" })).status).toBe(201);
    await waitFor(people.wat!, t.repo);
    const cookie = people.wat!.cookie;
    const unread = (await as(people.wat!).get("/v1/notifications")).body.unread_count as number;
    expect(unread).toBeGreaterThan(0);
    // The bell on another page (the repository page) shows the count.
    const other = await getPage(server, `/${ORG}/${t.repo}`, cookie);
    expect(other.status).toBe(200);
    expect(other.text).toContain(`aria-label="Notifications, ${unread} unread"`);
    const inboxPage = await getPage(server, "/notifications", cookie);
    expect(inboxPage.status).toBe(200);
    expect(textOf(inboxPage.text)).toContain("Change in web #1");
    const id = (await inbox(people.wat!, t.repo)).notifications[0].id as string;
    // An unread row's link reads it on the way to the thread; a read row links to the thread.
    expect(inboxPage.text).toContain(`href="/notifications/${id}/open"`);
    const csrf = csrfOf(inboxPage.text);
    const read = await postForm(server, `/notifications/${id}/read`, { csrf }, { cookie });
    expect(read.status).toBe(303);
    expect((await inbox(people.wat!, t.repo)).notifications[0].unread).toBe(false);
    const after = await getPage(server, `/${ORG}/${t.repo}`, cookie);
    expect(after.text).toContain(unread - 1 === 0 ? 'aria-label="Notifications, none unread"' : `aria-label="Notifications, ${unread - 1} unread"`);
    // Without the form token: refused, nothing changes.
    expect((await postForm(server, `/notifications/${id}/unread`, {}, { cookie })).status).toBe(403);
    expect((await inbox(people.wat!, t.repo)).notifications[0].unread).toBe(false);
    expect((await getPage(server, "/notifications?filter=all", cookie)).text).toContain(`href="/${ORG}/${t.repo}/changes/1"`);
    expect((await postForm(server, `/notifications/${id}/unread`, { csrf }, { cookie })).status).toBe(303);
    const opened = await getPage(server, `/notifications/${id}/open`, cookie);
    expect({ status: opened.status, location: opened.headers.get("location") }).toEqual({ status: 303, location: `/${ORG}/${t.repo}/changes/1` });
    expect((await inbox(people.wat!, t.repo)).notifications[0].unread).toBe(false);
    expect((await getPage(server, `/notifications/${id}/open`, people.bo!.cookie)).status).toBe(404);
    expect((await getPage(server, `/notifications/${id}/open`)).status).toBe(401);
    expect((await postForm(server, `/notifications/${id}/unread`, { csrf }, { cookie })).status).toBe(303);
    expect((await postForm(server, "/notifications/read-all", { csrf }, { cookie })).status).toBe(303);
    expect((await as(people.wat!).get("/v1/notifications")).body.unread_count).toBe(0);
    expect((await postForm(server, `/notifications/${id}/mute`, { csrf }, { cookie })).status).toBe(303);
    // Someone else's notification: the masked 404 page.
    expect(
      (
        await postForm(
          server,
          `/notifications/${id}/read`,
          { csrf: csrfOf((await getPage(server, "/notifications", people.bo!.cookie)).text) },
          { cookie: people.bo!.cookie },
        )
      ).status,
    ).toBe(404);
    // Mail setting.
    const settings = await getPage(server, "/settings/notifications", cookie);
    expect(settings.text).toContain('name="email" value="on" checked');
    expect((await postForm(server, "/settings/notifications", { csrf }, { cookie })).status).toBe(303);
    expect((await as(people.wat!).get("/v1/notifications/settings")).body).toEqual({ email: false });
    // Anonymous: the sign-in form.
    expect((await getPage(server, "/notifications")).status).toBe(401);
    // A token bound to one repository lists only that repository's notifications (wat has others).
    expect((await as(people.wat!).get("/v1/notifications?limit=100")).body.notifications.some((x: any) => x.repo.name !== t.repo)).toBe(true);
    const { token: bound } = await mintTokenWithId(server, cookie, ORG, { scopes: ["repo:read"], label: "bound", repo: t.repo });
    const listed = await client(server, { token: bound }).get("/v1/notifications?limit=100");
    expect(listed.status).toBe(200);
    expect(listed.body.notifications.map((x: any) => x.repo.name)).toEqual([t.repo]);
  }, 120_000);
});
