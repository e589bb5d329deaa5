// Notification mail (issue 28), black-box: the real server with the capture transport (one .eml
// file per message), people reviewing a change through the API, the mails that reach a watcher.
// A review with 20 comments is one mail (the fold of several activities inside
// SVC_NOTIFY_MAIL_DELAY_MS is test/service/notify/fanout.test.ts's, where no clock races); the List-Unsubscribe one-click POST mutes
// the thread and its GET changes nothing; mail off keeps the inbox; a server killed while the mail
// job waits sends exactly one mail after its restart.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { castPerson, pushMainAndFeature, type Cast } from "../../helpers/cast.ts";
import { createRepo, gitSandbox, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { mailsTo, withDb } from "../../helpers/mail-capture.ts";
import { client, startServer, type RunningServer } from "../../helpers/server.ts";

const ORG = "nml";
let server: RunningServer;
let g: GitSandbox;
const root = mkdtempSync(join(tmpdir(), "svc-notify-mail-"));
const mailDir = join(root, "mail");
const dataDir = join(root, "data");
// Leases scaled down: a job the killed server held lapses in seconds, not a minute (the restart case).
const env = { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: mailDir, SVC_NOTIFY_MAIL_DELAY_MS: "4000", SVC_TEST_LEASE_SCALE: "0.1" };

const people: Record<string, Cast> = {};

beforeAll(async () => {
  server = await startServer({ env, dataDir });
  g = gitSandbox("svc-notify-mail-");
  people.own = await castPerson(server, ORG, "own", "owner");
  for (const h of ["ada", "bo", "cy", "wat"]) people[h] = await castPerson(server, ORG, h, "member");
});
afterAll(async () => {
  await server.stop();
  g[Symbol.dispose]();
  rmSync(root, { recursive: true, force: true });
});

const as = (who: Cast) => client(server, { token: who.token });

/** A private repository watched at `all` by `watchers`, with change #1 by ada. */
async function thread(name: string, watchers: Cast[]): Promise<string> {
  await createRepo(server, { org: ORG, email: people.own!.email, cookie: people.own!.cookie, token: people.own!.token }, name);
  await pushMainAndFeature(g, name, repoUrl(server, ORG, name, people.ada!.token));
  const repoBase = `/v1/orgs/${ORG}/repos/${name}`;
  for (const w of watchers) expect((await as(w).put(`${repoBase}/subscription`, { level: "all" })).status).toBe(200);
  expect((await as(people.ada!).post(`${repoBase}/changes`, { title: `Change in ${name}`, branch: "feature" })).status).toBe(201);
  return `${repoBase}/changes/1`;
}

/** Pending notify.mail jobs (the server's SQLite file). */
function pendingMailJobs(): number {
  return withDb(dataDir, (db) => (db.query("SELECT count(*) AS n FROM jobs WHERE kind = 'notify.mail' AND done_at IS NULL").get() as { n: number }).n);
}

/** Pending notify.fanout jobs. */
function pendingFanouts(): number {
  return withDb(dataDir, (db) => (db.query("SELECT count(*) AS n FROM jobs WHERE kind = 'notify.fanout' AND done_at IS NULL").get() as { n: number }).n);
}

/** Waits until no notify.mail or notify.fanout job is pending (they run by themselves; this polls the table). */
async function settled(timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = withDb(
      dataDir,
      (db) =>
        (db.query("SELECT count(*) AS n FROM jobs WHERE kind IN ('notify.mail', 'notify.fanout', 'mail.send') AND done_at IS NULL").get() as { n: number }).n,
    );
    if (n === 0) return;
    if (Date.now() > deadline) throw new Error("notification jobs still pending");
    await Bun.sleep(50);
  }
}

