// Jobs planned once their needs ended (issue 29, DECISIONS §5 CI): a job whose matrix, name or
// runs-on reads `needs` is one placeholder row until its needs end; release.ts then plans it
// (workflow.ts planJobAt: the same parser, the same limits, on a worker thread: the
// `ci.planPlaceholder` job of release-plan.ts, which `end` runs after each verdict) and writes its
// matrix cells in its place. Planned by the real parser, created by createRun, released by
// failJob's verdict, in process on the test run's database (SVC_TEST_DATABASE=sqlite|pg).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { createRun, type RunTrigger } from "../../../src/services/ci/create-run.ts";
import { failJob, hostedDisabledMessage } from "../../../src/services/ci/finish.ts";
import { CI_PLAN_PLACEHOLDER, releaseDependents } from "../../../src/services/ci/release.ts";
import { cancelRunJobs } from "../../../src/services/ci/runs.ts";
import { putRepoValue } from "../../../src/services/ci/secrets.ts";
import { patchRunnerPolicy } from "../../../src/services/ci/policy.ts";
import { notRunYet, parseWorkflow } from "../../../src/services/ci/workflow.ts";
import { fromFork } from "../../../src/services/ci/trigger.ts";
import * as store from "../../../src/services/ci/store-runs.ts";

const { users, workflowJobs, checkResults, jobs } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-release-dynamic-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const PATH = ".svc/workflows/ci.yml";

let dirs = 0;
async function setup() {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, String(++dirs)), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
  const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
  const repo = await createRepo(ctx, actor, "acme", { name: "app" });
  return { ctx, repo, actor };
}

let commits = 0;
async function start(ctx: Ctx, repo: { id: string; org_id: string }, yaml: string) {
  const commit = String(++commits % 10).repeat(39) + String.fromCharCode(97 + Math.floor(commits / 10));
  const parsed = parseWorkflow(PATH, yaml, { sha: commit, ref: "refs/heads/main", repository: "acme/app", event: "push" });
  if (!parsed.ok) throw new Error(parsed.error);
  expect(notRunYet(PATH, parsed)).toBeNull();
  const trigger: RunTrigger = { repoId: repo.id, orgId: repo.org_id, orgName: "acme", ref: "refs/heads/main", commit, event: "push", actorUserId: null };
  const r = await ctx.db.transaction((tx) => createRun(ctx, tx, { path: PATH, jobs: parsed.jobs, run: parsed.run }, trigger));
  if (!r.created) throw new Error("not created");
  return { runId: r.runId, commit };
}

async function startFromFork(ctx: Ctx, repo: { id: string; org_id: string }, yaml: string, forkId: string) {
  const commit = "f".repeat(40);
  const parsed = parseWorkflow(PATH, yaml, { sha: commit, ref: "refs/heads/topic", repository: "acme/app", event: "change" });
  if (!parsed.ok) throw new Error(parsed.error);
  const trigger: RunTrigger = {
    repoId: repo.id,
    orgId: repo.org_id,
    orgName: "acme",
    ref: "refs/heads/topic",
    commit,
    event: "change",
    actorUserId: null,
    trusted: false,
  };
  const r = await ctx.db.transaction((tx) => createRun(ctx, tx, fromFork({ path: PATH, jobs: parsed.jobs, run: parsed.run }, forkId), trigger));
  if (!r.created) throw new Error("not created");
  return { runId: r.runId, commit };
}

async function rowsOf(ctx: Ctx, runId: string) {
  const rows = await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.runId, runId));
  return new Map(rows.map((j) => [j.key, j]));
}

/** A job's verdict in its transaction (the release in it), and nothing after. */
async function verdict(ctx: Ctx, id: string, state: "success" | "failure", outputs?: Record<string, string>) {
  await ctx.db.transaction(async (tx) => {
    if (outputs) await store.updateJob(tx, id, { outputs });
    await failJob(ctx, tx, (await store.jobById(tx, id))!, state, null, Date.now(), state);
  });
}

async function end(ctx: Ctx, id: string, state: "success" | "failure", outputs?: Record<string, string>) {
  await verdict(ctx, id, state, outputs);
  // The placeholders this released are planned off the loop (release-plan.ts): run those jobs now.
  while ((await ctx.work.runDue({ kinds: [CI_PLAN_PLACEHOLDER] })) > 0);
}

