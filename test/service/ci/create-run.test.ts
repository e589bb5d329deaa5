// createRun (plan-29 §3 C "Trigger"), in process on the test run's database
// (SVC_TEST_DATABASE=sqlite|pg): jobs without needs are queued, jobs with needs pending (their
// check recorded as queued), the issue-29 columns filled, push/change idempotent, a schedule once
// per slot, a dispatch always new.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { createRun, type PlannedWorkflow, type RunTrigger } from "../../../src/services/ci/create-run.ts";
import type { PlannedJob } from "../../../src/services/ci/workflow.ts";
import { failJob } from "../../../src/services/ci/finish.ts";
import { fireSchedules, refreshScheduleIndex } from "../../../src/services/ci/schedule.ts";
import { schedulesPage } from "../../../src/services/ci/store-concurrency.ts";
import { putRepoValue } from "../../../src/services/ci/secrets.ts";
import { rerunRun } from "../../../src/services/ci/rerun.ts";
import { openRepo } from "../../../src/services/repos/repos.ts";

const { users, runs, workflowJobs, checkResults } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-create-run-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const job = (id: string, needs: string[] = [], condition?: string): PlannedJob => ({
  key: id,
  runsOn: ["self-hosted"],
  hosted: false,
  spec: { env: {}, timeoutS: 60, steps: [{ name: "s", run: "true", env: {} }] },
  workflowJob: id,
  needs,
  condition,
});

test("createRun: queued and pending jobs, checks, idempotency per event", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, "1"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
    const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
    const repo = await createRepo(ctx, actor, "acme", { name: "app" });
    const commit = "a".repeat(40);
    const trigger: RunTrigger = { repoId: repo.id, orgId: repo.org_id, orgName: "acme", ref: "refs/heads/main", commit, event: "push", actorUserId: owner.id };
    const planned: PlannedWorkflow = { path: ".svc/workflows/ci.yml", jobs: [job("build"), job("test", ["build"], "success()"), job("lint")] };

    const first = await ctx.db.transaction((tx) => createRun(ctx, tx, planned, trigger));
    expect(first.created).toBe(true);
    const runId = first.created ? first.runId : "";
    const jobs = await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.runId, runId));
    const byKey = new Map(jobs.map((j) => [j.key, j]));
    expect(byKey.get("build")).toMatchObject({ state: "queued", workflowJob: "build", needs: [], condition: null, attempt: 1 });
    expect(byKey.get("test")).toMatchObject({ state: "pending", workflowJob: "test", needs: ["build"], condition: "success()", attempt: 1 });
    expect(byKey.get("lint")?.state).toBe("queued");
    const checks = await ctx.db.read.select().from(checkResults).where(eq(checkResults.commit, commit));
    expect(checks.map((c) => [c.key, c.state]).sort()).toEqual([
      ["build", "queued"],
      ["lint", "queued"],
      ["test", "queued"],
    ]);
    const [run] = await ctx.db.read.select().from(runs).where(eq(runs.id, runId));
    expect(run).toMatchObject({ state: "queued", event: "push", attempt: 1, trusted: true, inputs: null, scheduleSlot: null, actorUserId: owner.id });

    // The trigger job is at-least-once: the same push creates nothing twice.
    expect(await ctx.db.transaction((tx) => createRun(ctx, tx, planned, trigger))).toEqual({ created: false, reason: "exists" });
    // A dispatch on the same commit is a new run, with its inputs and actor; an untrusted change keeps trusted = false.
    const dispatched = await ctx.db.transaction((tx) =>
      createRun(ctx, tx, planned, { ...trigger, event: "workflow_dispatch", inputs: { level: "3", dry: true } }),
    );
    expect(dispatched.created).toBe(true);
    const [d] = await ctx.db.read
      .select()
      .from(runs)
      .where(eq(runs.id, dispatched.created ? dispatched.runId : ""));
    expect(d).toMatchObject({ event: "workflow_dispatch", inputs: { level: "3", dry: true } });
    const fork = await ctx.db.transaction((tx) => createRun(ctx, tx, planned, { ...trigger, event: "change", trusted: false }));
    const [f] = await ctx.db.read
      .select()
      .from(runs)
      .where(eq(runs.id, fork.created ? fork.runId : ""));
    expect(f?.trusted).toBe(false);
    // A schedule: once per slot.
    const sched = { ...trigger, event: "schedule" as const, actorUserId: null, scheduleSlot: 29_000_000 };
    expect((await ctx.db.transaction((tx) => createRun(ctx, tx, planned, sched))).created).toBe(true);
    expect(await ctx.db.transaction((tx) => createRun(ctx, tx, planned, sched))).toEqual({ created: false, reason: "exists" });
    expect((await ctx.db.transaction((tx) => createRun(ctx, tx, planned, { ...sched, scheduleSlot: 29_000_001 }))).created).toBe(true);

    // A malformed workflow is a failed run with its message and no jobs.
    const bad = await ctx.db.transaction((tx) => createRun(ctx, tx, { path: ".svc/workflows/bad.yml", error: "bad.yml:1:1: no" }, trigger));
    const [b] = await ctx.db.read
      .select()
      .from(runs)
      .where(eq(runs.id, bad.created ? bad.runId : ""));
    expect(b).toMatchObject({ state: "failure", error: "bad.yml:1:1: no" });
  } finally {
    ctx.close();
  }
});

