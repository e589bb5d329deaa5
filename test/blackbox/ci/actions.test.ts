// `uses:` steps end to end with the real agent (issue 30, DECISIONS §5 "Actions"): the built-in
// actions/checkout (the job then starts with an empty workspace), a local JavaScript action with
// pre, main and post (its state handed from phase to phase, its post phase run after the last
// step), and a local composite action with inputs and outputs read by a later step and by the
// job's outputs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Person } from "../../helpers/api.ts";
import type { RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, commitFiles, dbRows, finishedRun, logOf, startCiServer } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
  ({ server, owner, api } = ci);
  await ci.machine({ name: "actor", labels: ["actions"] });
}, 90_000);

afterAll(() => ci?.[Symbol.asyncDispose]());

const stepsOf = (job: any) => job.steps.map((s: any) => [s.name, s.state]);

/** A JavaScript action with pre, main and post (node20), each phase showing what it got. */
const NODE_ACTION = {
  ".github/actions/hello/action.yml": `name: hello
inputs:
  who:
    description: whom to greet
    default: \${{ github.repository }}
  Extra Word:
    default: plain
outputs:
  greeting:
    description: the greeting
runs:
  using: node20
  pre: pre.js
  main: main.js
  post: post.js
  post-if: always()
`,
  ".github/actions/hello/pre.js": `const fs = require("fs");
fs.appendFileSync(process.env.GITHUB_STATE, "fromPre=pre-value\\n");
console.log("pre ran");
`,
  ".github/actions/hello/main.js": `const fs = require("fs");
const who = process.env.INPUT_WHO;
console.log("main: who=" + who + " extra=" + process.env["INPUT_EXTRA_WORD"] + " state=" + process.env.STATE_fromPre);
fs.appendFileSync(process.env.GITHUB_OUTPUT, "greeting=hello-" + who + "\\n");
console.log("::set-output name=legacy::old-style");
console.log("::save-state name=fromMain::main-value");
fs.appendFileSync(process.env.GITHUB_ENV, "FROM_ACTION=exported\\n");
`,
  ".github/actions/hello/post.js": `console.log("post saw " + process.env.STATE_fromMain + " and " + process.env.STATE_fromPre);
`,
};

/** A composite action: an input with a default, an output from one of its steps, $GITHUB_ENV for later steps. */
const COMPOSITE_ACTION = {
  ".github/actions/comp/action.yml": `name: comp
inputs:
  word:
    default: dflt
  suffix:
    default: "-\${{ github.ref_name }}"
outputs:
  shout:
    value: \${{ steps.up.outputs.v }}\${{ inputs.suffix }}
runs:
  using: composite
  steps:
    - id: up
      shell: bash
      run: echo "v=$(echo '\${{ inputs.word }}' | tr a-z A-Z)" >> "$GITHUB_OUTPUT"
    - name: where
      shell: bash
      env:
        INNER: inner-\${{ steps.up.outputs.v }}
      run: |
        test "$GITHUB_ACTION_PATH" = "\${{ github.action_path }}" && echo "action-path-ok"
        test -f "$GITHUB_ACTION_PATH/action.yml" && echo "action-file-ok"
        echo "inner=$INNER"
        echo "COMP_ENV=from-composite" >> "$GITHUB_ENV"
    - if: \${{ inputs.word == 'never' }}
      shell: bash
      run: echo should-not-run
`,
};

