// The run page's job graph and the "Run workflow" form over HTTP against the real server (issue 29
// part E), with a machine driven through the runner API (raw calls: the test decides each verdict):
// jobs in columns by level with their `if`, skip reasons and needs; `?attempt=`; the dispatch form
// drawn from the default branch's workflow_dispatch inputs, its 422 drawn back per input, and a
// dispatch landing on the new run.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, person, type Person } from "../../../helpers/api.ts";
import { client, startServer, type RunningServer } from "../../../helpers/server.ts";
import { commitFiles, registrationToken, until } from "../../ci/helpers.ts";

let server: RunningServer;
let owner: Person;
let viewer: Person;
let api: ReturnType<typeof caller>;
let credential = "";
let run: any;

const CI = `on: push
jobs:
  build:
    runs-on: [self-hosted, graph]
    steps:
      - run: echo build
  lint:
    runs-on: [self-hosted, graph]
    steps:
      - run: echo lint
  test:
    needs: build
    runs-on: [self-hosted, graph]
    steps:
      - run: echo test
  deploy:
    needs: [test]
    if: github.ref == 'refs/heads/main'
    runs-on: [self-hosted, graph]
    steps:
      - run: echo deploy
  cleanup:
    needs: [test]
    if: always()
    runs-on: [self-hosted, graph]
    steps:
      - run: echo cleanup
`;

// Nobody runs these jobs (no machine has the label): the test looks at the run, not its end.
const DEPLOY = `name: Deploy <it>
on:
  workflow_dispatch:
    inputs:
      target:
        description: where to deploy
        required: true
      dry:
        type: boolean
        default: true
      level:
        type: choice
        options: [info, debug]
        default: info
jobs:
  go:
    runs-on: [self-hosted, nowhere]
    steps:
      - run: echo go
`;

