// The store reads and writes of the per-job runner calls (issue 29 part D), in process on the
// test run's database (SVC_TEST_DATABASE=sqlite|pg): the run a description names (actor, trust,
// attempt), the jobs a job needs (every matrix cell, with outputs), and a log chunk marked masked.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { createRun, type PlannedWorkflow } from "../../../src/services/ci/create-run.ts";
import type { PlannedJob } from "../../../src/services/ci/workflow.ts";
import * as jobCalls from "../../../src/services/ci/store-job-calls.ts";
import * as runsStore from "../../../src/services/ci/store-runs.ts";

const { users, workflowJobs } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-job-calls-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const job = (key: string, id: string, needs: string[] = []): PlannedJob => ({
  key,
  runsOn: ["self-hosted"],
  hosted: false,
  spec: { env: {}, timeoutS: 60, steps: [{ name: "s", run: "true", env: {} }] },
  workflowJob: id,
  needs,
});

test("runFacts, neededJobs and markChunkMasked", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, "1"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
    const user = (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!;
    const actor: Principal = { kind: "session", user, sessionId: "t" };
    const repo = await createRepo(ctx, actor, "acme", { name: "app" });
    const planned: PlannedWorkflow = {
      path: ".svc/workflows/ci.yml",
      jobs: [job("build (a)", "build"), job("build (b)", "build"), job("test", "test", ["build"])],
    };
    const made = await ctx.db.transaction((tx) =>
      createRun(ctx, tx, planned, {
        repoId: repo.id,
        orgId: repo.org_id,
        orgName: "acme",
        ref: "refs/heads/main",
        commit: "b".repeat(40),
        event: "push",
        actorUserId: owner.id,
        trusted: false,
      }),
    );
    const runId = made.created ? made.runId : "";
    expect(await jobCalls.runFacts(ctx.db.read, repo.id, runId)).toEqual({
      org: "acme",
      repo: "app",
      commit: "b".repeat(40),
      ref: "refs/heads/main",
      workflow: ".svc/workflows/ci.yml",
      event: "push",
      attempt: 1,
      inputs: null,
      trusted: false,
      actor: { id: owner.id, handle: user.handle },
    });
    expect(await jobCalls.runFacts(ctx.db.read, "other-repo", runId)).toBeNull();

    const jobs = await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.runId, runId));
    const a = jobs.find((j) => j.key === "build (a)")!;
    await ctx.db.transaction((tx) => runsStore.updateJob(tx, a.id, { state: "success", outputs: { v: "1" } }));
    const needed = await jobCalls.neededJobs(ctx.db.read, runId, 1, ["build"]);
    expect(needed.map((n) => [n.workflowJob, n.state, n.outputs]).sort((x, y) => String(x[1]).localeCompare(String(y[1])))).toEqual([
      ["build", "queued", null],
      ["build", "success", { v: "1" }],
    ]);
    expect(await jobCalls.neededJobs(ctx.db.read, runId, 2, ["build"])).toEqual([]);
    expect(await jobCalls.neededJobs(ctx.db.read, runId, 1, [])).toEqual([]);

    await ctx.db.transaction(async (tx) => {
      expect(await runsStore.appendLogChunk(tx, a.id, 0, 10, "k0")).toBe(true);
      await jobCalls.markChunkMasked(tx, a.id, 0);
      expect(await runsStore.appendLogChunk(tx, a.id, 10, 5, "k1")).toBe(true);
    });
    expect((await runsStore.logChunksFrom(ctx.db.read, a.id, 0, 10)).map((c) => [c.offset, !!c.masked])).toEqual([
      [0, true],
      [10, false],
    ]);
  } finally {
    ctx.close();
  }
});
