// Routing (SPEC §4.1 claim rules 2 and 5): labels, the group's repositories and allow_public,
// the org's self-hosted policy (re-checked at claim time), hosted jobs and instance runners,
// `hosted: disabled`, and malformed workflows that fail their run without breaking the push.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, type RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, claimJob, commitFiles, dbRows, registerRaw, startCiServer, until } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({
    env: { SVC_RUNNER_CLAIM_WAIT_MS: "600" },
    repos: [
      ["api", false],
      ["web", false],
      ["site", true],
      ["lint", false],
    ],
  });
  ({ server, api } = ci);
});
afterAll(() => ci?.[Symbol.asyncDispose]());

/** A machine registered with a raw call; answers its credential. */
const machine = async (name: string, labels: string[], group?: string): Promise<string> => (await registerRaw(server, api, name, labels, group)).credential;
const claim = (credential: string) => claimJob(server, credential);
const wf = (labels: string, job = "j") => ({
  [`.svc/workflows/${job}.yml`]: `on: push\njobs:\n  ${job}:\n    runs-on: [${labels}]\n    steps:\n      - run: echo\n`,
});

/** Ends a claimed job so the machine is free again. */
async function finish(c: { body: { job_id: string; token: string } }) {
  expect((await client(server, { token: c.body.token }).post(`/v1/runner/jobs/${c.body.job_id}/complete`, { verdict: "success" })).status).toBe(204);
}

describe("routing", () => {
  test("runs-on must be a subset of the machine's labels", async () => {
    const plain = await machine("plain", ["cpu"]);
    const gpu = await machine("gpu-box", ["gpu", "cpu"]);
    await commitFiles(api, "api", wf("self-hosted, gpu"));
    expect((await claim(plain)).status).toBe(204);
    const c = await claim(gpu);
    expect(c.status).toBe(200);
    await finish(c);
  });

  test("a group with selected repositories takes only their jobs; allow_public gates public repositories; changes apply at claim time", async () => {
    const group = await api.post("/v1/orgs/acme/runner-groups", { name: "restricted", repo_access: "selected", repos: ["api", "site"] });
    expect(group.status).toBe(201);
    const m = await machine("restricted-box", ["rx"], "restricted");
    await commitFiles(api, "web", wf("self-hosted, rx"));
    expect((await claim(m)).status).toBe(204);
    await commitFiles(api, "site", wf("self-hosted, rx", "pub"));
    expect((await claim(m)).status).toBe(204);
    // allow_public admits the public repository's job, re-checked while the machine waits.
    const waiting = claim(m);
    expect((await api.patch(`/v1/orgs/acme/runner-groups/${group.body.id}`, { allow_public: true })).status).toBe(200);
    const c = await waiting;
    expect(c.status).toBe(200);
    const d = await client(server, { token: c.body.token }).get(`/v1/runner/jobs/${c.body.job_id}`);
    expect(d.body.repo).toBe("acme/site");
    await finish(c);
    // Adding web to the group's repositories lets the machine take web's job.
    await api.patch(`/v1/orgs/acme/runner-groups/${group.body.id}`, { repos: ["api", "site", "web"] });
    const w = await claim(m);
    expect(w.status).toBe(200);
    expect((await client(server, { token: w.body.token }).get(`/v1/runner/jobs/${w.body.job_id}`)).body.repo).toBe("acme/web");
    await finish(w);
  });

  test("the org policy: self_hosted disabled routes nothing; selected routes only its repositories", async () => {
    const m = await machine("policy-box", ["px"]);
    await commitFiles(api, "lint", wf("self-hosted, px"));
    await api.patch("/v1/orgs/acme/runner-policy", { self_hosted: "disabled" });
    expect((await claim(m)).status).toBe(204);
    await api.patch("/v1/orgs/acme/runner-policy", { self_hosted: "selected", self_hosted_repos: ["api"] });
    expect((await claim(m)).status).toBe(204);
    const waiting = claim(m);
    await api.patch("/v1/orgs/acme/runner-policy", { self_hosted_repos: ["api", "lint"] });
    const c = await waiting;
    expect(c.status).toBe(200);
    await finish(c);
    await api.patch("/v1/orgs/acme/runner-policy", { self_hosted: "all", self_hosted_repos: [] });
  });
});

