// Wake-ups across nodes (issue 27, plan-27 §2 row 6): queueing and routing changes are announced
// on the `ci.queue` signal after COMMIT (ci/trigger.ts, groups, policy, runners), and the claim
// hub listens to it. Another node's announcement arrives the same way (PgSignals), so here the
// hub's in-process paths are switched off (the targeted wake of jobsQueued, the 500 ms queue
// check): only the announcement can wake the held claim, and without it the claim waits out its
// minute and the test fails. (Two contexts on one SQLite file in one process cannot stand for two
// nodes: a busy-wait of one blocks the event loop the other needs to commit.)
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CI_TRIGGER } from "../../../src/services/ci/trigger.ts";
import { openAppNode, signedInOwner } from "../../helpers/app-node.ts";

const root = mkdtempSync(join(tmpdir(), "svc-ci-signals-"));
const contexts: { close(): void }[] = [];
afterAll(() => {
  for (const c of contexts) c.close();
  rmSync(root, { recursive: true, force: true });
});

/** A node on the shared SQLite file whose held claims wait `waitMs`. */
async function node(waitMs: string) {
  const n = await openAppNode({ SVC_DATA_DIR: join(root, "data"), SVC_RUNNER_CLAIM_WAIT_MS: waitMs });
  contexts.push(n.ctx);
  return n;
}

test("a claim held open is woken by the ci.queue announcement of a queued job; a routing change wakes it through the same signal", async () => {
  const a = await node("60000");
  const hub = a.ctx.ci.claims;
  // What another node's queueing looks like here: no local wake, no periodic check.
  hub.jobsQueued = () => undefined;
  (hub as unknown as { startTicking(): void }).startTicking = () => undefined;
  const heard: string[] = [];
  a.ctx.signals.subscribe("ci.queue", (key) => heard.push(key));
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
  const tok = await owner("POST", "/v1/orgs/acme/runners/registration-token", {});
  const reg = await a.call("POST", "/v1/runners/register", { token: tok.body.token, body: { name: "m", os: "linux", arch: "x64", labels: [] } });
  expect(reg.status).toBe(201);
  const credential = reg.body.credential as string;

  // Routing: a policy change on A makes B's waiters look again.
  let waited = nextWait();
  const idle = a.call("POST", "/v1/runners/claim", { token: credential });
  await waited;
  waited = nextWait();
  expect((await owner("PATCH", "/v1/orgs/acme/runner-policy", { self_hosted: "all" })).status).toBe(200);
  // The woken claim looked again (found nothing) and waits anew.
  await waited;
  expect(heard).toHaveLength(1);
  expect(heard[0]).toMatch(/^r:/);

  // Queueing: a push on A queues a job; the claim held on B gets it.
  const commit = await owner("POST", "/v1/orgs/acme/repos/app/commits", {
    branch: "main",
    message: "ci",
    operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: "on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo\n" }],
  });
  expect(commit.status).toBe(201);
  while ((await a.ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
  const got = await idle;
  expect(heard.slice(1)).toEqual([`q:${heard[0]!.slice(2)}`]);
  expect(got.status).toBe(200);
  const runs = (await owner("GET", "/v1/orgs/acme/repos/app/runs")).body.runs;
  expect(got.body.job_id).toBe(runs[0].jobs[0].id);
});

test("an idle machine's repeated claim runs no queue query until something is queued or re-routed for its org", async () => {
  const a = await node("100");
  let statements = 0;
  a.ctx.db.timings = { statement: () => void statements++, transaction: () => undefined };
  const owner = await signedInOwner(a, "acme2");
  expect((await owner("POST", "/v1/orgs/acme2/repos", { name: "app" })).status).toBe(201);
  const tok = await owner("POST", "/v1/orgs/acme2/runners/registration-token", {});
  const credential = (await a.call("POST", "/v1/runners/register", { token: tok.body.token, body: { name: "m", os: "linux", arch: "x64", labels: [] } })).body
    .credential as string;
  const poll = async () => {
    const before = statements;
    const r = await a.call("POST", "/v1/runners/claim", { token: credential });
    return { status: r.status, body: r.body, statements: statements - before };
  };
  const first = await poll();
  expect(first.status).toBe(204);
  const second = await poll();
  expect(second.status).toBe(204);
  // The second look is skipped: what is left is the credential's liveness read (and at most one
  // batched last_seen_at write when its 5 s flush falls into this call).
  expect(second.statements).toBeLessThan(first.statements);
  expect(second.statements).toBeLessThanOrEqual(2);
  // A routing change makes the next claim look again.
  expect((await owner("PATCH", "/v1/orgs/acme2/runner-policy", { self_hosted: "all" })).status).toBe(200);
  expect((await poll()).statements).toBeGreaterThan(second.statements);
  // A job queued here: the next claim gets it.
  const commit = await owner("POST", "/v1/orgs/acme2/repos/app/commits", {
    branch: "main",
    message: "ci",
    operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: "on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo\n" }],
  });
  expect(commit.status).toBe(201);
  while ((await a.ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
  expect((await poll()).status).toBe(200);
});

test("a repository made private is a routing change: an idle machine whose group refuses public repositories looks again and takes its queued job", async () => {
  const a = await node("100");
  let statements = 0;
  a.ctx.db.timings = { statement: () => void statements++, transaction: () => undefined };
  const owner = await signedInOwner(a, "acme3");
  expect((await owner("POST", "/v1/orgs/acme3/repos", { name: "pub", public: true })).status).toBe(201);
  expect((await owner("PATCH", "/v1/orgs/acme3/runner-policy", { self_hosted: "all" })).status).toBe(200);
  const tok = await owner("POST", "/v1/orgs/acme3/runners/registration-token", {});
  const credential = (await a.call("POST", "/v1/runners/register", { token: tok.body.token, body: { name: "m", os: "linux", arch: "x64", labels: [] } })).body
    .credential as string;
  const poll = async () => {
    const before = statements;
    const r = await a.call("POST", "/v1/runners/claim", { token: credential });
    return { status: r.status, statements: statements - before };
  };
  const commit = await owner("POST", "/v1/orgs/acme3/repos/pub/commits", {
    branch: "main",
    message: "ci",
    operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: "on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo\n" }],
  });
  expect(commit.status).toBe(201);
  while ((await a.ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
  // The default group does not admit public repositories: the machine looks, finds nothing, and
  // its next claim trusts that look.
  expect((await poll()).status).toBe(204);
  const trusted = await poll();
  expect(trusted.status).toBe(204);
  expect(trusted.statements).toBeLessThanOrEqual(2);
  expect((await owner("PATCH", "/v1/orgs/acme3/repos/pub", { public: false })).status).toBe(200);
  expect((await poll()).status).toBe(200);
});
