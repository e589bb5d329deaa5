// A failed CI run notifies whoever pushed it (DECISIONS §5 Notifications), in process on either
// database: the run's jobs end one by one through failJob (the one place a job ends); the run
// reaching failure records one run_failed activity (not one per job), whose fan-out tells the
// pusher (ci_activity) and nobody else, not even a watcher at `all`; a run nobody pushed tells nobody.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { failJob } from "../../../src/services/ci/finish.ts";
import * as runs from "../../../src/services/ci/store-runs.ts";
import { NOTIFY_FANOUT } from "../../../src/services/notify/fanout.ts";
import { NOTIFY_MAIL } from "../../../src/services/notify/mail.ts";
import { newId } from "../../../src/util/ids.ts";

const { users, subscriptions, notifications, threadActivity, mailOutbox } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-notify-run-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const open: { close(): void }[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

let n = 0;
async function setup(pusher: "owner" | null, mail = false) {
  const dir = join(root, String(++n));
  const mailEnv = mail ? { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: join(dir, "mail"), SVC_NOTIFY_MAIL_DELAY_MS: "0" } : {};
  const ctx = await openTestContext({ SVC_DATA_DIR: dir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error", ...mailEnv });
  open.push(ctx);
  const owner = await createUserWithOrg(ctx, { org: "acme", email: `o${n}@acme.test`, name: "Owner", password: "a long enough password", role: "owner" });
  const watcher = await createUserWithOrg(ctx, { org: `w${n}`, email: `w${n}@acme.test`, name: "W", password: "a long enough password", role: "owner" });
  const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
  const repo = await createRepo(ctx, actor, "acme", { name: "r", public: true });
  const t = Date.now();
  const runId = newId();
  const jobIds = [newId(), newId()];
  await ctx.db.transaction(async (tx) => {
    await tx.insert(subscriptions).values({ repoId: repo.id, userId: watcher.id, level: "all", createdAt: t });
    await runs.insertRun(tx, {
      id: runId,
      repoId: repo.id,
      orgId: repo.org_id,
      workflow: ".svc/workflows/ci.yml",
      commit: "a".repeat(40),
      ref: "refs/heads/main",
      event: "push",
      state: "queued",
      error: null,
      actorUserId: pusher === "owner" ? owner.id : null,
      createdAt: t,
      finishedAt: null,
    });
    for (const id of jobIds)
      await runs.insertJob(tx, {
        id,
        runId,
        repoId: repo.id,
        orgId: repo.org_id,
        key: `ci.yml/${id}`,
        runsOn: ["linux"],
        hosted: false,
        spec: { steps: [], timeoutS: 60 } as never,
        state: "queued",
        verdict: null,
        error: null,
        runnerId: null,
        runnerName: null,
        tokenId: null,
        steps: [],
        cancelReason: null,
        logSize: 0,
        queuedAt: t,
        startedAt: null,
        finishedAt: null,
        lastHeartbeatAt: null,
      });
  });
  const end = async (id: string) => {
    const job = (await runs.unfinishedJobsOfRun(ctx.db.read, runId)).find((j) => j.id === id)!;
    await ctx.db.transaction((tx) => failJob(ctx, tx, job, "failure", "exit 1", Date.now()).then(() => undefined));
  };
  return { ctx, owner, watcher, runId, jobIds, end };
}

describe("run_failed", () => {
  test("the run's first failure tells its pusher only, once", async () => {
    const s = await setup("owner");
    await s.end(s.jobIds[0]!);
    await s.end(s.jobIds[1]!);
    const acts = await s.ctx.db.read.select().from(threadActivity);
    expect(acts.map((a) => [a.kind, a.subjectKind, a.subjectId])).toEqual([["run_failed", "run", s.runId]]);
    while ((await s.ctx.work.runDue({ kinds: [NOTIFY_FANOUT] })) > 0);
    const rows = await s.ctx.db.read.select().from(notifications);
    expect(rows.map((r) => [r.userId, r.reason, r.subjectKind, r.subjectId])).toEqual([[s.owner.id, "ci_activity", "run", s.runId]]);
  });

  test("the pusher's mail names the failed run and links to it; the watcher gets none", async () => {
    const s = await setup("owner", true);
    await s.end(s.jobIds[0]!);
    await s.end(s.jobIds[1]!);
    while ((await s.ctx.work.runDue({ kinds: [NOTIFY_FANOUT] })) > 0);
    while ((await s.ctx.work.runDue({ kinds: [NOTIFY_MAIL] })) > 0);
    const outbox = await s.ctx.db.read.select().from(mailOutbox);
    expect(outbox.map((m) => m.toAddress)).toEqual([`o${n}@acme.test`]);
    const [m] = outbox;
    expect(m!.subject).toBe(`[acme/r] .svc/workflows/ci.yml failed on main (aaaaaaa)`);
    expect(m!.textBody).toContain("the CI run failed");
    expect(m!.textBody).toContain(`/acme/r/runs/${s.runId}`);
    expect(m!.htmlBody).toContain(`/acme/r/runs/${s.runId}`);
    expect(m!.headers!["List-Unsubscribe"]).toMatch(/\/notifications\/unsubscribe\?token=svcu_/);
    expect(m!.textBody).toContain("You are getting this because you pushed the commit the run was for.");
    expect(m!.headers!["X-Svc-Reason"]).toBe("ci_activity");
  });

  test("a run nobody pushed tells nobody", async () => {
    const s = await setup(null);
    await s.end(s.jobIds[0]!);
    await s.end(s.jobIds[1]!);
    expect(await s.ctx.db.read.select().from(threadActivity)).toEqual([]);
  });
});
