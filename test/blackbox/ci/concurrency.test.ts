// Concurrency groups end to end (plan-29 §3 C "Concurrency"; GitHub's semantics): with
// cancel-in-progress a newer run cancels the running one; without it the newer run waits (its
// jobs pending, the run saying why) and starts when the running one ends, and a third run
// supersedes the waiting one. Real server, real agent; each step waits for a marker file the test
// creates, so nothing depends on timing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Api, type CiServer, finishedRun, pushWorkflow, runOf, startCiServer, waitForRun } from "./helpers.ts";

let ci: CiServer;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["cip", "queue"] });
  ({ api } = ci);
  await ci.machine({ name: "conc", labels: ["conc"] });
});

afterAll(() => ci?.[Symbol.asyncDispose]());

/** A workflow in group `deploy-<ref>` whose one step waits for the marker file `name`. */
function workflow(name: string, cancelInProgress: boolean): string {
  const marker = join(ci.home, name);
  return [
    "on: push",
    "concurrency:",
    "  group: deploy-${{ github.ref }}",
    `  cancel-in-progress: ${cancelInProgress}`,
    "jobs:",
    "  deploy:",
    "    runs-on: [self-hosted, conc]",
    "    steps:",
    `      - run: echo started-${name}; until [ -f ${marker} ]; do sleep 0.1; done; echo done-${name}`,
    "",
  ].join("\n");
}

describe("concurrency groups", () => {
  test("cancel-in-progress: a newer run cancels the running one and runs", async () => {
    const a = await pushWorkflow(api, "cip", workflow("cip-a", true), "d.yml");
    await waitForRun(api, "cip", a, "run A running", (r) => r.jobs[0]?.state === "running");
    const b = await pushWorkflow(api, "cip", workflow("cip-b", true), "d.yml");
    const doneA = await finishedRun(api, "cip", a);
    expect(doneA.state).toBe("cancelled");
    expect(doneA.error).toBeNull();
    expect(doneA.jobs[0]).toMatchObject({
      state: "cancelled",
      verdict: "cancelled",
      error: "cancelled: a newer run in concurrency group deploy-refs/heads/main",
    });
    await waitForRun(api, "cip", b, "run B running", (r) => r.jobs[0]?.state === "running");
    writeFileSync(join(ci.home, "cip-b"), "");
    expect((await finishedRun(api, "cip", b)).state).toBe("success");
    // A run cancelled by its group can be re-run (its error is on its jobs, not the run).
    writeFileSync(join(ci.home, "cip-a"), "");
    const again = await api.post(`/v1/orgs/acme/repos/cip/runs/${doneA.id}/rerun`, {});
    expect(again.status).toBe(201);
    expect((await finishedRun(api, "cip", a)).state).toBe("success");
  });

  test("without it the newer run waits, then runs; a third supersedes the waiting one", async () => {
    const one = await pushWorkflow(api, "queue", workflow("q-1", false), "d.yml");
    const run1 = await waitForRun(api, "queue", one, "run 1 running", (r) => r.jobs[0]?.state === "running");
    const two = await pushWorkflow(api, "queue", workflow("q-2", false), "d.yml");
    const run2 = await waitForRun(api, "queue", two, "run 2 waiting", (r) => r.jobs[0]?.state === "pending");
    expect(run2).toMatchObject({
      state: "queued",
      concurrency_group: "deploy-refs/heads/main",
      waiting: `waiting for run ${run1.id} in concurrency group deploy-refs/heads/main`,
    });
    const three = await pushWorkflow(api, "queue", workflow("q-3", false), "d.yml");
    const run3 = await waitForRun(api, "queue", three, "run 3 waiting", (r) => r.jobs[0]?.state === "pending");
    const done2 = await finishedRun(api, "queue", two);
    expect(done2.state).toBe("cancelled");
    expect(done2.error).toBeNull();
    expect(done2.jobs[0]).toMatchObject({
      state: "cancelled",
      started_at: null,
      error: `superseded by run ${run3.id} in concurrency group deploy-refs/heads/main`,
    });
    // Run 1 ends: run 3 starts.
    writeFileSync(join(ci.home, "q-1"), "");
    expect((await finishedRun(api, "queue", one)).state).toBe("success");
    await waitForRun(api, "queue", three, "run 3 running", (r) => r.jobs[0]?.state === "running");
    expect((await runOf(api, "queue", three)).waiting).toBeNull();
    writeFileSync(join(ci.home, "q-3"), "");
    expect((await finishedRun(api, "queue", three)).state).toBe("success");
  });
});
