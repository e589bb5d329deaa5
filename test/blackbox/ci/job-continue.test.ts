// Job-level continue-on-error and plan-time step names end to end (issue 29), with the built
// server and a real `svc runner` agent: a job under `continue-on-error: ${{ vars.LAX == 'yes' }}`
// (a repository variable read when the run is planned) fails, stays failed itself, and its run
// succeeds while the job that needs it runs and reads `needs.flaky.result == 'success'`; step
// names show plan-time expressions expanded and runtime ones as written.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Api, type CiServer, finishedRun, jobsBy, pushWorkflow, startCiServer } from "./helpers.ts";

let ci: CiServer;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
  api = ci.api;
  await ci.machine({ name: "m1", labels: ["coe"] });
}, 60_000);

afterAll(() => ci?.[Symbol.asyncDispose]());

test("a failed job under continue-on-error stays failed; its run succeeds and what needs it runs and sees success", async () => {
  expect((await api.put("/v1/orgs/acme/repos/app/variables/LAX", { value: "yes" })).status).toBeLessThan(300);
  const sha = await pushWorkflow(
    api,
    "app",
    `on: push
jobs:
  flaky:
    runs-on: [self-hosted, coe]
    continue-on-error: \${{ vars.LAX == 'yes' }}
    strategy: { matrix: { os: [linux] } }
    steps:
      - name: fail on \${{ matrix.os }} at \${{ github.ref_name }}
        run: exit 3
  after:
    runs-on: [self-hosted, coe]
    needs: [flaky]
    steps:
      - name: saw \${{ needs.flaky.result }}
        run: test "\${{ needs.flaky.result }}" = success
`,
  );
  const run = await finishedRun(api, "app", sha);
  expect(run.state).toBe("success");
  const jobs = jobsBy(run);
  expect(jobs.flaky).toMatchObject({ state: "failure", error: 'step "fail on linux at main" failed with exit code 3' });
  expect(jobs.flaky.steps.map((s: { name: string }) => s.name)).toEqual(["fail on linux at main"]);
  expect(jobs.after).toMatchObject({ state: "success" });
  // What only the runner knows stays as written.
  expect(jobs.after.steps.map((s: { name: string }) => s.name)).toEqual(["saw ${{ needs.flaky.result }}"]);
  // The job's own check stays failed.
  const checks = (await api.get(`/v1/orgs/acme/repos/app/commits/${sha}/checks`)).body.checks;
  expect(checks.find((c: { key: string }) => c.key.startsWith("flaky"))?.state).toBe("failure");
});
