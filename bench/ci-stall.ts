// Benchmark (issue 29 follow-ups, bench/README.md §44): how long GET /healthz waits while CI work
// that grows with a workflow file runs on one real server. A separate process probes /healthz
// every --interval ms (bench/lib/healthz-probe.ts); per case, the worst probe latency (the
// event-loop stall the case caused), the p99 and the p50, over the case's window.
//
// - `release`: a workflow of ~415 KiB (the corpus's largest real file is 415 KiB) whose job
//   `run` takes its matrix from `needs.setup.outputs` (a placeholder, planned when `setup` ends),
//   run by one real agent. The window is from `setup`'s verdict to the first cell's start: the
//   placeholder's plan (its file parsed again) is all the server does then. Before (914a284)
//   the parse ran on the event loop inside the verdict's transaction; after, on a worker thread
//   before its own transaction (release-plan.ts).
// - `hostile`: the workflow files of test/blackbox/ci/hostile.test.ts pushed one commit after the
//   other (row 2's 150 KB matrix bomb, row 3's backtracking branch glob on a 60-character branch,
//   row 8's ten files of 20,000 nested brackets), each until its runs exist; the window is all
//   of them.
//
// - `idle`: the same probes for 5 s while the server does nothing (the machine's own noise).
// - `parse`: in this process, the CPU one plan of the release's placeholder costs (planJobAt on
//   the same file, what 914a284 ran on the event loop inside the verdict's transaction).
//
//   bun bench/ci-stall.ts [--case parse|idle|release|hostile|all] [--rounds 3] [--interval 20] [--root DIR] [--out FILE]
//
// CI_STALL_BUN_ARGS="--cpu-prof-md --cpu-prof-dir=/tmp/prof" passes Bun flags to the server (a
// profile on exit; under load its samples weigh the time the process waited for a core too).
// --root runs the server of another checkout (e.g. 914a284 unpacked with `git archive`, with a
// node_modules link) for the figures before; the prober, the agent and the cases stay this one's.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { machine } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv } from "./lib/proc.ts";
import { bootstrap, startAgent, startSvc } from "./lib/svc.ts";

import { planJobAt } from "../src/services/ci/workflow.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    case: { type: "string", default: "all" },
    rounds: { type: "string", default: "3" },
    interval: { type: "string", default: "20" },
    root: { type: "string", default: ROOT },
    out: { type: "string" },
  },
});
const ROUNDS = Number(opt.rounds);
const INTERVAL = Number(opt.interval);
const log = (s: string) => process.stderr.write(`[ci-stall] ${s}\n`);
const load = () => Math.round(loadavg()[0]! * 100) / 100;

// ---- the files -------------------------------------------------------------------------------

/** ~415 KiB: `setup` sets the matrix, `run` is planned from it at release, 100 jobs of 30 steps that never run (`if: false`) make the size. */
function releaseWorkflow(round: number): string {
  const filler: string[] = [];
  for (let j = 0; j < 100; j++) {
    filler.push(`  filler${j}:\n    if: false\n    runs-on: [self-hosted, nowhere]\n    steps:\n`);
    for (let s = 0; s < 30; s++)
      filler.push(`      - name: step ${s} of filler ${j}\n        run: echo ${"compile and test the module ".repeat(3)}${j}-${s}\n`);
  }
  return `name: release ${round}
on: push
jobs:
  setup:
    runs-on: [self-hosted, stall]
    outputs: { matrix: "\${{ steps.m.outputs.matrix }}" }
    steps:
      - id: m
        run: echo 'matrix={"os":["linux","mac"]}' >> "$GITHUB_OUTPUT"
  run:
    needs: setup
    runs-on: [self-hosted, stall]
    strategy: { matrix: "\${{ fromJSON(needs.setup.outputs.matrix) }}" }
    steps: [ { run: "echo \${{ matrix.os }}" } ]
${filler.join("")}`;
}

