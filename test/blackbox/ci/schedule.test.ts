// Scheduled workflows (issue 29, plan §3 C "Schedules"): the default branch's crons are indexed
// when it is pushed; the cluster kind `ci.schedule` fires each matching workflow once per minute
// slot. The test clock SVC_TEST_PERIOD_SCALE=0.02 makes each 1.2 s slot one minute of cron time,
// so `* * * * *` fires once per slot. With the server down for several slots, the restart fires
// the current slot only (missed slots are not replayed: no burst). Waits are on observable state
// (runs, slots of the wall clock), never fixed sleeps.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, type Person } from "../../helpers/api.ts";
import { startServer, tempDir, type RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, commitFiles, dbRows, startCiServer, until } from "./helpers.ts";

/** One slot of the scaled clock: 60 000 ms × 0.02. */
const SLOT_MS = 1200;
const ENV = { SVC_TEST_PERIOD_SCALE: "0.02" };
const data = tempDir("svc-schedule-");
const dataDir = data.path;
let ci: CiServer;
/** The server now: the second test restarts it on the same data dir. */
let server: RunningServer;
let owner: Person;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ env: ENV, dataDir, repos: ["sched"] });
  ({ server, owner, api } = ci);
});

afterAll(async () => {
  await server?.stop();
  await ci?.[Symbol.asyncDispose]();
  data[Symbol.dispose]();
});

type Row = { id: string; schedule_slot: number; event: string; ref: string; workflow: string; actor_user_id: string | null };
const scheduled = () =>
  dbRows<Row>(server, "SELECT id, schedule_slot, event, ref, workflow, actor_user_id FROM runs WHERE event = 'schedule' ORDER BY schedule_slot");
const slotNow = () => Math.floor(Date.now() / SLOT_MS);

describe("schedules", () => {
  test("a cron on the default branch fires once per slot; only the default branch is indexed", async () => {
    // A branch other than the default one schedules nothing.
    await commitFiles(api, "sched", { "README.md": "x\n" });
    const wf = "on:\n  schedule:\n    - cron: '* * * * *'\njobs:\n  nightly:\n    runs-on: [self-hosted, nobody-has-this]\n    steps: [ { run: 'true' } ]\n";
    await commitFiles(api, "sched", { ".svc/workflows/other.yml": wf.replace("nightly", "elsewhere") }, "feature");
    await commitFiles(api, "sched", { ".svc/workflows/nightly.yml": wf });
    const rows = await until("three scheduled runs", () => {
      const r = scheduled();
      return r.length >= 3 ? r : null;
    });
    for (const r of rows) expect(r).toMatchObject({ event: "schedule", ref: "refs/heads/main", workflow: ".svc/workflows/nightly.yml", actor_user_id: null });
    // One run per slot.
    expect(new Set(rows.map((r) => r.schedule_slot)).size).toBe(rows.length);
    // The API shows them as runs of event schedule without an actor.
    const listed = (await api.get("/v1/orgs/acme/repos/sched/runs")).body.runs.filter((r: any) => r.event === "schedule");
    expect(listed.length).toBeGreaterThanOrEqual(3);
    expect(listed[0].actor).toBeNull();
  });

  test("with the server down for several slots, the restart fires the current slot only (no burst)", async () => {
    await server.stop();
    const before = scheduled();
    const lastBefore = Math.max(...before.map((r) => r.schedule_slot));
    const downFrom = slotNow();
    await until("four slots to pass with the server down", () => slotNow() >= downFrom + 4, 30_000);
    const restartedAt = slotNow();
    server = await startServer({ env: ENV, dataDir });
    api = caller(server, owner);
    const after = await until("two scheduled runs after the restart", () => {
      const r = scheduled().filter((x) => x.schedule_slot > lastBefore);
      return r.length >= 2 ? r : null;
    });
    // No slot from the time the server was down was replayed.
    for (const r of after) expect(r.schedule_slot).toBeGreaterThanOrEqual(restartedAt);
    expect(new Set(scheduled().map((r) => r.schedule_slot)).size).toBe(scheduled().length);
  });
});
