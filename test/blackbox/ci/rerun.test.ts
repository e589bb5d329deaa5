// Re-runs end to end (issue 29 "re-run of a whole run or only its failed jobs"; plan-29 §3 C
// "Re-run"), with the built server and a real agent: failed-only runs again the failed job and
// what needs it, keeping the successful ones (`reused_from`, their logs); the old attempt stays
// readable (?attempt=1, its logs); 409 while unfinished and when nothing failed; re-run all runs
// every job again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Person } from "../../helpers/api.ts";
import { tempDir, type RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, finishedRun, jobsBy as byName, logOf, pushWorkflow, startCiServer, waitForRunById } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;
const marksDir = tempDir("svc-rerun-marks-");
const marks = marksDir.path;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
  ({ server, owner, api } = ci);
  await ci.machine({ name: "m1", labels: ["rerun"] });
}, 60_000);

afterAll(async () => {
  await ci?.[Symbol.asyncDispose]();
  marksDir[Symbol.dispose]();
});

const runPath = (id: string) => `/v1/orgs/acme/repos/app/runs/${id}`;

test("failed-only runs again the failed job and its dependents; the old attempt and its logs stay; re-run all runs everything", async () => {
  // flaky fails until `pass` exists; then it waits for `go` (so the test sees the attempt unfinished).
  const flaky = `if [ -f ${marks}/pass ]; then while [ ! -f ${marks}/go ]; do sleep 0.1; done; echo "second-try \${{ needs.build.outputs.x }}"; else echo first-try; exit 1; fi`;
  const wf = [
    "on: push",
    "jobs:",
    "  build:",
    "    runs-on: [self-hosted, rerun]",
    "    outputs: { x: '${{ steps.o.outputs.x }}' }",
    '    steps: [ { id: o, run: "echo built; echo x=kept-output >> $GITHUB_OUTPUT" } ]',
    "  flaky:",
    "    needs: build",
    "    runs-on: [self-hosted, rerun]",
    `    steps: [ { run: ${JSON.stringify(flaky)} } ]`,
    "  after:",
    "    needs: flaky",
    "    runs-on: [self-hosted, rerun]",
    '    steps: [ { run: "echo attempt=$GITHUB_RUN_ATTEMPT" } ]',
    "  side:",
    "    needs: build",
    "    runs-on: [self-hosted, rerun]",
    "    steps: [ { run: echo side } ]",
  ].join("\n");
  const sha = await pushWorkflow(api, "app", `${wf}\n`);
  const first = await finishedRun(api, "app", sha);
  expect(first).toMatchObject({ state: "failure", attempt: 1 });
  const one = byName(first);
  expect(one).toMatchObject({ build: { state: "success" }, flaky: { state: "failure" }, after: { state: "skipped" }, side: { state: "success" } });

  writeFileSync(join(marks, "pass"), "");
  const rerun = await api.post(`${runPath(first.id)}/rerun`, { failed_only: true });
  expect(rerun.status).toBe(201);
  expect(rerun.body).toMatchObject({ id: first.id, attempt: 2, finished_at: null });
  const two = byName(rerun.body);
  // Kept: build and side (their results stand; not run again). Again: flaky and what needs it.
  expect(two.build).toMatchObject({ state: "success", attempt: 2, reused_from: one.build.id, started_at: one.build.started_at });
  expect(two.side).toMatchObject({ state: "success", reused_from: one.side.id });
  expect(two.flaky).toMatchObject({ reused_from: null, attempt: 2 });
  expect(["queued", "running"]).toContain(two.flaky.state);
  expect(two.after).toMatchObject({ state: "pending", reused_from: null });
  expect(two.flaky.id).not.toBe(one.flaky.id);

  // Unfinished: another re-run is refused until it ends.
  await waitForRunById(api, "app", first.id, "flaky running again", (r) => byName(r).flaky.state === "running");
  expect((await api.post(`${runPath(first.id)}/rerun`, {})).status).toBe(409);
  writeFileSync(join(marks, "go"), "");
  const second = await waitForRunById(api, "app", first.id, "attempt 2 finished", (r) => r.state === "success");
  expect(second.attempts.map((a: any) => [a.attempt, a.state])).toEqual([
    [1, "failure"],
    [2, "success"],
  ]);
  const done = byName(second);
  expect(done).toMatchObject({ flaky: { state: "success" }, after: { state: "success" } });
  // The kept build's outputs still reach what needs it; the job run again sees the new attempt.
  expect(await logOf(server, owner, "app", first.id, done.flaky.id)).toContain("second-try kept-output");
  expect(await logOf(server, owner, "app", first.id, done.after.id)).toContain("attempt=2");
  // A kept job's log is the one of the job it stands for.
  expect(await logOf(server, owner, "app", first.id, done.build.id)).toContain("built");
  // The commit's checks follow the new attempt.
  const checks = (await api.get(`/v1/orgs/acme/repos/app/commits/${sha}/checks`)).body.checks;
  expect(checks.find((c: any) => c.key === "flaky")).toMatchObject({ state: "success", job_id: done.flaky.id });

  // Attempt 1 stays readable, with its logs.
  const old = await api.get(`${runPath(first.id)}?attempt=1`);
  expect(old.status).toBe(200);
  expect(old.body).toMatchObject({ attempt: 1, state: "failure" });
  expect(byName(old.body).flaky).toMatchObject({ id: one.flaky.id, state: "failure" });
  expect(await logOf(server, owner, "app", first.id, one.flaky.id)).toContain("first-try");
  expect((await api.get(`${runPath(first.id)}?attempt=3`)).status).toBe(404);

  // Nothing failed: failed-only is refused; re-run all runs every job again.
  expect((await api.post(`${runPath(first.id)}/rerun`, { failed_only: true })).status).toBe(409);
  const all = await api.post(`${runPath(first.id)}/rerun`, {});
  expect(all.status).toBe(201);
  expect(all.body.attempt).toBe(3);
  expect(all.body.jobs.every((j: any) => j.reused_from === null)).toBe(true);
  const third = await waitForRunById(api, "app", first.id, "attempt 3 finished", (r) => r.state === "success" && r.attempt === 3);
  const ran = byName(third);
  expect(ran.build.started_at).toBeGreaterThan(done.flaky.finished_at);
  expect(await logOf(server, owner, "app", first.id, ran.after.id)).toContain("attempt=3");
});
