// Hostile workflow files against the parser (STYLE "Hostile input": limits before parsing):
// what `parseWorkflowTask` (the `ci.parseWorkflow` thread task) costs on each shape, in CPU ms
// of the one thread that runs it (measured in process: the task is pure and single-threaded),
// and what it answers. Shapes: a 10,000-job `needs` chain, alias bombs (1 MB, refused by the
// file's size; and the largest that passes the 512 KiB file limit: many anchors and aliases, and
// nested "billion laughs"), many keys under one job, many empty lines, long lines (a flow list,
// a script). Prints a JSON summary (bench/README §37).
//
//   bun bench/workflow-hostile.ts [--runs 5]
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { parseWorkflowTask, WORKFLOW_LIMITS } from "../src/services/ci/workflow.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const RUNS = Number(values.runs);

const trigger = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const };

/** `n` jobs, each needing the one before (the finding: ~3 s of a thread); 10,000 fit in 506 KB. */
function needsChain(n: number): string {
  const jobs = Array.from({ length: n }, (_, i) => `  j${i}: {${i ? `needs: j${i - 1},` : ""}runs-on: x, steps: [run: y]}\n`);
  return `on: push\njobs:\n${jobs.join("")}`;
}

/** Many anchors and aliases, flat: `- &aN x` then `- *aN`, up to `bytes`. */
function flatAliases(bytes: number): string {
  let s = "on: push\nenv:\n  A: x\njobs:\n  t:\n    runs-on: x\n    steps: [ { run: y } ]\nx-junk:\n";
  for (let i = 0; s.length < bytes - 40; i++) s += `  - &a${i} v\n  - *a${i}\n  - *a${i}\n`;
  return s;
}

/** Nested "billion laughs": each level a list of ten aliases of the level before, then many levels side by side. */
function laughs(bytes: number): string {
  let s = "on: push\njobs:\n  t:\n    runs-on: x\n    steps: [ { run: y } ]\nx:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (let i = 1; s.length < bytes - 200; i++) s += `  l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(", ")}]\n`;
  return s;
}

/** One job with `n` env keys (a wide mapping). */
function wideEnv(n: number): string {
  return `on: push\njobs:\n  t:\n    runs-on: x\n    env:\n${Array.from({ length: n }, (_, i) => `      K${i}: v\n`).join("")}    steps: [ { run: y } ]\n`;
}

/** `n` empty lines after a small workflow. */
function emptyLines(n: number): string {
  return `on: push\njobs: { t: { runs-on: x, steps: [ { run: y } ] } }\n${"\n".repeat(n)}`;
}

/** One line of `bytes` (a flow sequence of short scalars: an entry every 3 bytes). */
function flowLine(bytes: number): string {
  const items = Array.from({ length: Math.floor(bytes / 3) }, () => "a").join(", ");
  return `on: push\njobs:\n  t:\n    runs-on: x\n    steps: [ { run: y } ]\n    env: { L: [${items}] }\n`;
}

/** One scalar line of `bytes` (a long script). */
function longScript(bytes: number): string {
  return `on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: echo ${"x".repeat(bytes)}\n`;
}

function measure(name: string, text: string) {
  const input = { path: ".svc/workflows/h.yml", text, trigger, branch: "main" };
  for (let i = 0; i < 3; i++) parseWorkflowTask(input); // warm-up
  const cpu: number[] = [];
  let out: ReturnType<typeof parseWorkflowTask> | null = null;
  for (let i = 0; i < RUNS; i++) {
    const c0 = process.cpuUsage();
    out = parseWorkflowTask(input);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  cpu.sort((a, b) => a - b);
  const answer = out!.ok ? `ok: ${out!.jobs.length} jobs` : out!.error.slice(0, 140);
  return {
    name,
    bytes: Buffer.byteLength(text),
    cpuMs: { min: +cpu[0]!.toFixed(1), p50: +cpu[Math.floor(cpu.length / 2)]!.toFixed(1), max: +cpu.at(-1)!.toFixed(1) },
    answer,
  };
}

const load = loadavg().map((x) => +x.toFixed(2));
const limit = WORKFLOW_LIMITS.fileBytes - 1024;
const results = [
  // The legitimate one first, so neither tree's parser is warmed by the hostile ones before it.
  measure("needs chain, 256 jobs (the limit)", needsChain(256)),
  measure("needs chain, 10,000 jobs", needsChain(10_000)),
  measure("flat aliases, 1 MB", flatAliases(1024 * 1024)),
  measure("flat aliases, 511 KiB", flatAliases(limit)),
  measure("nested aliases (laughs), 1 MB", laughs(1024 * 1024)),
  measure("nested aliases (laughs), 511 KiB", laughs(limit)),
  measure("one job, 30,000 env keys", wideEnv(30_000)),
  measure("500,000 empty lines", emptyLines(500_000)),
  measure("one line of 500 KB: a flow list of 166,000 entries", flowLine(500_000)),
  measure("one line of 200 KB: a script", longScript(200_000)),
];
console.log(JSON.stringify({ cpus: cpus().length, loadavg: load, runs: RUNS, results }, null, 2));
