// Benchmark: runner machines against the real server (issue 13).
//
//   bun bench/runners.ts [--machines 1000] [--idle-minutes 5] [--pushes 200] [--jobs 10000]
//                        [--workers 50] [--skip-idle] [--keep] [--out FILE] [--cpu-prof DIR]
//
// A. --machines simulated machines (one process) long-poll the claim with nothing queued for
//    --idle-minutes: server RSS (max of 1 s samples), server CPU while idle (share of one core),
//    client timeouts and errors. Targets: RSS ≤ 200 MB, CPU < 10% of a core, no timeouts.
// B. While they wait, one more machine with its own label waits too; --pushes commits of a
//    workflow (POST …/commits), each timed from the push's answer (and from its start) to that
//    machine's claim answer: push-to-claim latency. Targets: p50 ≤ 20 ms, p99 ≤ 100 ms.
//    (act_runner polls every 2 s: 1 s on average.)
// C. --jobs queued jobs (two pushes of 20 workflows with a matrix each), claimed and completed by
//    --workers machines: claims/s and that no job was handed out twice. Target ≥ 500 claims/s.
// Progress goes to stderr; the JSON summary to stdout. See bench/README.md.
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { machine, rssOf } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { startSvc } from "./lib/svc.ts";

// Bun's fetch runs at most 256 requests at once unless told otherwise: re-run with room for every machine.
if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
  const child = Bun.spawn([BUN, ...process.argv.slice(1)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" },
    stdio: ["inherit", "inherit", "inherit"],
  });
  process.exit(await child.exited);
}

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    machines: { type: "string", default: "1000" },
    "idle-minutes": { type: "string", default: "5" },
    pushes: { type: "string", default: "200" },
    jobs: { type: "string", default: "10000" },
    workers: { type: "string", default: "50" },
    "skip-idle": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    out: { type: "string" },
    "cpu-prof": { type: "string" },
  },
});
const MACHINES = Number(opt.machines);
const IDLE_MS = Number(opt["idle-minutes"]) * 60_000;
const PUSHES = Number(opt.pushes);
const JOBS = Number(opt.jobs);
const WORKERS = Number(opt.workers);
const CLAIM_WAIT_MS = 20_000;
const log = (s: string) => process.stderr.write(`[runners] ${s}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8");
  const parts = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return (Number(parts[11]) + Number(parts[12])) / 100;
}
/** CPU seconds all processes used (from /proc/stat), for contention. */
function machineCpuSeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!.split(/\s+/).slice(1).map(Number);
  return (line[0]! + line[1]! + line[2]! + line[5]! + line[6]!) / 100;
}

const dir = mkdtempSync(join(tmpdir(), "svc-bench-runners-"));
const server = await startSvc(
  dir,
  { SVC_LOG: "warn", SVC_RUNNER_CLAIM_WAIT_MS: String(CLAIM_WAIT_MS) },
  opt["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${opt["cpu-prof"]}`] : [],
);
const pid = server.pid;
log(
  `server ${server.url} pid ${pid}; load average before: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
);

// ---- bootstrap: owner, admin token, repository ----
const email = "bench@example.com";
const password = "correct horse battery staple";
const created = await run(
  [BUN, join(ROOT, "src/main.ts"), "user-create", "--org", "bench", "--email", email, "--name", "Bench", "--password", password, "--role", "owner"],
  { ...cleanEnv(), ...server.env },
);
if (created.code !== 0) throw new Error(created.stderr);
const login = await fetch(`${server.url}/v1/auth/login`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email, password }),
});
const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
async function api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : { cookie, origin: server.url };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const admin = (await api("POST", "/v1/orgs/bench/tokens", { scopes: ["org:admin"], label: "bench", kind: "service" })).body.token as string;
if ((await api("POST", "/v1/orgs/bench/repos", { name: "app" }, admin)).status !== 201) throw new Error("repo create failed");

async function register(name: string, labels: string[]): Promise<string> {
  const tok = await api("POST", "/v1/orgs/bench/runners/registration-token", {}, admin);
  const r = await api("POST", "/v1/runners/register", { name, os: "linux", arch: "x64", labels }, tok.body.token);
  if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.credential;
}
const claim = (credential: string, signal?: AbortSignal) =>
  fetch(`${server.url}/v1/runners/claim`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}` },
    signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(CLAIM_WAIT_MS + 10_000)]) : AbortSignal.timeout(CLAIM_WAIT_MS + 10_000),
  });