/** The files of test/blackbox/ci/hostile.test.ts rows 2, 3 and 8, one commit each: [files, branch, runs to wait for]. */
function hostileCommits(): [string, Record<string, string>, string, number][] {
  const ref = Array.from({ length: 1000 }, () => "${{ matrix.v }}").join(" ");
  const bombSteps = Array.from({ length: 10 }, () => `      - run: "${ref}"\n`).join("");
  const bomb = `on: push\njobs:\n  bomb:\n    name: "bomb \${{ matrix.n }}"\n    runs-on: self-hosted\n    strategy: { matrix: { n: [1], v: ["${"x".repeat(10_000)}"] } }\n    steps:\n${bombSteps}`;
  const glob = `${"*a".repeat(15)}*b`;
  const nest: Record<string, string> = {};
  for (let i = 0; i < 10; i++) nest[`.svc/workflows/n${i}.yml`] = `on: push\njobs: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`;
  return [
    ["row 2: matrix bomb (150 KB, 10 KB value × 10,000)", { ".svc/workflows/bomb.yml": bomb }, "main", 1],
    [
      "row 3: backtracking glob, 60-character branch",
      {
        ".svc/workflows/a.yml": `on: { push: { branches: ["${glob}"] } }\njobs: { a: { runs-on: x, steps: [ { run: y } ] } }\n`,
        ".svc/workflows/z.yml": "on: push\njobs: { z: { runs-on: x, steps: [ { run: y } ] } }\n",
      },
      "a".repeat(60),
      1,
    ],
    ["row 8: ten files of 20,000 nested brackets", nest, "main", 10],
  ];
}

// ---- the server, the prober, the agent ---------------------------------------------------------

interface Sample {
  at: number;
  ms: number;
}
const dir = mkdtempSync(join(tmpdir(), "svc-bench-ci-stall-"));
const server = await startSvc(
  dir,
  { SVC_LOG: "error", SVC_RUNNER_CLAIM_WAIT_MS: "20000" },
  process.env.CI_STALL_BUN_ARGS ? process.env.CI_STALL_BUN_ARGS.split(" ") : [],
  opt.root,
);
const samples: Sample[] = [];
const prober = Bun.spawn([BUN, join(ROOT, "bench/lib/healthz-probe.ts"), server.url, String(INTERVAL)], { stdout: "pipe", stderr: "inherit", env: cleanEnv() });
void (async () => {
  let buf = "";
  for await (const chunk of prober.stdout as ReadableStream<Uint8Array>) {
    buf += new TextDecoder().decode(chunk);
    let nl = buf.indexOf("\n");
    while (nl >= 0) {
      samples.push(JSON.parse(buf.slice(0, nl)) as Sample);
      buf = buf.slice(nl + 1);
      nl = buf.indexOf("\n");
    }
  }
})();