test("job-level concurrency: a second job of the group waits, a third supersedes it, the first ending starts the third", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, "2"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
    const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
    const repo = await createRepo(ctx, actor, "acme", { name: "app" });
    const trigger = (n: number): RunTrigger => ({
      repoId: repo.id,
      orgId: repo.org_id,
      orgName: "acme",
      ref: "refs/heads/main",
      commit: String(n).repeat(40),
      event: "push",
      actorUserId: owner.id,
    });
    const planned: PlannedWorkflow = {
      path: ".svc/workflows/deploy.yml",
      jobs: [{ ...job("deploy"), concurrency: { group: "prod", cancelInProgress: false } }, job("lint")],
    };
    const create = async (n: number) => {
      const r = await ctx.db.transaction((tx) => createRun(ctx, tx, planned, trigger(n)));
      const rows = await ctx.db.read
        .select()
        .from(workflowJobs)
        .where(eq(workflowJobs.runId, r.created ? r.runId : ""));
      return new Map(rows.map((j) => [j.key, j]));
    };
    const one = await create(1);
    expect(one.get("deploy")).toMatchObject({ state: "queued", concurrencyGroup: "prod" });
    const two = await create(2);
    expect(two.get("deploy")?.state).toBe("pending");
    expect(two.get("lint")?.state).toBe("queued");
    const three = await create(3);
    expect(three.get("deploy")?.state).toBe("pending");
    const state = async (id: string) => (await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.id, id)))[0]!;
    expect(await state(two.get("deploy")!.id)).toMatchObject({ state: "cancelled", error: "superseded by a newer job in concurrency group prod" });
    // The first deploy ends: the third starts.
    const first = await state(one.get("deploy")!.id);
    await ctx.db.transaction((tx) => failJob(ctx, tx, first, "success", null, Date.now(), "success"));
    expect((await state(three.get("deploy")!.id)).state).toBe("queued");
  } finally {
    ctx.close();
  }
});

