// The run page's job columns (src/http/web/ci/graph.ts): topological levels, matrix cells together,
// the jobs' own order inside a column, unknown needs and cycles tolerated.
import { describe, expect, test } from "bun:test";
import { jobColumns } from "../../../../src/http/web/ci/graph.ts";

const job = (name: string, needs: string[] = [], key = name) => ({ name, needs, key });
const keys = (cols: { key: string }[][]) => cols.map((c) => c.map((j) => j.key));

describe("job columns", () => {
  test("a chain and a diamond: each job one column past the deepest job it needs", () => {
    const jobs = [job("deploy", ["test", "lint"]), job("build"), job("lint"), job("test", ["build"]), job("notify", ["deploy", "build"])];
    const { columns, levelOf } = jobColumns(jobs);
    expect(keys(columns)).toEqual([["build", "lint"], ["test"], ["deploy"], ["notify"]]);
    expect(Object.fromEntries(levelOf)).toEqual({ build: 0, lint: 0, test: 1, deploy: 2, notify: 3 });
  });

  test("matrix cells share their job's column and keep their order; a need on a matrix waits for all its cells", () => {
    const jobs = [job("test", [], "test (1)"), job("test", [], "test (2)"), job("pack", ["test"]), job("test", [], "test (3)")];
    expect(keys(jobColumns(jobs).columns)).toEqual([["test (1)", "test (2)", "test (3)"], ["pack"]]);
  });

  test("no needs at all: one column in the jobs' order; no jobs: no columns", () => {
    expect(keys(jobColumns([job("b"), job("a")]).columns)).toEqual([["b", "a"]]);
    expect(jobColumns([]).columns).toEqual([]);
  });

  test("a need naming no job of the run is left out; a cycle or a self-need does not loop", () => {
    expect(keys(jobColumns([job("a", ["gone"]), job("b", ["a", "gone"])]).columns)).toEqual([["a"], ["b"]]);
    const cyc = jobColumns([job("a", ["c"]), job("b", ["a"]), job("c", ["b"]), job("d", ["d"])]);
    expect(cyc.columns.flat().length).toBe(4);
    expect(cyc.levelOf.get("d")).toBe(0);
    expect(new Set(cyc.levelOf.values()).size).toBeGreaterThan(1);
  });

  test("a long chain (256 jobs) is levelled without recursion", () => {
    const jobs = Array.from({ length: 256 }, (_, i) => job(`j${i}`, i ? [`j${i - 1}`] : []));
    const { columns } = jobColumns(jobs.reverse());
    expect(columns.length).toBe(256);
    expect(columns[255]![0]!.key).toBe("j255");
  });
});
