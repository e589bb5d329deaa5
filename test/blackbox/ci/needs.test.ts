// Job graphs end to end (issue 29 "needs", "if"; plan-29 §3 C "Release"), with the built server
// and a real `svc runner` agent: jobs run in the order their needs say, a failed need skips its
// dependents with the reason, `if: always()` and `if: failure()` still run, a false `if` skips,
// and a job released after its need whose runs-on names GitHub's hosted labels says how to run
// it here instead of waiting in silence.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Person } from "../../helpers/api.ts";
import type { RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, finishedRun, jobsBy as byName, logOf, pushWorkflow, startCiServer, waitForRun } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
  ({ server, owner, api } = ci);
  await ci.machine({ name: "m1", labels: ["graph"] });
}, 60_000);

afterAll(() => ci?.[Symbol.asyncDispose]());

/** A job of the workflow: its id, needs, if and script (runs-on: the agent's labels). */
function job(id: string, o: { needs?: string[]; if?: string; run?: string; runsOn?: string } = {}): string {
  const lines = [`  ${id}:`, `    runs-on: ${o.runsOn ?? "[self-hosted, graph]"}`];
  if (o.needs) lines.push(`    needs: [${o.needs.join(", ")}]`);
  if (o.if) lines.push(`    if: ${JSON.stringify(o.if)}`);
  lines.push("    steps:", `      - run: ${JSON.stringify(o.run ?? `echo ran ${id}`)}`);
  return lines.join("\n");
}

const workflow = (...jobs: string[]) => `on: push\njobs:\n${jobs.join("\n")}\n`;