test("run-level concurrency and the schedule index, on this database", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, "3"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
    const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
    const repo = await createRepo(ctx, actor, "acme", { name: "app" });
    const trigger = (n: number): RunTrigger => ({
      repoId: repo.id,
      orgId: repo.org_id,
      orgName: "acme",
      ref: "refs/heads/main",
      commit: String(n).repeat(40),
      event: "push",
      actorUserId: owner.id,
    });
    const planned: PlannedWorkflow = {
      path: ".svc/workflows/deploy.yml",
      jobs: [job("deploy")],
      run: { name: null, runName: null, concurrency: { group: "prod", cancelInProgress: false }, graph: {}, order: ["deploy"] },
    };
    const create = async (n: number) => {
      const r = await ctx.db.transaction((tx) => createRun(ctx, tx, planned, trigger(n)));
      return r.created ? r.runId : "";
    };
    const run = async (id: string) => (await ctx.db.read.select().from(runs).where(eq(runs.id, id)))[0]!;
    const jobsOf = async (id: string) => await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.runId, id));
    const one = await create(1);
    const two = await create(2);
    expect(await run(two)).toMatchObject({ state: "queued", concurrencyGroup: "prod", waiting: `waiting for run ${one} in concurrency group prod` });
    expect((await jobsOf(two))[0]?.state).toBe("pending");
    const three = await create(3);
    expect(await run(two)).toMatchObject({ state: "cancelled", error: null });
    expect((await jobsOf(two))[0]?.error).toBe(`superseded by run ${three} in concurrency group prod`);
    const [first] = await jobsOf(one);
    await ctx.db.transaction((tx) => failJob(ctx, tx, first!, "success", null, Date.now(), "success"));
    expect(await run(three)).toMatchObject({ state: "queued", waiting: null });
    expect((await jobsOf(three))[0]?.state).toBe("queued");
    // cancel-in-progress: the queued run is cancelled at once, the new one starts.
    const four = await ctx.db.transaction((tx) =>
      createRun(ctx, tx, { ...planned, run: { ...planned.run!, concurrency: { group: "prod", cancelInProgress: true } } }, trigger(4)),
    );
    expect(await run(three)).toMatchObject({ state: "cancelled", error: null });
    expect((await jobsOf(three))[0]?.error).toBe("cancelled: a newer run in concurrency group prod");
    expect((await run(four.created ? four.runId : "")).waiting).toBeNull();

    // The schedule index: replaced whole, paged in order, fired once per matching workflow.
    await ctx.db.transaction((tx) =>
      refreshScheduleIndex(tx, repo.id, "a".repeat(40), [
        { path: ".svc/workflows/a.yml", crons: ["* * * * *", "*/5 * * * *"] },
        { path: ".svc/workflows/b.yml", crons: ["0 3 * * *"] },
      ]),
    );
    const page = await schedulesPage(ctx.db.read, null, 2);
    expect(page.map((r) => [r.workflow, r.position, r.defaultBranch])).toEqual([
      [".svc/workflows/a.yml", 0, "main"],
      [".svc/workflows/a.yml", 1, "main"],
    ]);
    expect((await schedulesPage(ctx.db.read, page[1]!, 10)).map((r) => r.workflow)).toEqual([".svc/workflows/b.yml"]);
    // 03:00 UTC on some day: both files match, a.yml once although two of its crons match.
    const slot = Math.floor(Date.UTC(2026, 10, 27, 3, 0) / 60_000);
    expect(await fireSchedules(ctx, { slot })).toBe(2);
    expect(await fireSchedules(ctx, { slot: slot + 1 })).toBe(1);
    await ctx.db.transaction((tx) => refreshScheduleIndex(tx, repo.id, "b".repeat(40), []));
    expect(await fireSchedules(ctx, { slot })).toBe(0);
  } finally {
    ctx.close();
  }
});

test("createRun: step names show what is known at plan time (matrix, inputs, vars, github) and keep what only the runner knows", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, "names"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error", SVC_SECRETS_KEY: "11".repeat(32) });
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
    const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
    const repo = await createRepo(ctx, actor, "acme", { name: "app" });
    await putRepoValue(ctx, actor, "variable", "acme", "app", "STAGE", { value: "prod" });
    const trigger: RunTrigger = {
      repoId: repo.id,
      orgId: repo.org_id,
      orgName: "acme",
      ref: "refs/heads/main",
      commit: "c".repeat(40),
      event: "workflow_dispatch",
      actorUserId: owner.id,
      inputs: { level: "3" },
    };
    const names = [
      "test on ${{ matrix.os }} at level ${{ inputs.level }}",
      "deploy to ${{ vars.STAGE }} from ${{ github.ref_name }}",
      "after ${{ steps.build.outputs.v }} on ${{ matrix.os }}",
      "run ${{ github.run_id }}",
      "bad ${{ fromJSON(github.ref_name) }} on ${{ matrix.os }}",
    ];
    const j: PlannedJob = {
      ...job("t"),
      spec: { v: 2, env: {}, timeoutS: 60, matrix: { os: "linux" }, steps: names.map((name) => ({ name, run: "true", env: {} })) },
    };
    const made = await ctx.db.transaction((tx) => createRun(ctx, tx, { path: ".svc/workflows/ci.yml", jobs: [j] }, trigger));
    const [row] = await ctx.db.read
      .select()
      .from(workflowJobs)
      .where(eq(workflowJobs.runId, made.created ? made.runId : ""));
    expect(row!.steps.map((s) => s.name)).toEqual([
      "test on linux at level 3",
      "deploy to prod from main",
      "after ${{ steps.build.outputs.v }} on linux",
      "run ${{ github.run_id }}",
      "bad ${{ fromJSON(github.ref_name) }} on ${{ matrix.os }}",
    ]);
    // The runner gets the names as written.
    expect(row!.spec.steps.map((s) => s.name)).toEqual(names);
  } finally {
    ctx.close();
  }
});

