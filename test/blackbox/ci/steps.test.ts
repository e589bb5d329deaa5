// The runner runs v2 job specs (issue 29 part D, plan-29 §3 D), end to end with the real agent:
// the GITHUB_*/RUNNER_* variables and the event file, step `id` + $GITHUB_OUTPUT, $GITHUB_ENV,
// $GITHUB_PATH, job outputs, working-directory (and `..` refused), shells (bash's pipefail seen),
// continue-on-error, a step's timeout-minutes, `if` false → skipped, status functions,
// `::add-mask::`, hashFiles, expression errors naming the expression, and a `uses:` step whose action is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Person } from "../../helpers/api.ts";
import type { RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, commitFiles, dbRows, finishedRun, logOf, pushWorkflow, startCiServer } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["steps"] });
  ({ server, owner, api } = ci);
  await ci.machine({ name: "stepper", labels: ["steps"] });
}, 90_000);

afterAll(() => ci?.[Symbol.asyncDispose]());

const stepsOf = (job: any) => job.steps.map((s: any) => [s.name, s.state]);

describe("v2 steps on the agent", () => {
  test("GITHUB_* env, outputs, GITHUB_ENV/PATH, working-directory, shells, continue-on-error, timeout, if, add-mask", async () => {
    const wf = `name: Steps
on: push
jobs:
  build:
    runs-on: [self-hosted, steps]
    outputs:
      greeting: \${{ steps.gen.outputs.greeting }}
      lines: \${{ steps.gen.outputs.multi }}
    steps:
      - name: env
        run: |
          for v in GITHUB_SHA GITHUB_REF GITHUB_REF_NAME GITHUB_REF_TYPE GITHUB_REPOSITORY GITHUB_REPOSITORY_OWNER GITHUB_WORKSPACE GITHUB_RUN_ID GITHUB_RUN_ATTEMPT GITHUB_EVENT_NAME GITHUB_ACTOR GITHUB_JOB GITHUB_WORKFLOW GITHUB_HEAD_REF GITHUB_BASE_REF GITHUB_SERVER_URL RUNNER_OS RUNNER_ARCH RUNNER_NAME; do
            eval "echo \\"env:$v=\\$$v\\""
          done
          echo "actions=\${GITHUB_ACTIONS-unset} token=\${GITHUB_TOKEN-unset}"
          test -d "$RUNNER_TEMP" && echo "temp-ok"
          test "$PWD" = "$GITHUB_WORKSPACE" && echo "pwd-ok"
          echo "event=$(cat "$GITHUB_EVENT_PATH")"
          test -f "$GITHUB_STEP_SUMMARY" && echo "summary-file-ok"
      - id: gen
        name: write the files
        run: |
          echo "greeting=hello-out" >> "$GITHUB_OUTPUT"
          printf 'multi<<EOF\\nline one\\nline two\\nEOF\\n' >> "$GITHUB_OUTPUT"
          echo "FROM_ENV=carried" >> "$GITHUB_ENV"
          mkdir -p "$RUNNER_TEMP/bin"
          printf '#!/bin/sh\\necho tool-ran\\n' > "$RUNNER_TEMP/bin/mytool"
          chmod +x "$RUNNER_TEMP/bin/mytool"
          echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"
      - name: read \${{ steps.gen.outputs.greeting }}
        env:
          VIA: \${{ steps.gen.outputs.greeting }}-\${{ env.FROM_ENV }}
        run: |
          echo "out=\${{ steps.gen.outputs.greeting }} env=$FROM_ENV via=$VIA outcome=\${{ steps.gen.outcome }}"
          mytool
      - name: in sub
        working-directory: sub/dir
        run: |
          echo "cwd=$PWD"
          echo "hash=\${{ hashFiles('sub/**/*.txt', '!**/skip.txt') }} none=\${{ hashFiles('nothing/*') }}."
      - name: never
        if: github.ref == 'refs/heads/other'
        run: echo never-ran
      - name: default shell has no pipefail
        run: false | echo piped-default
      - name: bash has pipefail
        shell: bash
        continue-on-error: true
        run: |
          false | echo piped-bash
          echo not-reached
      - name: on failure
        if: failure()
        run: echo failure-ran
      - name: slow
        timeout-minutes: 0.05
        continue-on-error: true
        run: |
          echo slow-started
          sleep 60
          echo slow-finished
      - name: mask
        run: |
          echo "::add-mask::hidden-Value-123"
          echo "the value is hidden-Value-123."
      - name: always
        if: always()
        run: echo "status=\${{ job.status }}"
`;
    const sha = await commitFiles(api, "steps", { ".svc/workflows/ci.yml": wf, "sub/dir/keep.txt": "x\n", "sub/skip.txt": "y\n" });
    const run = await finishedRun(api, "steps", sha, 120_000);
    expect(run.error).toBeNull();
    const job = run.jobs[0];
    expect(stepsOf(job)).toEqual([
      ["env", "success"],
      ["write the files", "success"],
      ["read ${{ steps.gen.outputs.greeting }}", "success"],
      ["in sub", "success"],
      ["never", "skipped"],
      ["default shell has no pipefail", "success"],
      ["bash has pipefail", "failure"],
      ["on failure", "skipped"],
      ["slow", "failure"],
      ["mask", "success"],
      ["always", "success"],
    ]);
    expect(run.state).toBe("success");
    const log = await logOf(server, owner, "steps", run.id, job.id);
    const ws = join(ci.home, "work", job.id);
    for (const [k, v] of Object.entries({
      GITHUB_SHA: sha,
      GITHUB_REF: "refs/heads/main",
      GITHUB_REF_NAME: "main",
      GITHUB_REF_TYPE: "branch",
      GITHUB_REPOSITORY: "acme/steps",
      GITHUB_REPOSITORY_OWNER: "acme",
      GITHUB_WORKSPACE: ws,
      GITHUB_RUN_ID: run.id,
      GITHUB_RUN_ATTEMPT: "1",
      GITHUB_EVENT_NAME: "push",
      GITHUB_ACTOR: owner.handle,
      GITHUB_JOB: "build",
      // GitHub's github.workflow: the workflow's name (its path without one); head/base refs empty outside change runs.
      GITHUB_WORKFLOW: "Steps",
      GITHUB_HEAD_REF: "",
      GITHUB_BASE_REF: "",
      GITHUB_SERVER_URL: server.url,
      RUNNER_OS: "Linux",
      RUNNER_ARCH: process.arch === "arm64" ? "ARM64" : "X64",
      RUNNER_NAME: "stepper",
    }))
      expect(log).toContain(`env:${k}=${v}\n`);
    expect(log).toContain("actions=unset token=unset");
    expect(log).toContain("temp-ok");
    expect(log).toContain("pwd-ok");
    expect(log).toContain("summary-file-ok");
    const event = JSON.parse(log.match(/event=(.*)\n/)![1]!);
    expect(event).toMatchObject({ ref: "refs/heads/main", after: sha, repository: { full_name: "acme/steps" } });
    // Step outputs, GITHUB_ENV and GITHUB_PATH reach later steps; the step name is a template too.
    expect(log).toContain("##[step 3/11] read hello-out");
    expect(log).toContain("out=hello-out env=carried via=hello-out-carried outcome=success");
    expect(log).toContain("tool-ran");
    expect(log).toContain(`cwd=${join(ws, "sub/dir")}`);
    const hash = createHash("sha256").update(createHash("sha256").update("x\n").digest()).digest("hex");
    expect(log).toContain(`hash=${hash} none=.`);
    expect(log).not.toContain("never-ran");
    expect(log).toContain("piped-default");
    expect(log).toContain("piped-bash");
    expect(log).not.toContain("not-reached");
    expect(log).not.toContain("failure-ran");
    expect(log).toContain("slow-started");
    expect(log).not.toContain("slow-finished");
    expect(log).toContain("slow timed out after 0.05 minutes");
    expect(log).toContain("::add-mask::***");
    expect(log).toContain("the value is ***.");
    expect(log).not.toContain("hidden-Value-123");
    expect(log).toContain("status=success");
    // Job outputs are stored with the verdict (not shown by the API).
    const [row] = dbRows<{ outputs: string }>(server, "SELECT outputs FROM workflow_jobs WHERE id = ?", job.id);
    expect(JSON.parse(row!.outputs)).toEqual({ greeting: "hello-out", lines: "line one\nline two" });
  }, 180_000);

  test("a uses step naming a missing action fails with its message (continue-on-error respected); a working-directory leaving the workspace, an expression error and a malformed GITHUB_OUTPUT fail their steps", async () => {
    const wf = `on: push
jobs:
  escape:
    runs-on: [self-hosted, steps]
    steps:
      - uses: ./missing-action
        with: { depth: 0 }
        continue-on-error: true
      - name: after uses
        run: echo after-uses
      - name: up
        working-directory: ..
        run: echo escaped
      - name: bad expression
        if: always()
        run: echo "\${{ fromJSON('{') }}"
      - name: bad output
        if: always()
        id: bad
        run: echo "no equals sign" >> "$GITHUB_OUTPUT"
`;
    const sha = await pushWorkflow(api, "steps", wf);
    const run = await finishedRun(api, "steps", sha, 120_000);
    const job = run.jobs[0];
    expect(run.state).toBe("failure");
    expect(stepsOf(job)).toEqual([
      ["Run ./missing-action", "failure"],
      ["after uses", "success"],
      ["up", "failure"],
      ["bad expression", "failure"],
      ["bad output", "failure"],
    ]);
    const log = await logOf(server, owner, "steps", run.id, job.id);
    expect(log).toContain("##[error] ./missing-action: no such directory in the workspace");
    expect(log).toContain("after-uses");
    expect(log).toContain('working-directory ".." is outside the workspace');
    expect(log).not.toContain("escaped");
    expect(log).toMatch(/##\[error\] run ".*fromJSON\('\{'\).*":/);
    expect(log).toContain("GITHUB_OUTPUT line 1");
  }, 120_000);

  test("a job reads the outputs and result of the jobs it needs (every matrix cell) through the needs context", async () => {
    const wf = `on: push
jobs:
  build:
    runs-on: [self-hosted, steps]
    strategy: { matrix: { part: [one, two] } }
    outputs:
      v: \${{ steps.w.outputs.v }}
    steps:
      - id: w
        run: echo "v=built-\${{ matrix.part }}" >> "$GITHUB_OUTPUT"
  use:
    needs: build
    runs-on: [self-hosted, steps]
    steps:
      - run: echo "got=\${{ needs.build.outputs.v }} result=\${{ needs.build.result }} env=$GITHUB_JOB"
`;
    const sha = await pushWorkflow(api, "steps", wf);
    const run = await finishedRun(api, "steps", sha, 120_000);
    expect([run.state, run.error]).toEqual(["success", null]);
    const use = run.jobs.find((j: any) => j.key === "use");
    const log = await logOf(server, owner, "steps", run.id, use.id);
    expect(log).toMatch(/got=built-(one|two) result=success env=use\n/);
  }, 120_000);
});
