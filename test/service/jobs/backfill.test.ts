// Migration 0014 (the work engine) on an install that has work in flight: a database at 0013
// with pending webhook deliveries (one leased by a process that died, one retrying, one already
// delivered), queued and sent mail, queued changes on two targets, and old jobs rows. After the
// upgrade every piece of pending work is a job the engine runs: deliveries in each hook's order
// with their delivery id, mail by its outbox id, one change.land per target, and the old rows
// keyed and folded as their kinds now compute it.
import { afterAll, expect, test } from "bun:test";
import { Database as Sqlite } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq } from "drizzle-orm";
import { jobs, mailOutbox, webhookDeliveries } from "../../../src/db/schema/index.ts";
import { migrations } from "../../../src/db/migrations.ts";
import { openTestContext, sqliteOnly } from "../../helpers/context.ts";
import { BILLING_SEATS } from "../../../src/services/billing/seats.ts";
import { CHANGE_LAND } from "../../../src/services/changes/land-job.ts";
import { CI_TRIGGER } from "../../../src/services/ci/trigger.ts";
import { REPO_COMPACT, REPO_GC } from "../../../src/services/git/maintenance.ts";
import { WEBHOOK_DELIVER } from "../../../src/services/hooks/delivery.ts";
import { MAIL_SEND } from "../../../src/services/mail/outbox.ts";
import { MIRROR_SYNC } from "../../../src/services/mirrors/queue.ts";
import { REPO_FORK } from "../../../src/services/repos/forks.ts";
import { startReceiver } from "../../helpers/receiver.ts";