test("a re-run joins its run's concurrency group like a new run: it waits for the group, or cancels it under cancel-in-progress", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, "rerun-groups"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
    const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
    const repo = await createRepo(ctx, actor, "acme", { name: "app" });
    const target = await openRepo(ctx, actor, "acme", "app");
    const trigger = (n: number): RunTrigger => ({
      repoId: repo.id,
      orgId: repo.org_id,
      orgName: "acme",
      ref: "refs/heads/main",
      commit: String(n).repeat(40),
      event: "push",
      actorUserId: owner.id,
    });
    const planned = (group: string, cancelInProgress: boolean): PlannedWorkflow => ({
      path: `.svc/workflows/${group}.yml`,
      jobs: [job("build"), job("report", ["build"])],
      run: { name: null, runName: null, concurrency: { group, cancelInProgress }, graph: {}, order: ["build", "report"] },
    });
    const create = async (n: number, group = "prod", cancelInProgress = false) => {
      const r = await ctx.db.transaction((tx) => createRun(ctx, tx, planned(group, cancelInProgress), trigger(n)));
      return r.created ? r.runId : "";
    };
    const run = async (id: string) => (await ctx.db.read.select().from(runs).where(eq(runs.id, id)))[0]!;
    const jobs = async (id: string) => {
      const rows = await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.runId, id));
      const r = await run(id);
      return new Map(rows.filter((j) => j.attempt === r.attempt).map((j) => [j.key, j]));
    };
    const end = async (id: string, key: string, state: "success" | "failure") => {
      const row = (await jobs(id)).get(key)!;
      await ctx.db.transaction((tx) => failJob(ctx, tx, row, state, state === "failure" ? "it broke" : null, Date.now(), state));
    };

    // Run one ends failed (report failed); run two of the same group starts and is running.
    const one = await create(1);
    await end(one, "build", "success");
    await end(one, "report", "failure");
    expect((await run(one)).state).toBe("failure");
    const two = await create(2);
    expect((await jobs(two)).get("build")?.state).toBe("queued");

    // A failed-only re-run of one waits for two: report (its need build kept) stays pending until the group frees.
    const again = await rerunRun(ctx, target, one, { failed_only: true });
    // Queued like a new waiting run, although it holds a finished job kept from attempt 1.
    expect(again).toMatchObject({ attempt: 2, state: "queued", waiting: `waiting for run ${two} in concurrency group prod` });
    expect((await jobs(one)).get("report")?.state).toBe("pending");
    expect((await jobs(one)).get("build")?.state).toBe("success");
    await end(two, "build", "success");
    await end(two, "report", "success");
    expect((await run(one)).waiting).toBeNull();
    expect((await jobs(one)).get("report")?.state).toBe("queued");
    await end(one, "report", "success");
    expect((await run(one)).state).toBe("success");

    // cancel-in-progress: a re-run of three cancels four, which is in progress, and starts at once.
    const three = await create(3, "ci", true);
    await end(three, "build", "failure");
    expect((await run(three)).state).toBe("failure");
    const four = await create(4, "ci", true);
    expect((await jobs(four)).get("build")?.state).toBe("queued");
    await rerunRun(ctx, target, three, {});
    expect((await run(four)).state).toBe("cancelled");
    expect((await jobs(four)).get("build")?.error).toBe("cancelled: a newer run in concurrency group ci");
    expect(await run(three)).toMatchObject({ state: "queued", waiting: null, attempt: 2 });
    expect((await jobs(three)).get("build")?.state).toBe("queued");
  } finally {
    ctx.close();
  }
});