async function get(path: string, who?: { cookie: string }) {
  const res = await fetch(server.url + path, { headers: who ? { cookie: who.cookie } : {}, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function post(path: string, who: { cookie: string }, fields: [string, string][]) {
  const csrf = /name="csrf" value="([^"]+)"/.exec((await get("/", who)).text)![1]!;
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { cookie: who.cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams([...fields, ["csrf", csrf]]).toString(),
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

/** Claims and ends jobs of `runId` until it finishes: `verdicts` by workflow job id (default success). */
async function work(runId: string, verdicts: Record<string, string>): Promise<any> {
  const runner = client(server, { token: credential });
  for (;;) {
    const now = (await api.get(`/v1/orgs/acme/repos/app/runs/${runId}`)).body;
    if (["success", "failure", "cancelled"].includes(now.state)) return now;
    const c = await runner.post("/v1/runners/claim");
    if (c.status !== 200) continue;
    const claimed = (await api.get(`/v1/orgs/acme/repos/app/runs/${runId}`)).body.jobs.find((j: any) => j.id === c.body.job_id);
    const done = await client(server, { token: c.body.token }).post(`/v1/runner/jobs/${c.body.job_id}/complete`, {
      verdict: verdicts[claimed?.name] ?? "success",
    });
    expect(done.status).toBe(204);
  }
}

beforeAll(async () => {
  server = await startServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "1000" } });
  owner = await person(server, "acme", "owner@acme.example", "owner");
  viewer = await person(server, "acme", "viewer@acme.example", "viewer");
  api = caller(server, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
  const reg = await client(server, { token: await registrationToken(api) }).post("/v1/runners/register", {
    name: "graph-runner",
    os: "linux",
    arch: "x64",
    labels: ["graph"],
  });
  expect(reg.status).toBe(201);
  credential = reg.body.credential;
  const sha = await commitFiles(api, "app", { ".svc/workflows/ci.yml": CI, ".svc/workflows/deploy.yml": DEPLOY });
  const created = await until("the push run", async () => (await api.get("/v1/orgs/acme/repos/app/runs")).body.runs.find((r: any) => r.commit === sha));
  run = await work(created.id, { test: "failure" });
}, 90_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

describe("the job graph", () => {
  test("jobs in columns by level; each with its needs, its if and why it was skipped", async () => {
    expect(run.state).toBe("failure");
    const page = await get(`/acme/app/runs/${run.id}`, viewer);
    expect(page.status).toBe(200);
    const id = (name: string) => run.jobs.find((j: any) => j.name === name).id;
    const stages = [...page.text.matchAll(/<ol class="stage" aria-label="Stage (\d) of (\d)">(.*?)<\/ol>/gs)].map((m) =>
      [...m[3]!.matchAll(/id="card-(\w+)"/g)].map((c) => c[1]),
    );
    expect(stages).toEqual([[id("build"), id("lint")], [id("test")], [id("deploy"), id("cleanup")]]);
    expect(page.text).toContain(`<code class="data">if: github.ref == &#39;refs/heads/main&#39;</code></p><p class="skip">skipped: needs test failed</p>`);
    expect(page.text).toContain(`<code class="data">if: always()</code>`);
    expect(page.text).toContain(`<p class="muted">needs build</p>`);
    expect(page.text).toContain(`<a href="/acme/app/runs/${run.id}/jobs/${id("deploy")}">deploy</a> <span class="state state-skipped">skipped</span>`);
    // A skipped job's own page is finished: no live log to follow.
    const skipped = await get(`/acme/app/runs/${run.id}/jobs/${id("deploy")}`, viewer);
    expect(skipped.text).toContain(`data-live="0"`);
  });

  test("?attempt=: the first attempt is the run's one; an unknown or malformed attempt is the 404 page, as the API", async () => {
    expect((await get(`/acme/app/runs/${run.id}?attempt=1`, viewer)).status).toBe(200);
    for (const a of ["2", "0", "x", "-1"]) {
      const api404 = await caller(server, viewer).get(`/v1/orgs/acme/repos/app/runs/${run.id}?attempt=${a}`);
      expect({ a, page: (await get(`/acme/app/runs/${run.id}?attempt=${a}`, viewer)).status }).toEqual({ a, page: api404.status });
    }
  });
});

describe("re-running from the run page", () => {
  test("writers see both buttons on a finished run with a failure; readers none, and their post is the API's 403", async () => {
    const page = await get(`/acme/app/runs/${run.id}`, owner);
    expect(page.text).toContain(`action="/acme/app/runs/${run.id}/rerun"`);
    expect(page.text).toContain(`<input type="hidden" name="failed_only" value="1"><button type="submit">Re-run failed jobs</button>`);
    expect(page.text).toContain(`<input type="hidden" name="failed_only" value="0"><button type="submit">Re-run all jobs</button>`);
    expect((await get(`/acme/app/runs/${run.id}`, viewer)).text).not.toContain("Re-run");
    const refused = await post(`/acme/app/runs/${run.id}/rerun`, viewer, [["failed_only", "1"]]);
    expect(refused.status).toBe(403);
    expect((await api.get(`/v1/orgs/acme/repos/app/runs/${run.id}`)).body.attempt).toBe(1);
  });

  test("re-run failed jobs lands on the new attempt: the switcher, the kept jobs linking to the earlier attempt's, no buttons until it ends", async () => {
    const r = await post(`/acme/app/runs/${run.id}/rerun`, owner, [["failed_only", "1"]]);
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: `/acme/app/runs/${run.id}?attempt=2` });
    const page = await get(r.location!, owner);
    expect(page.text).toContain(`<a href="/acme/app/runs/${run.id}?attempt=1">Attempt 1</a>`);
    expect(page.text).toContain(`<a href="/acme/app/runs/${run.id}" aria-current="page">Attempt 2</a>`);
    const oldBuild = run.jobs.find((j: any) => j.name === "build").id;
    expect(page.text).toContain(`<a href="/acme/app/runs/${run.id}/jobs/${oldBuild}">the earlier attempt's job</a>`);
    expect(page.text).not.toContain("Re-run");
    // The earlier attempt's job still has its page (the run at that job's attempt).
    expect((await get(`/acme/app/runs/${run.id}/jobs/${oldBuild}`, owner)).status).toBe(200);
    // A second re-run while the attempt runs: the service's 409 on the run page.
    const busy = await post(`/acme/app/runs/${run.id}/rerun`, owner, [["failed_only", "0"]]);
    expect(busy.status).toBe(409);
    expect(busy.text).toContain("the run is not finished");

    const second = await work(run.id, {});
    expect({ attempt: second.attempt, state: second.state }).toEqual({ attempt: 2, state: "success" });
    const first = await get(`/acme/app/runs/${run.id}?attempt=1`, owner);
    expect(first.text).toContain(`<a href="/acme/app/runs/${run.id}?attempt=1" aria-current="page">Attempt 1</a>`);
    expect(first.text).not.toContain("Re-run");
    const latest = await get(`/acme/app/runs/${run.id}`, owner);
    expect(latest.text).toContain("Re-run all jobs");
    expect(latest.text).not.toContain("Re-run failed jobs");
  });
});

