// Issue 29 part F: real GitHub workflows (test/fixtures/workflows/, copied from the corpus of
// bench/workflows.ts with their sources in SOURCES.md) parse and plan the graph a reference
// computes from the raw YAML — job ids, needs edges, matrix cells per job — so a parser change
// that breaks a construct real files use fails here, without the network.
import { describe, expect, test } from "bun:test";
import { checkWorkflow, corpusSummary, fixtureRows } from "../../../bench/lib/workflow-corpus.ts";

describe("workflow corpus fixtures (bench/workflows.ts --check)", () => {
  const rows = fixtureRows();

  test("every fixture that is not excluded plans the reference graph", () => {
    const bad = rows.filter((r) => r.result.kind === "failed" || r.result.kind === "different").map((r) => [r.file, r.result]);
    expect(bad).toEqual([]);
    expect(corpusSummary(rows)).toMatchObject({ files: 10, excluded: 1, graphEqual: 9, percent: 100 });
  });

  test("what each fixture plans (jobs and matrix cells)", () => {
    const shown = Object.fromEntries(rows.map((r) => [r.file, r.result.kind === "equal" ? [r.result.jobs, r.result.cells] : r.result.kind]));
    expect(shown).toEqual({
      "BurntSushi+ripgrep+ci.yml": [5, 22],
      "biomejs+biome+benchmark.yml": [15, 24],
      "cli+cli+deployment.yml": [4, 4],
      "fastify+fastify+ci-alternative-runtime.yml": [3, 5],
      "prettier+prettier+autofix.yml": [1, 1],
      "prettier+prettier+dev-test.yml": [1, 6],
      "pypa+pip+ci.yml": [8, 38],
      "sharkdp+bat+CICD.yml": [11, 23],
      "vitejs+vite+publish.yml": [2, 2],
      "vitejs+vite+semgrep.yml": "excluded",
    });
  });

  test("the comparison catches a planner that adds an include entry instead of extending the cells (GitHub's rule)", () => {
    const text =
      "on: push\njobs:\n  t:\n    runs-on: x\n    strategy:\n      matrix:\n        os: [a, b]\n        include: [ { os: a, extra: 1 }, { os: c } ]\n    steps: [ { run: y } ]\n";
    expect(checkWorkflow("t.yml", text, "main")).toMatchObject({ kind: "equal", jobs: 1, cells: 3 });
  });
});
