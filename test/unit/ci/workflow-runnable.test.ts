// Issue 30, corpus check (bench/workflows.ts, bench/lib/workflow-runnable.ts): a workflow runs
// unmodified when it plans, nothing in it is refused by notRunYet, it needs no container, and every
// `uses:` is a built-in of the agent, an action of the repository, or a mirror of a composite or
// JavaScript action (bench/fixtures/action-kinds.json, composites' own `uses:` included). Offline:
// the fixtures of test/fixtures/workflows/ and the committed kinds.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { checkWorkflow, fixtureRows } from "../../../bench/lib/workflow-corpus.ts";
import { runnable, runnableSummary } from "../../../bench/lib/workflow-runnable.ts";
import { expressionProblem, loadActionKinds, readActionYml, remoteKey, type ActionInfo } from "../../../bench/lib/action-kinds.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "fixtures", "workflows");

function verdict(text: string, actions: Record<string, ActionInfo> = {}) {
  return runnable("t.yml", text, "main", checkWorkflow("t.yml", text, "main"), { repoDir: null, actions });
}

const job = (steps: string) => `on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n${steps}`;

describe("workflows that run unmodified (bench/workflows.ts, issue 30)", () => {
  test("the fixtures: all but the reusable call and the job container run, with the committed action kinds", () => {
    const actions = loadActionKinds().actions;
    const rows = fixtureRows().map((r) => ({
      repo: r.repo,
      file: r.file,
      result: runnable(r.file, readFileSync(join(FIXTURES, r.file), "utf8"), "main", r.result, { repoDir: null, actions }),
    }));
    const stopped = Object.fromEntries(rows.filter((r) => !r.result.now).map((r) => [r.file, r.result.blockers]));
    expect(stopped).toEqual({
      "prettier+prettier+autofix.yml": ["reusable workflow call (jobs.<id>.uses)"],
      "vitejs+vite+semgrep.yml": ["container (a job in a container)"],
    });
    expect(runnableSummary(rows, actions)).toMatchObject({ files: 10, before: 0, now: 8 });
  });

  test("built-ins at any version, and a run-only file counted before as well as now", () => {
    expect(verdict(job("      - uses: actions/checkout@v2\n      - uses: actions/cache/restore@deadbeef\n"))).toMatchObject({ now: true, before: false });
    expect(verdict(job("      - run: make\n"))).toMatchObject({ now: true, before: true });
  });

  test("a mirror's kind decides: node and composite run, docker and an unknown action stop the file", () => {
    const actions: Record<string, ActionInfo> = {
      "a/node@v1": { kind: "node20" },
      "a/old@v1": { kind: "node12" },
      "a/comp@v1": { kind: "composite", uses: ["actions/cache@v4", "a/node@v1"] },
      "a/dock@v1": { kind: "docker" },
      "a/wrap@v1": { kind: "composite", uses: ["a/dock@v1"] },
    };
    expect(verdict(job("      - uses: a/node@v1\n      - uses: A/Comp@v1\n      - uses: a/old@v1\n"), actions)).toMatchObject({ now: true, blockers: [] });
    expect(verdict(job("      - uses: a/dock@v1\n"), actions)).toMatchObject({ now: false, blockers: ["docker action (runs.using: docker)"] });
    // A composite that wraps a docker action stops the file too, naming the docker one.
    expect(verdict(job("      - uses: a/wrap@v1\n"), actions)).toMatchObject({
      now: false,
      blocking: [{ name: "a/dock", blocker: "docker action (runs.using: docker)" }],
    });
    expect(verdict(job("      - uses: a/none@v1\n"), actions)).toMatchObject({ now: false, blockers: ["action with no mirror to be had"] });
    // The mirror would have to be the org "runner" on svc: a reserved name.
    expect(verdict(job("      - uses: runner/x@v1\n"), { "runner/x@v1": { kind: "node20" } })).toMatchObject({
      now: false,
      blockers: ["an owner or repository name svc cannot hold"],
    });
    // A kind the agent runs, but an action.yml its reader (or the expression parser) refuses.
    const refused = { ...actions, "a/bad@v1": { kind: "node20", refused: "a/bad@v1: action.yml: runs.main is missing" } } as Record<string, ActionInfo>;
    expect(verdict(job("      - uses: a/bad@v1\n"), refused)).toMatchObject({ now: false, blockers: ["the agent refuses its action.yml"] });
  });

  test("every notRunYet reason of the file is counted, not only the first", () => {
    const text =
      "on: push\njobs:\n  a:\n    uses: ./.github/workflows/x.yml\n  b:\n    runs-on: x\n    steps:\n      - parallel:\n          - run: one\n          - run: two\n";
    const planned = checkWorkflow("t.yml", text, "main");
    if (planned.kind !== "equal") return expect(planned).toMatchObject({ kind: "equal" });
    expect(verdict(text).blockers.sort()).toEqual(["parallel: step group", "reusable workflow call (jobs.<id>.uses)"]);
  });

  test("a local action with no repository to read it from stops the file; containers each count", () => {
    expect(verdict(job("      - uses: ./.github/actions/x\n"))).toMatchObject({ now: false, blockers: ["local action not in the repository"] });
    const text = "on: push\njobs:\n  t:\n    runs-on: x\n    container: node:20\n    services: { db: { image: postgres } }\n    steps: [ { run: y } ]\n";
    expect(verdict(text).blockers).toEqual(["services (a job container for a service)", "container (a job in a container)"]);
  });

  test("action.yml kinds and reference keys", () => {
    expect(readActionYml("runs:\n  using: composite\n  steps:\n    - uses: x/y@v1\n    - run: z\n")).toEqual({ kind: "composite", uses: ["x/y@v1"] });
    expect(readActionYml("runs:\n  using: 'node24'\n  main: a.js\n").kind).toBe("node24");
    expect(readActionYml("runs:\n  using: docker\n  image: Dockerfile\n").kind).toBe("docker");
    expect(readActionYml("runs:\n  using: node10\n")).toMatchObject({ kind: "other", using: "node10" });
    expect(remoteKey("Swatinem/Rust-Cache@V2")).toBe("swatinem/rust-cache@V2");
    expect(remoteKey("./x")).toBeNull();
    expect(
      expressionProblem("runs:\n  using: composite\n  steps:\n    - if: ${{ inputs.x == 'y' }}\n      run: echo ${{ inputs.x }}\n      shell: bash\n"),
    ).toBeNull();
    expect(expressionProblem("runs:\n  using: composite\n  steps:\n    - run: echo ${{ inputs.x ==  }}\n      shell: bash\n")).toMatch(/^run: /);
    // Descriptions are text: not read.
    expect(expressionProblem("description: use ${{ github.token ( }}\nruns: { using: node20, main: a.js }\n")).toBeNull();
    expect(remoteKey("docker://alpine")).toBeNull();
  });
});
