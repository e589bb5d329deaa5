// Issue 29 part B: the workflow language v2 at the parser and planner (pure): needs (a DAG),
// `if` on jobs and steps with contexts checked per site, outputs, step options, concurrency,
// on.push tags/paths, workflow_dispatch inputs and schedules; every rejection names file, line
// and column (asserted exactly).
import { describe, expect, test } from "bun:test";
import { notRunYet, parseWorkflow, planJobAt, parseWorkflowTask, workflowMatches, WORKFLOW_LIMITS } from "../../../src/services/ci/workflow.ts";

const trigger = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const };
const F = "f.yml";
const parse = (text: string, t: Parameters<typeof parseWorkflow>[2] = trigger) => parseWorkflow(F, text, t);
const ok = (text: string, t?: Parameters<typeof parseWorkflow>[2]) => {
  const r = parse(text, t);
  if (!r.ok) throw new Error(r.error);
  return r;
};
const J = "    runs-on: x\n    steps: [ { run: y } ]\n";
const REJECT: [string, string][] = [
  ["unknown need", `on: push\njobs:\n  build:\n${J}  test:\n    needs: [build, buld]\n${J}`],
  ["need as a string", `on: push\njobs:\n  test:\n    needs: nope\n${J}`],
  ["needs itself", `on: push\njobs:\n  a:\n    needs: a\n${J}`],
  ["cycle of two", `on: push\njobs:\n  a:\n    needs: b\n${J}  b:\n    needs: [a]\n${J}`],
  ["cycle of three behind a job", `on: push\njobs:\n  z:\n    needs: b\n${J}  b:\n    needs: c\n${J}  c:\n    needs: d\n${J}  d:\n    needs: b\n${J}`],
  ["job if syntax", `on: push\njobs:\n  a:\n    if: github.ref == 'x' &&\n${J}`],
  ["job if context", `on: push\njobs:\n  a:\n    if: \${{ secrets.X }}\n${J}`],
  ["job if steps context", `on: push\njobs:\n  a:\n    if: steps.x.outputs.y\n${J}`],
  ["step if secrets", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: y\n        if: secrets.TOKEN != ''\n`],
  ["step if unknown function", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: y\n        if: startWith(github.ref, 'refs/tags/')\n`],
  ["status function outside if", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo \${{ always() }}\n`],
  ["runs-on reads steps", `on: push\njobs:\n  a:\n    runs-on: "\${{ steps.a.outputs.b }}"\n    steps: [ { run: y } ]\n`],
  ["block run, line 3", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: |\n          echo one\n          echo \${{ foo.bar }}\n`],
  ["output secrets", `on: push\njobs:\n  a:\n    outputs:\n      v: \${{ secrets.X }}\n${J}`],
  ["output name", `on: push\njobs:\n  a:\n    outputs:\n      "bad name": x\n${J}`],
  ["step id", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - id: "1st"\n        run: y\n`],
  ["duplicate step id", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - id: s\n        run: y\n      - id: s\n        run: z\n`],
  ["shell", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: y\n        shell: fish\n`],
  ["defaults shell", `on: push\ndefaults:\n  run:\n    shell: zsh\njobs:\n  a:\n${J}`],
  ["continue-on-error", `on: push\njobs:\n  a:\n    continue-on-error: maybe\n${J}`],
  ["step timeout", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: y\n        timeout-minutes: 0\n`],
  ["concurrency key", `on: push\nconcurrency:\n  group: g\n  cancel: true\njobs:\n  a:\n${J}`],
  ["concurrency context", `on: push\nconcurrency: ci-\${{ secrets.X }}\njobs:\n  a:\n${J}`],
  ["cron hour", `on:\n  schedule:\n    - cron: "0 25 * * *"\njobs:\n  a:\n${J}`],
  ["cron macro", `on:\n  schedule:\n    - cron: '@daily'\njobs:\n  a:\n${J}`],
  ["cron fields", `on:\n  schedule:\n    - cron: "* * * *"\njobs:\n  a:\n${J}`],
  ["schedule key", `on:\n  schedule:\n    - crontab: "* * * * *"\njobs:\n  a:\n${J}`],
  ["schedule as a word", `on: [push, schedule]\njobs:\n  a:\n${J}`],
  ["input type", `on:\n  workflow_dispatch:\n    inputs:\n      level:\n        type: file\njobs:\n  a:\n${J}`],
  ["choice without options", `on:\n  workflow_dispatch:\n    inputs:\n      level:\n        type: choice\njobs:\n  a:\n${J}`],
  [
    "choice default not an option",
    `on:\n  workflow_dispatch:\n    inputs:\n      level:\n        type: choice\n        options: [low, high]\n        default: mid\njobs:\n  a:\n${J}`,
  ],
  ["boolean default", `on:\n  workflow_dispatch:\n    inputs:\n      dry:\n        type: boolean\n        default: "yes"\njobs:\n  a:\n${J}`],
  ["required not boolean", `on:\n  workflow_dispatch:\n    inputs:\n      dry:\n        required: sometimes\njobs:\n  a:\n${J}`],
  ["options on a string", `on:\n  workflow_dispatch:\n    inputs:\n      dry:\n        options: [a]\njobs:\n  a:\n${J}`],
  ["push filter key", `on:\n  push:\n    tag: [v*]\njobs:\n  a:\n${J}`],
  ["unknown event", `on: [push, pusj]\njobs:\n  a:\n${J}`],
  ["container", `on: push\njobs:\n  a:\n    container: node:20\n${J}`],
  ["run-name context", `on: push\nrun-name: \${{ matrix.x }}\njobs:\n  a:\n${J}`],
  ["uses docker", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: docker://alpine:3.19\n`],
  ["uses without a ref", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: actions/checkout\n`],
  ["uses with a space", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - name: a\n        uses: "actions/checkout@v4; rm -rf /"\n`],
  ["uses and run", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: y\n        uses: a/b@v1\n`],
  ["with without uses", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: y\n        with: { a: b }\n`],
  ["with context", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: a/b@v1\n        with:\n          token: \${{ secret.X }}\n`],
  ["with a mapping value", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: a/b@v1\n        with:\n          args: { a: b }\n`],
  ["shell with uses", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: a/b@v1\n        shell: bash\n`],
  ["a step with neither", `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - name: nothing\n`],
  ["reusable workflow reference", `on: push\njobs:\n  a:\n    uses: octo/ci/build.yml@v1\n`],
  ["reusable workflow with steps", `on: push\njobs:\n  a:\n    uses: ./.github/workflows/b.yml\n    steps: [ { run: y } ]\n`],
  ["job with without uses", `on: push\njobs:\n  a:\n    with: { a: b }\n${J}`],
  ["runs-on group only", `on: push\njobs:\n  a:\n    runs-on: { group: big }\n    steps: [ { run: y } ]\n`],
  ["runs-on map key", `on: push\njobs:\n  a:\n    runs-on: { labels: [x], size: big }\n    steps: [ { run: y } ]\n`],
  ["matrix expression not a mapping", `on: push\njobs:\n  a:\n    strategy: { matrix: "\${{ fromJSON('[1]') }}" }\n${J}`],
  ["matrix dimension expression not a list", `on: push\njobs:\n  a:\n    strategy: { matrix: { os: "\${{ github.sha }}" } }\n${J}`],
  ["number input default", `on:\n  workflow_dispatch:\n    inputs:\n      n:\n        type: number\n        default: many\njobs:\n  a:\n${J}`],
];

/** Where an expression error points: exact in plain, quoted-without-escapes and `|` strings; at the string's start otherwise (Decided). */
const UNKNOWN_FOO = 'unknown context "foo" (expected one of github, env, vars, job, jobs, steps, runner, secrets, strategy, matrix, needs, inputs)';
const STEP = "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n";
const POSITIONS: [string, string, string][] = [
  ["plain", `${STEP}      - run: echo \${{ foo }}\n`, "6:23"],
  ["single-quoted", `${STEP}      - run: 'echo \${{ foo }}'\n`, "6:24"],
  ["double-quoted", `${STEP}      - run: "echo \${{ foo }}"\n`, "6:24"],
  ["literal block, third line", `${STEP}      - run: |\n          a\n\n          echo \${{ foo }}\n`, "9:20"],
  ["double-quoted with an escape: the start", `${STEP}      - run: "a\\tb \${{ foo }}"\n`, "6:14"],
  ["single-quoted with an escape: the start", `${STEP}      - run: 'it''s \${{ foo }}'\n`, "6:14"],
  ["folded block: the start", `${STEP}      - run: >\n          a\n          \${{ foo }}\n`, "6:14"],
  ["multi-line plain: the start", `${STEP}      - run: plain\n          \${{ foo }}\n`, "6:14"],
];

describe("workflow v2: expression positions by YAML string style", () => {
  test.each(POSITIONS)("%s", (_name, text, at) => {
    const r = parse(text);
    expect(!r.ok && r.error).toBe(`${F}:${at}: ${UNKNOWN_FOO}`);
  });
});

/** Each rejection's exact message (with its line and column in the file). */
const EXPECTED: Record<string, string> = {
  "unknown need": 'f.yml:7:20: jobs.test.needs names unknown job "buld"',
  "need as a string": 'f.yml:4:12: jobs.test.needs names unknown job "nope"',
  "needs itself": "f.yml:4:12: jobs.a needs itself",
  "cycle of two": "f.yml:4:12: jobs a → b → a form a cycle",
  "cycle of three behind a job": "f.yml:8:12: jobs b → c → d → b form a cycle",
  "job if syntax": "f.yml:4:29: the expression ends too early",
  "job if context": "f.yml:4:13: the secrets context is not available here (available: github, inputs, vars, needs)",
  "job if steps context": "f.yml:4:9: the steps context is not available here (available: github, inputs, vars, needs)",
  "step if secrets":
    "f.yml:7:13: the secrets context is not available here (available: github, inputs, vars, matrix, strategy, needs, job, runner, env, steps)",
  "step if unknown function": 'f.yml:7:13: unknown function "startWith"',
  "status function outside if": "f.yml:6:23: always() is only available in if: conditions",
  "runs-on reads steps": "f.yml:4:19: the steps context is not available here (available: github, inputs, vars, matrix, needs)",
  "block run, line 3":
    'f.yml:8:20: unknown context "foo" (expected one of github, env, vars, job, jobs, steps, runner, secrets, strategy, matrix, needs, inputs)',
  "output secrets": "f.yml:5:14: the secrets context is not available here (available: github, inputs, vars, matrix, strategy, needs, job, runner, env, steps)",
  "output name": 'f.yml:5:7: invalid output name "bad name"',
  "step id": 'f.yml:6:13: invalid step id "1st"',
  "duplicate step id": 'f.yml:8:9: two steps of jobs.a have the id "s"',
  shell: 'f.yml:7:16: jobs.a.steps[0].shell must be sh, bash, pwsh, powershell, python, cmd or a command with {0}, not "fish"',
  "defaults shell": 'f.yml:4:12: defaults.run.shell must be sh, bash, pwsh, powershell, python, cmd or a command with {0}, not "zsh"',
  "continue-on-error": "f.yml:4:24: jobs.a.continue-on-error must be true, false or an expression",
  "step timeout": "f.yml:7:26: jobs.a.steps[0].timeout-minutes must be a number from 0.05 to 4320",
  "concurrency key": 'f.yml:4:3: unknown key "cancel" under concurrency (expected group, cancel-in-progress)',
  "concurrency context": "f.yml:2:21: the secrets context is not available here (available: github, inputs, vars)",
  "cron hour": "f.yml:3:16: hour 25 is outside 0-23",
  "cron macro": "f.yml:3:14: macros like @daily are not supported; write the five fields (e.g. 0 0 * * *)",
  "cron fields": "f.yml:3:21: a cron text has 5 fields (minute hour day-of-month month day-of-week), not 4",
  "schedule key": 'f.yml:3:7: unknown key "crontab" in on.schedule (expected cron)',
  "schedule as a word": "f.yml:1:12: on.schedule needs a list of { cron } entries",
  "input type": 'f.yml:5:15: on.workflow_dispatch.inputs.level.type must be string, boolean, choice, number or environment, not "file"',
  "choice without options": "f.yml:4:7: on.workflow_dispatch.inputs.level is a choice without options",
  "choice default not an option": 'f.yml:7:18: on.workflow_dispatch.inputs.level.default "mid" is not one of its options',
  "boolean default": "f.yml:6:18: on.workflow_dispatch.inputs.dry.default must be true or false",
  "required not boolean": "f.yml:5:19: on.workflow_dispatch.inputs.dry.required must be true or false",
  "options on a string": "f.yml:5:18: on.workflow_dispatch.inputs.dry.options is only for type: choice",
  "push filter key": 'f.yml:3:5: unknown key "tag" under on.push (expected branches, branches-ignore, tags, tags-ignore, paths, paths-ignore)',
  "unknown event": 'f.yml:1:12: unsupported event "pusj" (expected push, change, pull_request, workflow_dispatch, schedule or another GitHub event)',
  container: "f.yml:4:5: container jobs are not supported",
  "run-name context": "f.yml:2:15: the matrix context is not available here (available: github, inputs, vars)",
  "uses docker": 'f.yml:6:15: docker actions ("docker://alpine:3.19") are not supported',
  "uses without a ref": 'f.yml:6:15: invalid action reference "actions/checkout" (expected ./path, $/path or owner/repo[/path]@ref)',
  "uses with a space": 'f.yml:7:15: invalid action reference "actions/checkout@v4; rm -rf /" (expected ./path, $/path or owner/repo[/path]@ref)',
  "uses and run": "f.yml:7:15: jobs.a.steps[0] has both run and uses; a step has one of them",
  "with without uses": "f.yml:7:9: jobs.a.steps[0].with goes with uses, and this step has none",
  "with context":
    'f.yml:8:22: unknown context "secret" (expected one of github, env, vars, job, jobs, steps, runner, secrets, strategy, matrix, needs, inputs)',
  "with a mapping value": "f.yml:8:17: jobs.a.steps[0].with.args must be a string, number or boolean",
  "shell with uses": "f.yml:6:15: jobs.a.steps[0]: shell and working-directory go with run, not uses",
  "a step with neither": "f.yml:6:9: jobs.a.steps[0] has no run (or uses)",
  "reusable workflow reference":
    'f.yml:4:11: invalid reusable workflow "octo/ci/build.yml@v1" (expected ./.github/workflows/<file>.yml, $/.github/workflows/<file>.yml or owner/repo/.github/workflows/<file>.yml@ref)',
  "reusable workflow with steps": "f.yml:5:5: jobs.a calls a reusable workflow (uses) and cannot have steps",
  "job with without uses": "f.yml:4:5: jobs.a.with goes with uses (a reusable workflow), and this job has none",
  "runs-on group only": "f.yml:4:23: jobs.a.runs-on names only a group; svc routes jobs by labels: add labels",
  "runs-on map key": 'f.yml:4:29: unknown key "size" under jobs.a.runs-on (expected group, labels)',
  "matrix expression not a mapping": "f.yml:4:25: strategy.matrix must evaluate to a mapping",
  "matrix dimension expression not a list": "f.yml:4:31: matrix.os must evaluate to a list",
  "number input default": "f.yml:6:18: on.workflow_dispatch.inputs.n.default must be a number",
};

describe("workflow v2: rejections name file, line and column", () => {
  test.each(REJECT)("%s", (name, text) => {
    const r = parse(text);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toBe(EXPECTED[name]!);
  });
});

const FULL = `name: CI
run-name: Deploy \${{ github.ref_name }}
on:
  push:
    branches: [main]
    tags: ["v*"]
    paths: ["src/**", "!src/docs/**"]
  pull_request:
  workflow_dispatch:
    inputs:
      level: { type: choice, options: [low, high], default: low, required: true }
      dry: { type: boolean, default: false }
      note: { description: free text }
  schedule:
    - cron: "*/15 * * * 1-5"
  release:
concurrency: ci-\${{ github.ref }}
defaults:
  run:
    shell: bash
env: { TOKEN: "\${{ secrets.TOKEN }}" }
permissions: { contents: read }
jobs:
  build:
    runs-on: self-hosted
    outputs:
      version: \${{ steps.v.outputs.version }}
    steps:
      - id: v
        run: echo "version=1" >> "$GITHUB_OUTPUT"
        working-directory: src
        continue-on-error: true
        timeout-minutes: 5
  test:
    needs: build
    if: \${{ needs.build.outputs.version != '' }}
    runs-on: [self-hosted, "\${{ matrix.os }}"]
    strategy: { matrix: { os: [linux, mac] }, fail-fast: false, max-parallel: 2 }
    concurrency: { group: "test-\${{ matrix.os }}", cancel-in-progress: true }
    timeout-minutes: 10
    steps:
      - run: echo \${{ needs.build.outputs.version }} \${{ matrix.os }} \${{ vars.REGION }}
        if: always()
        shell: sh
  deploy:
    needs: [build, test]
    environment: production
    runs-on: self-hosted
    steps:
      - run: echo deploy
`;

describe("workflow v2: what parses", () => {
  test("a full workflow: the DAG, conditions, outputs, step options, concurrency, v2 specs with templates kept for the runner", () => {
    const w = ok(FULL);
    expect(w.run).toEqual({
      name: "CI",
      runName: "Deploy main",
      concurrency: { group: "ci-refs/heads/main", cancelInProgress: false },
      graph: { build: [], test: ["build"], deploy: ["build", "test"] },
      order: ["build", "test", "deploy"],
      dispatch: [
        { name: "level", description: null, required: true, type: "choice", default: "low", options: ["low", "high"] },
        { name: "dry", description: null, required: false, type: "boolean", default: false, options: null },
        { name: "note", description: "free text", required: false, type: "string", default: null, options: null },
      ],
      schedules: ["*/15 * * * 1-5"],
    });
    expect(w.jobs.map((j) => [j.key, j.workflowJob, j.needs])).toEqual([
      ["build", "build", []],
      ["test (os=linux)", "test", ["build"]],
      ["test (os=mac)", "test", ["build"]],
      ["deploy", "deploy", ["build", "test"]],
    ]);
    const [build, linux] = w.jobs;
    expect(build!.spec).toEqual({
      v: 2,
      github: { workflow: "CI" },
      env: { TOKEN: "${{ secrets.TOKEN }}" },
      timeoutS: WORKFLOW_LIMITS.defaultTimeoutMinutes * 60,
      defaults: { shell: "bash" },
      outputs: { version: "${{ steps.v.outputs.version }}" },
      secretRefs: ["TOKEN"],
      steps: [
        {
          id: "v",
          name: 'echo "version=1" >> "$GITHUB_OUTPUT"',
          run: 'echo "version=1" >> "$GITHUB_OUTPUT"',
          env: {},
          workingDirectory: "src",
          continueOnError: true,
          timeoutS: 300,
        },
      ],
    });
    expect(linux).toMatchObject({
      runsOn: ["self-hosted", "linux"],
      condition: "${{ needs.build.outputs.version != '' }}",
      concurrency: { group: "test-linux", cancelInProgress: true },
      spec: {
        v: 2,
        timeoutS: 600,
        matrix: { os: "linux" },
        varRefs: ["REGION"],
        steps: [{ run: "echo ${{ needs.build.outputs.version }} ${{ matrix.os }} ${{ vars.REGION }}", if: "always()", shell: "sh" }],
      },
    });
    expect(w.on.change).toEqual({ branches: null, ignore: null });
    expect(w.on.other).toEqual(["release"]);
  });

  test("uses steps: the reference and with inputs (stringified as GitHub does, templates kept), no run; the job is v2", () => {
    const w = ok(`on: push
jobs:
  a:
    runs-on: x
    strategy: { matrix: { v: [18, 20] } }
    steps:
      - uses: actions/checkout@v4
        with: { fetch-depth: 0, lfs: true, ref: "\${{ github.sha }}", empty: }
      - name: setup
        id: setup
        uses: actions/setup-node@8f152de45cc393bb48ce5d89d36b731f54d6b7a1
        if: matrix.v == 20
        continue-on-error: true
        timeout-minutes: 2
        env: { A: b }
        with:
          node-version: \${{ matrix.v }}
          token: \${{ secrets.NPM_TOKEN }}
      - uses: ./.github/actions/build
      - uses: octo-org/monorepo/actions/lint@release/v1.2
      - run: npm test
`);
    expect(w.jobs).toHaveLength(2);
    expect(w.jobs[1]!.spec).toEqual({
      v: 2,
      env: {},
      timeoutS: 21600,
      matrix: { v: "20" },
      secretRefs: ["NPM_TOKEN"],
      steps: [
        {
          name: "Run actions/checkout@v4",
          uses: "actions/checkout@v4",
          env: {},
          with: { "fetch-depth": "0", lfs: "true", ref: "\${{ github.sha }}", empty: "" },
        },
        {
          name: "setup",
          id: "setup",
          uses: "actions/setup-node@8f152de45cc393bb48ce5d89d36b731f54d6b7a1",
          if: "matrix.v == 20",
          continueOnError: true,
          timeoutS: 120,
          env: { A: "b" },
          with: { "node-version": "\${{ matrix.v }}", token: "\${{ secrets.NPM_TOKEN }}" },
        },
        { name: "Run ./.github/actions/build", uses: "./.github/actions/build", env: {} },
        { name: "Run octo-org/monorepo/actions/lint@release/v1.2", uses: "octo-org/monorepo/actions/lint@release/v1.2", env: {} },
        { name: "npm test", run: "npm test", env: {} },
      ],
    });
  });

  test("a job that needs another but uses no v2 step feature keeps a v1 spec (steps expanded here)", () => {
    const w = ok(
      `on: push\njobs:\n  a:\n    runs-on: x\n    steps: [ { run: "echo \${{ github.sha }}" } ]\n  b:\n    needs: a\n    if: success()\n    runs-on: x\n    steps: [ { run: y } ]\n`,
    );
    expect(w.jobs[0]!.spec).toEqual({ env: {}, timeoutS: 21600, steps: [{ name: `echo ${trigger.sha}`, run: `echo ${trigger.sha}`, env: {} }] });
    expect(w.jobs[1]).toMatchObject({ needs: ["a"], condition: "success()" });
    expect(w.jobs[1]!.spec.v).toBeUndefined();
  });

  test("plan-time values: job name, runs-on, timeout and concurrency from github, inputs and vars", () => {
    const text = `on: workflow_dispatch\nconcurrency:\n  group: \${{ inputs.env }}\n  cancel-in-progress: \${{ inputs.env == 'prod' }}\njobs:\n  a:\n    name: deploy \${{ inputs.env }} \${{ vars.ZONE }}\n    runs-on: "\${{ format('{0}-x', inputs.env) }}"\n    timeout-minutes: \${{ inputs.minutes }}\n    steps: [ { run: y } ]\n`;
    const w = ok(text, { ...trigger, event: "workflow_dispatch", inputs: { env: "prod", minutes: "2" }, vars: { ZONE: "eu" } });
    expect(w.run.concurrency).toEqual({ group: "prod", cancelInProgress: true });
    expect(w.jobs[0]).toMatchObject({ key: "deploy prod eu", runsOn: ["prod-x"], spec: { timeoutS: 120 } });
  });

  test("a concurrency group that reads needs is kept as a template for the release", () => {
    const w = ok(`on: push\njobs:\n  a:\n${J}  b:\n    needs: a\n    concurrency: g-\${{ needs.a.outputs.x }}\n${J}`);
    expect(w.jobs[1]!.concurrency).toEqual({ group: "g-${{ needs.a.outputs.x }}", cancelInProgress: false, dynamic: true });
  });

  test("on: push filters for tags and paths (GitHub's rules)", () => {
    const on = ok(`on:\n  push:\n    tags: ["v*"]\n    tags-ignore: ["v0.*"]\njobs:\n  a:\n${J}`).on;
    expect(workflowMatches(on, "push", "v1.2", { tag: true })).toBe(true);
    expect(workflowMatches(on, "push", "v0.9", { tag: true })).toBe(false);
    // Only tag filters: branch pushes do not start it.
    expect(workflowMatches(on, "push", "main")).toBe(false);
    const branchesOnly = ok(`on:\n  push:\n    branches: [main]\njobs:\n  a:\n${J}`).on;
    expect(workflowMatches(branchesOnly, "push", "v1", { tag: true })).toBe(false);
    const plain = ok(`on: push\njobs:\n  a:\n${J}`).on;
    expect(workflowMatches(plain, "push", "v1", { tag: true })).toBe(false);
    const paths = ok(`on:\n  push:\n    paths: ["src/**", "!src/docs/**", "src/docs/api.md"]\njobs:\n  a:\n${J}`).on;
    expect(workflowMatches(paths, "push", "main", { paths: ["src/a.ts"] })).toBe(true);
    expect(workflowMatches(paths, "push", "main", { paths: ["src/docs/x.md"] })).toBe(false);
    expect(workflowMatches(paths, "push", "main", { paths: ["src/docs/api.md"] })).toBe(true);
    expect(workflowMatches(paths, "push", "main", { paths: ["README.md", "src/docs/x.md"] })).toBe(false);
    // Paths unknown (null): the filter matches.
    expect(workflowMatches(paths, "push", "main", { paths: null })).toBe(true);
    const ignore = ok(`on:\n  push:\n    paths-ignore: ["docs/**", "*.md"]\njobs:\n  a:\n${J}`).on;
    expect(workflowMatches(ignore, "push", "main", { paths: ["docs/a.md", "README.md"] })).toBe(false);
    expect(workflowMatches(ignore, "push", "main", { paths: ["docs/a.md", "src/x.ts"] })).toBe(true);
  });

  test("pull_request is an alias of change; other GitHub events parse and never fire", () => {
    const w = ok(`on:\n  pull_request:\n    branches: [main]\n    types: [opened]\n  issues:\n  workflow_run:\n    workflows: [x]\njobs:\n  a:\n${J}`);
    expect(w.on.change).toEqual({ branches: ["main"], ignore: null });
    expect(w.on.other).toEqual(["issues", "workflow_run"]);
    expect(workflowMatches(w.on, "change", "main")).toBe(true);
    expect(workflowMatches(w.on, "push", "main")).toBe(false);
  });

  test("the thread task: dispatch and schedule triggers match workflows that declare them", () => {
    const text = `on:\n  workflow_dispatch:\n  schedule: [ { cron: "0 0 * * *" } ]\njobs:\n  a:\n${J}`;
    const d = parseWorkflowTask({ path: F, text, trigger: { ...trigger, event: "workflow_dispatch" }, branch: "main" });
    expect(d.ok && d.matches).toBe(true);
    const s = parseWorkflowTask({ path: F, text, trigger: { ...trigger, event: "schedule" }, branch: "main" });
    expect(s.ok && s.matches && s.run?.schedules).toEqual(["0 0 * * *"]);
    const p = parseWorkflowTask({ path: F, text, trigger, branch: "main" });
    expect(p.ok && p.matches).toBe(false);
  });

  test("limits: inputs, schedules, outputs, needs entries and expressions per file", () => {
    const inputs = Array.from({ length: WORKFLOW_LIMITS.inputs + 1 }, (_, i) => `      i${i}:`).join("\n");
    expect(parse(`on:\n  workflow_dispatch:\n    inputs:\n${inputs}\njobs:\n  a:\n${J}`)).toEqual({ ok: false, error: `${F}:29:7: more than 25 inputs` });
    const crons = Array.from({ length: WORKFLOW_LIMITS.schedules + 1 }, () => `    - cron: "* * * * *"`).join("\n");
    expect(parse(`on:\n  schedule:\n${crons}\njobs:\n  a:\n${J}`)).toEqual({ ok: false, error: `${F}:3:5: more than 10 schedules` });
    const outs = Array.from({ length: WORKFLOW_LIMITS.outputsPerJob + 1 }, (_, i) => `      o${i}: x`).join("\n");
    expect(parse(`on: push\njobs:\n  a:\n    outputs:\n${outs}\n${J}`)).toEqual({ ok: false, error: `${F}:55:7: more than 50 outputs` });
    const needs = Array.from({ length: WORKFLOW_LIMITS.needsPerJob + 1 }, () => "a").join(", ");
    expect(parse(`on: push\njobs:\n  a:\n    needs: [${needs}]\n${J}`)).toEqual({ ok: false, error: `${F}:4:12: jobs.a.needs names more than 256 jobs` });
    const env = Array.from({ length: WORKFLOW_LIMITS.expressionsPerFile + 1 }, (_, i) => `  E${i}: \${{github.sha}}`).join("\n");
    const r = parse(`on: push\nenv:\n${env}\njobs:\n  a:\n${J}`);
    expect(!r.ok && r.error).toBe(`${F}:10003:11: more than 10000 expressions in one file`);
  });

  test("v2 templates are charged as written to the run's budget, once per matrix cell", () => {
    const big = "x".repeat(200_000);
    const r = parse(
      `on: push\njobs:\n  a:\n    runs-on: x\n    strategy: { matrix: { n: [1, 2, 3, 4, 5, 6] } }\n    steps:\n      - run: "\${{ steps.a.outputs.b }}${big}"\n        id: a\n`,
    );
    expect(!r.ok && r.error).toBe(`${F}:7:14: this workflow's jobs would carry more than 1 MiB of keys, labels, env and steps once expanded`);
  });
});

