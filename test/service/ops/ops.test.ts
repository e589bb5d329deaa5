// Readiness and metrics in-process (DECISIONS §4): a missing migration makes /readyz 503; a gauge
// another subsystem registers (the way webhook deliveries and runner claims will) shows up at
// /metrics; the object store's own counters are exported when it has them and skipped when not.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../src/http/app.ts";
import { openTestContext, otherConnection, TEST_DATABASE } from "../../helpers/context.ts";
import { startPostgres } from "../../helpers/postgres.ts";
import { Registry } from "../../../src/services/telemetry/metrics.ts";
import { collectStoreStats, instrumentContext, instrumentStore } from "../../../src/services/ops/instrument.ts";
import { createFsStore } from "../../../src/storage/index.ts";
import { REPO_GC } from "../../../src/services/git/maintenance.ts";
import { insertMessage } from "../../../src/services/mail/store.ts";
import { gitHandler } from "../../../src/http/git.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";

const root = mkdtempSync(join(tmpdir(), "svc-ops-service-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const TOKEN = "a-metrics-token-of-some-length";
let n = 0;

async function harness(env: Record<string, string> = {}) {
  const dir = join(root, String(++n));
  const ctx = await openTestContext({ SVC_DATA_DIR: dir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error", SVC_METRICS_TOKEN: TOKEN, ...env });
  const app = buildApp(ctx);
  const get = (path: string, headers: Record<string, string> = {}) => app.handle(new Request(`http://svc.test${path}`, { headers }));
  return { ctx, dir, get, [Symbol.dispose]: () => ctx.close() };
}

describe("readiness", () => {
  test("ready on a migrated data dir; 503 naming the check when a migration is missing", async () => {
    using h = await harness();
    const ok = await h.get("/readyz");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", object_store: "ok" } });

    // Another process (an older binary's restore, a hand edit) leaves the schema behind.
    const other = await otherConnection(h.dir);
    const [{ tag: last }] = (await other.rows<{ tag: string }>("SELECT tag FROM svc_migrations ORDER BY tag DESC LIMIT 1")) as [{ tag: string }];
    await other.exec(`DELETE FROM svc_migrations WHERE tag = '${last}'`);
    await other.close();
    const behind = await h.get("/readyz");
    expect(behind.status).toBe(503);
    expect(await behind.json()).toEqual({ status: "unavailable", checks: { database: "ok", migrations: "pending migrations", object_store: "ok" } });
  });

  test("a migration this binary does not know (a newer node applied it: rolling upgrade) keeps it ready", async () => {
    using h = await harness();
    const other = await otherConnection(h.dir);
    await other.exec(`INSERT INTO svc_migrations (tag, applied_at) VALUES ('9999_from_the_next_release', ${Date.now()})`);
    await other.close();
    const ok = await h.get("/readyz");
    expect(ok.status).toBe(200);
    expect((await ok.json()).checks.migrations).toBe("ok");
  });
});

describe("the database unreachable under a running context", () => {
  test("API 503 database_unavailable (JSON error shape), git 503 with the message for its user, /readyz 503 database failing", async () => {
    // On PostgreSQL a server of its own, which the test stops (the shared one serves other tests).
    await using pg = TEST_DATABASE === "pg" ? await startPostgres() : null;
    const h = await harness(pg ? { SVC_DATABASE_URL: (await pg.createDatabase()).url } : {});
    await createUserWithOrg(h.ctx, { org: "acme", email: "o@acme.example", name: "Owner", password: "a long enough password", role: "owner" });
    // Anonymous, decided from the database (a private org asks for credentials).
    expect((await h.get("/v1/orgs/acme/repos/app")).status).toBe(401);
    // What a PostgreSQL server going away looks like to a node, on SQLite: the handle is closed.
    if (pg) await pg.stopServer();
    else h.ctx.close();
    h.ctx.facts.fresh();
    const api = await h.get("/v1/orgs/acme/repos/app");
    expect(api.status).toBe(503);
    expect(api.headers.get("retry-after")).toBe("5");
    expect(await api.json()).toEqual({ error: "the database is unavailable; try again shortly", code: "database_unavailable" });
    // Decided from the database again, not from facts cached since (the cache may answer within its bound).
    h.ctx.facts.fresh();
    const git = await gitHandler(h.ctx)(new Request("http://svc.test/acme/app.git/info/refs?service=git-upload-pack"));
    expect(git!.status).toBe(503);
    expect(git!.headers.get("content-type")).toStartWith("text/plain");
    expect(await git!.text()).toBe("the database is unavailable; try again shortly\n");
    const ready = await h.get("/readyz");
    expect(ready.status).toBe(503);
    expect((await ready.json()).checks.database).toBe("failing");
    if (pg) h.ctx.close();
  });
});

describe("registering metrics from another subsystem", () => {
  test("a gauge and a collector registered the documented way appear at /metrics", async () => {
    using h = await harness();
    // What the webhook and runner code will do (see the header of services/telemetry/metrics.ts).
    const metrics = h.ctx.telemetry.registry;
    const waiting = metrics.gauge("svc_runner_claims_waiting", "Runner claim long-polls waiting for a job");
    waiting.inc();
    waiting.inc();
    waiting.dec();
    const pending = metrics.gauge("svc_webhook_deliveries_pending", "Webhook deliveries waiting", ["hook_kind"]);
    metrics.collect("webhooks-test", () => pending.set({ hook_kind: "repo" }, 4));
    try {
      const res = await h.get("/metrics", { authorization: `Bearer ${TOKEN}` });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
      const text = await res.text();
      expect(text).toContain("# TYPE svc_runner_claims_waiting gauge\nsvc_runner_claims_waiting 1\n");
      expect(text).toContain('svc_webhook_deliveries_pending{hook_kind="repo"} 4\n');
    } finally {
      metrics.uncollect("webhooks-test");
    }
  });

  test("instrumentContext wires the queues and the process for that context", async () => {
    using h = await harness();
    const undo = instrumentContext(h.ctx, "test");
    try {
      await h.ctx.db.transaction((tx) => h.ctx.work.enqueue(tx, REPO_GC, { repoId: "r1" }));
      await h.ctx.db.transaction((tx) => h.ctx.work.enqueue(tx, REPO_GC, { repoId: "r2" }, { delayMs: 3_600_000 }));
      await h.ctx.db.transaction((tx) =>
        insertMessage(tx, {
          id: "m1",
          toAddress: "a@example.com",
          subject: "s",
          textBody: "t",
          htmlBody: "h",
          runAt: Date.now() + 3_600_000,
          createdAt: Date.now() - 5000,
        }),
      );
      const text = await (await h.get("/metrics", { authorization: `Bearer ${TOKEN}` })).text();
      expect(text).toContain("svc_mail_outbox_pending 1\n");
      expect(text).toContain("svc_mail_outbox_failed 0\n");
      expect(text).toMatch(/\nsvc_mail_outbox_oldest_pending_age_seconds (4|5|6)(\.\d+)?\n/);
      expect(text).toContain('svc_jobs_pending{kind="repo.gc"} 2\n');
      expect(text).toContain('svc_jobs_due{kind="repo.gc"} 1\n');
      expect(text).toMatch(/\nprocess_resident_memory_bytes [1-9]\d*\n/);
      expect(text).toContain('svc_build_info{version="test"} 1\n');
    } finally {
      undo();
    }
  });
});

describe("the object store's own counters", () => {
  test("exported when the store keeps `stats`, as increasing counters", async () => {
    const inner = createFsStore(join(root, "stats-store"));
    const stats = { requests: { GET: 3, PUT: 1 }, bytesRead: 100, retries: 2, inFlight: 1, peakInFlight: 5 };
    const withStats = Object.assign(inner, { stats });
    const metrics = new Registry();
    const store = instrumentStore(metrics, withStats);
    // The wrapper passes the counters through untouched.
    expect((store as unknown as { stats: unknown }).stats).toBe(stats);
    const collect = collectStoreStats(metrics, store);
    await collect();
    stats.requests.GET = 5;
    stats.bytesRead = 160;
    await collect();
    const text = await metrics.render();
    expect(text).toMatch(/svc_object_store_backend_requests_total\{kind="GET"\} \d+/);
    const get = Number(/svc_object_store_backend_requests_total\{kind="GET"\} (\d+)/.exec(text)![1]);
    expect(get).toBeGreaterThanOrEqual(5);
    expect(text).toContain('svc_object_store_backend_in_flight{which="peak"} 5');
    expect(text).toMatch(/svc_object_store_backend_events_total\{counter="retries"\} \d+/);
  });

  test("a store without counters is skipped quietly; its calls are still timed", async () => {
    const metrics = new Registry();
    const store = instrumentStore(metrics, createFsStore(join(root, "plain-store")));
    const collect = collectStoreStats(metrics, store);
    expect(() => collect()).not.toThrow();
    await store.put("a/b", new Uint8Array([1, 2, 3]));
    expect(await store.get("a/b")).toEqual(new Uint8Array([1, 2, 3]));
    expect(await store.get("a/missing")).toBeNull();
    await expect(store.getRange("a/missing", 0, 1)).rejects.toThrow();
    const keys: string[] = [];
    for await (const o of store.list("a/")) keys.push(o.key);
    expect(keys).toEqual(["a/b"]);
    const text = await metrics.render();
    expect(text).toMatch(/svc_object_store_request_duration_seconds_count\{op="put",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/svc_object_store_request_duration_seconds_count\{op="getRange",outcome="error"\} [1-9]/);
    expect(text).toMatch(/svc_object_store_request_duration_seconds_count\{op="list",outcome="ok"\} [1-9]/);
  });
});
