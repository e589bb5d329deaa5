// "Never a notification about a repository the person can no longer read" (issue 28, DECISIONS §5
// Notifications), in process on either database: someone who took part in a thread and watches
// its repository at `all`, then leaves the org between the fan-out and the mail, gets no mail for
// the pending burst (the mail job checks read access again); a later activity in the thread gives
// them no inbox row and no mail job, although their participant row and subscription remain.
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import type { ThreadActivityEvent } from "../../../src/services/events/types.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { NOTIFY_FANOUT } from "../../../src/services/notify/fanout.ts";
import { NOTIFY_MAIL } from "../../../src/services/notify/mail.ts";
import { newId } from "../../../src/util/ids.ts";

const { users, memberships, subscriptions, notifications, jobs, mailOutbox, orgs } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-notify-lost-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const open: { close(): void }[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

test("a person who lost read access gets no mail for the pending burst and no notification of later activity", async () => {
  const dir = join(root, "1");
  const ctx = await openTestContext({
    SVC_DATA_DIR: dir,
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_LOG: "error",
    SVC_MAIL_TRANSPORT: "capture",
    SVC_MAIL_DIR: join(dir, "mail"),
    SVC_NOTIFY_MAIL_DELAY_MS: "0",
  });
  open.push(ctx);
  const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "Owner", password: "a long enough password", role: "owner" });
  const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
  const repo = await createRepo(ctx, actor, "acme", { name: "private-one", public: false });
  const org = (await ctx.db.read.select().from(orgs).where(eq(orgs.name, "acme")))[0]!;
  // Two viewers watching at `all`: `stay` keeps the role (proof that each step ran), `lea` leaves.
  const t = Date.now();
  const stay = newId();
  const lea = newId();
  await ctx.db.transaction(async (tx) => {
    for (const [id, h] of [
      [stay, "stay"],
      [lea, "lea"],
    ] as const) {
      await tx.insert(users).values({ id, handle: h, email: `${h}@acme.test`, name: h, passwordHash: "x", emailVerifiedAt: t, createdAt: t });
      await tx.insert(memberships).values({ orgId: org.id, userId: id, role: "viewer", createdAt: t });
      await tx.insert(subscriptions).values({ repoId: repo.id, userId: id, level: "all", createdAt: t });
    }
  });
  const emit = (e: Pick<ThreadActivityEvent, "activity" | "participants" | "summary">) =>
    ctx.db.transaction((tx) =>
      ctx.events.emit(tx, {
        kind: "thread.activity",
        repoId: repo.id,
        orgId: org.id,
        subject: { kind: "change", id: "chg1", number: 1, title: "Secret plans" },
        actorUserId: owner.id,
        ...e,
      }),
    );
  const drain = async (kind: typeof NOTIFY_FANOUT | typeof NOTIFY_MAIL) => {
    while ((await ctx.work.runDue({ kinds: [kind] })) > 0);
  };
  const inboxOf = async (userId: string) => await ctx.db.read.select().from(notifications).where(eq(notifications.userId, userId));
  const mailJobsOf = async (userId: string) =>
    (
      await ctx.db.read
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, "notify.mail")))
    ).filter((j) => (j.payload as { userId?: string }).userId === userId);
  const outboxTo = async (address: string) => await ctx.db.read.select().from(mailOutbox).where(eq(mailOutbox.toAddress, address));

  // lea comments (a participant), then the owner comments: both viewers get a row and a pending mail.
  await emit({ activity: "commented", participants: [{ userId: lea, reason: "comment" }], summary: { excerpt: "first" } });
  await emit({ activity: "commented", participants: [{ userId: owner.id, reason: "comment" }], summary: { excerpt: "second" } });
  await drain(NOTIFY_FANOUT);
  expect((await inboxOf(lea)).length).toBe(1);
  expect((await mailJobsOf(lea)).length).toBeGreaterThanOrEqual(1);

  // lea leaves the org before the mail goes out: stay is mailed, lea is not.
  await ctx.db.transaction((tx) => tx.delete(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, lea))));
  await drain(NOTIFY_MAIL);
  expect((await outboxTo("stay@acme.test")).length).toBe(1);
  expect(await outboxTo("lea@acme.test")).toEqual([]);

  // Later activity in the thread: stay's row moves on, lea's does not and no mail job is queued for her.
  const leaBefore = (await inboxOf(lea))[0]!;
  const stayBefore = (await inboxOf(stay))[0]!;
  await emit({ activity: "commented", participants: [{ userId: owner.id, reason: "comment" }], summary: { excerpt: "third" } });
  await drain(NOTIFY_FANOUT);
  expect((await inboxOf(stay))[0]!.lastActivityId).not.toBe(stayBefore.lastActivityId);
  expect((await inboxOf(lea))[0]!.lastActivityId).toBe(leaBefore.lastActivityId);
  await drain(NOTIFY_MAIL);
  expect((await outboxTo("stay@acme.test")).length).toBe(2);
  expect(await outboxTo("lea@acme.test")).toEqual([]);
}, 120_000);
