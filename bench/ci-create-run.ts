// Creating a 256-job run (issue 29, plan-29 §6: "part C inserts the 256 job rows and 256 check
// rows as multi-row INSERTs"): `createRun` (multi-row, 128 rows a statement) against the row-by-row
// path the trigger had before (one INSERT per job and one upsert per check), both in one write
// transaction each, interleaved, in process on SQLite (openContext, as the service tests do).
// Prints a JSON summary: wall p50/p99 per transaction and CPU per run.
//
//   bun bench/ci-create-run.ts [--runs 40] [--jobs 256]
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.ts";
import { openContext } from "../src/runtime.ts";
import { createRun, type PlannedWorkflow, type RunTrigger } from "../src/services/ci/create-run.ts";
import * as runs from "../src/services/ci/store-runs.ts";
import type { PlannedJob } from "../src/services/ci/workflow.ts";
import { createUserWithOrg } from "../src/services/people/accounts.ts";
import { createRepo } from "../src/services/repos/repos.ts";
import { tables } from "../src/db/tables.ts";
import { eq } from "drizzle-orm";
import type { Principal } from "../src/services/access/principal.ts";
import { newId } from "../src/util/ids.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "40" }, jobs: { type: "string", default: "256" } } });
const RUNS = Number(values.runs);
const JOBS = Number(values.jobs);

const dir = mkdtempSync(join(tmpdir(), "svc-bench-create-run-"));
const ctx = await openContext(loadConfig({ SVC_DATA_DIR: dir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" }));
try {
  const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
  const { users } = tables(ctx.db.read);
  const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "b" };
  const repo = await createRepo(ctx, actor, "acme", { name: "api" });

  const steps = Array.from({ length: 5 }, (_, i) => ({ name: `step ${i}`, run: `make test PART=${i} OS=$OS NODE=$NODE`, env: { REF: "main" } }));
  const jobs: PlannedJob[] = Array.from({ length: JOBS }, (_, i) => ({
    key: `test (os=o${i >> 4}, node=n${i & 15})`,
    runsOn: ["self-hosted", `o${i >> 4}`],
    hosted: false,
    spec: { env: { OS: `o${i >> 4}`, NODE: `n${i & 15}` }, timeoutS: 1800, steps },
    workflowJob: "test",
    needs: [],
  }));
  const planned: PlannedWorkflow = { path: ".svc/workflows/big.yml", jobs };
  let n = 0;
  const trigger = (): RunTrigger => ({
    repoId: repo.id,
    orgId: repo.org_id,
    orgName: "acme",
    ref: "refs/heads/main",
    commit: (++n).toString(16).padStart(40, "0"),
    event: "push",
    actorUserId: owner.id,
  });

  /** The trigger's path before issue 29: a run row, then per job one INSERT and one check upsert. */
  const rowByRow = async () => {
    const p = trigger();
    await ctx.db.transaction(async (tx) => {
      const runId = newId();
      const t = Date.now();
      await runs.insertRun(tx, {
        id: runId,
        repoId: p.repoId,
        orgId: p.orgId,
        workflow: planned.path,
        commit: p.commit,
        ref: p.ref,
        event: p.event,
        state: "queued",
        createdAt: t,
      });
      for (const j of jobs) {
        const id = newId();
        await runs.insertJob(tx, {
          id,
          runId,
          repoId: p.repoId,
          orgId: p.orgId,
          key: j.key,
          runsOn: j.runsOn,
          hosted: j.hosted,
          spec: j.spec,
          state: "queued",
          steps: j.spec.steps.map((s) => ({ state: "pending", exit_code: null, name: s.name })),
          queuedAt: t,
        });
        await runs.recordCheck(tx, { repoId: p.repoId, commit: p.commit, key: j.key, state: "queued", runId, jobId: id, updatedAt: t });
      }
    });
  };
  const multiRow = async () => {
    const p = trigger();
    await ctx.db.transaction((tx) => createRun(ctx, tx, planned, p));
  };

  const sample = async (f: () => Promise<void>, wall: number[], cpu: number[]) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await f();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  };
  // Warm-up (statement caches, JIT).
  for (let i = 0; i < 3; i++) {
    await rowByRow();
    await multiRow();
  }
  const r = { before: { wall: [] as number[], cpu: [] as number[] }, after: { wall: [] as number[], cpu: [] as number[] } };
  for (let i = 0; i < RUNS; i++) {
    await sample(rowByRow, r.before.wall, r.before.cpu);
    await sample(multiRow, r.after.wall, r.after.cpu);
  }
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
  const sum = (o: { wall: number[]; cpu: number[] }) => ({
    wall_p50_ms: +pct(o.wall, 50).toFixed(1),
    wall_p99_ms: +pct(o.wall, 99).toFixed(1),
    cpu_p50_ms: +pct(o.cpu, 50).toFixed(1),
  });
  console.log(
    JSON.stringify(
      { jobs: JOBS, runs: RUNS, database: "sqlite", load: loadavg().map((x) => +x.toFixed(2)), row_by_row: sum(r.before), create_run: sum(r.after) },
      null,
      2,
    ),
  );
} finally {
  ctx.close();
  rmSync(dir, { recursive: true, force: true });
}
