// Notification fan-out in process (plan §6), on whichever database the run uses (SQLite, or
// PostgreSQL under SVC_TEST_DATABASE=pg) and under SVC_TEST_TX_REPLAY=1: a thread.activity emitted
// in a transaction records the participants and the activity and queues one notify.fanout job;
// the job notifies 500 watchers less the actor, skips people who cannot read the repository, the
// ignoring and the muted, honours `only`, writes nothing twice when it runs again, and a burst of
// activity folds into one pending mail per person and thread, which lists the whole burst.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq, inArray } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { ThreadActivityEvent } from "../../../src/services/events/types.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { NOTIFY_FANOUT } from "../../../src/services/notify/fanout.ts";
import { NOTIFY_MAIL } from "../../../src/services/notify/mail.ts";
import { factsForPeople } from "../../../src/services/access/lookup.ts";
import { decide, deferredFacts } from "../../../src/services/access/access.ts";
import { newId } from "../../../src/util/ids.ts";
import { mailsTo } from "../../helpers/mail-capture.ts";

const { users, memberships, subscriptions, notifications, threadActivity, threadParticipants, jobs, mailOutbox, orgs, repos, teams, teamMembers, grants } =
  testTables;
const root = mkdtempSync(join(tmpdir(), "svc-notify-fanout-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const open: { close(): void }[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

let n = 0;
async function harness(o: { watchers: number; public?: boolean }) {
  const dir = join(root, String(++n));
  const ctx = await openTestContext({
    SVC_DATA_DIR: dir,
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_LOG: "error",
    SVC_MAIL_TRANSPORT: "capture",
    SVC_MAIL_DIR: join(dir, "mail"),
    SVC_NOTIFY_MAIL_DELAY_MS: "0",
  });
  open.push(ctx);
  const owner = await createUserWithOrg(ctx, { org: "acme", email: `o${n}@acme.test`, name: "Owner", password: "a long enough password", role: "owner" });
  const ownerRow = (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!;
  const actor: Principal = { kind: "session", user: ownerRow, sessionId: "test" };
  const repo = await createRepo(ctx, actor, "acme", { name: `r${n}`, public: o.public ?? false });
  const org = (await ctx.db.read.select().from(orgs).where(eq(orgs.name, "acme")))[0]!;
  // Watchers: members of the org (viewer), confirmed, watching the repository at `all`.
  const t = Date.now();
  const people: { id: string; email: string }[] = [];
  for (let i = 0; i < o.watchers; i++) people.push({ id: newId(), email: `w${i}@acme.test` });
  await ctx.db.transaction(async (tx) => {
    for (let i = 0; i < people.length; i += 200) {
      const part = people.slice(i, i + 200);
      await tx
        .insert(users)
        .values(
          part.map((p, j) => ({ id: p.id, handle: `w${i + j}`, email: p.email, name: `W ${i + j}`, passwordHash: "x", emailVerifiedAt: t, createdAt: t })),
        );
      await tx.insert(memberships).values(part.map((p) => ({ orgId: org.id, userId: p.id, role: "viewer" as const, createdAt: t })));
      await tx.insert(subscriptions).values(part.map((p) => ({ repoId: repo.id, userId: p.id, level: "all" as const, createdAt: t })));
    }
  });
  const emit = (e: Partial<ThreadActivityEvent> & Pick<ThreadActivityEvent, "activity">) =>
    ctx.db.transaction((tx) =>
      ctx.events.emit(tx, {
        kind: "thread.activity",
        repoId: repo.id,
        orgId: org.id,
        subject: { kind: "change", id: "chg1", number: 7, title: "Make it faster" },
        actorUserId: owner.id,
        participants: [],
        summary: {},
        ...e,
      }),
    );
  const fanoutAll = async () => {
    while ((await ctx.work.runDue({ kinds: [NOTIFY_FANOUT] })) > 0);
  };
  return { ctx, owner, ownerRow, actor, repo, org, people, emit, fanoutAll };
}

async function inboxOf(ctx: Ctx, subjectId = "chg1") {
  return await ctx.db.read.select().from(notifications).where(eq(notifications.subjectId, subjectId));
}

describe("notification fan-out", () => {
  test("500 watchers, one of them the actor: 499 inbox rows from one job; an outsider watching is told nothing", async () => {
    const h = await harness({ watchers: 499 });
    // The actor watches too (500 watchers), and someone outside the org watches the private repository.
    const outsider = newId();
    await h.ctx.db.transaction(async (tx) => {
      await tx.insert(subscriptions).values({ repoId: h.repo.id, userId: h.owner.id, level: "all", createdAt: Date.now() });
      await tx.insert(users).values({
        id: outsider,
        handle: "outsider",
        email: "out@else.test",
        name: "Out",
        passwordHash: "x",
        emailVerifiedAt: Date.now(),
        createdAt: Date.now(),
      });
      await tx.insert(subscriptions).values({ repoId: h.repo.id, userId: outsider, level: "all", createdAt: Date.now() });
    });
    await h.emit({ activity: "opened", participants: [{ userId: h.owner.id, reason: "author" }], summary: { excerpt: "x".repeat(2000) } });
    // The subscriber wrote rows only: the participant, the activity, one fan-out job.
    expect((await h.ctx.db.read.select().from(threadParticipants)).map((p) => [p.userId, p.reason])).toEqual([[h.owner.id, "author"]]);
    const [activity] = await h.ctx.db.read.select().from(threadActivity);
    expect(activity!.kind).toBe("opened");
    expect((activity!.summary.excerpt as string).length).toBe(500);
    expect((await h.ctx.db.read.select().from(jobs).where(eq(jobs.kind, "notify.fanout"))).length).toBe(1);
    expect(await h.ctx.work.runDue({ kinds: [NOTIFY_FANOUT] })).toBe(1);
    const rows = await inboxOf(h.ctx);
    expect(rows.length).toBe(499);
    expect(new Set(rows.map((r) => r.userId))).toEqual(new Set(h.people.map((p) => p.id)));
    expect(rows.every((r) => r.reason === "watching" && r.unread && r.title === "Make it faster" && r.subjectNumber === 7)).toBe(true);
    // One pending mail per confirmed recipient.
    expect((await h.ctx.db.read.select().from(jobs).where(eq(jobs.kind, "notify.mail"))).length).toBe(499);
  }, 120_000);

  test("running the fan-out again (a replayed attempt) writes no duplicate and no second mail job", async () => {
    const h = await harness({ watchers: 20 });
    await h.emit({ activity: "commented", participants: [{ userId: h.owner.id, reason: "comment" }] });
    const [activity] = await h.ctx.db.read.select().from(threadActivity);
    await h.fanoutAll();
    const first = await inboxOf(h.ctx);
    // The same activity's job once more, as a retry after a lost lease would run it.
    await h.ctx.db.transaction((tx) => h.ctx.work.enqueue(tx, NOTIFY_FANOUT, { activityId: activity!.id, subjectKind: "change", subjectId: "chg1" }));
    await h.fanoutAll();
    const again = await inboxOf(h.ctx);
    expect(again.length).toBe(20);
    expect(again.map((r) => [r.id, r.lastActivityId]).sort()).toEqual(first.map((r) => [r.id, r.lastActivityId]).sort());
    expect((await h.ctx.db.read.select().from(jobs).where(eq(jobs.kind, "notify.mail"))).length).toBe(20);
  });

  test("ignore silences even the author; muted threads and the actor are skipped; `only` narrows; the strongest reason wins", async () => {
    const h = await harness({ watchers: 4 });
    const [a, b, c, d] = h.people;
    await h.ctx.db.transaction(async (tx) => {
      await tx
        .update(subscriptions)
        .set({ level: "ignore" })
        .where(and(eq(subscriptions.userId, a!.id), eq(subscriptions.repoId, h.repo.id)));
      await tx
        .update(subscriptions)
        .set({ level: "participating" })
        .where(inArray(subscriptions.userId, [b!.id, c!.id]));
    });
    // a authored (but ignores the repository), b commented then was mentioned, c is only a participating watcher.
    await h.emit({ activity: "opened", actorUserId: a!.id, participants: [{ userId: a!.id, reason: "author" }] });
    await h.emit({ activity: "commented", actorUserId: b!.id, participants: [{ userId: b!.id, reason: "comment" }] });
    await h.emit({
      activity: "commented",
      actorUserId: h.owner.id,
      participants: [
        { userId: h.owner.id, reason: "comment" },
        { userId: b!.id, reason: "mention" },
      ],
    });
    await h.fanoutAll();
    const rows = new Map((await inboxOf(h.ctx)).map((r) => [r.userId, r.reason]));
    expect(rows).toEqual(
      new Map([
        [b!.id, "mention"],
        [d!.id, "watching"],
        [h.owner.id, "comment"],
      ]),
    );
    // The owner mutes the thread; a review request goes only to d.
    await h.ctx.db.transaction((tx) => tx.update(threadParticipants).set({ muted: true }).where(eq(threadParticipants.userId, h.owner.id)));
    await h.ctx.db.transaction((tx) => tx.update(notifications).set({ unread: false }));
    await h.emit({ activity: "review_requested", actorUserId: b!.id, participants: [{ userId: d!.id, reason: "review_requested" }], only: [d!.id] });
    await h.fanoutAll();
    const after = new Map((await inboxOf(h.ctx)).map((r) => [r.userId, [r.reason, r.unread]]));
    expect(after.get(d!.id)).toEqual(["review_requested", true]);
    expect(after.get(b!.id)).toEqual(["mention", false]);
    expect(after.get(h.owner.id)).toEqual(["comment", false]);
  });

  test("a burst folds into one pending mail per person, and that mail lists the whole burst", async () => {
    const h = await harness({ watchers: 3 });
    await h.emit({ activity: "commented", summary: { excerpt: "first" } });
    await h.fanoutAll();
    await h.emit({ activity: "reviewed", summary: { verdict: "approve", comments: 20, excerpt: "second" } });
    await h.fanoutAll();
    expect((await h.ctx.db.read.select().from(jobs).where(eq(jobs.kind, "notify.mail"))).length).toBe(3);
    while ((await h.ctx.work.runDue({ kinds: [NOTIFY_MAIL] })) > 0);
    const outbox = await h.ctx.db.read.select().from(mailOutbox);
    expect(outbox.length).toBe(3);
    const one = outbox.find((m) => m.toAddress === "w0@acme.test")!;
    expect(one.subject).toBe(`[acme/${h.repo.name}] Make it faster (#7)`);
    expect(one.textBody).toContain(`${h.ownerRow.handle} commented:\n\n> first`);
    expect(one.textBody).toContain(`${h.ownerRow.handle} approved with 20 comments`);
    expect(one.textBody).toContain("Reply on the web; replies to this address are not read.");
    expect(one.headers!["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click");
    expect(one.headers!["Auto-Submitted"]).toBe("auto-generated");
    expect(one.headers!["List-Unsubscribe"]).toMatch(/^<http:\/\/.+\/notifications\/unsubscribe\?token=svcu_[a-z2-7]{32}>$/);
    // Delivered through the outbox, headers and all.
    while ((await h.ctx.work.runDue()) > 0);
    const [got] = mailsTo(join(root, String(n), "mail"), "w0@acme.test");
    expect(got!.headers.get("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    expect(got!.headers.get("list-id")).toMatch(new RegExp(`^<${h.repo.name}\\.acme\\.`));
    // Nothing new: the next mail job has nothing to send.
    await h.ctx.db.transaction((tx) => h.ctx.work.enqueue(tx, NOTIFY_MAIL, { userId: h.people[0]!.id, subjectKind: "change", subjectId: "chg1" }));
    while ((await h.ctx.work.runDue({ kinds: [NOTIFY_MAIL] })) > 0);
    expect((await h.ctx.db.read.select().from(mailOutbox)).length).toBe(3);
  });

  test("factsForPeople decides like deferredFacts for members, team grants, direct grants and outsiders", async () => {
    const h = await harness({ watchers: 0 });
    const t = Date.now();
    const ids = Array.from({ length: 6 }, () => newId());
    await h.ctx.db.transaction(async (tx) => {
      await tx
        .insert(users)
        .values(ids.map((id, i) => ({ id, handle: `p${i}`, email: `p${i}@x.test`, name: "P", passwordHash: "x", emailVerifiedAt: t, createdAt: t })));
      const team = newId();
      await tx.insert(teams).values({ id: team, orgId: h.org.id, name: "t", createdAt: t });
      // p0 viewer, p1 member with a team grant, p2 member with a direct grant, p3 outsider, p4 admin, p5 member.
      await tx.insert(memberships).values([
        { orgId: h.org.id, userId: ids[0]!, role: "viewer", createdAt: t },
        { orgId: h.org.id, userId: ids[1]!, role: "member", createdAt: t },
        { orgId: h.org.id, userId: ids[2]!, role: "member", createdAt: t },
        { orgId: h.org.id, userId: ids[4]!, role: "admin", createdAt: t },
        { orgId: h.org.id, userId: ids[5]!, role: "member", createdAt: t },
      ]);
      await tx.insert(teamMembers).values({ teamId: team, userId: ids[1]!, createdAt: t });
      await tx.insert(grants).values({ id: newId(), repoId: h.repo.id, teamId: team, role: "admin", createdAt: t });
      await tx.insert(grants).values({ id: newId(), repoId: h.repo.id, userId: ids[2]!, role: "admin", createdAt: t });
    });
    const repoRow = (await h.ctx.db.read.select().from(repos).where(eq(repos.id, h.repo.id)))[0]!;
    const batched = await factsForPeople(h.ctx, h.org, repoRow, ids);
    for (const id of ids) {
      const one = await deferredFacts(h.ctx, id, h.org, repoRow);
      for (const action of ["repo:read", "repo:write", "repo:admin"] as const) {
        expect([id, action, decide(batched.get(id)!, action)]).toEqual([id, action, decide(one, action)]);
      }
    }
  });
});