/** The `ci.planPlaceholder` rows: pending and done (with their last error). */
async function plannings(ctx: Ctx) {
  const rows = await ctx.db.read.select().from(jobs).where(eq(jobs.kind, CI_PLAN_PLACEHOLDER.name));
  return { pending: rows.filter((r) => r.doneAt === null).length, done: rows.filter((r) => r.doneAt !== null).map((r) => r.lastError) };
}

/** Runs `after` once each time the thread pool answers a `ci.planJobAt` (between the parse and the planning transaction); answers the count. */
function betweenParseAndWrite(ctx: Ctx, after: (n: number) => Promise<void>): { calls: number } {
  const seen = { calls: 0 };
  const pool = ctx.threads as unknown as { run: (name: string, input: unknown, o?: unknown) => Promise<unknown> };
  const run = pool.run.bind(pool);
  pool.run = async (name, input, o) => {
    const out = await run(name, input, o);
    if (name === "ci.planJobAt") await after(++seen.calls);
    return out;
  };
  return seen;
}

const workflow = (run: string) => `on: push
jobs:
  setup:
    runs-on: self-hosted
    outputs: { matrix: "\${{ steps.m.outputs.matrix }}" }
    steps: [ { id: m, run: "true" } ]
  run:
    needs: setup
${run}
    steps: [ { name: "test on \${{ matrix.os }}", run: "echo \${{ matrix.os }}" } ]
  after:
    needs: run
    if: always()
    runs-on: self-hosted
    steps: [ { run: "true" } ]
`;

const MATRIX = workflow(`    runs-on: self-hosted
    strategy: { matrix: "\${{ fromJSON(needs.setup.outputs.matrix) }}" }`);

test("a matrix read from a need's output: one placeholder until the need ends, then its cells in its place; what needs it waits for every cell", async () => {
  const { ctx, repo } = await setup();
  try {
    const { runId, commit } = await start(ctx, repo, MATRIX);
    const before = await rowsOf(ctx, runId);
    expect([...before.keys()].sort()).toEqual(["after", "run", "setup"]);
    expect(before.get("run")).toMatchObject({ state: "pending", runsOn: [] });
    await end(ctx, before.get("setup")!.id, "success", { matrix: JSON.stringify({ os: ["linux", "mac"], include: [{ os: "bsd", extra: "1" }] }) });
    const after = await rowsOf(ctx, runId);
    expect([...after.keys()].sort()).toEqual(["after", "run (os=bsd, extra=1)", "run (os=linux)", "run (os=mac)", "setup"]);
    const linux = after.get("run (os=linux)")!;
    expect(linux).toMatchObject({ state: "queued", runsOn: ["self-hosted"], workflowJob: "run", needs: ["setup"], attempt: 1 });
    // A v1 job: its steps expanded with its cell, as at plan time.
    expect(linux.spec.steps[0]).toMatchObject({ name: "test on linux", run: "echo linux" });
    expect(linux.steps[0]!.name).toBe("test on linux");
    // The github fields fixed when the run was planned are the placeholder's.
    expect((linux.spec as { github?: unknown }).github).toEqual((before.get("run")!.spec as { github?: unknown }).github);
    // The checks show the cells, not the placeholder.
    const checks = await ctx.db.read.select().from(checkResults).where(eq(checkResults.commit, commit));
    expect(checks.map((c) => [c.key, c.state]).sort()).toEqual([
      ["after", "queued"],
      ["run (os=bsd, extra=1)", "queued"],
      ["run (os=linux)", "queued"],
      ["run (os=mac)", "queued"],
      ["setup", "success"],
    ]);
    // What needs the placeholder waits for all its cells.
    await end(ctx, linux.id, "success");
    await end(ctx, after.get("run (os=mac)")!.id, "failure");
    expect((await store.jobById(ctx.db.read, after.get("after")!.id))?.state).toBe("pending");
    await end(ctx, after.get("run (os=bsd, extra=1)")!.id, "success");
    expect((await store.jobById(ctx.db.read, after.get("after")!.id))?.state).toBe("queued");
  } finally {
    ctx.close();
  }
});

