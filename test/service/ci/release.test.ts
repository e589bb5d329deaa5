// The release of dependent jobs (plan-29 §3 C "Release") on hand-built rows, in process on the
// test run's database (SVC_TEST_DATABASE=sqlite|pg): a job's end queues the pending jobs whose
// needs all finished or skips them with the reason, to a fixpoint (skips cascade); a matrix need
// is all its cells (result aggregated, outputs merged, the last cell to finish winning); `if`
// with always(), failure(), cancelled() and contexts; an `if` that cannot be evaluated fails its
// job with the expression's error and never a value; a run of successes and skips succeeds.
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { putRepoValue } from "../../../src/services/ci/secrets.ts";
import { failJob, runStateOf } from "../../../src/services/ci/finish.ts";
import { releaseDependents } from "../../../src/services/ci/release.ts";
import { rerunRun } from "../../../src/services/ci/rerun.ts";
import { cancelRun, getRun } from "../../../src/services/ci/runs.ts";
import { openRepo } from "../../../src/services/repos/repos.ts";
import * as runs from "../../../src/services/ci/store-runs.ts";
import { neededJobs } from "../../../src/services/ci/store-job-calls.ts";
import { newId } from "../../../src/util/ids.ts";
import type { PlannedGithub } from "../../../src/services/ci/github-context.ts";

