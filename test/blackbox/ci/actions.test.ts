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
});
