// The workflow parser (DECISIONS §3 workflows): the accepted subset, matrix keys, expressions,
// branch filters, and errors that name file, line and column.
import { describe, expect, test } from "bun:test";
import { globMatch, parseWorkflow, workflowMatches, WORKFLOW_LIMITS } from "../../../src/services/ci/workflow.ts";
import { runStateOf } from "../../../src/services/ci/finish.ts";

const ctx = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const };
const P = ".svc/workflows/ci.yml";
const ok = (text: string) => {
  const r = parseWorkflow(P, text, ctx);
  if (!r.ok) throw new Error(r.error);
  return r;
};
const err = (text: string) => {
  const r = parseWorkflow(P, text, ctx);
  if (r.ok) throw new Error("expected an error");
  return r.error;
};

describe("workflow files", () => {
  test("a full workflow: env layering, steps, timeout, hosted vs self-hosted", () => {
    const w = ok(`name: CI
on:
  push:
    branches: [main, "release/**"]
    branches-ignore: [release/old]
  change:
env: { A: "1", B: 2 }
jobs:
  build:
    name: build it
    runs-on: ubuntu-latest
    env: { B: three }
    timeout-minutes: 30
    steps:
      - name: compile
        run: make
        env: { C: "${"${{ github.sha }}"}" }
  test:
    runs-on: [self-hosted, Linux]
    steps:
      - run: |
          echo one
          echo two
`);
    expect(w.name).toBe("CI");
    expect(w.on).toEqual({ push: { branches: ["main", "release/**"], ignore: ["release/old"] }, change: { branches: null, ignore: null } });
    expect(w.jobs).toEqual([
      {
        key: "build it",
        runsOn: ["ubuntu-latest"],
        hosted: true,
        spec: { env: { A: "1", B: "three" }, timeoutS: 1800, steps: [{ name: "compile", run: "make", env: { C: ctx.sha } }], github: { workflow: "CI" } },
        workflowJob: "build",
        needs: [],
      },
      {
        key: "test",
        runsOn: ["self-hosted", "linux"],
        hosted: false,
        spec: {
          env: { A: "1", B: "2" },
          timeoutS: WORKFLOW_LIMITS.defaultTimeoutMinutes * 60,
          steps: [{ name: "echo one", run: "echo one\necho two\n", env: {} }],
          github: { workflow: "CI" },
        },
        workflowJob: "test",
        needs: [],
      },
    ]);
  });

  test("on: as a word, a list, or a map", () => {
    expect(ok("on: push\njobs: { a: { runs-on: x, steps: [ { run: y } ] } }").on).toEqual({ push: { branches: null, ignore: null } });
    expect(Object.keys(ok("on: [push, change]\njobs: { a: { runs-on: x, steps: [ { run: y } ] } }").on)).toEqual(["push", "change"]);
  });

  test("a matrix: one job per cell, keys name the cell, include and exclude, matrix expressions", () => {
    const w = ok(`on: push
jobs:
  test:
    runs-on: [self-hosted, "\${{ matrix.os }}"]
    strategy:
      matrix:
        node: [18, 20]
        os: [linux, mac]
        exclude: [ { node: 18, os: mac } ]
        include: [ { node: 22, os: linux, extra: yes } ]
    steps:
      - run: echo node \${{ matrix.node }}
`);
    expect(w.jobs.map((j) => j.key)).toEqual([
      "test (node=18, os=linux)",
      "test (node=20, os=linux)",
      "test (node=20, os=mac)",
      "test (node=22, os=linux, extra=yes)",
    ]);
    expect(w.jobs[2]!.runsOn).toEqual(["self-hosted", "mac"]);
    expect(w.jobs[3]!.spec.steps[0]!.run).toBe("echo node 22");
    const named = ok(
      "on: push\njobs:\n  t:\n    name: t-${{ matrix.v }}\n    runs-on: x\n    strategy: { matrix: { v: [1, 2] } }\n    steps: [ { run: y } ]\n",
    );
    expect(named.jobs.map((j) => j.key)).toEqual(["t-1", "t-2"]);
  });

  test("errors name the file, line and column", () => {
    expect(err("on: push\njobs:\n  x: [unclosed\n")).toMatch(/^\.svc\/workflows\/ci\.yml:\d+:\d+: /);
    expect(err("on: push\njobs:\n  x:\n    runs-on: a\n    steps: []\n")).toBe(`${P}:5:12: jobs.x.steps must be a non-empty list`);
    expect(err("on: push\njobs:\n  x:\n    steps:\n      - run: a\n")).toBe(`${P}:4:5: jobs.x is missing runs-on`);
    expect(err("on: pull_requests\njobs: {}\n")).toBe(
      `${P}:1:5: unsupported event "pull_requests" (expected push, change, pull_request, workflow_dispatch, schedule or another GitHub event)`,
    );
    expect(err("jobs:\n  x:\n    runs-on: a\n    steps: [ { run: b } ]\n")).toBe(`${P}:1:1: missing \`on\` (push, change, or both)`);
    expect(err("on: push\njobs:\n  x:\n    runs-on: a\n    steps:\n      - uses: docker://alpine:3\n")).toBe(
      `${P}:6:15: docker actions ("docker://alpine:3") are not supported`,
    );
    expect(err("on: push\njobs:\n  x:\n    runs-on: a\n    timeout-minutes: 0\n    steps: [ { run: b } ]\n")).toMatch(
      /:5:22: timeout-minutes must be a number/,
    );
    expect(err("on: push\njobs:\n  x:\n    runs-on: 'bad label'\n    steps: [ { run: b } ]\n")).toMatch(/:4:14: invalid runner label "bad label"/);
    expect(err("on: push\non: push\njobs: {}\n")).toMatch(/^\.svc\/workflows\/ci\.yml:2:1: /);
    expect(err("")).toBe(`${P}: the file is empty`);
    expect(err("- a\n- b\n")).toBe(`${P}:1:1: a workflow must be a mapping`);
  });

  test("limits: size, nesting and matrix cells", () => {
    expect(err(`on: push\njobs: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`)).toMatch(/^\.svc\/workflows\/ci\.yml(:\d+:\d+)?: /);
    expect(err(`# ${"x".repeat(WORKFLOW_LIMITS.fileBytes)}\n`)).toMatch(/larger than/);
    const big = Array.from({ length: 20 }, (_, i) => i).join(", ");
    expect(err(`on: push\njobs:\n  x:\n    runs-on: a\n    strategy: { matrix: { a: [${big}], b: [${big}] } }\n    steps: [ { run: b } ]\n`)).toMatch(
      /more than 256 cells/,
    );
  });

  test("branch filters: globs, ignore lists, events", () => {
    const on = { push: { branches: ["main", "release/*", "feature/**"], ignore: ["release/old"] } };
    expect(workflowMatches(on, "push", "main")).toBe(true);
    expect(workflowMatches(on, "push", "release/1.0")).toBe(true);
    expect(workflowMatches(on, "push", "release/old")).toBe(false);
    expect(workflowMatches(on, "push", "release/a/b")).toBe(false);
    expect(workflowMatches(on, "push", "feature/a/b")).toBe(true);
    expect(workflowMatches(on, "change", "main")).toBe(false);
    expect(globMatch("v?.x", "v1.x")).toBe(true);
    expect(globMatch("a.b", "axb")).toBe(false);
  });

  test("a run's state follows its jobs", () => {
    expect(runStateOf(["queued", "queued"])).toBe("queued");
    expect(runStateOf(["success", "queued"])).toBe("running");
    expect(runStateOf(["running", "failure"])).toBe("running");
    expect(runStateOf(["success", "cancelled"])).toBe("cancelled");
    expect(runStateOf(["cancelled", "failure"])).toBe("failure");
    expect(runStateOf(["success"])).toBe("success");
  });
});
