// End to end with real processes: the built server, real `svc runner` agents, real `git`. A push
// of `.svc/workflows/*.yml` ends with runs whose jobs were claimed, executed, logged and
// reported by agents (issue 13; SPEC §4.1; DECISIONS §0, §3).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Person } from "../../helpers/api.ts";
import { commitFiles as gitCommit, gitSandbox, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { mintToken, type RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, commitFiles, finishedRun, jobsBy, logOf, type Machine, runOf, startCiServer, until, waitForRun } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;
let g: GitSandbox;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app", "matrix", "cancel", "ephemeral"] });
  ({ server, owner, api } = ci);
  g = gitSandbox();
});

afterAll(async () => {
  await ci?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
});

/** Registers a machine in the default group and starts its agent (workspaces in work-<name>). */
const machine = (name: string, labels: string[] = [], ephemeral = false): Promise<Machine> => ci.machine({ name, labels, ephemeral, workdir: `work-${name}` });

describe("the runner agent", () => {
  test("a git push runs the workflow: cloned at the commit, steps run with sh -e, output logged, verdict reported", async () => {
    const a = await machine("builder", ["linux-big"]);
    const token = await mintToken(server, owner.cookie, "acme", { scopes: ["repo:write"], label: "pusher" });
    const dir = g.path("app");
    await g.ok(["clone", "-q", repoUrl(server, "acme", "app", token), dir]);
    const wf = [
      "name: CI",
      "on:",
      "  push:",
      "    branches: [main]",
      "env:",
      "  GREETING: hello",
      "jobs:",
      "  test:",
      "    runs-on: [self-hosted, linux-big]",
      "    steps:",
      "      - name: greet",
      '        run: echo "$GREETING from $SVC_JOB_KEY at $SVC_SHA"',
      "      - name: checkout is there",
      "        run: |",
      "          test -f README.md",
      "          cat README.md",
      "          echo to-stderr >&2",
      "      - name: env per step",
      "        env: { WHO: step }",
      '        run: echo "who=$WHO"',
    ].join("\n");
    const sha = await gitCommit(g, dir, { "README.md": "readme-text\n", ".svc/workflows/ci.yml": `${wf}\n` }, "add ci");
    await g.ok(["push", "-q", "origin", "HEAD:main"], { cwd: dir });

    const run = await finishedRun(api, "app", sha);
    expect(run).toMatchObject({
      repo: "app",
      workflow: ".svc/workflows/ci.yml",
      commit: sha,
      ref: "refs/heads/main",
      event: "push",
      state: "success",
      error: null,
    });
    expect(run.jobs).toHaveLength(1);
    const job = run.jobs[0];
    expect(job).toMatchObject({
      key: "test",
      runs_on: ["self-hosted", "linux-big"],
      state: "success",
      verdict: "success",
      error: null,
      runner: { id: a.runnerId, name: "builder" },
    });
    expect(job.steps.map((s: any) => [s.name, s.state, s.exit_code])).toEqual([
      ["greet", "success", 0],
      ["checkout is there", "success", 0],
      ["env per step", "success", 0],
    ]);
    const log = await logOf(server, owner, "app", run.id, job.id);
    expect(log).toContain(`hello from test at ${sha}`);
    expect(log).toContain("readme-text");
    expect(log).toContain("to-stderr");
    expect(log).toContain("who=step");
    // The terminal names the job and each step.
    await a.saw(/job "test" \(\w+\) of acme\/app@\w{7}: finished: success/);
    expect(a.stderr()).toMatch(/step 2\/3 "checkout is there" succeeded/);
    // The workspace is gone after the job.
    expect(existsSync(join(ci.home, "work-builder", job.id))).toBe(false);
  });

  test("a failing step fails the job with its exit code; later steps are skipped", async () => {
    const sha = await commitFiles(api, "app", {
      ".svc/workflows/ci.yml":
        "on: push\njobs:\n  test:\n    runs-on: [self-hosted, linux-big]\n    steps:\n      - name: boom\n        run: |\n          echo before\n          false\n          echo never\n      - name: after\n        run: echo after\n",
    });
    const run = await finishedRun(api, "app", sha);
    expect(run.state).toBe("failure");
    expect(run.jobs[0]).toMatchObject({ state: "failure", verdict: "failure", error: 'step "boom" failed with exit code 1' });
    expect(run.jobs[0].steps.map((s: any) => s.state)).toEqual(["failure", "skipped"]);
    const log = await logOf(server, owner, "app", run.id, run.jobs[0].id);
    expect(log).toContain("before");
    expect(log).not.toContain("never");
  });

  test("a matrix on two labels runs each cell on the machine that has its label", async () => {
    const [alpha, beta] = await Promise.all([machine("m-alpha", ["alpha"]), machine("m-beta", ["beta"])]);
    const sha = await commitFiles(api, "matrix", {
      ".svc/workflows/m.yml": [
        "on: push",
        "jobs:",
        "  test:",
        '    runs-on: [self-hosted, "${{ matrix.lane }}"]',
        "    strategy:",
        "      matrix:",
        "        lane: [alpha, beta]",
        "    steps:",
        '      - run: echo "lane ${{ matrix.lane }}"',
      ].join("\n"),
    });
    const run = await finishedRun(api, "matrix", sha);
    expect(run.state).toBe("success");
    const byKey = jobsBy(run, "key");
    expect(Object.keys(byKey).sort()).toEqual(["test (lane=alpha)", "test (lane=beta)"]);
    expect(byKey["test (lane=alpha)"].runner).toEqual({ id: alpha.runnerId, name: "m-alpha" });
    expect(byKey["test (lane=beta)"].runner).toEqual({ id: beta.runnerId, name: "m-beta" });
    expect(await logOf(server, owner, "matrix", run.id, byKey["test (lane=beta)"].id)).toContain("lane beta");
  });

  test("cancel stops a running job: the step's whole process group is killed and the job is cancelled", async () => {
    const a = await machine("canceller", ["slow"]);
    const marker = join(ci.home, "child.pid");
    const sha = await commitFiles(api, "cancel", {
      ".svc/workflows/c.yml": `on: push\njobs:\n  long:\n    runs-on: [self-hosted, slow]\n    steps:\n      - run: |\n          sleep 300 &\n          echo $! > ${marker}\n          echo started\n          wait\n      - run: echo second\n`,
    });
    const run = await waitForRun(api, "cancel", sha, "the job to start", (r) => r.jobs[0]?.state === "running");
    await until("the step's output in the log", async () => (await logOf(server, owner, "cancel", run.id, run.jobs[0].id)).includes("started"));
    const pid = Number(readFileSync(marker, "utf8").trim());
    const c = await api.post(`/v1/orgs/acme/repos/cancel/runs/${run.id}/cancel`);
    expect(c.status).toBe(202);
    const done = await finishedRun(api, "cancel", sha);
    expect(done.state).toBe("cancelled");
    expect(done.jobs[0]).toMatchObject({ state: "cancelled", verdict: "cancelled", error: "cancelled" });
    expect(done.jobs[0].steps.map((s: any) => s.state)).toEqual(["cancelled", "cancelled"]);
    await a.saw(/cancel requested/);
    // The background `sleep` started by the step died with its group.
    await until("the step's child process to be gone", () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    // A finished run cannot be cancelled again.
    expect((await api.post(`/v1/orgs/acme/repos/cancel/runs/${run.id}/cancel`)).status).toBe(409);
  });

  test("timeout-minutes cancels a job that runs too long", async () => {
    const sha = await commitFiles(api, "cancel", {
      ".svc/workflows/c.yml": "on: push\njobs:\n  long:\n    runs-on: [self-hosted, slow]\n    timeout-minutes: 0.05\n    steps:\n      - run: sleep 300\n",
    });
    const done = await finishedRun(api, "cancel", sha, 60_000);
    expect(done.jobs[0]).toMatchObject({ state: "cancelled", error: "the job exceeded its timeout of 0.05 minutes" });
  });

  test("an ephemeral machine runs one job, de-registers and exits", async () => {
    const a = await machine("once", ["one-shot"], true);
    const sha = await commitFiles(api, "ephemeral", {
      ".svc/workflows/e.yml":
        "on: push\njobs:\n  a:\n    runs-on: [self-hosted, one-shot]\n    steps:\n      - run: echo first\n  b:\n    runs-on: [self-hosted, one-shot]\n    steps:\n      - run: echo second\n",
    });
    expect(await a.proc.exited).toBe(0);
    const run = await runOf(api, "ephemeral", sha);
    expect(run.jobs.map((j: any) => j.state).sort()).toEqual(["queued", "success"]);
    const listed = (await api.get("/v1/orgs/acme/runners")).body.runners.map((r: any) => r.name);
    expect(listed).not.toContain("once");
    // Its credential is dead.
    const cred = JSON.parse(readFileSync(join(ci.home, "once.json"), "utf8")).credential;
    expect((await fetch(`${server.url}/v1/runners/claim`, { method: "POST", headers: { authorization: `Bearer ${cred}` } })).status).toBe(401);
  });
});
