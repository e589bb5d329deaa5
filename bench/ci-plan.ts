// Planning a 256-job matrix workflow (issue 29, plan-29 §6: "plan a 256-job matrix workflow on
// push ≤ 20 ms"): `parseWorkflowTask` in process (what the `ci.parseWorkflow` thread task runs)
// on a generated workflow with a 16×16 matrix and 5 steps per job, each step with expressions.
// Two variants: v1 (steps read only matrix.* and github.*: expanded at plan time, as before
// issue 29) and v2 (steps also read steps/needs/secrets, job `if`, `needs`, outputs, concurrency:
// templates parsed once per node and kept for the runner). Also: the expression module alone
// (10,000 parses and evaluations of typical `if:`s). Prints a JSON summary.
//
//   bun bench/ci-plan.ts [--runs 200]
import { parseArgs } from "node:util";
import { evaluateCondition, parseCondition } from "../src/services/ci/expr/index.ts";
import { parseWorkflowTask } from "../src/services/ci/workflow.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "200" } } });
const RUNS = Number(values.runs);

const cells = (p: string) => Array.from({ length: 16 }, (_, i) => `${p}${i}`).join(", ");

function workflow(v2: boolean): string {
  const steps = Array.from({ length: 5 }, (_, i) =>
    v2
      ? `      - id: s${i}\n        name: step ${i} on \${{ matrix.os }}\n        if: \${{ matrix.node != 'n3' && steps.s0.outcome != 'failure' }}\n        run: make test OS=\${{ matrix.os }} NODE=\${{ matrix.node }} SHA=\${{ github.sha }} PREV=\${{ steps.s0.outputs.v }}\n        env: { TOKEN: "\${{ secrets.TOKEN }}", REF: "\${{ github.ref_name }}" }\n`
      : `      - name: step ${i} on \${{ matrix.os }}\n        run: make test OS=\${{ matrix.os }} NODE=\${{ matrix.node }} SHA=\${{ github.sha }}\n        env: { REF: "\${{ github.ref_name }}" }\n`,
  ).join("");
  const pre = v2
    ? `  build:\n    runs-on: self-hosted\n    outputs: { v: "\${{ steps.b.outputs.v }}" }\n    steps:\n      - id: b\n        run: echo v=1 >> "$GITHUB_OUTPUT"\n`
    : "";
  const extra = v2
    ? `    needs: build\n    if: \${{ needs.build.outputs.v != '' }}\n    concurrency: { group: "t-\${{ matrix.os }}-\${{ github.ref }}", cancel-in-progress: true }\n`
    : "";
  // 255 cells + build = 256 jobs in v2; 256 cells in v1.
  const exclude = v2 ? "        exclude: [ { os: o15, node: n15 } ]\n" : "";
  return `name: big\non: push\njobs:\n${pre}  test:\n${extra}    name: test \${{ matrix.os }} \${{ matrix.node }}\n    runs-on: [self-hosted, "\${{ matrix.os }}"]\n    strategy:\n      matrix:\n        os: [${cells("o")}]\n        node: [${cells("n")}]\n${exclude}    timeout-minutes: 30\n    steps:\n${steps}`;
}

const trigger = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const };
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

function measure(text: string) {
  const input = { path: ".svc/workflows/big.yml", text, trigger, branch: "main" };
  const first = parseWorkflowTask(input);
  if (!first.ok) throw new Error(first.error);
  for (let i = 0; i < 20; i++) parseWorkflowTask(input); // warm-up
  const wall: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    parseWorkflowTask(input);
    wall.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpu0);
  wall.sort((a, b) => a - b);
  return {
    bytes: text.length,
    jobs: first.jobs.length,
    specV2: first.jobs.filter((j) => j.spec.v === 2).length,
    wallMs: { p50: +pct(wall, 50).toFixed(2), p99: +pct(wall, 99).toFixed(2), max: +wall.at(-1)!.toFixed(2) },
    cpuMsPerParse: +((cpu.user + cpu.system) / 1000 / RUNS).toFixed(2),
  };
}

function exprBench() {
  const ifs = [
    "github.ref == 'refs/heads/main' && github.event_name == 'push'",
    "${{ needs.build.outputs.v != '' && !cancelled() }}",
    "contains(github.ref, 'release') || startsWith(github.ref, 'refs/tags/v')",
    "matrix.os == 'linux' && matrix.node >= 18",
  ];
  const contexts = {
    github: { ref: "refs/heads/main", event_name: "push" },
    needs: { build: { outputs: { v: "1" }, result: "success" } },
    matrix: { os: "linux", node: 20 },
  };
  const status = { success: true, failure: false, cancelled: false };
  const N = 10_000;
  let t = performance.now();
  const parsed = [];
  for (let i = 0; i < N; i++) parsed.push(parseCondition(ifs[i % ifs.length]!));
  const parseUs = ((performance.now() - t) * 1000) / N;
  t = performance.now();
  let yes = 0;
  for (let i = 0; i < N; i++) if (evaluateCondition(parsed[i]!, { contexts, status })) yes++;
  const evalUs = ((performance.now() - t) * 1000) / N;
  return {
    conditions: N,
    parseUsEach: +parseUs.toFixed(2),
    evaluateUsEach: +evalUs.toFixed(2),
    evaluationsPerSecond: Math.round(1e6 / evalUs),
    trueCount: yes,
  };
}

const os = await import("node:os");
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      load: os.loadavg().map((x) => +x.toFixed(2)),
      v1: measure(workflow(false)),
      v2: measure(workflow(true)),
      expressions: exprBench(),
    },
    null,
    2,
  ),
);