test("name and runs-on read from needs; a placeholder whose expression fails, or whose matrix is too large, fails naming it and never hangs", async () => {
  const { ctx, repo, actor } = await setup();
  try {
    const named = workflow(`    name: deploy \${{ needs.setup.outputs.matrix }}
    runs-on: [self-hosted, "\${{ needs.setup.outputs.matrix }}"]`);
    const a = await start(ctx, repo, named);
    await end(ctx, (await rowsOf(ctx, a.runId)).get("setup")!.id, "success", { matrix: "gpu" });
    const rowsA = await rowsOf(ctx, a.runId);
    expect(rowsA.get("deploy gpu")).toMatchObject({ state: "queued", runsOn: ["self-hosted", "gpu"] });
    expect(rowsA.has("run")).toBe(false);

    // A need's output expanding to 10,000 cells: the job fails at once with the limit; what needs it is released.
    const b = await start(ctx, repo, MATRIX);
    const big = JSON.stringify({ n: Array.from({ length: 10_000 }, (_, i) => i) });
    await end(ctx, (await rowsOf(ctx, b.runId)).get("setup")!.id, "success", { matrix: big });
    const rowsB = await rowsOf(ctx, b.runId);
    expect(rowsB.get("run")?.state).toBe("failure");
    expect(rowsB.get("run")?.error).toContain("more than 256 cells");
    expect(rowsB.get("after")?.state).toBe("queued");
    expect(rowsB.size).toBe(3);

    // An output that is not JSON: the error names the file, line and the expression, never the value.
    const c = await start(ctx, repo, MATRIX);
    await end(ctx, (await rowsOf(ctx, c.runId)).get("setup")!.id, "success", { matrix: "{secret-ish" });
    const failed = (await rowsOf(ctx, c.runId)).get("run")!;
    expect(failed.state).toBe("failure");
    expect(failed.error).toStartWith(`${PATH}:`);
    expect(failed.error).toContain("fromJSON");
    expect(failed.error).not.toContain("secret-ish");

    // Hosted cells under `hosted: disabled` fail the placeholder with the policy's message, as createRun would the run.
    await patchRunnerPolicy(ctx, actor, "acme", { hosted: "disabled" });
    const e = await start(ctx, repo, workflow(`    runs-on: \${{ needs.setup.outputs.matrix }}`));
    await end(ctx, (await rowsOf(ctx, e.runId)).get("setup")!.id, "success", { matrix: "ubuntu-latest" });
    const hosted = (await rowsOf(ctx, e.runId)).get("run")!;
    expect(hosted).toMatchObject({ state: "failure", error: hostedDisabledMessage("acme") });

    // A need that failed skips the placeholder like any job (nothing is planned).
    const d = await start(ctx, repo, MATRIX);
    await end(ctx, (await rowsOf(ctx, d.runId)).get("setup")!.id, "failure");
    const rowsD = await rowsOf(ctx, d.runId);
    expect(rowsD.get("run")?.state).toBe("skipped");
    expect(rowsD.get("after")?.state).toBe("queued");
  } finally {
    ctx.close();
  }
});

test("a fork's placeholder: its cells fetch from the fork, and their concurrency groups stay the fork's", async () => {
  const { ctx, repo } = await setup();
  try {
    const yaml = workflow(`    runs-on: self-hosted
    concurrency: cell-\${{ matrix.os }}
    strategy: { matrix: "\${{ fromJSON(needs.setup.outputs.matrix) }}" }`).replace("on: push", "on: change");
    const { runId } = await startFromFork(ctx, repo, yaml, "fork1");
    const before = await rowsOf(ctx, runId);
    expect((before.get("run")?.spec as { checkoutRepoId?: string }).checkoutRepoId).toBe("fork1");
    await end(ctx, before.get("setup")!.id, "success", { matrix: JSON.stringify({ os: ["linux"] }) });
    const cell = (await rowsOf(ctx, runId)).get("run (os=linux)")!;
    expect(cell.state).toBe("queued");
    expect((cell.spec as { checkoutRepoId?: string }).checkoutRepoId).toBe("fork1");
    expect(cell.concurrencyGroup).toBe("fork:fork1/cell-linux");
  } finally {
    ctx.close();
  }
});