/** Waits until `count` mails to `who` about `repo` arrived (the subject names the repository). */
async function mailsAbout(who: Cast, repo: string, count = 1) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = mailsTo(mailDir, who.email).filter((m) => m.subject.startsWith(`[${ORG}/${repo}]`));
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} mail(s) to ${who.handle} about ${repo}; have ${found.length}`);
    await Bun.sleep(50);
  }
}

/** Waits until `who` has an unread notification about `repo`. */
async function waitInbox(who: Cast, repo: string): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await as(who).get(`/v1/notifications?repo=${ORG}/${repo}&unread=true`);
    if (r.body.notifications?.length) return r.body.notifications[0];
    if (Date.now() > deadline) throw new Error(`no notification for ${who.handle}`);
    await Bun.sleep(50);
  }
}

describe("notification mail", () => {
  test("a review with 20 comments is one notification and one mail, with text and HTML parts and the list headers", async () => {
    const base = await thread("burst", [people.wat!]);
    // The opening is mailed first (its own activity); waiting for it keeps the count below about the review alone.
    await mailsAbout(people.wat!, "burst", 1);
    const comments = Array.from({ length: 20 }, (_, i) => ({ path: "a.txt", line: 2, body: `remark ${i + 1}` }));
    expect((await as(people.cy!).post(`${base}/reviews`, { verdict: "comment", body: "a careful look", comments })).status).toBe(201);
    const mail = (await mailsAbout(people.wat!, "burst", 2))[1];
    await settled();
    // However long the machine takes, one review is one activity: one more mail, one inbox row.
    expect(mailsTo(mailDir, people.wat!.email).length).toBe(2);
    expect(withDb(dataDir, (db) => (db.query("SELECT count(*) AS n FROM mail_outbox WHERE to_address = ?").get(people.wat!.email) as { n: number }).n)).toBe(2);
    expect((await as(people.wat!).get(`/v1/notifications?repo=${ORG}/burst`)).body.notifications).toHaveLength(1);
    expect(mail!.text.match(/cy reviewed with 20 comments/g)?.length).toBe(1);
    expect(mail!.text).toContain("> a careful look");
    expect(mail!.text).not.toContain("opened it");
    expect(mail!.subject).toBe(`[${ORG}/burst] Change in burst (#1)`);
    expect(mail!.text).toContain(`${server.url}/${ORG}/burst/changes/1`);
    expect(mail!.text).toContain("Reply on the web; replies to this address are not read.");
    expect(mail!.html).toContain("a careful look");
    expect(mail!.headers.get("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    expect(mail!.headers.get("auto-submitted")).toBe("auto-generated");
    expect(mail!.headers.get("list-id")).toBe(`<burst.${ORG}.127.0.0.1>`);
    expect(mail!.headers.get("list-unsubscribe")).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/notifications\/unsubscribe\?token=svcu_[a-z2-7]{32}>$/);
    expect(mail!.headers.has("reply-to")).toBe(false);
    // Why they get it: wat watches the repository (the footer says so; the header carries the word).
    expect(mail!.text).toContain(`You are getting this because you watch ${ORG}/burst.`);
    expect(mail!.html).toContain(`You are getting this because you watch ${ORG}/burst.`);
    expect(mail!.headers.get("x-svc-reason")).toBe("watching");
    // No SVC_BASE_URL (the bound 127.0.0.1): no host to name, so SVC_MAIL_FROM (capture's default).
    expect(mail!.headers.get("from")).toBe("svc@localhost");
    // The actor gets no mail about their own reviews.
    expect(mailsTo(mailDir, people.cy!.email).length).toBe(0);
  }, 120_000);

  test("pending comments notify nobody; the review that publishes them is one notification and one mail", async () => {
    const base = await thread("pending", [people.wat!]);
    await mailsAbout(people.wat!, "pending", 1);
    for (const body of ["pending one @bo", "pending two"])
      expect((await as(people.cy!).post(`${base}/comments`, { path: "a.txt", line: 2, body, draft: true })).status).toBe(201);
    expect((await as(people.cy!).post(`${base}/reviews`, { verdict: "comment" })).status).toBe(201);
    const mail = (await mailsAbout(people.wat!, "pending", 2))[1];
    await settled();
    expect(mailsTo(mailDir, people.wat!.email).filter((m) => m.subject.startsWith(`[${ORG}/pending]`)).length).toBe(2);
    expect((await as(people.wat!).get(`/v1/notifications?repo=${ORG}/pending`)).body.notifications).toHaveLength(1);
    expect(mail!.text.match(/cy reviewed with 2 comments/g)?.length).toBe(1);
    // The mention in a draft counts once it is published: bo hears of the review (and only of it).
    const [bo] = await mailsAbout(people.bo!, "pending", 1);
    expect(bo!.text).toContain("cy reviewed with 2 comments");
    expect((await as(people.bo!).get(`/v1/notifications?repo=${ORG}/pending`)).body.notifications.map((n: { reason: string }) => n.reason)).toEqual([
      "mention",
    ]);
  }, 120_000);

  test("the unsubscribe link: GET changes nothing, the one-click POST mutes the thread (no more mail from it)", async () => {
    const base = await thread("unsub", [people.wat!, people.bo!]);
    // The opening's mail (each watcher's first about this thread) carries the link.
    const [mail] = await mailsAbout(people.wat!, "unsub");
    await mailsAbout(people.bo!, "unsub");
    const link = mail!.links.find((l) => l.token.startsWith("svcu_"))!;
    const page = await fetch(link.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Mute this thread");
    const muted = () =>
      withDb(dataDir, (db) => db.query("SELECT muted FROM thread_participants WHERE user_id = ? AND muted = 1").all(people.wat!.id) as unknown[]).length;
    expect(muted()).toBe(0);
    const post = await fetch(link.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(post.status).toBe(200);
    expect(await post.text()).toContain("muted");
    expect(muted()).toBe(1);
    expect((await fetch(`${server.url}/notifications/unsubscribe?token=svcu_${"a".repeat(32)}`, { method: "POST" })).status).toBe(404);
    // The next review mails bo (still subscribed) and not wat.
    expect((await as(people.cy!).post(`${base}/reviews`, { verdict: "comment", body: "second" })).status).toBe(201);
    await mailsAbout(people.bo!, "unsub", 2);
    await settled();
    expect(mailsTo(mailDir, people.wat!.email).filter((m) => m.subject.includes("unsub")).length).toBe(1);
  }, 120_000);

  test("mail off: the inbox still fills, no mail", async () => {
    expect((await as(people.ada!).put("/v1/notifications/settings", { email: false })).status).toBe(200);
    const base = await thread("quiet", [people.ada!, people.bo!]);
    expect((await as(people.cy!).post(`${base}/reviews`, { verdict: "comment", body: "hello" })).status).toBe(201);
    await waitInbox(people.ada!, "quiet");
    await mailsAbout(people.bo!, "quiet");
    await settled();
    expect(mailsTo(mailDir, people.ada!.email).filter((m) => m.subject.includes("quiet")).length).toBe(0);
    expect((await as(people.ada!).put("/v1/notifications/settings", { email: true })).status).toBe(200);
  }, 120_000);

  test("killed right after a review committed, restarted: its mail arrives exactly once", async () => {
    const base = await thread("restart", [people.wat!]);
    await mailsAbout(people.wat!, "restart", 1); // the opening's own mail
    expect((await as(people.cy!).post(`${base}/reviews`, { verdict: "approve", body: "ship it" })).status).toBe(201);
    // Killed as soon as the review committed: its activity and fan-out job are in the database, the
    // mail (due SVC_NOTIFY_MAIL_DELAY_MS later) not sent. Wherever the pipeline stood, the restart
    // sends the review's mail exactly once.
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    expect(pendingMailJobs() + pendingFanouts()).toBeGreaterThan(0);
    server = await startServer({ env, dataDir });
    await mailsAbout(people.wat!, "restart", 2);
    await settled();
    const about = mailsTo(mailDir, people.wat!.email).filter((m) => m.subject.includes("restart"));
    expect(about.length).toBe(2);
    expect(about[1]!.text).toContain("cy approved");
  }, 120_000);
});