async function complete(job: { job_id: string; token: string }): Promise<void> {
  const r = await fetch(`${server.url}/v1/runner/jobs/${job.job_id}/complete`, {
    method: "POST",
    headers: { authorization: `Bearer ${job.token}`, "content-type": "application/json" },
    body: JSON.stringify({ verdict: "success" }),
  });
  if (r.status !== 204) throw new Error(`complete: ${r.status}`);
}
let commits = 0;
async function commit(files: Record<string, string>, branch = "main"): Promise<void> {
  const r = await api(
    "POST",
    "/v1/orgs/bench/repos/app/commits",
    { branch, message: `bench ${++commits}`, operations: Object.entries(files).map(([path, content]) => ({ op: "put", path, content })) },
    admin,
  );
  if (r.status !== 201) throw new Error(`commit: ${r.status} ${JSON.stringify(r.body)}`);
}

const summary: Record<string, unknown> = {
  machine: machine(),
  command: `bun bench/runners.ts ${process.argv.slice(2).join(" ")}`.trim(),
  started_at: new Date().toISOString(),
  load_before: loadavg(),
};

// ---- A: idle long-polling machines ----
const idleStop = new AbortController();
let idleClaims = 0;
let idleTimeouts = 0;
let idleErrors = 0;
let idleUnexpected = 0;
const idleLoops: Promise<void>[] = [];
if (!opt["skip-idle"]) {
  log(`registering ${MACHINES} machines`);
  const creds: string[] = [];
  for (let i = 0; i < MACHINES; i += 50)
    creds.push(...(await Promise.all(Array.from({ length: Math.min(50, MACHINES - i) }, (_, k) => register(`idle-${i + k}`, ["idle"])))));
  log("starting the long polls");
  for (const cred of creds) {
    idleLoops.push(
      (async () => {
        while (!idleStop.signal.aborted) {
          try {
            const res = await claim(cred, idleStop.signal);
            await res.arrayBuffer();
            if (res.status === 204) idleClaims++;
            else idleUnexpected++;
          } catch (e) {
            if (idleStop.signal.aborted) return;
            if ((e as Error).name === "TimeoutError") idleTimeouts++;
            else idleErrors++;
          }
        }
      })(),
    );
  }
  // Let every machine get into its wait, then measure the idle window.
  await Bun.sleep(5_000);
  const rssSamples: number[] = [];
  const cpu0 = cpuSeconds(pid);
  const all0 = machineCpuSeconds();
  const t0 = performance.now();
  const claims0 = idleClaims;
  while (performance.now() - t0 < IDLE_MS) {
    await Bun.sleep(1_000);
    rssSamples.push(rssOf(pid).rss_mb);
    if (rssSamples.length % 30 === 0) log(`idle ${Math.round((performance.now() - t0) / 1000)} s: rss ${rssSamples.at(-1)} MB, claims answered ${idleClaims}`);
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(pid) - cpu0;
  const others = machineCpuSeconds() - all0 - cpu;
  summary.idle = {
    machines: MACHINES,
    seconds: round(wall),
    rss_max_mb: Math.max(...rssSamples),
    rss_end_mb: rssSamples.at(-1),
    server_cpu_share_of_one_core: round(cpu / wall, 3),
    claims_answered_204: idleClaims - claims0,
    client_timeouts: idleTimeouts,
    client_errors: idleErrors,
    unexpected_answers: idleUnexpected,
    other_processes_cpu_share_of_all_cores: round(others / wall / machine().cores, 2),
    pass: Math.max(...rssSamples) <= 200 && cpu / wall < 0.1 && idleTimeouts === 0 && idleErrors === 0,
  };
  log(`idle: ${JSON.stringify(summary.idle)}`);
}

// ---- B: push-to-claim latency with a waiting machine ----
{
  const hot = await register("hot", ["hot"]);
  const latencies: number[] = [];
  const afterCommit: number[] = [];
  for (let i = 0; i < PUSHES; i++) {
    const pending = claim(hot).then(async (r) => ({
      at: performance.now(),
      status: r.status,
      body: r.status === 200 ? ((await r.json()) as { job_id: string; token: string }) : null,
    }));
    // Give the claim time to reach its wait (the measure starts at the push, as a user's would).
    await Bun.sleep(30);
    const t0 = performance.now();
    await commit({ ".svc/workflows/hot.yml": `# ${i}\non: push\njobs:\n  hot:\n    runs-on: [self-hosted, hot]\n    steps:\n      - run: echo\n` });
    const tc = performance.now();
    const got = await pending;
    if (got.status !== 200 || !got.body) throw new Error(`push ${i}: the waiting machine got ${got.status}`);
    latencies.push(got.at - t0);
    afterCommit.push(Math.max(0, got.at - tc));
    await complete(got.body);
  }
  summary.push_to_claim = {
    pushes: PUSHES,
    idle_machines_waiting_meanwhile: opt["skip-idle"] ? 0 : MACHINES,
    // The push is done when its answer arrives; the claim answer often arrives first (then 0).
    from_push_answer_p50_ms: round(pct(afterCommit, 50)),
    from_push_answer_p99_ms: round(pct(afterCommit, 99)),
    from_push_start_p50_ms: round(pct(latencies, 50)),
    from_push_start_p99_ms: round(pct(latencies, 99)),
    from_push_start_max_ms: round(Math.max(...latencies)),
    act_runner_expected_mean_ms: 1000,
    pass: pct(afterCommit, 50) <= 20 && pct(afterCommit, 99) <= 100,
  };
  log(`push-to-claim: ${JSON.stringify(summary.push_to_claim)}`);
}
idleStop.abort();
await Promise.allSettled(idleLoops);

// ---- C: 10,000 queued jobs, 50 machines ----
{
  const perFile = 250;
  const files = Math.ceil(JOBS / perFile);
  const cells = Array.from({ length: perFile }, (_, i) => i).join(", ");
  log(`queueing ${files * perFile} jobs`);
  for (let start = 0, b = 0; start < files; start += 20, b++) {
    const batch: Record<string, string> = {};
    for (let f = start; f < Math.min(files, start + 20); f++)
      batch[`.svc/workflows/bulk-${f}.yml`] =
        `on: push\njobs:\n  bulk:\n    runs-on: [self-hosted, bulk]\n    strategy:\n      matrix:\n        n: [${cells}]\n    steps:\n      - run: echo\n`;
    await commit(batch, `bulk-${b}`);
  }
  const db = new Database(join(server.dataDir, "svc.db"), { readonly: true });
  const queued = () => (db.query("SELECT count(*) AS n FROM workflow_jobs WHERE state = 'queued' AND runs_on LIKE '%bulk%'").get() as { n: number }).n;
  const qStart = performance.now();
  while (queued() < files * perFile) {
    if (performance.now() - qStart > 120_000) throw new Error(`only ${queued()} jobs queued`);
    await Bun.sleep(100);
  }
  const queueMs = performance.now() - qStart;
  db.close();
  const creds = await Promise.all(Array.from({ length: WORKERS }, (_, i) => register(`bulk-${i}`, ["bulk"])));
  const seen = new Set<string>();
  let dupes = 0;
  const cpu0 = cpuSeconds(pid);
  const all0 = machineCpuSeconds();
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  let tDone: number | undefined;
  let cpuDone: number | undefined;
  await Promise.all(
    creds.map(async (cred) => {
      for (;;) {
        const r = await claim(cred);
        if (r.status === 204) return;
        if (r.status !== 200) throw new Error(`claim: ${r.status} ${await r.text()}`);
        const job = (await r.json()) as { job_id: string; token: string };
        if (seen.has(job.job_id)) dupes++;
        seen.add(job.job_id);
        await complete(job);
        // Why the finishing time is taken here: the other machines are then in a long-poll that
        // answers 204 only after SVC_RUNNER_CLAIM_WAIT_MS, which is not claiming time.
        if (seen.size === files * perFile) {
          tDone ??= performance.now();
          cpuDone ??= cpuSeconds(pid);
          return;
        }
      }
    }),
  );
  const wall = ((tDone ?? performance.now()) - t0) / 1000;
  summary.throughput = {
    jobs: files * perFile,
    machines: WORKERS,
    queued_in_s: round(queueMs / 1000, 2),
    claimed: seen.size,
    duplicates: dupes,
    seconds: round(wall, 2),
    claims_per_s: round(seen.size / wall),
    server_cpu_share_of_one_core: round(((cpuDone ?? cpuSeconds(pid)) - cpu0) / wall, 2),
    server_cpu_ms_per_claim_and_complete: round((((cpuDone ?? cpuSeconds(pid)) - cpu0) * 1000) / seen.size, 2),
    client_cpu_share_of_one_core: round((process.cpuUsage(client0).user + process.cpuUsage(client0).system) / 1e6 / wall, 2),
    machine_cpu_share_of_all_cores: round((machineCpuSeconds() - all0) / wall / machine().cores, 2),
    note: "each claim is followed by that job's complete call (one running job per machine)",
    pass: seen.size === files * perFile && dupes === 0 && seen.size / wall >= 500,
  };
  log(`throughput: ${JSON.stringify(summary.throughput)}`);
}

summary.load_after = loadavg();
summary.finished_at = new Date().toISOString();
await server.stop();
if (!opt.keep) rmSync(dir, { recursive: true, force: true });
const out = JSON.stringify(summary, null, 2);
if (opt.out) writeFileSync(opt.out, `${out}\n`);
process.stdout.write(`${out}\n`);
