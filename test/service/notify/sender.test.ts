// Who notification mail comes from (issue 28): `"<name>" <notifications@<host>>` with the host of
// SVC_BASE_URL and the display name of SVC_MAIL_FROM, an explicit SVC_NOTIFY_MAIL_FROM winning,
// SVC_MAIL_FROM when there is no public host. In process, a thread activity fanned out to one
// watcher and mailed through the durable outbox to a real SMTP relay (smtp-server), which sees
// the envelope sender and the From header; other mail keeps SVC_MAIL_FROM.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import { parseMail, startRelay } from "../../helpers/mail-endpoints.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { notificationSender } from "../../../src/services/notify/mail.ts";
import { newId } from "../../../src/util/ids.ts";
import type { Config } from "../../../src/config.ts";

const { users, memberships, subscriptions, orgs } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-notify-sender-"));
const relay = await startRelay({ hideStartTls: true });
afterAll(async () => {
  await relay.close();
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
/** One watcher of a private repository is mailed about a change's opening; answers what the relay received. */
async function mailed(env: Record<string, string>) {
  const dir = join(root, String(++n));
  const ctx = await openTestContext({
    SVC_DATA_DIR: dir,
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_LOG: "error",
    SVC_MAIL_TRANSPORT: "smtp",
    SVC_MAIL_SMTP_HOST: `127.0.0.1:${relay.port}`,
    SVC_MAIL_FROM: "Acme Git <git@acme.test>",
    SVC_NOTIFY_MAIL_DELAY_MS: "0",
    ...env,
  });
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: `o${n}@acme.test`, name: "Owner", password: "a long enough password", role: "owner" });
    const ownerRow = (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!;
    const actor: Principal = { kind: "session", user: ownerRow, sessionId: "test" };
    const repo = await createRepo(ctx, actor, "acme", { name: `r${n}`, public: false });
    const org = (await ctx.db.read.select().from(orgs).where(eq(orgs.name, "acme")))[0]!;
    const watcher = { id: newId(), email: `w${n}@acme.test` };
    const t = Date.now();
    await ctx.db.transaction(async (tx) => {
      await tx.insert(users).values({ id: watcher.id, handle: `w${n}`, email: watcher.email, name: "W", passwordHash: "x", emailVerifiedAt: t, createdAt: t });
      await tx.insert(memberships).values({ orgId: org.id, userId: watcher.id, role: "viewer", createdAt: t });
      await tx.insert(subscriptions).values({ repoId: repo.id, userId: watcher.id, level: "all", createdAt: t });
    });
    await ctx.db.transaction((tx) =>
      ctx.events.emit(tx, {
        kind: "thread.activity",
        repoId: repo.id,
        orgId: org.id,
        subject: { kind: "change", id: `chg${n}`, number: 1, title: "Make it faster" },
        actorUserId: owner.id,
        participants: [{ userId: owner.id, reason: "author" }],
        activity: "opened",
        summary: {},
      }),
    );
    // Fan-out, then the person's mail, then the outbox's delivery: each a job of the one before.
    while ((await ctx.work.runDue()) > 0);
    const got = await relay.waitFor((m) => m.to.includes(watcher.email));
    return { envelope: got.from, mail: await parseMail(got.raw) };
  } finally {
    ctx.close();
  }
}

describe("notification mail's sender", () => {
  test("From notifications@ the public host, named as SVC_MAIL_FROM names the instance; SVC_NOTIFY_MAIL_FROM wins", async () => {
    const derived = await mailed({ SVC_BASE_URL: "https://git.acme.test" });
    expect({ envelope: derived.envelope, from: derived.mail.from, name: derived.mail.fromName }).toEqual({
      envelope: "notifications@git.acme.test",
      from: "notifications@git.acme.test",
      name: "Acme Git",
    });
    expect(derived.mail.subject).toBe("[acme/r1] Make it faster (#1)");

    const explicit = await mailed({ SVC_BASE_URL: "https://git.acme.test", SVC_NOTIFY_MAIL_FROM: "Acme Alerts <alerts@acme.test>" });
    expect({ envelope: explicit.envelope, from: explicit.mail.from, name: explicit.mail.fromName }).toEqual({
      envelope: "alerts@acme.test",
      from: "alerts@acme.test",
      name: "Acme Alerts",
    });
  }, 60_000);

  test("the rule: no public URL or an IP host keeps SVC_MAIL_FROM; no display name names it by its host; quotes are escaped", () => {
    const rule = (baseUrl: string | null, from: string, notifyMailFrom: string | null = null) =>
      notificationSender({ baseUrl, notifyMailFrom, mail: { transport: "smtp", host: "h", port: 25, from } } as Pick<
        Config,
        "notifyMailFrom" | "baseUrl" | "mail"
      >);
    expect(rule(null, "Acme <git@acme.test>")).toBeNull();
    expect(rule("http://127.0.0.1:8080", "Acme <git@acme.test>")).toBeNull();
    expect(rule("http://[::1]:8080", "Acme <git@acme.test>")).toBeNull();
    expect(rule("https://Git.Acme.test:8443/", "git@acme.test")).toBe(`"git.acme.test" <notifications@git.acme.test>`);
    expect(rule("https://git.acme.test", `"Acme, Inc." <git@acme.test>`)).toBe(`"Acme, Inc." <notifications@git.acme.test>`);
    expect(rule("https://git.acme.test", "x@acme.test", "Ops <ops@acme.test>")).toBe("Ops <ops@acme.test>");
  });
});
