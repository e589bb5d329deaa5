// Jobs planned once their needs ended, and job-level concurrency on a job with needs (issue 29,
// DECISIONS §5 CI), with the built server and a real `svc runner` agent: GitHub's common dynamic
// matrix (`fromJSON(needs.setup.outputs.matrix)`) runs one job a cell in place of its placeholder,
// what needs it runs after every cell, and a deploy job whose concurrency group reads a need's
// output joins that group when it is released.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Person } from "../../helpers/api.ts";
import type { RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, dbRows, finishedRun, jobsBy, logOf, pushWorkflow, startCiServer } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
  ({ server, owner, api } = ci);
  await ci.machine({ name: "m1", labels: ["dyn"] });
}, 60_000);

afterAll(() => ci?.[Symbol.asyncDispose]());

test("a matrix from a need's output runs one job a cell; what needs it runs after all of them; a deploy's group is read from needs", async () => {
  const sha = await pushWorkflow(
    api,
    "app",
    `on: push
jobs:
  setup:
    runs-on: [self-hosted, dyn]
    outputs:
      matrix: \${{ steps.m.outputs.matrix }}
      env: \${{ steps.m.outputs.env }}
    steps:
      - id: m
        run: |
          echo 'matrix={"os":["linux","mac"]}' >> "$GITHUB_OUTPUT"
          echo 'env=prod' >> "$GITHUB_OUTPUT"
  test:
    needs: setup
    runs-on: [self-hosted, dyn]
    strategy:
      matrix: \${{ fromJSON(needs.setup.outputs.matrix) }}
    steps:
      - run: echo "cell \${{ matrix.os }}"
  deploy:
    needs: [setup, test]
    runs-on: [self-hosted, dyn]
    concurrency: deploy-\${{ needs.setup.outputs.env }}
    steps:
      - run: echo deployed
`,
  );
  const run = await finishedRun(api, "app", sha, 90_000);
  expect(run.state).toBe("success");
  const jobs = jobsBy(run, "key");
  expect(Object.keys(jobs).sort()).toEqual(["deploy", "setup", "test (os=linux)", "test (os=mac)"]);
  for (const os of ["linux", "mac"]) {
    const cell = jobs[`test (os=${os})`];
    expect(cell).toMatchObject({ state: "success", needs: ["setup"] });
    expect(cell.started_at).toBeGreaterThanOrEqual(jobs.setup.finished_at);
    expect(await logOf(server, owner, "app", run.id, cell.id)).toContain(`cell ${os}`);
    expect(jobs.deploy.started_at).toBeGreaterThanOrEqual(cell.finished_at);
  }
  expect(jobs.deploy.state).toBe("success");
  // The deploy joined the group its needs named when it was released.
  expect(dbRows<{ g: string }>(server, "SELECT concurrency_group AS g FROM workflow_jobs WHERE id = ?", jobs.deploy.id)).toEqual([{ g: "deploy-prod" }]);
  const checks = (await api.get(`/v1/orgs/acme/repos/app/commits/${sha}/checks`)).body.checks;
  expect(Object.fromEntries(checks.map((c: any) => [c.key, c.state]))).toEqual({
    setup: "success",
    "test (os=linux)": "success",
    "test (os=mac)": "success",
    deploy: "success",
  });
});