describe("hosted and self-hosted", () => {
  test("a job without self-hosted goes to an instance runner, never to the org's machines; its minutes count", async () => {
    const own = await machine("own", ["ubuntu-latest"]);
    const minted = await server.cli(["runner-token", "--hosted"]);
    expect(minted.code).toBe(0);
    const t = JSON.parse(minted.stdout);
    expect(t).toMatchObject({ group: null });
    expect(t.token).toMatch(/^svcg_/);
    const reg = await client(server, { token: t.token }).post("/v1/runners/register", {
      name: "hosted-1",
      os: "linux",
      arch: "x64",
      labels: ["ubuntu-latest"],
    });
    expect(reg.status).toBe(201);
    expect(reg.body).toMatchObject({ org: null, group: null, labels: ["linux", "x64", "ubuntu-latest"] });
    // Instance runners are not the org's machines.
    expect((await api.get("/v1/orgs/acme/runners")).body.runners.map((r: any) => r.name)).not.toContain("hosted-1");

    const sha = await commitFiles(api, "api", wf("ubuntu-latest", "hosted"));
    expect((await claim(own)).status).toBe(204);
    const c = await claim(reg.body.credential);
    expect(c.status).toBe(200);
    await finish(c);
    const run = (await api.get("/v1/orgs/acme/repos/api/runs")).body.runs.find((r: any) => r.commit === sha && r.workflow.endsWith("/hosted.yml"));
    expect(run.jobs[0]).toMatchObject({ key: "hosted", runs_on: ["ubuntu-latest"], state: "success", runner: { name: "hosted-1" } });
    const minutes = dbRows<{ hosted: number; minutes: number }>(server, "SELECT hosted, minutes FROM ci_minutes WHERE job_id = ?", run.jobs[0].id);
    expect(minutes).toEqual([{ hosted: 1, minutes: 1 }]);
  });

  test("policy hosted disabled: a hosted job fails its run at trigger time with claim rule 5's message", async () => {
    await api.patch("/v1/orgs/acme/runner-policy", { hosted: "disabled" });
    const sha = await commitFiles(api, "web", { ...wf("ubuntu-latest", "cloud"), ...wf("self-hosted", "local") });
    const runs = await until("both runs", async () => {
      const all = (await api.get("/v1/orgs/acme/repos/web/runs")).body.runs.filter((r: any) => r.commit === sha && /(cloud|local)\.yml$/.test(r.workflow));
      return all.length === 2 ? all : null;
    });
    const cloud = runs.find((r: any) => r.workflow.endsWith("cloud.yml"));
    const message = "hosted runners are disabled for the organization acme; runs-on must name self-hosted labels";
    expect(cloud).toMatchObject({ state: "failure", error: message, jobs: [{ state: "failure", error: message }] });
    expect(runs.find((r: any) => r.workflow.endsWith("local.yml")).state).toBe("queued");
    await api.patch("/v1/orgs/acme/runner-policy", { hosted: "allowed" });
  });
});

describe("malformed workflows", () => {
  test("a bad file becomes a failed run naming file, line and problem; the push and the good files are unaffected", async () => {
    const sha = await commitFiles(api, "lint", {
      ".svc/workflows/a-syntax.yml": "on: push\njobs:\n  x: [unclosed\n",
      ".svc/workflows/b-key.yml": "on: push\njobs:\n  x:\n    runs-on: self-hosted\n    stepz:\n      - run: echo\n",
      ".svc/workflows/c-expr.yml": "on: push\njobs:\n  x:\n    runs-on: self-hosted\n    steps:\n      - run: echo ${{ secret.TOKEN }}\n",
      ".svc/workflows/d-good.yml": "on: push\njobs:\n  fine:\n    runs-on: self-hosted\n    steps:\n      - run: echo\n",
      ".svc/workflows/f-needs.yml":
        "on: push\njobs:\n  a:\n    runs-on: self-hosted\n    steps: [ { run: echo } ]\n  b:\n    needs: a\n    runs-on: self-hosted\n    steps: [ { run: echo } ]\n",
      ".svc/workflows/e-other-branch.yml": "on:\n  push:\n    branches: [release/*]\njobs:\n  x:\n    runs-on: self-hosted\n    steps:\n      - run: echo\n",
    });
    const runs = await until("five runs", async () => {
      const all = (await api.get("/v1/orgs/acme/repos/lint/runs")).body.runs.filter((r: any) => r.commit === sha && !r.workflow.endsWith("/j.yml"));
      return all.length === 5 ? all : null;
    });
    const by = Object.fromEntries(runs.map((r: any) => [r.workflow.split("/").pop(), r]));
    expect(by["a-syntax.yml"]).toMatchObject({ state: "failure", jobs: [] });
    expect(by["a-syntax.yml"].error).toMatch(/^\.svc\/workflows\/a-syntax\.yml:\d+:\d+: .+/);
    expect(by["b-key.yml"].error).toBe(
      '.svc/workflows/b-key.yml:5:5: unknown key "stepz" in jobs.x (expected name, needs, if, runs-on, strategy, env, defaults, outputs, timeout-minutes, continue-on-error, concurrency, permissions, environment, steps, uses, with, secrets)',
    );
    expect(by["c-expr.yml"].error).toMatch(/^\.svc\/workflows\/c-expr\.yml:6:23: unknown context "secret"/);
    expect(by["d-good.yml"]).toMatchObject({ state: "queued", error: null, jobs: [{ key: "fine", state: "queued" }] });
    expect(by["e-other-branch.yml"]).toBeUndefined();
    // Issue 29: b waits for a (pending, never claimable) instead of running before it.
    expect(by["f-needs.yml"]).toMatchObject({
      state: "queued",
      error: null,
      jobs: [
        { key: "a", state: "queued", needs: [] },
        { key: "b", name: "b", state: "pending", needs: ["a"], waiting: "waiting for a" },
      ],
    });
  });
});
