// Issue 25, the CI rows of the hostile-input probe, each as it was found: a matrix value
// referenced thousands of times (row 2: 100 MB of job specs, lists that parsed them all), a branch
// glob that backtracked for seconds (row 3), and workflows of 20,000 nested brackets (row 8).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, expectError } from "../../helpers/api.ts";
import { type RunningServer, serverDb } from "../../helpers/server.ts";
import { type Api, type CiServer, commitFiles, dbRows, runsOf, startCiServer, until } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ repos: ["bomb", "globs", "nest", "lists"].map((name) => [name, true] as const) });
  ({ server, api } = ci);
}, 60_000);
afterAll(() => ci?.[Symbol.asyncDispose]());

/** The runs of `commit`, once `count` of them exist. */
const runsOfCommit = (repo: string, commit: string, count: number) =>
  until(
    `${count} runs of ${commit}`,
    async () => {
      const list = (await runsOf(api, repo)).filter((r) => r.commit === commit);
      return list.length >= count ? list : null;
    },
    60_000,
  );

describe("row 2: expansion is bounded, lists never read job specs", () => {
  test("a 10 KB matrix value referenced 10×1,000 times fails its run naming the limit; nothing big is stored", async () => {
    const run = Array.from({ length: 1000 }, () => "${{ matrix.v }}").join(" ");
    const steps = Array.from({ length: 10 }, () => `      - run: "${run}"\n`).join("");
    const text = `on: push\njobs:\n  bomb:\n    name: "bomb \${{ matrix.n }}"\n    runs-on: self-hosted\n    strategy: { matrix: { n: [1], v: ["${"x".repeat(10_000)}"] } }\n    steps:\n${steps}`;
    expect(text.length).toBeGreaterThan(150_000);
    const commit = await commitFiles(api, "bomb", { ".svc/workflows/bomb.yml": text });
    const [r] = await runsOfCommit("bomb", commit, 1);
    expect(r).toMatchObject({
      state: "failure",
      jobs: [],
      error: expect.stringMatching(
        /^\.svc\/workflows\/bomb\.yml:\d+:\d+: this job would carry more than 256 KiB of keys, labels, env and steps once expanded$/,
      ),
    });
    const bytes = dbRows<{ bytes: number | null }>(server, "SELECT sum(length(spec)) AS bytes FROM workflow_jobs")[0]?.bytes ?? 0;
    expect(bytes).toBeLessThan(1024 * 1024);
  }, 120_000);

  test("run lists, a run and a job page read the steps column, not the spec (a spec made unreadable changes nothing they show)", async () => {
    const commit = await commitFiles(api, "lists", {
      ".svc/workflows/ci.yml":
        "on: push\njobs:\n  t:\n    runs-on: [self-hosted, nowhere]\n    steps:\n      - name: compile\n        run: make\n      - run: make test\n",
    });
    const [run] = await runsOfCommit("lists", commit, 1);
    const job = run.jobs[0];
    expect(job.steps).toEqual([
      { name: "compile", state: "pending", exit_code: null },
      { name: "make test", state: "pending", exit_code: null },
    ]);
    // Break the spec behind the server's back: anything that parses it would now fail with a 500.
    const db = serverDb(server);
    try {
      db.run("UPDATE workflow_jobs SET spec = '{not json' WHERE id = ?", [job.id]);
    } finally {
      db.close();
    }
    const anon = caller(server);
    expect((await anon.get("/v1/orgs/acme/repos/lists/runs")).body.runs[0].jobs[0].steps).toEqual(job.steps);
    expect((await anon.get(`/v1/orgs/acme/repos/lists/runs/${run.id}`)).body.jobs[0].steps).toEqual(job.steps);
    expect((await fetch(`${server.url}/acme/lists/runs`)).status).toBe(200);
    for (const page of [`/acme/lists/runs/${run.id}`, `/acme/lists/runs/${run.id}/jobs/${job.id}`]) {
      const res = await fetch(server.url + page);
      expect({ page, status: res.status }).toEqual({ page, status: 200 });
      expect(await res.text()).toContain("compile");
    }
  }, 120_000);
});

describe("row 3: branch globs in linear time", () => {
  test("a workflow filter *a*a*…*b and a push to a 60-character branch of a's: evaluated at once, no run", async () => {
    const glob = `${"*a".repeat(15)}*b`;
    const branch = "a".repeat(60);
    // z.yml always runs: once its run exists, a.yml (read first) was judged too.
    const commit = await commitFiles(
      api,
      "globs",
      {
        ".svc/workflows/a.yml": `on: { push: { branches: ["${glob}"] } }\njobs: { a: { runs-on: x, steps: [ { run: y } ] } }\n`,
        ".svc/workflows/z.yml": "on: push\njobs: { z: { runs-on: x, steps: [ { run: y } ] } }\n",
      },
      branch,
    );
    const list = await runsOfCommit("globs", commit, 1);
    expect(list.map((r) => r.workflow)).toEqual([".svc/workflows/z.yml"]);
  }, 60_000);

  test("a protection *a*a*…*b and a commit to a 60-character branch of a's: judged at once", async () => {
    const glob = `${"*a".repeat(15)}*b`;
    expect((await api.put(`/v1/orgs/acme/repos/globs/protections/${encodeURIComponent(glob)}`, {})).status).toBe(200);
    const branch = "a".repeat(59) + "c";
    expect((await api.post("/v1/orgs/acme/repos/globs/commits", { branch, message: "m", operations: [{ op: "put", path: "f", content: "1" }] })).status).toBe(
      201,
    );
    // A name the glob does match is protected (require_change off, so a commit is still allowed, but deletion is not).
    const protectedBranch = `${"a".repeat(59)}b`;
    expect(
      (await api.post("/v1/orgs/acme/repos/globs/commits", { branch: protectedBranch, message: "m", operations: [{ op: "put", path: "f", content: "1" }] }))
        .status,
    ).toBe(201);
    expectError(await api.delete(`/v1/orgs/acme/repos/globs/refs/refs/heads/${protectedBranch}`), 403, /deletion is not allowed/);
  }, 60_000);
});

describe("row 8: YAML nesting is checked before parsing", () => {
  test("ten files of 20,000 nested brackets in one push: ten failed runs naming the nesting limit", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 10; i++) files[`.svc/workflows/n${i}.yml`] = `on: push\njobs: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`;
    const commit = await commitFiles(api, "nest", files);
    const list = await runsOfCommit("nest", commit, 10);
    expect(list.map((r) => r.error).sort()).toEqual(
      Object.keys(files)
        .sort()
        .map((p) => `${p}:2:70: the file nests deeper than 64 levels`),
    );
  }, 60_000);
});