describe("the Run workflow form", () => {
  test("writers get a form per workflow_dispatch workflow with its inputs by type; readers none", async () => {
    const page = await get("/acme/app/runs", owner);
    expect(page.text).toContain(`<summary>Run Deploy &lt;it&gt; <span class="muted">deploy.yml</span></summary>`);
    expect(page.text).not.toContain("<summary>Run ci.yml");
    expect(page.text).toContain(`<input type="text" name="input.target" value="" required aria-describedby="dispatch-0-0-hint">`);
    expect(page.text).toContain(`<input type="checkbox" name="input.dry" value="true" checked>`);
    expect(page.text).toContain(`<option value="info" selected>info</option>`);
    expect(page.text).toContain(`<option value="main" selected>main</option>`);
    expect((await get("/acme/app/runs", viewer)).text).not.toContain("Run workflow");
  });

  test("a refused dispatch is the list again, at 422, with the form open and the input's message", async () => {
    const r = await post("/acme/app/runs/dispatch", owner, [
      ["workflow", ".svc/workflows/deploy.yml"],
      ["ref", "main"],
      ["input.target", ""],
      ["input.level", "debug"],
      ["booleans", `["dry"]`],
    ]);
    expect(r.status).toBe(422);
    expect(r.text).toContain(`<details class="dispatch" open>`);
    expect(r.text).toMatch(/<p class="error" id="dispatch-0-0-error">[^<]*required[^<]*<\/p>/);
    expect(r.text).toContain(`<option value="debug" selected>debug</option>`);
    expect(r.text).toContain(`<input type="checkbox" name="input.dry" value="true">`);
    // A reader's post is the API's 403, on the list with its message.
    const refused = await post("/acme/app/runs/dispatch", viewer, [["workflow", "deploy.yml"]]);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("cannot write to it");
  });

  test("a dispatch lands on the new run, with the inputs typed as the API has them", async () => {
    const r = await post("/acme/app/runs/dispatch", owner, [
      ["workflow", ".svc/workflows/deploy.yml"],
      ["ref", "main"],
      ["input.target", "prod <1>"],
      ["input.level", "debug"],
      ["booleans", `["dry"]`],
    ]);
    expect(r.status).toBe(303);
    const id = /^\/acme\/app\/runs\/(\w+)$/.exec(r.location ?? "")?.[1];
    expect(id).toBeTruthy();
    const made = (await api.get(`/v1/orgs/acme/repos/app/runs/${id}`)).body;
    expect({ event: made.event, inputs: made.inputs }).toEqual({ event: "workflow_dispatch", inputs: { target: "prod <1>", dry: false, level: "debug" } });
    const page = await get(r.location!, owner);
    expect(page.text).toContain(`<code class="data">target=prod &lt;1&gt;</code>`);
    expect(page.text).toContain(`<dt>By</dt><dd><a href="/${owner.handle}">${owner.handle}</a></dd>`);
  });
});
