// `uses:` from repositories on this server (issue 30, DECISIONS §5 "Actions"), end to end with the
// real agent: a JavaScript action of another (public) repository with pre, main, post and state,
// fetched once per machine and commit and reused by the next job; a composite action nesting a
// remote one; a private action repository of another org masked (the 404's message in the log);
// a docker action refused; actions/checkout of another ref and another repository into paths;
// nested composite actions bounded in depth; the resolve call's own answers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { caller, person, type Person } from "../../helpers/api.ts";
import { gitSandbox, repoUrl } from "../../helpers/git.ts";
import { mintToken, type RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, commitFiles, finishedRun, logOf, startCiServer } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;
let toolsV1: string;

/** A JavaScript action: pre saves state, main reads its input and the state, post reads both states. */
const GREET = {
  "greet/action.yml": `name: greet
inputs:
  name:
    required: true
  token:
    default: \${{ github.token }}
outputs:
  said:
    description: what it said
runs:
  using: node24
  pre: pre.js
  main: main.js
  post: post.js
`,
  "greet/pre.js": `require("fs").appendFileSync(process.env.GITHUB_STATE, "started=yes\\n");\n`,
  "greet/main.js": `const fs = require("fs");
const said = "hi " + process.env.INPUT_NAME;
console.log(said + " (state " + process.env.STATE_started + ", token " + (process.env.INPUT_TOKEN ? "given" : "missing") + ")");
console.log("token is " + process.env.INPUT_TOKEN);
fs.appendFileSync(process.env.GITHUB_OUTPUT, "said=" + said + "\\n");
fs.appendFileSync(process.env.GITHUB_STATE, "cleanup=tmp-file\\n");
`,
  "greet/post.js": `console.log("greet post: cleanup=" + process.env.STATE_cleanup + " started=" + process.env.STATE_started);\n`,
  "wrap/action.yml": `name: wrap
inputs:
  who: { default: nobody }
outputs:
  said:
    value: wrapped(\${{ steps.g.outputs.said }})
runs:
  using: composite
  steps:
    - id: g
      uses: acme/tools/greet@v1
      with:
        name: \${{ inputs.who }}
`,
};

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app", ["tools", true]] });
  ({ server, owner, api } = ci);
  toolsV1 = await commitFiles(api, "tools", GREET, "v1");
  await commitFiles(api, "app", { "feature.txt": "on the feature branch\n" }, "feature");
  // Another org with a private action repository the job token may not read.
  const other = await person(server, "other", "owner@other.example", "owner");
  const otherApi = caller(server, other);
  expect((await otherApi.post("/v1/orgs/other/repos", { name: "secret-action" })).status).toBe(201);
  await commitFiles(otherApi, "secret-action", { "action.yml": "runs: { using: node20, main: x.js }\n", "x.js": "" }, "main", "other");
  await ci.machine({ name: "remote", labels: ["remote"] });
}, 90_000);

afterAll(() => ci?.[Symbol.asyncDispose]());

const stepsOf = (job: any) => job.steps.map((s: any) => [s.name, s.state]);

/** Pushes `steps` as a one-job workflow on the machine; answers the finished run, its job and log. */
async function runSteps(steps: string, files: Record<string, string> = {}): Promise<{ run: any; job: any; log: string }> {
  const wf = `on: push\njobs:\n  j:\n    runs-on: [self-hosted, remote]\n    steps:\n${steps}`;
  const sha = await commitFiles(api, "app", { ...files, ".svc/workflows/ci.yml": wf });
  const run = await finishedRun(api, "app", sha, 120_000);
  const job = run.jobs[0];
  return { run, job, log: await logOf(server, owner, "app", run.id, job.id) };
}

