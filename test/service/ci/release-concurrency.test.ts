// Job-level concurrency on a job with needs (issue 29, DECISIONS §5 CI): the job joins its group
// when release.ts releases it, not when its run is created; a group that reads needs is evaluated
// then. Planned by the real parser, created by createRun, released by failJob's verdict, in process
// on the test run's database (SVC_TEST_DATABASE=sqlite|pg).
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
import { failJob } from "../../../src/services/ci/finish.ts";
import { notRunYet, parseWorkflow } from "../../../src/services/ci/workflow.ts";
import * as store from "../../../src/services/ci/store-runs.ts";

const { users, workflowJobs } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-release-concurrency-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

async function setup() {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, String(++n)), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
  const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
  const repo = await createRepo(ctx, actor, "acme", { name: "app" });
  return { ctx, repo, owner };
}

/** Plans `yaml` with the real parser (it must run: notRunYet null) and creates its run for commit `c`; answers the rows by key. */
async function start(ctx: Ctx, repo: { id: string; org_id: string }, yaml: string, c: number) {
  const commit = String(c).repeat(40);
  const parsed = parseWorkflow(".svc/workflows/deploy.yml", yaml, { sha: commit, ref: "refs/heads/main", repository: "acme/app", event: "push" });
  if (!parsed.ok) throw new Error(parsed.error);
  expect(notRunYet(".svc/workflows/deploy.yml", parsed)).toBeNull();
  const trigger: RunTrigger = { repoId: repo.id, orgId: repo.org_id, orgName: "acme", ref: "refs/heads/main", commit, event: "push", actorUserId: null };
  const r = await ctx.db.transaction((tx) => createRun(ctx, tx, { path: ".svc/workflows/deploy.yml", jobs: parsed.jobs, run: parsed.run }, trigger));
  if (!r.created) throw new Error("not created");
  return { runId: r.runId, rows: await rowsOf(ctx, r.runId) };
}

async function rowsOf(ctx: Ctx, runId: string) {
  const rows = await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.runId, runId));
  return new Map(rows.map((j) => [j.key, j]));
}

/** Ends job `id` with `state` (and outputs), as a verdict does. */
async function end(ctx: Ctx, id: string, state: "success" | "failure", outputs?: Record<string, string>) {
  await ctx.db.transaction(async (tx) => {
    if (outputs) await store.updateJob(tx, id, { outputs });
    const row = (await store.jobById(tx, id))!;
    await failJob(ctx, tx, row, state, null, Date.now(), state);
  });
}

const byId = async (ctx: Ctx, id: string) => (await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.id, id)))[0]!;

const WAITS = `on: push
jobs:
  build:
    runs-on: self-hosted
    outputs: { env: "\${{ steps.e.outputs.env }}" }
    steps: [ { id: e, run: "echo env=prod >> $GITHUB_OUTPUT" } ]
  deploy:
    needs: build
    runs-on: self-hosted
    concurrency: deploy-\${{ needs.build.outputs.env }}
    steps: [ { run: "true" } ]
`;

test("a job with needs joins its group (read from needs) when released: the next waits, a newer one supersedes it, the first ending starts the newest", async () => {
  const { ctx, repo } = await setup();
  try {
    const one = await start(ctx, repo, WAITS, 1);
    // Planned pending and outside any group until its needs end.
    expect(one.rows.get("deploy")).toMatchObject({ state: "pending", concurrencyGroup: null });
    const two = await start(ctx, repo, WAITS, 2);
    const three = await start(ctx, repo, WAITS, 3);
    await end(ctx, one.rows.get("build")!.id, "success", { env: "prod" });
    expect(await byId(ctx, one.rows.get("deploy")!.id)).toMatchObject({ state: "queued", concurrencyGroup: "deploy-prod" });
    await end(ctx, two.rows.get("build")!.id, "success", { env: "prod" });
    expect(await byId(ctx, two.rows.get("deploy")!.id)).toMatchObject({ state: "pending", concurrencyGroup: "deploy-prod" });
    // Another verdict of run two leaves its waiting deploy alone (it is released by its group, not twice).
    await end(ctx, three.rows.get("build")!.id, "success", { env: "prod" });
    expect(await byId(ctx, two.rows.get("deploy")!.id)).toMatchObject({
      state: "cancelled",
      error: "superseded by a newer job in concurrency group deploy-prod",
    });
    expect((await byId(ctx, three.rows.get("deploy")!.id)).state).toBe("pending");
    // Another environment is another group: it starts at once.
    const four = await start(ctx, repo, WAITS, 4);
    await end(ctx, four.rows.get("build")!.id, "success", { env: "staging" });
    expect(await byId(ctx, four.rows.get("deploy")!.id)).toMatchObject({ state: "queued", concurrencyGroup: "deploy-staging" });
    // The first deploy ends: the newest waiting one starts; run two is settled cancelled.
    await end(ctx, one.rows.get("deploy")!.id, "success");
    expect((await byId(ctx, three.rows.get("deploy")!.id)).state).toBe("queued");
    const runTwo = await store.runOfRepo(ctx.db.read, repo.id, two.runId);
    expect(runTwo?.state).toBe("cancelled");
  } finally {
    ctx.close();
  }
});

test("cancel-in-progress on a job with needs cancels the group's active job when released; a group that cannot be evaluated fails the job naming it", async () => {
  const { ctx, repo } = await setup();
  try {
    const yaml = `on: push
jobs:
  build: { runs-on: self-hosted, steps: [ { run: "true" } ] }
  deploy:
    needs: [build]
    runs-on: self-hosted
    concurrency: { group: prod, cancel-in-progress: true }
    steps: [ { run: "true" } ]
  after:
    needs: deploy
    if: always()
    runs-on: self-hosted
    steps: [ { run: "true" } ]
`;
    const one = await start(ctx, repo, yaml, 1);
    const two = await start(ctx, repo, yaml, 2);
    await end(ctx, one.rows.get("build")!.id, "success");
    expect(await byId(ctx, one.rows.get("deploy")!.id)).toMatchObject({ state: "queued", concurrencyGroup: "prod" });
    await end(ctx, two.rows.get("build")!.id, "success");
    expect(await byId(ctx, one.rows.get("deploy")!.id)).toMatchObject({ state: "cancelled", error: "cancelled: a newer job in concurrency group prod" });
    // What needs the cancelled deploy is released (always()).
    expect((await byId(ctx, one.rows.get("after")!.id)).state).toBe("queued");
    expect((await byId(ctx, two.rows.get("deploy")!.id)).state).toBe("queued");

    const bad = `on: push
jobs:
  build: { runs-on: self-hosted, steps: [ { run: "true" } ] }
  deploy:
    needs: build
    runs-on: self-hosted
    concurrency: \${{ fromJSON(needs.build.outputs.group).name }}
    steps: [ { run: "true" } ]
`;
    const three = await start(ctx, repo, bad, 3);
    await end(ctx, three.rows.get("build")!.id, "success", { group: "{not json" });
    const d = await byId(ctx, three.rows.get("deploy")!.id);
    expect(d.state).toBe("failure");
    expect(d.error).toContain("jobs.deploy.concurrency");
    expect(d.error).toContain("fromJSON");
    expect(d.error).not.toContain("{not json");
    // A group that evaluates to nothing fails too.
    const four = await start(ctx, repo, bad, 4);
    await end(ctx, four.rows.get("build")!.id, "success", { group: '{"other":1}' });
    expect((await byId(ctx, four.rows.get("deploy")!.id)).error).toContain("empty group");
  } finally {
    ctx.close();
  }
});