const { users } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-release-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const open: { close(): void }[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

const COMMIT = "a".repeat(40);
let n = 0;

async function setup() {
  const ctx = await openTestContext({
    SVC_DATA_DIR: join(root, String(++n)),
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_LOG: "error",
    SVC_SECRETS_KEY: "11".repeat(32),
  });
  open.push(ctx);
  const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
  const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
  const repo = await createRepo(ctx, actor, "acme", { name: "app" });
  return { ctx, actor, repo };
}

/** A job as the test writes it: its workflow job id, needs, `if`, state (default pending when it needs something). */
interface JobIn {
  key: string;
  job?: string;
  needs?: string[];
  condition?: string;
  state?: "pending" | "queued" | "running" | "success" | "failure";
  outputs?: Record<string, string>;
  /** The spec's job-level continueOnError (as workflow.ts plans it: a boolean; a string is an older spec's template). */
  continues?: boolean | string;
  /** The spec's plan-time github fields (github-context.ts; every job of a planned run carries the same). */
  github?: PlannedGithub;
}

/** Writes a run and its jobs (one attempt); answers the job ids by key. */
async function run(
  ctx: Ctx,
  repo: { id: string; org_id: string },
  jobs: JobIn[],
  ref = "refs/heads/main",
): Promise<{ runId: string; ids: Map<string, string> }> {
  const runId = newId();
  const ids = new Map<string, string>();
  let t = 1_000;
  await ctx.db.transaction(async (tx) => {
    await runs.insertRun(tx, {
      id: runId,
      repoId: repo.id,
      orgId: repo.org_id,
      workflow: ".svc/workflows/ci.yml",
      commit: COMMIT,
      ref,
      event: "push",
      state: "queued",
      createdAt: t,
    });
    for (const j of jobs) {
      const id = newId();
      ids.set(j.key, id);
      const state = j.state ?? (j.needs?.length ? "pending" : "queued");
      await runs.insertJob(tx, {
        id,
        runId,
        repoId: repo.id,
        orgId: repo.org_id,
        key: j.key,
        runsOn: ["self-hosted"],
        hosted: false,
        spec: {
          steps: [{ name: "s", run: "true", env: {} }],
          env: {},
          timeoutS: 60,
          ...(j.continues === undefined ? {} : { v: 2, continueOnError: j.continues }),
          ...(j.github ? { github: j.github } : {}),
        },
        state,
        steps: [{ state: "pending", exit_code: null, name: "s" }],
        queuedAt: t++,
        workflowJob: j.job ?? j.key,
        needs: j.needs ?? [],
        condition: j.condition ?? null,
        outputs: j.outputs ?? null,
      });
    }
  });
  return { runId, ids };
}

async function states(ctx: Ctx, runId: string): Promise<Record<string, string>> {
  const rows = await runs.jobsOfAttempt(ctx.db.read, runId, 1);
  return Object.fromEntries(rows.map((r) => [r.key, r.state]));
}

async function job(ctx: Ctx, id: string) {
  return (await runs.jobById(ctx.db.read, id))!;
}

/** Ends job `key` with `state` (and outputs) the way a verdict does; answers the run's state after. */
async function finish(
  ctx: Ctx,
  r: { runId: string; ids: Map<string, string> },
  key: string,
  state: "success" | "failure" | "cancelled",
  outputs?: Record<string, string>,
) {
  const id = r.ids.get(key)!;
  await ctx.db.transaction(async (tx) => {
    if (outputs) await runs.updateJob(tx, id, { outputs });
    const row = (await runs.jobById(tx, id))!;
    expect(await failJob(ctx, tx, row, state, state === "success" ? null : "it broke", Date.now())).toBe(true);
  });
  return (await runs.runOfRepo(ctx.db.read, (await job(ctx, id)).repoId, r.runId))!.state;
}

test("runStateOf: skipped is success, pending and unknown states are unfinished", () => {
  expect(runStateOf(["success", "skipped"])).toBe("success");
  expect(runStateOf(["skipped"])).toBe("success");
  expect(runStateOf(["pending"])).toBe("queued");
  expect(runStateOf(["pending", "queued"])).toBe("queued");
  expect(runStateOf(["success", "pending"])).toBe("running");
  expect(runStateOf(["success", "some-later-state"])).toBe("running");
  expect(runStateOf(["failure", "skipped"])).toBe("failure");
});

test("a chain releases in order; a failed need skips its dependents to a fixpoint; always() and failure() still run", async () => {
  const { ctx, repo } = await setup();
  const r = await run(ctx, repo, [
    { key: "build" },
    { key: "test", needs: ["build"] },
    { key: "deploy", needs: ["test"] },
    { key: "smoke", needs: ["deploy"] },
    { key: "cleanup", needs: ["smoke"], condition: "always()" },
    { key: "report", needs: ["smoke"], condition: "${{ failure() }}" },
    { key: "happy", needs: ["smoke"], condition: "success()" },
  ]);
  expect(await states(ctx, r.runId)).toMatchObject({ build: "queued", test: "pending", deploy: "pending" });

  expect(await finish(ctx, r, "build", "success")).toBe("running");
  const test1 = await job(ctx, r.ids.get("test")!);
  expect(test1.state).toBe("queued");
  const checks = new Map((await runs.checksOfCommit(ctx.db.read, repo.id, COMMIT)).map((c) => [c.key, c.state]));
  expect(checks.get("test")).toBe("queued");

  // test fails: deploy and smoke skip in one pass (a cascade), cleanup and report run, happy skips.
  expect(await finish(ctx, r, "test", "failure")).toBe("running");
  expect(await states(ctx, r.runId)).toEqual({
    build: "success",
    test: "failure",
    deploy: "skipped",
    smoke: "skipped",
    cleanup: "queued",
    report: "queued",
    happy: "skipped",
  });
  expect((await job(ctx, r.ids.get("deploy")!)).skipReason).toBe("needs test failed");
  expect((await job(ctx, r.ids.get("smoke")!)).skipReason).toBe("needs deploy was skipped");
  expect((await job(ctx, r.ids.get("happy")!)).skipReason).toBe("if: success() was false");
  const after = new Map((await runs.checksOfCommit(ctx.db.read, repo.id, COMMIT)).map((c) => [c.key, c.state]));
  expect(after.get("deploy")).toBe("skipped");
  expect(after.get("cleanup")).toBe("queued");

  await finish(ctx, r, "cleanup", "success");
  expect(await finish(ctx, r, "report", "success")).toBe("failure");
});

test("a matrix need is all its cells: released after the last, result aggregated, outputs merged (last cell wins)", async () => {
  const { ctx, repo } = await setup();
  const r = await run(ctx, repo, [
    { key: "build (1)", job: "build" },
    { key: "build (2)", job: "build" },
    { key: "test", needs: ["build"], condition: "needs.build.outputs.x == '2' && needs.build.outputs.y == 'from-1' && needs.build.result == 'success'" },
    { key: "lint", needs: ["build"], condition: "needs.build.outputs.x == '1'" },
  ]);
  await finish(ctx, r, "build (1)", "success", { x: "1", y: "from-1" });
  expect(await states(ctx, r.runId)).toMatchObject({ test: "pending", lint: "pending" });
  await finish(ctx, r, "build (2)", "success", { x: "2" });
  expect(await states(ctx, r.runId)).toMatchObject({ test: "queued", lint: "skipped" });
  expect((await job(ctx, r.ids.get("lint")!)).skipReason).toBe("if: needs.build.outputs.x == '1' was false");

  // One failed cell makes the need a failure.
  const m = await run(ctx, repo, [
    { key: "b (1)", job: "b" },
    { key: "b (2)", job: "b" },
    { key: "after", needs: ["b"] },
    { key: "why", needs: ["b"], condition: "always() && needs.b.result == 'failure'" },
  ]);
  await finish(ctx, m, "b (1)", "failure");
  expect(await states(ctx, m.runId)).toMatchObject({ after: "pending", why: "pending" });
  await finish(ctx, m, "b (2)", "success");
  expect(await states(ctx, m.runId)).toMatchObject({ after: "skipped", why: "queued" });
});

test("an `if` that cannot be evaluated fails its job with the expression's error, never the value; dependents cascade", async () => {
  const { ctx, repo } = await setup();
  const r = await run(ctx, repo, [
    { key: "build" },
    { key: "deploy", needs: ["build"], condition: "fromJSON(needs.build.outputs.config).on" },
    { key: "after", needs: ["deploy"] },
  ]);
  expect(await finish(ctx, r, "build", "success", { config: "{not json hunter2" })).toBe("failure");
  const deploy = await job(ctx, r.ids.get("deploy")!);
  expect(deploy.state).toBe("failure");
  expect(deploy.error).toStartWith("jobs.deploy.if: ");
  expect(deploy.error).not.toContain("hunter2");
  expect(await states(ctx, r.runId)).toMatchObject({ after: "skipped" });
});

test("contexts: github from the run, vars from the repo; a run of successes and skips succeeds", async () => {
  const { ctx, actor, repo } = await setup();
  await putRepoValue(ctx, actor, "variable", "acme", "app", "STAGE", { value: "prod" });
  const r = await run(
    ctx,
    repo,
    [
      { key: "build" },
      { key: "main-only", needs: ["build"], condition: "github.ref == 'refs/heads/main' && github.repository == 'acme/app'" },
      { key: "prod", needs: ["build"], condition: "${{ vars.STAGE == 'prod' && github.run_attempt == '1' }}" },
      { key: "never", needs: ["build"], condition: "false" },
    ],
    "refs/heads/feature",
  );
  expect(await finish(ctx, r, "build", "success")).toBe("running");
  expect(await states(ctx, r.runId)).toEqual({ build: "success", "main-only": "skipped", prod: "queued", never: "skipped" });
  expect(await finish(ctx, r, "prod", "success")).toBe("success");
});

test("a change run's job if reads github as the job description does: event_name as on: spells it, the workflow's name, head/base, the pull request", async () => {
  const { ctx, repo } = await setup();
  const github: PlannedGithub = {
    workflow: "Checks",
    event_name: "pull_request",
    head_ref: "feature",
    base_ref: "main",
    event: {
      number: 3,
      pull_request: {
        number: 3,
        title: "t",
        head: { ref: "feature", sha: COMMIT, repo: { full_name: "ada/app", fork: true } },
        base: { ref: "main", sha: COMMIT, repo: { full_name: "acme/app" } },
      },
    },
  };
  const r = await run(
    ctx,
    repo,
    [
      { key: "build", github },
      { key: "pr", github, needs: ["build"], condition: "github.event_name == 'pull_request' && github.workflow == 'Checks' && github.head_ref == 'feature'" },
      { key: "fork", github, needs: ["build"], condition: "github.base_ref == 'main' && github.event.number == 3 && github.event.pull_request.head.repo.fork" },
      { key: "push-only", github, needs: ["build"], condition: "github.event_name == 'push' || github.event_name == 'change'" },
    ],
    "refs/heads/feature",
  );
  expect(await finish(ctx, r, "build", "success")).toBe("running");
  expect(await states(ctx, r.runId)).toEqual({ build: "success", pr: "queued", fork: "queued", "push-only": "skipped" });
});

test("cancelled() is true once the run is asked to stop; a timeout of one job is no cancel of the run", async () => {
  const { ctx, repo } = await setup();
  const r = await run(ctx, repo, [
    { key: "build", state: "running" },
    { key: "deploy", needs: ["build"] },
    { key: "on-cancel", needs: ["build"], condition: "cancelled()" },
  ]);
  await ctx.db.transaction((tx) => runs.markCancelReason(tx, [r.ids.get("build")!], "cancel"));
  await finish(ctx, r, "build", "cancelled");
  expect(await states(ctx, r.runId)).toMatchObject({ deploy: "skipped", "on-cancel": "queued" });
  expect((await job(ctx, r.ids.get("deploy")!)).skipReason).toBe("needs build was cancelled");

  const t = await run(ctx, repo, [
    { key: "build", state: "running" },
    { key: "on-cancel", needs: ["build"], condition: "cancelled()" },
  ]);
  await ctx.db.transaction((tx) => runs.markCancelReason(tx, [t.ids.get("build")!], "timeout"));
  await finish(ctx, t, "build", "cancelled");
  expect(await states(ctx, t.runId)).toMatchObject({ "on-cancel": "skipped" });
  // A second release finds nothing to move.
  expect(await ctx.db.transaction((tx) => releaseDependents(ctx, tx, t.runId, 1, Date.now()))).toBe(0);
});

test("cancel and re-run on hand-built rows: pending cleanup kept, failed-only copies and re-queues, attempts readable", async () => {
  const { ctx, actor, repo } = await setup();
  const target = await openRepo(ctx, actor, "acme", "app");
  const r = await run(ctx, repo, [
    { key: "build", state: "running" },
    { key: "test", needs: ["build"] },
    { key: "cleanup", needs: ["build"], condition: "always()" },
    { key: "lint" },
  ]);
  const cancelled = await cancelRun(ctx, target, r.runId);
  expect(Object.fromEntries(cancelled.jobs.map((j) => [j.key, j.state]))).toEqual({
    build: "running",
    test: "cancelled",
    cleanup: "pending",
    lint: "cancelled",
  });
  expect(await finish(ctx, r, "build", "cancelled")).toBe("running");
  expect(await states(ctx, r.runId)).toMatchObject({ cleanup: "queued" });
  expect(await finish(ctx, r, "cleanup", "success")).toBe("cancelled");

  // Failed only: build (cancelled) and everything that needs it (cleanup too) run again, and lint (cancelled).
  const again = await rerunRun(ctx, target, r.runId, { failed_only: true });
  expect(again.attempt).toBe(2);
  const byKey = Object.fromEntries(again.jobs.map((j) => [j.key, j]));
  expect(byKey.build).toMatchObject({ state: "queued", reused_from: null, attempt: 2 });
  expect(byKey.lint).toMatchObject({ state: "queued", reused_from: null });
  expect(byKey.test).toMatchObject({ state: "pending" });
  expect(byKey.cleanup).toMatchObject({ state: "pending" });
  expect(again.attempts.map((a) => [a.attempt, a.state])).toEqual([
    [1, "cancelled"],
    [2, "queued"],
  ]);
  await expect(rerunRun(ctx, target, r.runId, {})).rejects.toMatchObject({ code: "conflict" });
  const old = await getRun(ctx, target, r.runId, 1);
  expect(old).toMatchObject({ attempt: 1, state: "cancelled" });
  expect(old.jobs.find((j) => j.key === "cleanup")).toMatchObject({ state: "success" });

  // Attempt 2: build succeeds, lint fails → a failed-only attempt 3 keeps build, test, cleanup and runs lint again.
  const r2 = { runId: r.runId, ids: new Map(again.jobs.map((j) => [j.key, j.id])) };
  await finish(ctx, r2, "build", "success", { v: "1" });
  await finish(ctx, r2, "test", "success");
  await finish(ctx, r2, "cleanup", "success");
  expect(await finish(ctx, r2, "lint", "failure")).toBe("failure");
  const third = await rerunRun(ctx, target, r.runId, { failed_only: true });
  const kept = Object.fromEntries(third.jobs.map((j) => [j.key, j]));
  expect(kept.build).toMatchObject({ state: "success", reused_from: r2.ids.get("build") });
  expect(kept.lint).toMatchObject({ state: "queued", reused_from: null });
  expect((await runs.jobById(ctx.db.read, kept.build!.id))!.outputs).toEqual({ v: "1" });
  const checks = new Map((await runs.checksOfCommit(ctx.db.read, repo.id, COMMIT)).map((c) => [c.key, c.jobId]));
  expect(checks.get("lint")).toBe(kept.lint!.id);
});

test("job-level continue-on-error: the failed job stays failed, its run and what needs it count it a success; a template is not true", async () => {
  const { ctx, actor, repo } = await setup();
  const target = await openRepo(ctx, actor, "acme", "app");
  const a = await run(ctx, repo, [
    { key: "flaky", continues: true },
    { key: "plain", needs: ["flaky"] },
    { key: "checked", needs: ["flaky"], condition: "needs.flaky.result == 'success'" },
    { key: "report", needs: ["flaky"], condition: "failure()" },
  ]);
  expect(await finish(ctx, a, "flaky", "failure")).toBe("running");
  expect(await states(ctx, a.runId)).toEqual({ flaky: "failure", plain: "queued", checked: "queued", report: "skipped" });
  const checks = new Map((await runs.checksOfCommit(ctx.db.read, repo.id, COMMIT)).map((c) => [c.key, c.state]));
  expect(checks.get("flaky")).toBe("failure");
  // The needs context a job description carries reads the same rows.
  expect((await neededJobs(ctx.db.read, a.runId, 1, ["flaky"]))[0]).toMatchObject({ state: "failure", continues: true });
  await finish(ctx, a, "plain", "success");
  expect(await finish(ctx, a, "checked", "success")).toBe("success");
  const shown = await getRun(ctx, target, a.runId);
  expect(shown.state).toBe("success");
  expect(shown.jobs.find((j) => j.key === "flaky")).toMatchObject({ state: "failure" });
  // An earlier attempt's state is computed from its jobs by the same rule.
  const again = await rerunRun(ctx, target, a.runId, {});
  expect(again.attempts.map((x) => [x.attempt, x.state])).toEqual([
    [1, "success"],
    [2, "queued"],
  ]);

  // A matrix need: a cell under continue-on-error counts as a success, a cell whose spec kept a template does not.
  const b = await run(ctx, repo, [
    { key: "m (1)", job: "m", continues: true },
    { key: "m (2)", job: "m", continues: "${{ matrix.experimental }}" },
    { key: "next", needs: ["m"] },
  ]);
  expect(await finish(ctx, b, "m (1)", "failure")).toBe("running");
  expect(await states(ctx, b.runId)).toMatchObject({ next: "pending" });
  expect(await finish(ctx, b, "m (2)", "failure")).toBe("failure");
  expect(await states(ctx, b.runId)).toMatchObject({ next: "skipped" });
  expect((await job(ctx, b.ids.get("next")!)).skipReason).toBe("needs m failed");

  // Another job's failure still fails the run.
  const c = await run(ctx, repo, [{ key: "ok-to-fail", continues: true }, { key: "must-pass" }]);
  await finish(ctx, c, "ok-to-fail", "failure");
  expect(await finish(ctx, c, "must-pass", "failure")).toBe("failure");
});