describe("workflow v2: what the corpus of real workflows needed (part F)", () => {
  test("YAML anchors and aliases: a list of steps and an env shared by jobs", () => {
    const w = ok(`on: push
env: &env { A: "1" }
jobs:
  a:
    runs-on: x
    env: *env
    steps: &steps
      - run: echo a
      - run: echo b
  b:
    runs-on: x
    steps: *steps
`);
    expect(w.jobs.map((j) => [j.key, j.spec.env, j.spec.steps.map((s) => s.run)])).toEqual([
      ["a", { A: "1" }, ["echo a", "echo b"]],
      ["b", { A: "1" }, ["echo a", "echo b"]],
    ]);
  });

  test("nested aliases (a billion laughs) are replaced in one walk and their expansion is bounded where it is read", () => {
    let lists = "        l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n";
    for (let i = 1; i < 9; i++) lists += `        l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(", ")}]\n`;
    const r = parse(
      `on: push\njobs:\n  a:\n    runs-on: x\n    strategy:\n      matrix:\n${lists}        include: [ { v: *l8 } ]\n    steps: [ { run: y } ]\n`,
    );
    expect(r).toEqual({ ok: false, error: `${F}:7:27: the matrices of this file hold more than 20000 values` });
    const many = Array.from({ length: 200 }, (_, i) => `  j${i}:\n    uses: ./.github/workflows/a.yml\n    secrets: *s\n`).join("");
    const secrets = Array.from({ length: 3000 }, (_, i) => `  S${i}: "\${{ secrets.X }}"`).join("\n");
    expect(parse(`on: push\nenv: &s\n${secrets}\njobs:\n${many}`)).toMatchObject({ ok: false, error: expect.stringContaining("more than 1 MiB") });
  });

  test("matrix: mapping values, GitHub's include rule (extend the cells it does not overwrite, else a new cell), a key a cell lacks reads as empty", () => {
    const w = ok(`on: push
jobs:
  t:
    runs-on: [x, "\${{ matrix.job.os }}"]
    strategy:
      fail-fast: \${{ github.event_name == 'push' }}
      max-parallel: 2
      matrix:
        job:
          - { target: x86_64, os: linux }
          - { target: aarch64, os: mac }
        rust: [stable, nightly]
        exclude: [ { job: { target: aarch64, os: mac }, rust: nightly } ]
        include:
          - { rust: nightly, experimental: true }
          - { rust: beta, job: { target: riscv, os: linux } }
    steps:
      - run: echo \${{ matrix.rust }} \${{ matrix.experimental }}
`);
    expect(w.jobs.map((j) => [j.key, j.runsOn])).toEqual([
      ["t (job=x86_64, linux, rust=stable)", ["x", "linux"]],
      ["t (job=x86_64, linux, rust=nightly, experimental=true)", ["x", "linux"]],
      ["t (job=aarch64, mac, rust=stable)", ["x", "mac"]],
      ["t (job=riscv, linux, rust=beta)", ["x", "linux"]],
    ]);
    expect(w.jobs.map((j) => j.spec.steps[0]!.run)).toEqual(["echo stable ", "echo nightly true", "echo stable ", "echo beta "]);
    // Steps read only matrix.<name>: expanded here (v1). A step reading into a mapping keeps its template and carries the cell.
    expect(w.jobs[0]!.spec.v).toBeUndefined();
    const v2 = ok(
      `on: push\njobs:\n  t:\n    runs-on: x\n    strategy: { matrix: { job: [ { os: linux } ] } }\n    steps: [ { run: "echo \${{ matrix.job.os }}" } ]\n`,
    );
    expect(v2.jobs[0]!.spec).toMatchObject({ v: 2, matrix: { job: { os: "linux" } }, steps: [{ run: "echo ${{ matrix.job.os }}" }] });
  });

  test("matrix from an expression: evaluated when planned over github, inputs and vars; read from needs: one placeholder the run refuses", () => {
    const w = ok(
      `on: push\njobs:\n  a:\n    runs-on: x\n    strategy:\n      matrix:\n        os: \${{ fromJSON(vars.OSES || '["linux", "mac"]') }}\n    steps: [ { run: "echo \${{ matrix.os }}" } ]\n`,
    );
    expect(w.jobs.map((j) => j.key)).toEqual(["a (os=linux)", "a (os=mac)"]);
    const whole = ok(`on: push\njobs:\n  a:\n    runs-on: x\n    strategy: { matrix: "\${{ fromJSON('{\\"n\\":[1,2,3]}') }}" }\n    steps: [ { run: y } ]\n`);
    expect(whole.jobs.map((j) => j.key)).toEqual(["a (n=1)", "a (n=2)", "a (n=3)"]);
    const text = `on: push\njobs:\n  plan:\n${J}  run:\n    needs: plan\n    runs-on: "\${{ matrix.os }}"\n    strategy: { matrix: "\${{ fromJSON(needs.plan.outputs.m) }}" }\n    steps: [ { run: y } ]\n  name:\n    needs: plan\n    name: deploy \${{ needs.plan.outputs.v }}\n${J}`;
    const d = ok(text);
    expect(d.jobs.map((j) => [j.key, j.dynamic ?? null, j.runsOn, j.needs])).toEqual([
      ["plan", null, ["x"], []],
      ["run", "jobs.run.strategy.matrix", [], ["plan"]],
      ["name", "jobs.name.name", [], ["plan"]],
    ]);
    const out = parseWorkflowTask({ path: F, text, trigger, branch: "main" });
    // Run: release.ts plans the placeholder once its needs ended (planJobAt); one without needs is refused.
    expect(out.ok && notRunYet(F, out)).toBeNull();
    expect(out.ok && out.jobs[1]!.source).toBe(text);
    const lone = parseWorkflowTask({ path: F, text: `on: push\njobs:\n  a:\n    name: x \${{ needs.b.outputs.v }}\n${J}`, trigger, branch: "main" });
    expect(lone.ok && notRunYet(F, lone)).toBe(
      `${F}: jobs.a.name (it reads needs, and jobs.a has no needs) is parsed but not run by this server yet; the run does not start`,
    );
    // Planned at release with the needs' outputs: the cells, under the same limits.
    const cells = planJobAt(F, text, "run", trigger, { plan: { result: "success", outputs: { m: '{"os":["linux","mac"]}' } } });
    expect(cells.ok && cells.jobs.map((j) => [j.key, j.runsOn])).toEqual([
      ["run (os=linux)", ["linux"]],
      ["run (os=mac)", ["mac"]],
    ]);
    const many = planJobAt(F, text, "run", trigger, {
      plan: { result: "success", outputs: { m: JSON.stringify({ n: Array.from({ length: 10_000 }, (_, i) => i) }) } },
    });
    expect(!many.ok && many.error).toContain("the matrix has more than 256 cells");
  });

  test("a job calling a reusable workflow: planned in the graph (with its matrix), refused when run", () => {
    const text = `on: push
jobs:
  build:
${J}  call:
    needs: build
    if: success()
    uses: ./.github/workflows/release.yml
    with: { dry: true, level: 3 }
    secrets: inherit
    strategy: { matrix: { n: [1, 2] } }
    permissions: { contents: write }
  remote:
    uses: octo/ci/.github/workflows/lint.yml@v2
    secrets: { TOKEN: "\${{ secrets.NPM }}" }
`;
    const w = ok(text);
    expect(w.run.graph).toEqual({ build: [], call: ["build"], remote: [] });
    expect(w.jobs.map((j) => [j.key, j.calls ?? null, j.condition ?? null])).toEqual([
      ["build", null, null],
      ["call (1)", "./.github/workflows/release.yml", "success()"],
      ["call (2)", "./.github/workflows/release.yml", "success()"],
      ["remote", "octo/ci/.github/workflows/lint.yml@v2", null],
    ]);
    const out = parseWorkflowTask({ path: F, text, trigger, branch: "main" });
    expect(out.ok && notRunYet(F, out)).toStartWith(`${F}: jobs.call (a call of the reusable workflow ./.github/workflows/release.yml) is parsed but not run`);
  });

  test("GitHub's shells parse, and run (the runner maps them: part D)", () => {
    const text = `on: push\njobs:\n  w:\n    runs-on: windows\n    steps:\n      - run: Write-Host hi\n        shell: pwsh\n      - run: print(1)\n        shell: "python {0}"\n`;
    const w = ok(text);
    expect(w.jobs[0]!.spec.steps.map((s) => s.shell)).toEqual(["pwsh", "python {0}"]);
    const out = parseWorkflowTask({ path: F, text, trigger, branch: "main" });
    expect(out.ok && notRunYet(F, out)).toBeNull();
  });

  test("github.workflow (the name, else the path), env keys with no value or a dash, number and environment inputs, timeouts capped or quoted, runs-on labels from a map or a list-valued expression, $/ actions", () => {
    const w = ok(`name: CI
on:
  push:
  workflow_dispatch:
    inputs:
      n: { type: number, default: 3 }
      where: { type: environment }
concurrency: \${{ github.workflow }}-\${{ github.ref }}
jobs:
  a:
    runs-on: { group: big-runners, labels: [self-hosted, linux] }
    timeout-minutes: 14400
    env:
      EMPTY:
      cache-name: npm
    steps:
      - uses: $/.github/actions/helper
        timeout-minutes: "5"
  b:
    runs-on: \${{ fromJSON('["self-hosted", "arm"]') }}
    timeout-minutes: "30"
    steps: [ { run: y } ]
`);
    expect(w.run.concurrency?.group).toBe("CI-refs/heads/main");
    expect(ok(`on: push\nconcurrency: \${{ github.workflow }}\njobs:\n  a:\n${J}`).run.concurrency?.group).toBe(F);
    expect(w.run.dispatch!.map((i) => [i.name, i.type, i.default])).toEqual([
      ["n", "number", "3"],
      ["where", "environment", null],
    ]);
    expect(w.jobs[0]).toMatchObject({
      runsOn: ["self-hosted", "linux"],
      spec: { timeoutS: WORKFLOW_LIMITS.timeoutMinutes * 60, env: { EMPTY: "", "cache-name": "npm" } },
    });
    expect(w.jobs[0]!.spec.steps[0]).toMatchObject({ uses: "$/.github/actions/helper", timeoutS: 300 });
    expect(w.jobs[1]).toMatchObject({ runsOn: ["self-hosted", "arm"], spec: { timeoutS: 1800 } });
  });

  test("matrix values written as expressions are evaluated when planned (a value read from needs: the placeholder)", () => {
    const w = ok(
      `on: push\njobs:\n  t:\n    runs-on: "\${{ matrix.p }}"\n    strategy:\n      matrix:\n        p:\n          - \${{ github.repository == 'acme/api' && 'big' || 'small' }}\n          - plain\n    steps: [ { run: y } ]\n`,
    );
    expect(w.jobs.map((j) => [j.key, j.runsOn])).toEqual([
      ["t (p=big)", ["big"]],
      ["t (p=plain)", ["plain"]],
    ]);
    const d = ok(`on: push\njobs:\n  k:\n${J}  t:\n    needs: k\n    strategy: { matrix: { v: ["\${{ needs.k.outputs.v }}", "4.19"] } }\n${J}`);
    expect(d.jobs[1]).toMatchObject({ key: "t", dynamic: "jobs.t.strategy.matrix" });
  });

  test("parallel step groups: read (ids unique across the job, no nesting), planned as steps marked with their group, refused when run", () => {
    const text = `on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: setup\n      - parallel:\n          - id: a\n            run: test a\n          - uses: octo/lint@v1\n      - run: after\n`;
    const w = ok(text);
    expect(w.jobs[0]!.spec.steps.map((s) => [s.run ?? s.uses, s.parallel ?? null])).toEqual([
      ["setup", null],
      ["test a", 1],
      ["octo/lint@v1", 1],
      ["after", null],
    ]);
    const out = parseWorkflowTask({ path: F, text, trigger, branch: "main" });
    expect(out.ok && notRunYet(F, out)).toStartWith(`${F}: jobs.t.steps[1].parallel (steps side by side) is parsed but not run`);
    expect(parse(`${STEP}      - parallel:\n          - parallel: [ { run: a } ]\n`)).toEqual({
      ok: false,
      error: `${F}:7:13: jobs.t.steps[0].parallel holds another parallel group`,
    });
    expect(parse(`${STEP}      - parallel: [ { run: a } ]\n        name: x\n`)).toEqual({
      ok: false,
      error: `${F}:6:9: jobs.t.steps[0] is a parallel group: it holds only parallel`,
    });
    expect(parse(`${STEP}      - id: a\n        run: x\n      - parallel: [ { id: a, run: y } ]\n`)).toEqual({
      ok: false,
      error: `${F}:8:21: two steps of jobs.t have the id "a"`,
    });
  });

  test("a reusable workflow of the workflow's own repository ($/)", () => {
    const w = ok(`on: push\njobs:\n  b:\n    uses: $/.github/workflows/build.yml\n`);
    expect(w.jobs[0]).toMatchObject({ key: "b", calls: "$/.github/workflows/build.yml" });
  });

  test("a file up to 512 KiB parses (deno's generated CI is 415 KiB)", () => {
    const steps = Array.from({ length: 30 }, (_, i) => `      - run: echo ${"x".repeat(4000)} ${i}\n`).join("");
    const text = `on: push\njobs:\n${["a", "b", "c"].map((id) => `  ${id}:\n    runs-on: x\n    steps:\n${steps}`).join("")}`;
    expect(text.length).toBeGreaterThan(300 * 1024);
    expect(ok(text).jobs.map((j) => j.spec.steps.length)).toEqual([30, 30, 30]);
  });
});

