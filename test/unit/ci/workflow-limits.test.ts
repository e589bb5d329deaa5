// Issue 25 rows 2 and 8 at the parser: expansion charged to a budget per job and per run before
// strings are built, a nesting scan before the YAML parser, and expression scanning in one pass.
import { describe, expect, test } from "bun:test";
import { parseDocument, visit } from "yaml";
import { parseWorkflow, parseWorkflowTask, WORKFLOW_LIMITS } from "../../../src/services/ci/workflow.ts";
import { scanCounts, scanWorkflow, yamlTooDeep } from "../../../src/services/ci/workflow-scan.ts";

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

/** `n` jobs, each needing the one before (the finding: 10,000 of them cost seconds of a thread). */
export function needsChain(n: number): string {
  const jobs = Array.from({ length: n }, (_, i) => `  j${i}: {${i ? `needs: j${i - 1},` : ""}runs-on: x, steps: [run: y]}\n`);
  return `on: push\njobs:\n${jobs.join("")}`;
}

describe("limits checked before parsing (workflow-scan.ts)", () => {
  test("a 10,000-job needs chain is refused at the 257th job, naming the limit, without parsing", () => {
    const text = needsChain(10_000);
    expect(text.length).toBeLessThan(WORKFLOW_LIMITS.fileBytes);
    // Line 259 holds j256, the 257th job; the message is the parser's own for too many jobs.
    expect(parse(text)).toEqual({ ok: false, error: `${P}:259:3: more than ${WORKFLOW_LIMITS.jobsPerRun} jobs` });
    expect(scanWorkflow(text, { ...WORKFLOW_LIMITS, jobs: WORKFLOW_LIMITS.jobsPerRun })).toMatchObject({ kind: "jobs", line: 259, col: 3 });
    // A flow mapping of jobs, and a block mapping with comments, blank lines and scripts between the keys.
    const flow = `on: push\njobs: { ${Array.from({ length: 300 }, (_, i) => `j${i}: { runs-on: x, steps: [ { run: y } ] }`).join(", ")} }\n`;
    expect(parse(flow)).toEqual({ ok: false, error: expect.stringMatching(/^\.svc\/workflows\/ci\.yml:2:\d+: more than 256 jobs$/) });
    const spaced = `on: push\njobs:\n${Array.from({ length: 257 }, (_, i) => `  # job ${i}\n  j${i}:\n    runs-on: x\n\n    steps:\n      - run: |\n          echo ${i}\n`).join("")}`;
    expect(parse(spaced)).toEqual({ ok: false, error: `${P}:${3 + 256 * 7 + 1}:3: more than 256 jobs` });
  });

  test("256 jobs pass the scan (the parser's limit is the same number)", () => {
    expect(scanCounts(needsChain(256)).jobs).toBe(256);
    expect(scanWorkflow(needsChain(256), { ...WORKFLOW_LIMITS, jobs: WORKFLOW_LIMITS.jobsPerRun })).toBeNull();
    const r = parse(needsChain(256));
    expect(r.ok && r.jobs.length).toBe(256);
  });

  test("more than 1,000 anchors and aliases are refused at the first one past the limit", () => {
    const env = Array.from({ length: 501 }, (_, i) => `      A${i}: &a${i} v\n      B${i}: *a${i}\n`).join("");
    const text = `on: push\njobs:\n  t:\n    runs-on: x\n    env:\n${env}    steps: [ { run: y } ]\n`;
    // The 1,001st: the anchor of A500, on line 6 + 2 × 500.
    expect(parse(text)).toEqual({ ok: false, error: `${P}:1006:13: more than ${WORKFLOW_LIMITS.anchors} YAML anchors and aliases` });
    // 1,000 pass the scan (and the aliases are resolved).
    const fewer = text.replace(/      A500: .*\n      B500: .*\n/, "");
    expect(parse(fewer).ok).toBe(true);
    // An alias naming an anchor earlier in the same mapping or list.
    const r = parse(`on: push\njobs:\n  t:\n    runs-on: x\n    env: { A: &v one, B: *v }\n    steps: [ &s { run: y }, *s ]\n`);
    expect(r.ok && r.jobs[0]!.spec.env).toEqual({ A: "one", B: "one" });
    expect(r.ok && r.jobs[0]!.spec.steps.length).toBe(2);
  });

  test("more than 20,000 mapping keys and list items are refused (a flow list on one line, or a block list)", () => {
    const flow = `on: push\njobs: { t: { runs-on: x, env: { L: [${Array(25_000).fill("a").join(", ")}] }, steps: [ { run: y } ] } }\n`;
    expect(parse(flow)).toEqual({ ok: false, error: expect.stringMatching(/^\.svc\/workflows\/ci\.yml:2:\d+: more than 20000 mapping keys and list items$/) });
    const block = `on: push\njobs:\n  t:\n    runs-on: x\n    steps: [ { run: y } ]\nx:\n${"  - a\n".repeat(25_000)}`;
    // Entries so far: on, jobs, t, runs-on, steps, the step, run, x = 8; the 20,000th item is line 6 + 19,992.
    expect(parse(block)).toEqual({ ok: false, error: `${P}:${6 + 19_993}:3: more than 20000 mapping keys and list items` });
  });

  test("more than 30,000 lines are refused at the first line past the limit, whatever they hold", () => {
    const text = `on: push\njobs: { t: { runs-on: x, steps: [ { run: y } ] } }\n${"\n".repeat(40_000)}`;
    expect(parse(text)).toEqual({ ok: false, error: `${P}:30001:1: more than ${WORKFLOW_LIMITS.lines} lines` });
    expect(parse(`on: push\njobs: { t: { runs-on: x, steps: [ { run: y } ] } }\n${"# c\n".repeat(29_000)}`).ok).toBe(true);
  });

  test("a long line is not limited: it costs the parser nothing (a 200 KB script)", () => {
    const r = parse(`on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: echo ${"x".repeat(200_000)}\n`);
    expect(r.ok && r.jobs[0]!.spec.steps[0]!.run?.length).toBe(200_005);
  });

  test("what only looks like structure is not counted: scripts, quotes, comments, plain scalars and their continuation lines", () => {
    const looks = Array.from({ length: 400 }, (_, i) => [`jobs:`, `  j${i}: *x`, `  - &a${i} b`, `*a &b - c`, `[[[{{{`][i % 5]).join("\n          ");
    const text = `name: "jobs: *a &b"
on: push   # jobs: *a &b
jobs:
  t:
    runs-on: x
    name: build
      *x && &y - z
    strategy: { matrix: { S: [a*b, c&d, don't] } }
    env: { Q: "jobs: *a &b\\n  - x", R: 'it''s *a', T: "multi
      line *a &b
      - x: y" }
    steps:
      - name: "quoted
          *line &quoted
          jobs: x"
        run: |
          ${looks}
      - run: >-
          ${looks}
        shell: bash
      - run: echo "one" # *a &b
        env:
          jobs: not the top-level key
`;
    // The same counts as the YAML parser's own: one job, no anchor or alias, 27 entries.
    let entries = 0;
    const doc = parseDocument(text);
    expect(doc.errors).toEqual([]);
    visit(doc, { Map: (_, n) => void (entries += n.items.length), Seq: (_, n) => void (entries += n.items.length) });
    expect(entries).toBe(27);
    expect(scanCounts(text)).toMatchObject({ jobs: 1, anchors: 0, entries: 27, lines: 821 });
    const r = parse(text);
    expect(r.ok && r.jobs.map((j) => j.key)).toEqual(["a*b", "c&d", "don't"].map((v) => `build *x && &y - z (S=${v})`));
    expect(r.ok && r.jobs[0]!.spec.steps.length).toBe(3);
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
