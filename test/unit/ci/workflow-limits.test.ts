// Issue 25 rows 2 and 8 at the parser: expansion charged to a budget per job and per run before
// strings are built, a nesting scan before the YAML parser, and expression scanning in one pass.
import { describe, expect, test } from "bun:test";
import { parseWorkflow, parseWorkflowTask, WORKFLOW_LIMITS } from "../../../src/services/ci/workflow.ts";
import { yamlTooDeep } from "../../../src/services/ci/workflow-scan.ts";

const trigger = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const };
const P = ".svc/workflows/ci.yml";
const parse = (text: string) => parseWorkflow(P, text, trigger);

/** The workflow of the finding: a 10 KB matrix value referenced 1,000 times in each of 10 steps (100 MB expanded). */
export function matrixBomb(steps = 10, refs = 1000, valueBytes = 10_000): string {
  const run = Array.from({ length: refs }, () => "${{ matrix.v }}").join(" ");
  return `on: push\njobs:\n  bomb:\n    name: "bomb \${{ matrix.n }}"\n    runs-on: self-hosted\n    strategy: { matrix: { n: [1], v: ["${"x".repeat(valueBytes)}"] } }\n    steps:\n${Array.from({ length: steps }, () => `      - run: "${run}"\n`).join("")}`;
}

describe("expansion budget (row 2)", () => {
  test("the finding's workflow is refused at the first expansion past the job's budget, naming the limit", () => {
    const text = matrixBomb();
    expect(text.length).toBeLessThan(WORKFLOW_LIMITS.fileBytes);
    const r = parse(text);
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/^\.svc\/workflows\/ci\.yml:\d+:\d+: this job would carry more than 256 KiB/) });
  });

  test("many small jobs that together pass the run's budget are refused naming the run's limit", () => {
    const cells = Array.from({ length: 200 }, (_, i) => i).join(", ");
    const script = "y".repeat(8_000);
    const r = parse(`on: push\njobs:\n  t:\n    runs-on: self-hosted\n    strategy: { matrix: { n: [${cells}] } }\n    steps:\n      - run: ${script}\n`);
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/more than 1 MiB of keys, labels, env and steps/) });
  });

  test("the workflow env is charged once per job that copies it", () => {
    const cells = Array.from({ length: 100 }, (_, i) => i).join(", ");
    const r = parse(
      `on: push\nenv: { BIG: "${"e".repeat(20_000)}" }\njobs:\n  t:\n    runs-on: self-hosted\n    strategy: { matrix: { n: [${cells}] } }\n    steps: [ { run: x } ]\n`,
    );
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/more than 1 MiB/);
  });

  test("a big but honest workflow passes: 256 cells of a few steps", () => {
    const a = Array.from({ length: 16 }, (_, i) => i).join(", ");
    const r = parse(
      `on: push\njobs:\n  t:\n    runs-on: [self-hosted]\n    strategy: { matrix: { a: [${a}], b: [${a}] } }\n    steps:\n      - name: build \${{ matrix.a }}\n        run: make A=\${{ matrix.a }} B=\${{ matrix.b }}\n      - run: make test\n`,
    );
    expect(r.ok && r.jobs.length).toBe(256);
  });

  test("a job key longer than 1 KiB is refused", () => {
    const r = parse(`on: push\njobs:\n  t:\n    name: "${"k".repeat(1100)}"\n    runs-on: self-hosted\n    steps: [ { run: x } ]\n`);
    expect(!r.ok && r.error).toMatch(/is longer than 1024 bytes/);
  });

  test("expressions: unclosed openings, single braces and many openings cost one pass", () => {
    // Issue 29: every `\${{` is parsed by the expression module; a single `}` or an unclosed opening is an error at its column.
    const bad = parse(`on: push\njobs:\n  t:\n    runs-on: self-hosted\n    steps:\n      - run: "\${{ github.sha } \${{ github.sha }} \${{ open"\n`);
    expect(!bad.ok && bad.error).toBe(`${P}:6:30: unexpected character "}"`);
    const ok = parse(`on: push\njobs:\n  t:\n    runs-on: self-hosted\n    steps:\n      - run: "\${{ github.sha }} x"\n`);
    expect(ok.ok && ok.jobs[0]!.spec.steps[0]!.run).toBe(`${trigger.sha} x`);
    // 60,000 openings with no closing brace: the old RegExp rescanned the rest of the string from each.
    const many = "${{ ".repeat(60_000);
    const r = parse(`on: push\njobs:\n  t:\n    runs-on: self-hosted\n    steps:\n      - run: "${many}"\n`);
    expect(!r.ok && r.error).toBe(`${P}:6:15: the expression opened here is not closed with }}`);
  }, 5_000);
});

describe("nesting scan before parsing (row 8)", () => {
  test("20,000 nested brackets, compact sequences and deep indentation are refused with their position", () => {
    expect(parse(`on: push\njobs: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`)).toEqual({
      ok: false,
      error: `${P}:2:70: the file nests deeper than 64 levels`,
    });
    expect(parse(`on: push\njobs:\n${"- ".repeat(5_000)}x\n`)).toEqual({
      ok: false,
      error: expect.stringMatching(/^\.svc\/workflows\/ci\.yml:3:\d+: the file nests deeper than 64 levels$/),
    });
    const stairs = Array.from({ length: 100 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n");
    expect(parse(`on: push\njobs:\n${stairs}\n`)).toEqual({ ok: false, error: expect.stringMatching(/nests deeper than 64 levels/) });
  }, 5_000);

  test("what is not nesting is not counted: brackets in scripts, quotes, comments and block scalars", () => {
    const text = `name: "[[[[ not nesting {{{{"
on: { push: { branches: [main, "release/**"] } }
jobs:
  build:   # [[[[[[
    runs-on: [self-hosted, linux]
    steps:
      - name: test [unit]
        run: |
          if [ -f x ]; then echo [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[; fi
${Array.from({ length: 80 }, (_, i) => `${" ".repeat(10 + i)}echo deep ${i}`).join("\n")}
      - run: 'echo ''[[['''
        env: { A: "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{" }
`;
    expect(yamlTooDeep(text)).toBeNull();
    const r = parse(text);
    expect(r.ok).toBe(true);
  });

  test("64 levels of flow nesting pass the scan; the parser judges them", () => {
    expect(yamlTooDeep(`on: push\njobs: ${"[".repeat(60)}${"]".repeat(60)}\n`)).toBeNull();
    expect(yamlTooDeep(`on: push\njobs: ${"[".repeat(70)}${"]".repeat(70)}\n`)).not.toBeNull();
  });
});

describe("the thread task", () => {
  test("answers whether the workflow runs for the trigger, with jobs only when it does", () => {
    const text = "on: { push: { branches: [main] } }\njobs: { a: { runs-on: x, steps: [ { run: y } ] } }\n";
    const run = { name: null, runName: null, concurrency: null, graph: { a: [] }, order: ["a"] };
    expect(parseWorkflowTask({ path: P, text, trigger, branch: "main" })).toEqual({
      ok: true,
      matches: true,
      jobs: [expect.objectContaining({ key: "a" })],
      run,
    });
    expect(parseWorkflowTask({ path: P, text, trigger, branch: "dev" })).toEqual({ ok: true, matches: false, jobs: [], run });
    expect(parseWorkflowTask({ path: P, text: "on: [", trigger, branch: "main" }).ok).toBe(false);
  });
});
