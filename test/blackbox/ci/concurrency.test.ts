// Concurrency groups end to end (plan-29 §3 C "Concurrency"; GitHub's semantics): with
// cancel-in-progress a newer run cancels the running one; without it the newer run waits (its
// jobs pending, the run saying why) and starts when the running one ends, and a third run
// supersedes the waiting one. Real server, real agent; each step waits for a marker file the test
// creates, so nothing depends on timing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { caller } from "../../helpers/api.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { commitFiles, finishedRun, ownerOf, registerMachine, registrationToken, runnerHome, runsOf, startAgent, until, type Agent } from "./helpers.ts";

let server: RunningServer;
let api: ReturnType<typeof caller>;
const home = runnerHome();
const agents: Agent[] = [];

beforeAll(async () => {
  server = await startServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" } });
  ({ api } = await ownerOf(server));
  for (const name of ["cip", "queue"]) expect((await api.post("/v1/orgs/acme/repos", { name })).status).toBe(201);
  const m = await registerMachine(server, await registrationToken(api), home.dir, { name: "conc", labels: ["conc"] });
  const agent = startAgent(m.config, join(home.dir, "work"));
  agents.push(agent);
  await agent.saw(/waiting for jobs/);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop("SIGKILL")));
  await server?.[Symbol.asyncDispose]();
  home.cleanup();
});

/** A workflow in group `deploy-<ref>` whose one step waits for the marker file `name`. */
function workflow(name: string, cancelInProgress: boolean): string {
  const marker = join(home.dir, name);
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

const runOf = async (repo: string, sha: string) => (await runsOf(api, repo)).find((r) => r.commit === sha);

describe("concurrency groups", () => {
  test("cancel-in-progress: a newer run cancels the running one and runs", async () => {
    const a = await commitFiles(api, "cip", { ".svc/workflows/d.yml": workflow("cip-a", true) });
    await until("run A running", async () => (await runOf("cip", a))?.jobs[0]?.state === "running");
    const b = await commitFiles(api, "cip", { ".svc/workflows/d.yml": workflow("cip-b", true) });
    const doneA = await finishedRun(api, "cip", a);
    expect(doneA.state).toBe("cancelled");
    expect(doneA.error).toBeNull();
    expect(doneA.jobs[0]).toMatchObject({
      state: "cancelled",
      verdict: "cancelled",
      error: "cancelled: a newer run in concurrency group deploy-refs/heads/main",
    });
    await until("run B running", async () => (await runOf("cip", b))?.jobs[0]?.state === "running");
    writeFileSync(join(home.dir, "cip-b"), "");
    expect((await finishedRun(api, "cip", b)).state).toBe("success");
    // A run cancelled by its group can be re-run (its error is on its jobs, not the run).
    writeFileSync(join(home.dir, "cip-a"), "");
    const again = await api.post(`/v1/orgs/acme/repos/cip/runs/${doneA.id}/rerun`, {});
    expect(again.status).toBe(201);
    expect((await finishedRun(api, "cip", a)).state).toBe("success");
  });

  test("without it the newer run waits, then runs; a third supersedes the waiting one", async () => {
    const one = await commitFiles(api, "queue", { ".svc/workflows/d.yml": workflow("q-1", false) });
    const run1 = await until("run 1 running", async () => {
      const r = await runOf("queue", one);
      return r?.jobs[0]?.state === "running" ? r : null;
    });
    const two = await commitFiles(api, "queue", { ".svc/workflows/d.yml": workflow("q-2", false) });
    const run2 = await until("run 2 waiting", async () => {
      const r = await runOf("queue", two);
      return r?.jobs[0]?.state === "pending" ? r : null;
    });
    expect(run2).toMatchObject({
      state: "queued",
      concurrency_group: "deploy-refs/heads/main",
      waiting: `waiting for run ${run1.id} in concurrency group deploy-refs/heads/main`,
    });
    const three = await commitFiles(api, "queue", { ".svc/workflows/d.yml": workflow("q-3", false) });
    const run3 = await until("run 3 waiting", async () => {
      const r = await runOf("queue", three);
      return r?.jobs[0]?.state === "pending" ? r : null;
    });
    const done2 = await finishedRun(api, "queue", two);
    expect(done2.state).toBe("cancelled");
    expect(done2.error).toBeNull();
    expect(done2.jobs[0]).toMatchObject({
      state: "cancelled",
      started_at: null,
      error: `superseded by run ${run3.id} in concurrency group deploy-refs/heads/main`,
    });
    // Run 1 ends: run 3 starts.
    writeFileSync(join(home.dir, "q-1"), "");
    expect((await finishedRun(api, "queue", one)).state).toBe("success");
    await until("run 3 running", async () => (await runOf("queue", three))?.jobs[0]?.state === "running");
    expect((await runOf("queue", three)).waiting).toBeNull();
    writeFileSync(join(home.dir, "q-3"), "");
    expect((await finishedRun(api, "queue", three)).state).toBe("success");
  });
});
