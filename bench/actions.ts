// Benchmark: what a `uses:` of an action on this server adds to a job (issue 30 "Performance":
// "Resolving a uses: from the instance adds ≤ 300 ms to a job's start (a shallow fetch of the
// action's ref, cached per runner machine by commit)").
//
//   bun bench/actions.ts [--rounds 15] [--out FILE]
//
// One real server (`svc serve`, SQLite) and one real `svc runner run` agent. Each round pushes
// three one-job workflows and waits for each run:
//   plain   steps: [ run: true ]                                   (the baseline)
//   first   steps: [ uses: acme/tools/noop@v1, run: true ]          after a new commit on tools@v1,
//                                                                   so the agent resolves and fetches
//   cached  the same again: the agent resolves, the commit is in its cache
// The action is a composite of one `run: true` step. Per job: finished_at − started_at (both
// stamped by the server: the claim and the verdict). The overhead is the median of first/cached
// minus the median of plain. The floor beside it: a `git clone --depth 1` of the action's
// repository from the same server by the machine's git (what the fetch is made of).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { machine } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { bootstrap, startSvc } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: "string", default: "15" }, out: { type: "string" } },
});
const ROUNDS = Number(opt.rounds);
const log = (s: string) => process.stderr.write(`[actions] ${s}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN;
};

const dir = mkdtempSync(join(tmpdir(), "svc-bench-actions-"));
const load = [loadavg()[0]!];
const server = await startSvc(dir, { SVC_LOG: "error", SVC_RUNNER_CLAIM_WAIT_MS: "20000" });
let agent: ReturnType<typeof Bun.spawn> | null = null;
try {
  const f = await bootstrap(server, { org: "acme", repo: "app" });
  const json = { "content-type": "application/json" };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...json, authorization: `Bearer ${f.token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const created = await api("POST", "/v1/orgs/acme/repos", { name: "tools", public: true });
  if (created.status !== 201) throw new Error(`create tools: ${created.status} ${JSON.stringify(created.body)}`);
  const commit = async (repo: string, branch: string, files: Record<string, string>) => {
    const c = await api("POST", `/v1/orgs/acme/repos/${repo}/commits`, {
      branch,
      message: "bench",
      operations: Object.entries(files).map(([path, content]) => ({ op: "put", path, content })),
    });
    if (c.status !== 201) throw new Error(`commit: ${c.status} ${JSON.stringify(c.body)}`);
    return c.body.commit as string;
  };
  let toolsRev = 0;
  const newToolsCommit = () =>
    commit("tools", "v1", {
      "noop/action.yml": "name: noop\nruns:\n  using: composite\n  steps:\n    - shell: bash\n      run: 'true'\n",
      "README.md": `rev ${toolsRev++}\n`,
    });
  await newToolsCommit();

  const login = await fetch(`${server.url}/v1/auth/login`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const tok = await fetch(`${server.url}/v1/orgs/acme/runners/registration-token`, { method: "POST", headers: { ...json, cookie }, body: "{}" });
  const token = ((await tok.json()) as { token: string }).token;
  const config = join(dir, "agent.json");
  const reg = await run(
    [BUN, join(ROOT, "src/main.ts"), "runner", "register", "--url", server.url, "--token", token, "--name", "a0", "--config", config, "--labels", "bench"],
    cleanEnv(),
  );
  if (reg.code !== 0) throw new Error(`register: ${reg.stderr}`);
  agent = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "runner", "run", "--config", config, "--workdir", join(dir, "work")], {
    env: cleanEnv(),
    stdout: "ignore",
    stderr: "ignore",
  });

  const workflow = (uses: boolean) =>
    `on: push\njobs:\n  j:\n    runs-on: [self-hosted, bench]\n    steps:\n${uses ? "      - uses: acme/tools/noop@v1\n" : ""}      - run: "true"\n`;
  let n = 0;
  const jobMs = async (uses: boolean): Promise<number> => {
    const sha = await commit("app", "main", { ".svc/workflows/ci.yml": workflow(uses), "n.txt": `${n++}\n` });
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error(`run of ${sha} did not finish`);
      await Bun.sleep(50);
      const list = await api("GET", "/v1/orgs/acme/repos/app/runs?limit=5");
      const done = list.body.runs.find((x: any) => x.commit === sha && ["success", "failure", "cancelled"].includes(x.state));
      if (!done) continue;
      const job = done.jobs[0];
      if (done.state !== "success") throw new Error(`run ended ${done.state}: ${job.error}`);
      return job.finished_at - job.started_at;
    }
  };
  // Warm-up: the first job of the agent's life pays for cold code paths on both sides.
  await jobMs(false);
  await jobMs(true);
  const plain: number[] = [];
  const first: number[] = [];
  const cached: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    plain.push(await jobMs(false));
    await newToolsCommit();
    first.push(await jobMs(true));
    cached.push(await jobMs(true));
    load.push(loadavg()[0]!);
    log(`round ${r + 1}/${ROUNDS}: plain ${plain.at(-1)} ms, first use ${first.at(-1)} ms, cached ${cached.at(-1)} ms`);
  }
  // The floor: a shallow clone of the action's repository from the server by the machine's git.
  const clones: number[] = [];
  for (let i = 0; i < 10; i++) {
    const target = join(dir, `clone-${i}`);
    const t0 = performance.now();
    const c = await run(["git", "clone", "-q", "--depth", "1", "--branch", "v1", `${server.url}/acme/tools.git`, target], cleanEnv());
    if (c.code !== 0) throw new Error(`clone: ${c.stderr}`);
    clones.push(performance.now() - t0);
  }
  const stats = (xs: number[]) => ({ p50: pct(xs, 50), p90: pct(xs, 90), min: Math.min(...xs), max: Math.max(...xs) });
  const summary = {
    machine: machine(),
    rounds: ROUNDS,
    job_ms: { plain: stats(plain), first_use: stats(first), cached: stats(cached) },
    overhead_ms: { first_use: pct(first, 50) - pct(plain, 50), cached: pct(cached, 50) - pct(plain, 50) },
    git_clone_depth1_ms: stats(clones.map((x) => Math.round(x))),
    load_avg_1m: { start: load[0], max: Math.max(...load), end: load.at(-1) },
  };
  const text = JSON.stringify(summary, null, 2);
  console.log(text);
  if (opt.out) writeFileSync(opt.out, `${text}\n`);
} finally {
  agent?.kill("SIGKILL");
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