describe("until the server runs them (part C)", () => {
  const task = (text: string) => {
    const out = parseWorkflowTask({ path: F, text, trigger, branch: "main" });
    if (!out.ok) throw new Error(out.error);
    return notRunYet(F, out);
  };
  test.each([
    [
      "a job concurrency group reading needs on a job without needs",
      `on: push\njobs:\n  a:\n${J}  b:\n    concurrency: ci-\${{ needs.a.outputs.x }}\n${J}`,
      "jobs.b.concurrency",
    ],
  ])("%s: the run fails naming it", (_n, text, what) => {
    expect(task(text)).toStartWith(`${F}: ${what}`);
  });
  test("workflow and job concurrency run (part C)", () => {
    expect(task(`on: push\nconcurrency: ci\njobs:\n  a:\n    concurrency: { group: x, cancel-in-progress: true }\n${J}`)).toBeNull();
  });
  test("job concurrency on a job with needs runs, its group read from needs or not (release.ts admits it)", () => {
    expect(task(`on: push\njobs:\n  a:\n${J}  b:\n    needs: a\n    concurrency: ci\n${J}`)).toBeNull();
    expect(task(`on: push\njobs:\n  a:\n${J}  b:\n    needs: a\n    concurrency: ci-\${{ needs.a.outputs.x }}\n${J}`)).toBeNull();
  });
  test("v2 steps run (the runner evaluates them: part D)", () => {
    expect(task(`on: push\njobs:\n  a:\n    runs-on: x\n    steps: [ { id: s, if: always(), run: "echo \${{ secrets.T }}" } ]\n`)).toBeNull();
  });
  test("needs and job if run (part C releases dependent jobs)", () => {
    expect(task(`on: push\njobs:\n  a:\n    if: github.ref == 'refs/heads/main'\n${J}  b:\n    needs: a\n${J}`)).toBeNull();
  });
  test("a v1 workflow runs as before", () => {
    expect(
      task(
        `on: push\njobs:\n  a:\n    runs-on: x\n    strategy: { matrix: { o: [a, b] } }\n    steps: [ { run: "echo \${{ matrix.o }} \${{ github.sha }}" } ]\n`,
      ),
    ).toBeNull();
  });
});
