// PgSignals (issue 27, plan-27 §2 row 4): two contexts over one private PostgreSQL database stand
// for two nodes (two contexts in one process work on PostgreSQL: neither blocks the event loop).
// A notification on A reaches B's subscribers through NOTIFY/LISTEN, and B's claim hub, with its
// 500 ms queue check switched off, is woken by a job queued on A: without the signal the held
// claim waits out its minute and the test fails.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CI_TRIGGER } from "../../src/services/ci/trigger.ts";
import { PgSignals } from "../../src/services/events/pg-signals.ts";
import { ANY_KEY } from "../../src/services/events/signals.ts";
import { type PostgresDatabase, postgresDatabase } from "../helpers/postgres.ts";
import { openAppNode, signedInOwner } from "../helpers/app-node.ts";

const root = mkdtempSync(join(tmpdir(), "svc-pg-signals-"));
const contexts: { close(): void }[] = [];
let pgdb: PostgresDatabase | undefined;
afterAll(async () => {
  for (const c of contexts) c.close();
  await pgdb?.drop();
  rmSync(root, { recursive: true, force: true });
});

/** A node on the shared PostgreSQL database, listening. */
async function node() {
  pgdb ??= await postgresDatabase();
  const n = await openAppNode({ SVC_DATA_DIR: join(root, "data"), SVC_DATABASE_URL: pgdb.url, SVC_RUNNER_CLAIM_WAIT_MS: "60000" });
  contexts.push(n.ctx);
  expect(n.ctx.signals).toBeInstanceOf(PgSignals);
  await (n.ctx.signals as PgSignals).ready();
  return n;
}

test("a notification on A reaches B's subscribers once, after COMMIT; A's own comes back only locally; identical ones are coalesced", async () => {
  const a = await node();
  const b = await node();
  const onA: string[] = [];
  const onB: string[] = [];
  a.ctx.signals.subscribe("work", (k) => k !== ANY_KEY && onA.push(k));
  let arrived: () => void = () => {};
  b.ctx.signals.subscribe("work", (k) => {
    if (k === ANY_KEY) return;
    onB.push(k);
    if (onB.includes("k1") && onB.includes("last")) arrived();
  });
  const done = new Promise<void>((resolve) => (arrived = resolve));
  await a.ctx.db.transaction(async (tx) => {
    a.ctx.signals.notify("work", "k1", tx);
    a.ctx.signals.notify("work", "k1", tx);
    // Nothing before COMMIT, here or there.
    expect(onA).toEqual([]);
  });
  a.ctx.signals.notify("work", "last");
  await done;
  // k1 twice locally (each notify is a local hint), once across (coalesced). Across nodes the
  // order of different keys is not kept (each pg_notify commits on its own pool connection).
  expect(onA).toEqual(["k1", "k1", "last"]);
  expect([...onB].sort()).toEqual(["k1", "last"]);
  // A heard its own NOTIFY on its LISTEN too and dropped it: a round trip through B shows nothing more arrived on A.
  const back = new Promise<void>((resolve) => a.ctx.signals.subscribe("work", (k) => k === "from-b" && resolve()));
  b.ctx.signals.notify("work", "from-b");
  await back;
  expect(onA).toEqual(["k1", "k1", "last", "from-b"]);
  // B heard its own locally, and k1 still once.
  expect([...onB].sort()).toEqual(["from-b", "k1", "last"]);
});

test("B's claim hub, without its 500 ms check, is woken by a job queued on A", async () => {
  const a = await node();
  const b = await node();
  const hub = b.ctx.ci.claims;
  (hub as unknown as { startTicking(): void }).startTicking = () => undefined;
  const waiting: (() => void)[] = [];
  const wait = hub.wait.bind(hub);
  hub.wait = (...args: Parameters<typeof hub.wait>) => {
    const p = wait(...args);
    for (const w of waiting.splice(0)) w();
    return p;
  };
  const nextWait = () => new Promise<void>((resolve) => waiting.push(resolve));
  const owner = await signedInOwner(a, "acme");
  expect((await owner("POST", "/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
  expect((await owner("PATCH", "/v1/orgs/acme/runner-policy", { self_hosted: "all" })).status).toBe(200);
  const tok = await owner("POST", "/v1/orgs/acme/runners/registration-token", {});
  const reg = await a.call("POST", "/v1/runners/register", { token: tok.body.token, body: { name: "m", os: "linux", arch: "x64", labels: [] } });
  expect(reg.status).toBe(201);

  const waited = nextWait();
  const held = b.call("POST", "/v1/runners/claim", { token: reg.body.credential as string });
  await waited;
  const commit = await owner("POST", "/v1/orgs/acme/repos/app/commits", {
    branch: "main",
    message: "ci",
    operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: "on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo\n" }],
  });
  expect(commit.status).toBe(201);
  while ((await a.ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
  const got = await held;
  expect(got.status).toBe(200);
  const runs = (await owner("GET", "/v1/orgs/acme/repos/app/runs")).body.runs;
  expect(got.body.job_id).toBe(runs[0].jobs[0].id);
});