const root = mkdtempSync(join(tmpdir(), "svc-backfill-"));
const rx = startReceiver();
afterAll(() => {
  rx.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A database migrated up to 0013, as an install before the engine left it. */
function databaseAt0013(dataDir: string): Sqlite {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = new Sqlite(join(dataDir, "svc.db"));
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("CREATE TABLE IF NOT EXISTS svc_migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
  for (const m of migrations) {
    if (m.tag === "0014_work_engine") break;
    for (const stmt of m.sql.split("--> statement-breakpoint")) if (stmt.trim()) db.exec(stmt);
    db.query("INSERT INTO svc_migrations (tag, applied_at) VALUES (?, ?)").run(m.tag, Date.now());
  }
  return db;
}

const onSqlite = test.skipIf(sqliteOnly("upgrades a SQLite database made at migration 0013; PostgreSQL's migrations begin with the engine in place"));

onSqlite("pending deliveries, mail, queued changes and old jobs keep running after the upgrade", async () => {
  const dataDir = join(root, "data");
  const mailDir = join(root, "mail");
  mkdirSync(mailDir);
  const old = databaseAt0013(dataDir);
  expect(old.query("SELECT tag FROM svc_migrations ORDER BY tag DESC LIMIT 1").get()).toEqual({ tag: "0013_contribution_graph" });
  const t = Date.now() - 60_000;
  old.exec(`INSERT INTO orgs (id, name, kind, created_at) VALUES ('o1', 'acme', 'org', ${t})`);
  old.exec(`INSERT INTO repos (id, org_id, name, created_at) VALUES ('r1', 'o1', 'app', ${t})`);
  // Two hooks: h1 has a delivered one, one whose process died mid-attempt (leased), and one behind it; h2 one retrying.
  old.query("INSERT INTO webhooks (id, repo_id, url, secret, created_at, last_seq) VALUES (?, 'r1', ?, ?, ?, ?)").run("h1", `${rx.url}/h1`, "s1", t, 3);
  old.query("INSERT INTO webhooks (id, repo_id, url, secret, created_at, last_seq) VALUES (?, 'r1', ?, ?, ?, ?)").run("h2", `${rx.url}/h2`, "s2", t, 1);
  rx.secret("/h1", "s1");
  rx.secret("/h2", "s2");
  const delivery = old.query(
    "INSERT INTO webhook_deliveries (id, webhook_id, org_id, repo_id, event_id, event, seq, body, state, attempts, next_attempt_at, lease_until, finished_at, created_at) VALUES (?, ?, 'o1', 'r1', ?, 'push', ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const body = (n: number) => JSON.stringify({ event: "push", repo_id: "r1", payload: { n } });
  delivery.run("d1", "h1", "e1", 1, body(1), "delivered", 1, t, null, t, t);
  const later = Date.now() + 30_000;
  delivery.run("d2", "h1", "e2", 2, body(2), "pending", 1, t, later, null, t + 1);
  delivery.run("d3", "h1", "e3", 3, body(3), "pending", 0, t, null, null, t + 2);
  delivery.run("d4", "h2", "e2", 1, body(4), "pending", 2, later, null, null, t + 1);
  // Mail: one queued, one retrying (due), one sent, one given up.
  const mail = old.query(
    "INSERT INTO mail_outbox (id, to_address, subject, text_body, html_body, attempts, run_at, locked_until, last_error, sent_at, failed_at, created_at) VALUES (?, ?, ?, 'text', '<p>html</p>', ?, ?, NULL, ?, ?, ?, ?)",
  );
  mail.run("m1", "a@example.test", "queued", 0, t, null, null, null, t);
  mail.run("m2", "b@example.test", "retrying", 2, t + 1000, "relay down", null, null, t);
  mail.run("m3", "c@example.test", "sent", 1, t, null, t, null, t);
  mail.run("m4", "d@example.test", "given up", 8, t, "relay down", null, t, t);
  // Changes: two queued on main, one on release, one open.
  const change = old.query(
    "INSERT INTO changes (id, repo_id, number, title, state, branch, target, head, queued_at, created_at, updated_at) VALUES (?, 'r1', ?, 'c', ?, ?, ?, ?, ?, ?, ?)",
  );
  change.run("c1", 1, "queued", "f1", "main", "a".repeat(40), t + 1, t, t);
  change.run("c2", 2, "queued", "f2", "main", "b".repeat(40), t + 5, t, t);
  change.run("c3", 3, "queued", "f3", "release", "c".repeat(40), t + 3, t, t);
  change.run("c4", 4, "open", "f4", "main", "d".repeat(40), null, t, t);
  // Old jobs: two pending GCs of one repository (the second folds away), a trigger, a fork, a mirror sync, seats, and a done one.
  const job = old.query(
    "INSERT INTO jobs (id, kind, payload, run_at, attempts, locked_until, last_error, done_at, created_at) VALUES (?, ?, ?, ?, 0, NULL, NULL, ?, ?)",
  );
  job.run("j1", "repo.gc", JSON.stringify({ repoId: "r1" }), t, null, t);
  job.run("j2", "repo.gc", JSON.stringify({ repoId: "r1" }), t, null, t + 1);
  job.run("j3", "ci.trigger", JSON.stringify({ repoId: "r1", orgId: "o1", ref: "refs/heads/main", commit: "a".repeat(40), event: "push" }), t, null, t);
  job.run("j4", "repo.fork", JSON.stringify({ forkId: "r9", parentId: "r1" }), t, null, t);
  job.run("j5", "mirror.sync", JSON.stringify({ repoId: "r1", request: 1 }), t, null, t);
  job.run("j6", "billing.seats", JSON.stringify({ orgId: "o1" }), t, null, t);
  job.run("j7", "repo.compact", JSON.stringify({ repoId: "r1" }), t, t, t);
  old.close();

  const ctx = await openTestContext({
    SVC_DATA_DIR: dataDir,
    SVC_LOG: "error",
    SVC_WEBHOOK_ALLOW_PRIVATE: "1",
    SVC_MAIL_TRANSPORT: "capture",
    SVC_MAIL_DIR: mailDir,
  });
  try {
    const rows = ctx.db.read.select().from(jobs).orderBy(asc(jobs.kind), asc(jobs.id)).all();
    const byId = new Map(rows.map((r) => [r.id, r]));
    // Deliveries: the delivery's id, its hook's key and order, its attempts and due time; a dead lease kept until it ends.
    expect(byId.get("d1")).toBeUndefined();
    expect(byId.get("d2")).toMatchObject({
      kind: "webhook.deliver",
      payload: { deliveryId: "d2", webhookId: "h1" },
      key: "webhook:h1",
      seq: 2,
      attempts: 1,
      runAt: t,
      lockedUntil: later,
      doneAt: null,
    });
    expect(byId.get("d3")).toMatchObject({ kind: "webhook.deliver", key: "webhook:h1", seq: 3, attempts: 0 });
    expect(byId.get("d4")).toMatchObject({ kind: "webhook.deliver", key: "webhook:h2", seq: 1, attempts: 2, runAt: later });
    for (const id of ["d2", "d3", "d4"]) expect(byId.get(id)!.key).toBe(WEBHOOK_DELIVER.key!(byId.get(id)!.payload as never));
    // Mail: the outbox id, attempts and due time; nothing for sent or given-up messages.
    expect(byId.get("m1")).toMatchObject({ kind: "mail.send", payload: { outboxId: "m1" }, attempts: 0, runAt: t, key: null });
    expect(byId.get("m2")).toMatchObject({ kind: "mail.send", payload: { outboxId: "m2" }, attempts: 2, runAt: t + 1000 });
    expect(byId.has("m3") || byId.has("m4")).toBe(false);
    // Changes: one change.land per target, keyed and unique as the kind computes them.
    const lands = rows.filter((r) => r.kind === "change.land");
    expect(lands.map((r) => r.payload).sort((a: any, b: any) => a.target.localeCompare(b.target))).toEqual([
      { repoId: "r1", target: "main" },
      { repoId: "r1", target: "release" },
    ]);
    for (const r of lands) {
      expect(r.key).toBe(CHANGE_LAND.key!(r.payload as never));
      expect(r.uniqueKey).toBe(CHANGE_LAND.unique!(r.payload as never));
    }
    expect(lands.find((r) => (r.payload as any).target === "main")!.runAt).toBe(t + 5);
    // Old jobs: keys as their kinds compute them; the first pending GC holds the unique value, the second waits behind it.
    const kindOf = { j1: REPO_GC, j2: REPO_GC, j3: CI_TRIGGER, j4: REPO_FORK, j5: MIRROR_SYNC, j6: BILLING_SEATS } as const;
    for (const [id, kind] of Object.entries(kindOf)) expect(byId.get(id)!.key).toBe(kind.key!(byId.get(id)!.payload as never));
    expect(byId.get("j1")).toMatchObject({ uniqueKey: REPO_GC.unique!({ repoId: "r1" }), seq: 1 });
    expect(byId.get("j2")).toMatchObject({ uniqueKey: null, seq: 2 });
    expect(byId.get("j6")!.uniqueKey).toBe(BILLING_SEATS.unique!({ orgId: "o1" }));
    expect(byId.get("j7")).toMatchObject({ key: null, uniqueKey: null });
    expect(REPO_COMPACT.unique!({ repoId: "r1" })).toBe(REPO_GC.unique!({ repoId: "r1" }));

    // The engine runs them: h1's deliveries in order once the dead lease has ended, h2's when due.
    await ctx.work.runDue({ kinds: [WEBHOOK_DELIVER] });
    expect(rx.received).toEqual([]);
    const { setClock } = await import("../../../src/util/clock.ts");
    const restore = setClock(() => Date.now() + 60_000);
    try {
      while ((await ctx.work.runDue({ kinds: [WEBHOOK_DELIVER, MAIL_SEND] })) > 0);
    } finally {
      restore();
    }
    // Each hook's in its order (the two hooks side by side).
    expect(rx.of("/h1").map((r) => [r.delivery, r.signed, r.body.payload.n])).toEqual([
      ["d2", true, 2],
      ["d3", true, 3],
    ]);
    expect(rx.of("/h2").map((r) => [r.delivery, r.signed, r.body.payload.n])).toEqual([["d4", true, 4]]);
    const states = ctx.db.read
      .select({ id: webhookDeliveries.id, state: webhookDeliveries.state, attempts: webhookDeliveries.attempts })
      .from(webhookDeliveries)
      .orderBy(asc(webhookDeliveries.id))
      .all();
    expect(states).toEqual([
      { id: "d1", state: "delivered", attempts: 1 },
      { id: "d2", state: "delivered", attempts: 2 },
      { id: "d3", state: "delivered", attempts: 1 },
      { id: "d4", state: "delivered", attempts: 3 },
    ]);
    // The lander takes both targets' queues (one attempt each).
    expect(await ctx.work.runDue({ kinds: [CHANGE_LAND] })).toBe(2);
    // Mail: both pending messages handed over once, bodies cleared.
    expect(readdirSync(mailDir).filter((f) => f.endsWith(".eml"))).toHaveLength(2);
    for (const id of ["m1", "m2"])
      expect(ctx.db.read.select().from(mailOutbox).where(eq(mailOutbox.id, id)).get()).toMatchObject({ textBody: "", htmlBody: "" });
  } finally {
    ctx.close();
  }
});