describe("uses: from repositories on this server", () => {
  test("a node action of another repository: pre/main/post with state, github.token default masked; fetched once per machine, reused", async () => {
    const steps = `      - id: g
        uses: acme/tools/greet@v1
        with:
          name: svc
      - run: echo "said=\${{ steps.g.outputs.said }}"
`;
    const first = await runSteps(steps);
    expect({ state: first.run.state, log: first.log }).toMatchObject({ state: "success" });
    expect(stepsOf(first.job)).toEqual([
      ["Run acme/tools/greet@v1", "success"],
      ['echo "said=${{ steps.g.outputs.said }}"', "success"],
    ]);
    expect(first.log).toContain(`Fetching acme/tools@${toolsV1.slice(0, 12)} for acme/tools/greet@v1`);
    expect(first.log).toContain("hi svc (state yes, token given)");
    // The default `${{ github.token }}` is the job token, masked in the log.
    expect(first.log).toContain("token is ***");
    expect(first.log).toContain("said=hi svc");
    expect(first.log).toContain("Post Run acme/tools/greet@v1");
    expect(first.log).toContain("greet post: cleanup=tmp-file started=yes");
    // Cached on the machine by commit, without the .git directory (no credentials kept).
    const cached = join(ci.home, "work", "_actions", "acme", "tools", toolsV1);
    expect(existsSync(join(cached, "greet", "action.yml"))).toBe(true);
    expect(existsSync(join(cached, ".git"))).toBe(false);
    expect(readdirSync(join(ci.home, "work", "_actions")).filter((n) => n.startsWith(".tmp-"))).toEqual([]);
    // The next job reuses the copy: no fetch.
    const second = await runSteps(steps);
    expect(second.run.state).toBe("success");
    expect(second.log).toContain("hi svc (state yes, token given)");
    expect(second.log).not.toContain("Fetching acme/tools");
  }, 180_000);

  test("a job that alters the machine's cached copy of an action: the next job finds the tree changed and runs the pristine action", async () => {
    const steps = `      - uses: acme/tools/greet@v1
        with:
          name: svc
`;
    // Fetched (or already cached and verified) by a first job.
    expect((await runSteps(steps)).run.state).toBe("success");
    const cached = join(ci.home, "work", "_actions", "acme", "tools", toolsV1);
    // A job of another org on the same machine writes into the copy.
    const tamper = await runSteps(`      - run: |
          echo 'console.log("tampered main")' > ${cached}/greet/main.js
          echo 'x' > ${cached}/greet/extra.js
`);
    expect(tamper.run.state).toBe("success");
    expect(readFileSync(join(cached, "greet", "main.js"), "utf8")).toContain("tampered main");
    const next = await runSteps(steps);
    expect({ state: next.run.state, log: next.log }).toMatchObject({ state: "success" });
    expect(next.log).toContain(`The cached copy of acme/tools@${toolsV1.slice(0, 12)} differs from the commit's tree`);
    expect(next.log).toContain(`Fetching acme/tools@${toolsV1.slice(0, 12)} for acme/tools/greet@v1`);
    expect(next.log).toContain("hi svc (state yes, token given)");
    expect(next.log).not.toContain("tampered main");
    expect(existsSync(join(cached, "greet", "extra.js"))).toBe(false);
    expect(readdirSync(join(ci.home, "work", "_actions")).filter((n) => n.startsWith(".stale-") || n.startsWith(".tmp-"))).toEqual([]);
    // The pristine copy is trusted again: no fetch.
    const again = await runSteps(steps);
    expect(again.log).toContain("hi svc (state yes, token given)");
    expect(again.log).not.toContain("Fetching acme/tools");
    expect(again.log).not.toContain("differs from the commit's tree");
  }, 180_000);

  test("a composite action nesting a remote node action: its output through the composite's outputs; the nested post runs", async () => {
    const { run, log } = await runSteps(`      - id: w
        uses: acme/tools/wrap@v1
        with: { who: nested }
      - run: echo "wrap=\${{ steps.w.outputs.said }}"
`);
    expect({ state: run.state, log }).toMatchObject({ state: "success" });
    expect(log).toContain("wrap=wrapped(hi nested)");
    expect(log).toContain("greet post: cleanup=tmp-file started=yes");
  }, 120_000);

  test("a private action repository of another org is a masked 404 whose message is in the log; node missing from PATH is named; a docker action is refused", async () => {
    const { run, job, log } = await runSteps(
      `      - uses: other/secret-action@main
        continue-on-error: true
      - uses: acme/nope@v1
        continue-on-error: true
      - uses: acme/tools/greet@v1
        continue-on-error: true
        env: { PATH: /nonexistent }
        with: { name: x }
      - uses: actions/checkout@v4
      - uses: ./.github/actions/docker
`,
      { ".github/actions/docker/action.yml": "name: d\nruns:\n  using: docker\n  image: Dockerfile\n" },
    );
    expect(run.state).toBe("failure");
    expect(stepsOf(job).map((s: string[]) => s[1])).toEqual(["failure", "failure", "failure", "success", "failure"]);
    expect(log).toContain("##[error] action other/secret-action not found on this server: mirror it as a public repository");
    expect(log).toContain("##[error] action acme/nope not found on this server: mirror it as a public repository");
    expect(log).toContain("##[error] acme/tools/greet@v1: JavaScript actions need node on the runner's PATH");
    expect(log).toContain(
      "##[error] ./.github/actions/docker: docker actions are not supported by the svc runner (it has no container runtime); use a composite or JavaScript action, or run the tool in a run: step",
    );
  }, 120_000);

  test("actions/checkout of another ref into a path, another repository into a path, fetch-depth 0, submodules refused", async () => {
    const { run, job, log } = await runSteps(`      - uses: actions/checkout@v4
      - id: f
        uses: actions/checkout@v4
        with:
          ref: feature
          path: sub/feature
      - uses: actions/checkout@v4
        with:
          repository: acme/tools
          ref: v1
          path: tools
          fetch-depth: 0
      - run: |
          cat sub/feature/feature.txt
          echo "feature-commit=\${{ steps.f.outputs.commit }} head=$(git -C sub/feature rev-parse HEAD)"
          test -f tools/greet/action.yml && echo tools-ok
          echo "branches=$(git -C sub/feature rev-parse --abbrev-ref HEAD),$(git -C tools rev-parse --abbrev-ref HEAD),$(git rev-parse --abbrev-ref HEAD)"
          echo "tools-depth=$(git -C tools rev-list --count HEAD)"
          test -f .svc/workflows/ci.yml && echo root-ok
          git -C sub/feature config --local --get-regexp 'extraheader|credential' || echo no-credentials
          git -C sub/feature remote get-url origin
      - uses: actions/checkout@v4
        continue-on-error: true
        with:
          submodules: recursive
      - uses: actions/checkout@v4
        continue-on-error: true
        with:
          path: ../out
`);
    expect({ state: run.state, log }).toMatchObject({ state: "success" });
    expect(stepsOf(job).map((s: string[]) => s[1])).toEqual(["success", "success", "success", "success", "failure", "failure"]);
    expect(log).toContain("on the feature branch");
    const m = /feature-commit=([0-9a-f]{40}) head=([0-9a-f]{40})/.exec(log);
    expect(m?.[1]).toBe(m?.[2]);
    expect(log).toContain("tools-ok");
    expect(log).toContain("branches=feature,v1,main");
    expect(log).toContain("tools-depth=1");
    expect(log).toContain("root-ok");
    expect(log).toContain("no-credentials");
    // git's own chatter (hints, detached-HEAD advice) stays out of the log.
    expect(log).not.toMatch(/hint:|detached HEAD|Initialized empty/);
    expect(log).toContain(`${server.url}/acme/app.git`);
    expect(log).toContain("submodules: recursive is not supported by the svc runner");
    expect(log).toContain('actions/checkout: path "../out" leaves the workspace');
  }, 120_000);

  test("composite actions nest at most 10 deep", async () => {
    const { run, log } = await runSteps(
      `      - uses: actions/checkout@v4
      - uses: ./.github/actions/rec
`,
      {
        ".github/actions/rec/action.yml": `name: rec
runs:
  using: composite
  steps:
    - shell: bash
      run: echo level
    - uses: ./.github/actions/rec
`,
      },
    );
    expect(run.state).toBe("failure");
    expect(log).toContain("./.github/actions/rec: composite actions nest deeper than 10 levels");
    expect(log.split("\n").filter((l) => l === "level").length).toBe(10);
  }, 120_000);

  test("the resolve call: the job token only, bounded input, a sha, HEAD, a full ref; a missing ref named", async () => {
    // Without a running job's token it is a 401 (no credential) or 404 (another credential).
    const anon = await fetch(`${server.url}/v1/runner/jobs/nojob/actions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uses: "acme/tools@v1" }),
    });
    expect(anon.status).toBe(401);
    const other = await api.post("/v1/runner/jobs/nojob/actions", { uses: "acme/tools@v1" });
    expect([401, 404]).toContain(other.status);
    // A short name that is both a branch and a tag names the tag (git's rule): branch "both" has a newer commit, tag "both" is v1's.
    const bothBranch = await commitFiles(api, "tools", { "both.txt": "the branch\n" }, "both");
    using g = gitSandbox();
    const token = await mintToken(server, owner.cookie, "acme", { scopes: ["repo:write"], label: "tagger" });
    const dir = g.path("tools");
    await g.ok(["clone", "-q", repoUrl(server, "acme", "tools", token), dir]);
    await g.ok(["push", "-q", "origin", `${toolsV1}:refs/tags/both`], { cwd: dir });
    const toolsTree = (await g.ok(["rev-parse", `${toolsV1}^{tree}`], { cwd: dir })).trim();
    await g.ok(["fetch", "-q", "origin", "both"], { cwd: dir });
    const bothTree = (await g.ok(["rev-parse", `${bothBranch}^{tree}`], { cwd: dir })).trim();
    // With the running job's token (github.token), from a step.
    const long = `acme/tools@${"x".repeat(400)}`;
    const { run, log } = await runSteps(`      - shell: bash
        run: |
          ask() { curl -s -o /tmp/answer.$$ -w "%{http_code}" -X POST -H "authorization: Bearer \${{ github.token }}" -H 'content-type: application/json' \\
            "$GITHUB_SERVER_URL/v1/runner/jobs/$SVC_JOB_ID/actions" -d "{\\"uses\\":\\"$1\\"}"; echo " $1 => $(cat /tmp/answer.$$)"; }
          ask acme/tools/greet@${toolsV1}
          ask acme/tools@HEAD
          ask acme/tools@refs/heads/v1
          ask acme/tools@nope
          ask acme/tools@both
          ask acme/tools@refs/heads/both
          ask acme/tools/../x@v1
          ask ${long}
`);
    expect({ state: run.state, log }).toMatchObject({ state: "success" });
    const url = `${server.url}/acme/tools.git`;
    expect(log).toContain(
      `200 acme/tools/greet@${toolsV1} => {"repo":"acme/tools","commit":"${toolsV1}","clone_url":"${url}","path":"greet","ref":null,"tree":"${toolsTree}"}`,
    );
    expect(log).toMatch(
      /200 acme\/tools@HEAD => \{"repo":"acme\/tools","commit":"[0-9a-f]{40}","clone_url":"[^"]+","path":"","ref":"refs\/heads\/[^"]+","tree":"[0-9a-f]{40}"\}/,
    );
    expect(log).toContain(`200 acme/tools@refs/heads/v1 => {"repo":"acme/tools","commit":"${toolsV1}"`);
    expect(log).toContain('404 acme/tools@nope => {"error":"action acme/tools: no branch, tag or commit \\"nope\\""}');
    expect(log).toContain(
      `200 acme/tools@both => {"repo":"acme/tools","commit":"${toolsV1}","clone_url":"${url}","path":"","ref":"refs/tags/both","tree":"${toolsTree}"}`,
    );
    expect(log).toContain(
      `200 acme/tools@refs/heads/both => {"repo":"acme/tools","commit":"${bothBranch}","clone_url":"${url}","path":"","ref":"refs/heads/both","tree":"${bothTree}"}`,
    );
    expect(log).toContain("422 acme/tools/../x@v1 =>");
    expect(log).toMatch(/4\d\d acme\/tools@x{400} =>/);
  }, 120_000);
});
