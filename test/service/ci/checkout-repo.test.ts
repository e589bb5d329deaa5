// Where a fork change's job fetches from (issue 29, "fork changes without secrets"), in process on
// the test run's database (SVC_TEST_DATABASE=sqlite|pg): `checkoutRepoOfJob` reads the spec's
// `checkoutRepoId` (a JSON field: json_extract on SQLite, ->> on PostgreSQL) with the fork's org,
// null for a job of the run's own repository, and the org null once the fork is gone.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { createRun } from "../../../src/services/ci/create-run.ts";
import type { PlannedJob } from "../../../src/services/ci/workflow.ts";
import { checkoutRepoOfJob } from "../../../src/services/ci/store-checkout.ts";

const { users, workflowJobs } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-checkout-repo-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const job = (key: string, checkoutRepoId?: string): PlannedJob => ({
  key,
  runsOn: ["self-hosted"],
  hosted: false,
  spec: { env: {}, timeoutS: 60, steps: [{ name: "s", run: "true", env: {} }], ...(checkoutRepoId ? { checkoutRepoId } : {}) },
});

test("checkoutRepoOfJob: the fork and its org, nothing for the run's own repository", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, "1"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
    const user = (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!;
    const actor: Principal = { kind: "session", user, sessionId: "t" };
    const repo = await createRepo(ctx, actor, "acme", { name: "app" });
    const fork = await createRepo(ctx, actor, "acme", { name: "app-fork" });
    const trigger = { repoId: repo.id, orgId: repo.org_id, orgName: "acme", ref: "refs/heads/topic", event: "change" as const, actorUserId: owner.id };
    await ctx.db.transaction(async (tx) => {
      await createRun(ctx, tx, { path: ".svc/workflows/a.yml", jobs: [job("own")] }, { ...trigger, commit: "a".repeat(40) });
      await createRun(
        ctx,
        tx,
        { path: ".svc/workflows/b.yml", jobs: [job("forked", fork.id), job("gone", "nosuchrepo000000")] },
        { ...trigger, commit: "b".repeat(40), trusted: false },
      );
    });
    const jobs = new Map((await ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.repoId, repo.id))).map((j) => [j.key, j.id]));
    expect(await checkoutRepoOfJob(ctx.db.read, jobs.get("own")!)).toBeNull();
    expect(await checkoutRepoOfJob(ctx.db.read, jobs.get("forked")!)).toEqual({ repoId: fork.id, orgId: fork.org_id });
    expect(await checkoutRepoOfJob(ctx.db.read, jobs.get("gone")!)).toEqual({ repoId: "nosuchrepo000000", orgId: null });
    expect(await checkoutRepoOfJob(ctx.db.read, "nosuchjob0000000")).toBeNull();
  } finally {
    await ctx.close();
  }
});