describe("needs and job if with the real agent", () => {
  test("build → test → deploy run in order; a false if is skipped with its reason; the run succeeds", async () => {
    const sha = await pushWorkflow(
      api,
      "app",
      workflow(
        job("build"),
        job("test", { needs: ["build"] }),
        job("deploy", { needs: ["test"] }),
        job("release-only", { needs: ["build"], if: "github.ref == 'refs/heads/release'" }),
        job("root-if", { if: "github.ref == 'refs/heads/release'" }),
        job("after-root", { needs: ["root-if"] }),
      ),
    );
    const run = await finishedRun(api, "app", sha);
    expect(run.state).toBe("success");
    const jobs = byName(run);
    expect(jobs.build).toMatchObject({ state: "success", needs: [], condition: null, attempt: 1 });
    expect(jobs.test).toMatchObject({ state: "success", needs: ["build"] });
    expect(jobs.deploy).toMatchObject({ state: "success", needs: ["test"] });
    // Each job started after its need finished (the claim only ever sees released jobs).
    expect(jobs.test.started_at).toBeGreaterThanOrEqual(jobs.build.finished_at);
    expect(jobs.deploy.started_at).toBeGreaterThanOrEqual(jobs.test.finished_at);
    expect(jobs["release-only"]).toMatchObject({
      state: "skipped",
      condition: "github.ref == 'refs/heads/release'",
      skip_reason: "if: github.ref == 'refs/heads/release' was false",
      runner: null,
      started_at: null,
    });
    // A job without needs has its `if` decided when the run is created; what needs it cascades.
    expect(jobs["root-if"]).toMatchObject({ state: "skipped", skip_reason: "if: github.ref == 'refs/heads/release' was false" });
    expect(jobs["after-root"]).toMatchObject({ state: "skipped", skip_reason: "needs root-if was skipped" });
    expect(await logOf(server, owner, "app", run.id, jobs.deploy.id)).toContain("ran deploy");
    // A skipped check passes; each job's check is recorded under its key.
    const checks = (await api.get(`/v1/orgs/acme/repos/app/commits/${sha}/checks`)).body.checks;
    expect(Object.fromEntries(checks.map((c: any) => [c.key, c.state]))).toEqual({
      build: "success",
      test: "success",
      deploy: "success",
      "release-only": "skipped",
      "root-if": "skipped",
      "after-root": "skipped",
    });
  });

  test("a failed need skips its dependents with the reason; if: always() and if: failure() still run", async () => {
    const sha = await pushWorkflow(
      api,
      "app",
      workflow(
        job("build", { run: "echo building; exit 3" }),
        job("test", { needs: ["build"] }),
        job("deploy", { needs: ["test"] }),
        job("cleanup", { needs: ["test"], if: "${{ always() }}" }),
        job("report", { needs: ["deploy"], if: "failure()" }),
        job("celebrate", { needs: ["build"], if: "success()" }),
      ),
    );
    const run = await finishedRun(api, "app", sha);
    expect(run.state).toBe("failure");
    const jobs = byName(run);
    expect(jobs.build).toMatchObject({ state: "failure", error: 'step "echo building; exit 3" failed with exit code 3' });
    expect(jobs.test).toMatchObject({ state: "skipped", skip_reason: "needs build failed", runner: null });
    expect(jobs.deploy).toMatchObject({ state: "skipped", skip_reason: "needs test was skipped" });
    expect(jobs.celebrate).toMatchObject({ state: "skipped", skip_reason: "if: success() was false" });
    expect(jobs.cleanup).toMatchObject({ state: "success", condition: "${{ always() }}" });
    expect(jobs.report).toMatchObject({ state: "success", condition: "failure()" });
    expect(await logOf(server, owner, "app", run.id, jobs.report.id)).toContain("ran report");
  });

  test("job outputs reach a dependent: its if and its steps read needs.build.outputs.x", async () => {
    const wf = [
      "on: push",
      "jobs:",
      "  build:",
      "    runs-on: [self-hosted, graph]",
      "    outputs:",
      "      x: ${{ steps.out.outputs.x }}",
      "    steps:",
      "      - id: out",
      '        run: echo "x=hello-from-build" >> "$GITHUB_OUTPUT"',
      "  use:",
      "    needs: build",
      "    if: needs.build.outputs.x == 'hello-from-build'",
      "    runs-on: [self-hosted, graph]",
      '    steps: [ { run: "echo got ${{ needs.build.outputs.x }}" } ]',
      "  unused:",
      "    needs: build",
      "    if: needs.build.outputs.x == 'other'",
      "    runs-on: [self-hosted, graph]",
      "    steps: [ { run: echo never } ]",
    ].join("\n");
    const sha = await pushWorkflow(api, "app", `${wf}\n`);
    const run = await finishedRun(api, "app", sha);
    expect(run.state).toBe("success");
    const jobs = byName(run);
    expect(jobs.use.state).toBe("success");
    expect(jobs.unused).toMatchObject({ state: "skipped", skip_reason: "if: needs.build.outputs.x == 'other' was false" });
    expect(await logOf(server, owner, "app", run.id, jobs.use.id)).toContain("got hello-from-build");
  });

  test("a job released after its need with runs-on: ubuntu-latest says how to run it here", async () => {
    const sha = await pushWorkflow(api, "app", workflow(job("build"), job("gh", { needs: ["build"], runsOn: "ubuntu-latest" })));
    const first = await waitForRun(api, "app", sha, "the pending job");
    const pending = byName(first).gh;
    if (pending.state === "pending") expect(pending.waiting).toBe("waiting for build");
    const run = await waitForRun(api, "app", sha, "gh released", (r) => byName(r).gh.state === "queued");
    expect(run.state).toBe("running");
    expect(byName(run).gh.waiting).toStartWith("no runner here has the label ubuntu-latest: it is GitHub's hosted runner label");
    const page = await (await fetch(`${server.url}/acme/app/runs/${run.id}`, { headers: { cookie: owner.cookie } })).text();
    expect(page).toContain("GitHub&#39;s hosted runner label");
    expect((await api.post(`/v1/orgs/acme/repos/app/runs/${run.id}/cancel`, {})).status).toBe(202);
  });
});
