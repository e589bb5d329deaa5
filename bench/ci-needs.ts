// Benchmark: how soon a job with `needs` is claimed after its need ends (issue 29 "Performance":
// "needs chains of 10 jobs: each next job claimed ≤ 100 ms after its need completes"; plan-29 §6).
//
//   bun bench/ci-needs.ts [--runs 20] [--chain 10] [--agents 2] [--out FILE]
//
// One real server (`svc serve`, SQLite), --agents real `svc runner run` agents, and --runs pushes
// of a workflow whose jobs form a chain j0 → j1 → … (each `run: true`). Per edge of each run:
// started_at(next) − finished_at(need) from the API (both stamped by the server in ms: the claim
// and the verdict), then p50/p99/max over all edges. The release happens inside the verdict's
// transaction and wakes a waiting claim after COMMIT (release.ts), so the edge is the verdict's
// commit plus one claim round trip of whichever agent is waiting. Progress to stderr, JSON to stdout.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { machine } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { bootstrap, startSvc } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    runs: { type: "string", default: "20" },
    chain: { type: "string", default: "10" },
    agents: { type: "string", default: "2" },
    out: { type: "string" },
  },
});
const RUNS = Number(opt.runs);
const CHAIN = Number(opt.chain);
const AGENTS = Number(opt.agents);
const log = (s: string) => process.stderr.write(`[ci-needs] ${s}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN;
};

const dir = mkdtempSync(join(tmpdir(), "svc-bench-needs-"));
const load = [loadavg()[0]!];
const server = await startSvc(dir, { SVC_LOG: "error", SVC_RUNNER_CLAIM_WAIT_MS: "20000" });
const agents: ReturnType<typeof Bun.spawn>[] = [];
try {
  const f = await bootstrap(server, { org: "acme", repo: "chain" });
  const json = { "content-type": "application/json" };
  const login = await fetch(`${server.url}/v1/auth/login`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...json, authorization: `Bearer ${f.token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  for (let i = 0; i < AGENTS; i++) {
    const tok = await fetch(`${server.url}/v1/orgs/acme/runners/registration-token`, { method: "POST", headers: { ...json, cookie }, body: "{}" });
    const token = ((await tok.json()) as { token: string }).token;
    const config = join(dir, `agent-${i}.json`);
    const reg = await run(
      [BUN, join(ROOT, "src/main.ts"), "runner", "register", "--url", server.url, "--token", token, "--name", `a${i}`, "--config", config, "--labels", "chain"],
      cleanEnv(),
    );
    if (reg.code !== 0) throw new Error(`register: ${reg.stderr}`);
    agents.push(
      Bun.spawn([BUN, join(ROOT, "src/main.ts"), "runner", "run", "--config", config, "--workdir", join(dir, `work-${i}`)], {
        env: cleanEnv(),
        stdout: "ignore",
        stderr: "ignore",
      }),
    );
  }

  const jobs = Array.from({ length: CHAIN }, (_, i) =>
    [`  j${i}:`, "    runs-on: [self-hosted, chain]", ...(i ? [`    needs: j${i - 1}`] : []), "    steps: [ { run: true } ]"].join("\n"),
  );
  const workflow = `on: push\njobs:\n${jobs.join("\n")}\n`;
  const edges: number[] = [];
  const runMs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const c = await api("POST", "/v1/orgs/acme/repos/chain/commits", {
      branch: "main",
      message: `run ${r}`,
      operations: [
        { op: "put", path: ".svc/workflows/chain.yml", content: workflow },
        { op: "put", path: "n.txt", content: `${r}\n` },
      ],
    });
    if (c.status !== 201) throw new Error(`commit: ${c.status} ${JSON.stringify(c.body)}`);
    const sha = c.body.commit as string;
    let done: any = null;
    const deadline = Date.now() + 120_000;
    while (!done) {
      if (Date.now() > deadline) throw new Error(`run ${r} did not finish`);
      await Bun.sleep(100);
      const list = await api("GET", "/v1/orgs/acme/repos/chain/runs?limit=5");
      const found = list.body.runs.find((x: any) => x.commit === sha);
      if (found && ["success", "failure", "cancelled"].includes(found.state)) done = found;
    }
    if (done.state !== "success") throw new Error(`run ${r} ended ${done.state}: ${JSON.stringify(done.jobs.map((j: any) => [j.key, j.state, j.error]))}`);
    const byKey = new Map(done.jobs.map((j: any) => [j.key, j]));
    for (let i = 1; i < CHAIN; i++) {
      const need = byKey.get(`j${i - 1}`) as any;
      const next = byKey.get(`j${i}`) as any;
      edges.push(next.started_at - need.finished_at);
    }
    runMs.push(done.finished_at - done.created_at);
    load.push(loadavg()[0]!);
    log(`run ${r + 1}/${RUNS}: ${done.finished_at - done.created_at} ms, edges ${edges.slice(-(CHAIN - 1)).join(" ")}`);
  }
  const summary = {
    machine: machine(),
    runs: RUNS,
    chain: CHAIN,
    agents: AGENTS,
    edges: edges.length,
    edge_ms: { p50: pct(edges, 50), p90: pct(edges, 90), p99: pct(edges, 99), max: Math.max(...edges), min: Math.min(...edges) },
    over_100ms: edges.filter((e) => e > 100).length,
    run_ms: { p50: pct(runMs, 50), max: Math.max(...runMs) },
    load_avg_1m: { start: load[0], max: Math.max(...load), end: load.at(-1) },
  };
  const text = JSON.stringify(summary, null, 2);
  console.log(text);
  if (opt.out) writeFileSync(opt.out, `${text}\n`);
} finally {
  for (const a of agents) a.kill("SIGKILL");
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