/** Worst, p99 and p50 latency of the probes sent in [from, to] (a probe sent just before a stall waits for all of it). */
function window(from: number, to: number) {
  const xs = samples
    .filter((s) => s.at >= from && s.at <= to)
    .map((s) => s.ms)
    .sort((a, b) => a - b);
  const q = (p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? null;
  return { probes: xs.length, worst_ms: xs.at(-1) ?? null, p99_ms: q(0.99), p50_ms: q(0.5) };
}

const agents: ReturnType<typeof Bun.spawn>[] = [];
const results: Record<string, unknown>[] = [];
try {
  const f = await bootstrap(server, { org: "acme", repo: "stall" });
  const json = { "content-type": "application/json" };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...json, authorization: `Bearer ${f.token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const commit = async (repo: string, files: Record<string, string>, branch: string, message: string) => {
    const operations = Object.entries(files).map(([path, content]) => ({ op: "put", path, content }));
    const c = await api("POST", `/v1/orgs/acme/repos/${repo}/commits`, {
      branch,
      message,
      operations: [...operations, { op: "put", path: "n.txt", content: message }],
    });
    if (c.status !== 201) throw new Error(`commit: ${c.status} ${JSON.stringify(c.body).slice(0, 300)}`);
    return c.body.commit as string;
  };
  /** Polls the runs of `sha` until `done` says so (the bench's own requests, not the probes). */
  const runsOf = async (repo: string, sha: string, done: (runs: any[]) => boolean) => {
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error(`runs of ${sha} did not get there`);
      const list = (await api("GET", `/v1/orgs/acme/repos/${repo}/runs?limit=20`)).body.runs.filter((r: any) => r.commit === sha);
      if (done(list)) return list;
      await Bun.sleep(100);
    }
  };

  const cases = opt.case === "all" ? ["parse", "idle", "release", "hostile"] : [opt.case!];
  if (cases.includes("parse")) {
    const text = releaseWorkflow(0);
    const trigger = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/stall", event: "push" as const };
    const needs = { setup: { result: "success", outputs: { matrix: '{"os":["linux","mac"]}' } } };
    for (let r = 0; r < ROUNDS; r++) {
      Bun.gc(true);
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      const out = planJobAt(".svc/workflows/big.yml", text, "run", trigger, needs);
      const c = process.cpuUsage(c0);
      if (!out.ok || out.jobs.length !== 2) throw new Error(`plan: ${out.ok ? out.jobs.length : out.error}`);
      results.push({
        case: "planJobAt of the 424 KiB file, in process",
        round: r + 1,
        cpu_ms: Math.round((c.user + c.system) / 1000),
        wall_ms: Math.round(performance.now() - w0),
        load: load(),
      });
    }
  }
  if (cases.includes("idle")) {
    // The machine's own noise: the same probes for 5 s while the server does nothing.
    for (let r = 0; r < ROUNDS; r++) {
      const from = Date.now();
      await Bun.sleep(5000);
      results.push({ case: "idle server, 5 s", round: r + 1, ...window(from, Date.now()), load: load() });
    }
  }
  if (cases.includes("release")) {
    agents.push(await startAgent(server, dir, "a0", "stall"));
    const text = releaseWorkflow(0);
    log(`release: workflow of ${(text.length / 1024).toFixed(0)} KiB`);
    for (let r = 0; r < ROUNDS; r++) {
      const sha = await commit("stall", { ".svc/workflows/big.yml": releaseWorkflow(r) }, "main", `release ${r}`);
      const [done] = await runsOf("stall", sha, (l) => l.length === 1 && ["success", "failure", "cancelled"].includes(l[0].state));
      if (done.state !== "success")
        throw new Error(`release run ended ${done.state}: ${JSON.stringify(done.jobs.filter((j: any) => j.error).map((j: any) => [j.key, j.error]))}`);
      const setup = done.jobs.find((j: any) => j.key === "setup");
      const cells = done.jobs.filter((j: any) => j.key.startsWith("run ("));
      if (cells.length !== 2) throw new Error(`expected 2 cells, got ${done.jobs.map((j: any) => j.key).join(", ")}`);
      const firstCell = Math.min(...cells.map((c: any) => c.started_at));
      const w = window(setup.finished_at - 50, firstCell);
      results.push({
        case: "release of a placeholder (415 KiB file)",
        round: r + 1,
        verdict_to_first_cell_ms: firstCell - setup.finished_at,
        ...w,
        whole_run: window(done.created_at, done.finished_at),
        load: load(),
      });
      log(`release ${r + 1}/${ROUNDS}: worst ${w.worst_ms} ms over ${w.probes} probes, verdict → first cell ${firstCell - setup.finished_at} ms`);
    }
  }
  if (cases.includes("hostile")) {
    // A repository of its own: the release case's file must not run again on these commits.
    const made = await api("POST", "/v1/orgs/acme/repos", { name: "hostile" });
    if (made.status !== 201) throw new Error(`repo: ${made.status}`);
    for (let r = 0; r < ROUNDS; r++) {
      const from = Date.now();
      const per: Record<string, unknown>[] = [];
      for (const [name, files, branch, count] of hostileCommits()) {
        const t0 = Date.now();
        const sha = await commit("hostile", files, branch, `hostile ${r} ${name}`);
        await runsOf("hostile", sha, (l) => l.length >= count);
        per.push({ file: name, ms: Date.now() - t0, ...window(t0, Date.now()) });
      }
      const w = window(from, Date.now());
      results.push({ case: "hostile workflow files (hostile.test.ts rows 2, 3, 8)", round: r + 1, ...w, per_commit: per, load: load() });
      log(`hostile ${r + 1}/${ROUNDS}: worst ${w.worst_ms} ms over ${w.probes} probes`);
    }
  }
  const summary = { machine: machine(), root: opt.root, interval_ms: INTERVAL, results };
  const text = JSON.stringify(summary, null, 2);
  console.log(text);
  if (opt.out) writeFileSync(opt.out, `${text}\n`);
} finally {
  for (const a of agents) a.kill("SIGKILL");
  prober.kill();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