describe("uses: steps", () => {
  test("built-in checkout (no implicit checkout), a local node action with pre/post and state, a local composite with inputs and outputs", async () => {
    const wf = `on: push
jobs:
  a:
    runs-on: [self-hosted, actions]
    outputs:
      shout: \${{ steps.c.outputs.shout }}
      greeting: \${{ steps.h.outputs.greeting }}
    steps:
      - run: ls -A | wc -l | sed 's/^ */files-before=/'
      - uses: actions/checkout@v4
        id: co
      - id: h
        uses: ./.github/actions/hello
        with:
          who: \${{ github.actor }}-world
      - id: c
        uses: ./.github/actions/comp
        with:
          word: hello
      - name: later
        run: |
          echo "greeting=\${{ steps.h.outputs.greeting }} legacy=\${{ steps.h.outputs.legacy }}"
          echo "shout=\${{ steps.c.outputs.shout }} env=$COMP_ENV action=$FROM_ACTION"
          echo "checkout=\${{ steps.co.outputs.commit }}"
          echo "branch=$(git rev-parse --abbrev-ref HEAD)"
`;
    const sha = await commitFiles(api, "app", { ...NODE_ACTION, ...COMPOSITE_ACTION, ".svc/workflows/ci.yml": wf });
    const run = await finishedRun(api, "app", sha, 120_000);
    const job = run.jobs[0];
    const log = await logOf(server, owner, "app", run.id, job.id);
    expect({ state: run.state, log }).toMatchObject({ state: "success" });
    expect(stepsOf(job)).toEqual([
      ["ls -A | wc -l | sed 's/^ */files-before=/'", "success"],
      ["Run actions/checkout@v4", "success"],
      ["Run ./.github/actions/hello", "success"],
      ["Run ./.github/actions/comp", "success"],
      ["later", "success"],
    ]);
    // The workspace starts empty when the job checks out itself.
    expect(log).not.toContain("##[checkout]");
    expect(log).toContain("files-before=0");
    expect(log).toContain(`checkout=${sha}`);
    expect(log).toContain("branch=main");
    // The node action: pre before main, state from pre to main and from main (::save-state) to post.
    expect(log).toContain("pre ran");
    expect(log).toContain("main: who=owner-world extra=plain state=pre-value");
    expect(log).toContain("greeting=hello-owner-world legacy=old-style");
    expect(log.indexOf("pre ran")).toBeLessThan(log.indexOf("main: who="));
    // The composite: input given, default templated, its output and env for later steps.
    expect(log).toContain("action-path-ok");
    expect(log).toContain("action-file-ok");
    expect(log).toContain("inner=inner-HELLO");
    expect(log).not.toContain("should-not-run\n");
    expect(log).toContain("shout=HELLO-main env=from-composite action=exported");
    // The post phase ran after the last step.
    expect(log).toContain("Post Run ./.github/actions/hello");
    expect(log).toContain("post saw main-value and pre-value");
    expect(log.indexOf("post saw")).toBeGreaterThan(log.indexOf("shout=HELLO"));
    const [row] = dbRows<{ outputs: string }>(server, "SELECT outputs FROM workflow_jobs WHERE id = ?", job.id);
    expect(JSON.parse(row!.outputs)).toEqual({ shout: "HELLO-main", greeting: "hello-owner-world" });
  }, 120_000);

  test("post phases: last registered first; post-if success() skipped once the job failed; a failing post phase fails the job", async () => {
    const post = (name: string, postIf: string, code: number) => ({
      [`.github/actions/${name}/action.yml`]: `name: ${name}\nruns:\n  using: node20\n  main: main.js\n  post: post.js\n  post-if: ${postIf}\n`,
      [`.github/actions/${name}/main.js`]: `console.log("main of ${name}");\n`,
      [`.github/actions/${name}/post.js`]: `console.log("post of ${name}"); process.exit(${code});\n`,
    });
    const wf = (fail: boolean) => `on: push
jobs:
  p:
    runs-on: [self-hosted, actions]
    steps:
      - uses: actions/checkout@v4
      - name: always
        uses: ./.github/actions/always
      - name: on success
        uses: ./.github/actions/onsuccess
      - name: failing post
        uses: ./.github/actions/failing
      - run: echo "tool-cache=$RUNNER_TOOL_CACHE \${{ runner.tool_cache }}"; ${fail ? "exit 3" : "true"}
`;
    const files = { ...post("always", "always()", 0), ...post("onsuccess", "success()", 0), ...post("failing", "always()", 1) };
    // The job's steps pass; its failing post phase (registered last, so run first) fails it.
    const sha = await commitFiles(api, "app", { ...files, ".svc/workflows/ci.yml": wf(false) });
    const run = await finishedRun(api, "app", sha, 120_000);
    const log = await logOf(server, owner, "app", run.id, run.jobs[0].id);
    expect({ state: run.state, log }).toMatchObject({ state: "failure" });
    expect(run.jobs[0].steps.map((s: any) => s.state)).toEqual(["success", "success", "success", "success", "success"]);
    expect(log).toMatch(/tool-cache=(\S+)\/_tool \1\/_tool/);
    const order = ["Post failing post", "Post on success", "Post always"].map((m) => log.indexOf(m));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(log).toContain("post of failing");
    expect(log).toContain("##[error] Post failing post: ./.github/actions/failing: its post script failed with exit code 1");
    // The failing post phase ran first: the success() one after it is skipped, the always() one runs.
    expect(log).toContain("##[skipped] Post on success (the job did not succeed)");
    expect(log).not.toContain("post of onsuccess");
    expect(log).toContain("post of always");

    // A failing step: success() post skipped, always() posts run.
    const sha2 = await commitFiles(api, "app", { ".svc/workflows/ci.yml": wf(true) });
    const run2 = await finishedRun(api, "app", sha2, 120_000);
    const log2 = await logOf(server, owner, "app", run2.id, run2.jobs[0].id);
    expect(run2.state).toBe("failure");
    expect(log2).toContain("##[skipped] Post on success (the job did not succeed)");
    expect(log2).toContain("post of always");
    expect(log2).toContain("post of failing");
  }, 120_000);

  test("an action's own file never reads the job's secrets: passed through with:, they are its inputs", async () => {
    expect((await api.put("/v1/orgs/acme/secrets/ACTION_SECRET", { value: "s3cret-for-actions" })).status).toBe(201);
    const wf = `on: push
jobs:
  s:
    runs-on: [self-hosted, actions]
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/peek
        with:
          given: \${{ secrets.ACTION_SECRET }}
`;
    const sha = await commitFiles(api, "app", {
      ".github/actions/peek/action.yml": `name: peek
inputs:
  given: {}
  sneaky: { default: "d-\${{ secrets.ACTION_SECRET }}" }
runs:
  using: composite
  steps:
    - shell: bash
      env:
        DIRECT: x-\${{ secrets.ACTION_SECRET }}
      run: |
        echo "direct=$DIRECT sneaky=\${{ inputs.sneaky }}"
        test "\${{ inputs.given }}" = "s3cret-for-actions" && echo given-ok
`,
      ".svc/workflows/ci.yml": wf,
    });
    const run = await finishedRun(api, "app", sha, 120_000);
    const log = await logOf(server, owner, "app", run.id, run.jobs[0].id);
    expect({ state: run.state, log }).toMatchObject({ state: "success" });
    expect(log).toContain("direct=x- sneaky=d-");
    expect(log).toContain("given-ok");
  }, 120_000);

  test("a uses step's timeout-minutes stops its composite action: no further inner step runs", async () => {
    const wf = `on: push
jobs:
  t:
    runs-on: [self-hosted, actions]
    steps:
      - uses: actions/checkout@v4
      - name: slow composite
        uses: ./.github/actions/slow
        timeout-minutes: 0.05
      - if: always()
        run: echo after-the-job-step
`;
    const sha = await commitFiles(api, "app", {
      ".github/actions/slow/action.yml":
        "name: slow\nruns:\n  using: composite\n  steps:\n    - shell: bash\n      run: echo slow-started; sleep 60\n    - shell: bash\n      run: echo inner-after-timeout\n",
      ".svc/workflows/ci.yml": wf,
    });
    const run = await finishedRun(api, "app", sha, 120_000);
    const log = await logOf(server, owner, "app", run.id, run.jobs[0].id);
    expect({ state: run.state, log }).toMatchObject({ state: "failure" });
    expect(run.jobs[0].steps.map((s: any) => s.state)).toEqual(["success", "failure", "success"]);
    expect(log).toContain("slow-started");
    expect(log).toContain("##[error] slow composite timed out after 0.05 minutes");
    expect(log).not.toContain("inner-after-timeout");
    expect(log).toContain("after-the-job-step");
  }, 120_000);
});
