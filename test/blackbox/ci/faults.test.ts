// Faults with real processes: a runner killed with SIGKILL mid-job (its job fails after the
// heartbeat timeout, set short here with SVC_RUNNER_HEARTBEAT_TIMEOUT_MS, and other machines go on
// claiming), and a server restart mid-run (no queued job and no acknowledged log line is lost;
// the agent retries with backoff and finishes).
import { describe, expect, test } from "bun:test";
import { caller } from "../../helpers/api.ts";
import { startServer, tempDir } from "../../helpers/server.ts";
import { type CiServer, finishedRun, logOf, type Machine, pushWorkflow, startCiServer, until, waitForRun } from "./helpers.ts";

/** A machine of `ci` with its agent polling (workspaces in work-<name>; killed with `ci`). */
const machine = (ci: CiServer, name: string, labels: string[]): Promise<Machine> => ci.machine({ name, labels, workdir: `work-${name}` });

/** A port that was free a moment ago (the restarted server must come back where the agent looks). */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

describe("faults", () => {
  test("a runner killed with SIGKILL: its job fails after the heartbeat timeout, and another machine takes new jobs", async () => {
    await using ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "2000", SVC_RUNNER_HEARTBEAT_TIMEOUT_MS: "3000" }, repos: ["app"] });
    const { api } = ci;
    const victim = await machine(ci, "victim", ["pool"]);
    const sha = await pushWorkflow(api, "app", "on: push\njobs:\n  long:\n    runs-on: [self-hosted, pool]\n    steps:\n      - run: sleep 300\n");
    await victim.saw(/step 1\/1 "sleep 300" running/);
    await victim.stop("SIGKILL");
    const run = await finishedRun(api, "app", sha, 30_000);
    expect(run.jobs[0]).toMatchObject({ state: "failure", runner: { name: "victim" } });
    expect(run.jobs[0].error).toMatch(/^the runner stopped responding: no heartbeat for \d+ seconds$/);
    // The machine is no longer busy, and a new job goes to a live machine.
    const survivor = await machine(ci, "survivor", ["pool"]);
    const next = await pushWorkflow(api, "app", "on: push\njobs:\n  short:\n    runs-on: [self-hosted, pool]\n    steps:\n      - run: echo ok\n");
    const done = await finishedRun(api, "app", next);
    expect(done.jobs[0]).toMatchObject({ state: "success", runner: { name: "survivor" } });
    const victimRow = (await api.get("/v1/orgs/acme/runners")).body.runners.find((r: any) => r.name === "victim");
    expect(victimRow.job).toBeNull();
    await survivor.stop();
  });

  test("a server restart mid-run loses no queued job and no acknowledged log line; the agent retries and finishes", async () => {
    using data = tempDir("svc-restart-");
    const addr = `127.0.0.1:${freePort()}`;
    const env = { SVC_HTTP_ADDR: addr, SVC_RUNNER_CLAIM_WAIT_MS: "2000" };
    await using ci = await startCiServer({ env, dataDir: data.path, repos: ["app"] });
    let server = ci.server;
    const { owner, api } = ci;
    const a = await machine(ci, "steady", ["steady"]);
    const script = 'i=1; while [ $i -le 40 ]; do echo "line $i"; i=$((i+1)); sleep 0.1; done';
    const sha = await pushWorkflow(
      api,
      "app",
      `on: push\njobs:\n  first:\n    runs-on: [self-hosted, steady]\n    steps:\n      - run: |\n          ${script}\n  second:\n    runs-on: [self-hosted, steady]\n    steps:\n      - run: echo second done\n`,
    );
    const run = await waitForRun(api, "app", sha, "the first job to run", (r) => r.jobs.some((j: any) => j.state === "running"));
    const first = run.jobs.find((j: any) => j.state === "running");
    const second = run.jobs.find((j: any) => j.id !== first.id);
    expect(second.state).toBe("queued");
    const acknowledged = await until("some acknowledged lines", async () => {
      const text = await logOf(server, owner, "app", run.id, first.id);
      return text.includes("line 3") ? text : null;
    });
    expect(await server.stop()).toBe(0);
    await a.saw(/retrying in/);
    server = await startServer({ env, dataDir: data.path });
    try {
      const cookieCaller = caller(server, owner);
      const done = await finishedRun(cookieCaller, "app", sha, 60_000);
      expect(done.state).toBe("success");
      expect(done.jobs.map((j: any) => j.state)).toEqual(["success", "success"]);
      const log = await logOf(server, owner, "app", run.id, first.id);
      expect(log.startsWith(acknowledged)).toBe(true);
      const lines = log.split("\n").filter((l) => /^line \d+$/.test(l));
      expect(lines).toEqual(Array.from({ length: 40 }, (_, i) => `line ${i + 1}`));
      expect(await logOf(server, owner, "app", run.id, second.id)).toContain("second done");
      await a.saw(/server reachable again/);
    } finally {
      await a.stop();
      await server.stop();
    }
  });
});