test("a change run's placeholder: its cells' plan-time values read the run's github (event_name as on: spells it, head_ref)", async () => {
  const { ctx, repo } = await setup();
  try {
    const yaml = workflow(`    name: "\${{ github.event_name }} \${{ github.head_ref }} \${{ matrix.os }}"
    runs-on: self-hosted
    strategy: { matrix: "\${{ fromJSON(needs.setup.outputs.matrix) }}" }`).replace("on: push", "on: pull_request");
    const commit = "e".repeat(40);
    const change = {
      number: 4,
      title: "t",
      head: { ref: "topic", sha: commit, repo: { full_name: "acme/app", fork: false } },
      base: { ref: "main", sha: "d".repeat(40), repo: { full_name: "acme/app" } },
    };
    const parsed = parseWorkflow(PATH, yaml, { sha: commit, ref: "refs/heads/topic", repository: "acme/app", event: "change", change });
    if (!parsed.ok) throw new Error(parsed.error);
    const trigger: RunTrigger = { repoId: repo.id, orgId: repo.org_id, orgName: "acme", ref: "refs/heads/topic", commit, event: "change", actorUserId: null };
    const r = await ctx.db.transaction((tx) => createRun(ctx, tx, { path: PATH, jobs: parsed.jobs, run: parsed.run }, trigger));
    if (!r.created) throw new Error("not created");
    const before = await rowsOf(ctx, r.runId);
    await end(ctx, before.get("setup")!.id, "success", { matrix: JSON.stringify({ os: ["linux"] }) });
    const cell = (await rowsOf(ctx, r.runId)).get("pull_request topic linux");
    expect(cell?.state).toBe("queued");
    expect((cell?.spec as { github?: { head_ref?: string } }).github?.head_ref).toBe("topic");
  } finally {
    ctx.close();
  }
});

test("the verdict leaves a released placeholder pending with one planning job; a cancel between the parse and the write plans nothing", async () => {
  const { ctx, repo } = await setup();
  try {
    const { runId } = await start(ctx, repo, MATRIX);
    const before = await rowsOf(ctx, runId);
    await verdict(ctx, before.get("setup")!.id, "success", { matrix: JSON.stringify({ os: ["linux", "mac"] }) });
    // Nothing parsed in the verdict's transaction: the placeholder waits for its planning job.
    expect((await rowsOf(ctx, runId)).get("run")?.state).toBe("pending");
    expect(await plannings(ctx)).toEqual({ pending: 1, done: [] });
    // Another release of the run (any verdict, a group) folds into the pending planning.
    await ctx.db.transaction((tx) => releaseDependents(ctx, tx, runId, 1, Date.now()));
    expect(await plannings(ctx)).toEqual({ pending: 1, done: [] });

    // The run is cancelled after the plan was made and before it is written: the write finds the placeholder cancelled.
    const seen = betweenParseAndWrite(ctx, async () => {
      await ctx.db.transaction(async (tx) => void (await cancelRunJobs(ctx, tx, (await store.runOfRepo(tx, repo.id, runId))!, "cancelled", Date.now())));
    });
    while ((await ctx.work.runDue({ kinds: [CI_PLAN_PLACEHOLDER] })) > 0);
    expect(seen.calls).toBe(1);
    const after = await rowsOf(ctx, runId);
    expect([...after.keys()].sort()).toEqual(["after", "run", "setup"]);
    expect(after.get("run")?.state).toBe("cancelled");
    // What needs it with always() runs, as after any cancel.
    expect(after.get("after")?.state).toBe("queued");
    expect(await plannings(ctx)).toEqual({ pending: 0, done: [null] });
  } finally {
    ctx.close();
  }
});

test("a plan made from inputs that changed before its write (a variable edited) is not used: the placeholder is planned again", async () => {
  const { ctx, repo, actor } = await setup();
  try {
    await putRepoValue(ctx, actor, "variable", "acme", "app", "STAGE", { value: "one" });
    const yaml = workflow(`    name: "\${{ vars.STAGE }} \${{ matrix.os }}"
    runs-on: self-hosted
    strategy: { matrix: "\${{ fromJSON(needs.setup.outputs.matrix) }}" }`);
    const { runId } = await start(ctx, repo, yaml);
    const seen = betweenParseAndWrite(ctx, async (n) => {
      if (n === 1) await putRepoValue(ctx, actor, "variable", "acme", "app", "STAGE", { value: "two" });
    });
    await end(ctx, (await rowsOf(ctx, runId)).get("setup")!.id, "success", { matrix: JSON.stringify({ os: ["linux"] }) });
    expect(seen.calls).toBe(2);
    const after = await rowsOf(ctx, runId);
    expect(after.get("two linux")?.state).toBe("queued");
    expect(after.has("one linux")).toBe(false);
    // The stale plan's job ended; the planning it enqueued made the cells.
    expect(await plannings(ctx)).toEqual({ pending: 0, done: [null, null] });
  } finally {
    ctx.close();
  }
});
