// Benchmark: authenticated GET /v1/orgs/{org}/repos/{repo} (bearer token) against a bare
// Bun.serve JSON hello-world, same load generator, same machine, one run. Then server RSS
// after 100,000 requests on a fresh svc process.
//
//   bun bench/api.ts [--duration 10] [--warmup 3] [--requests 100000] [--connections 50]
//                    [--threads 2] [--rounds 1] [--load auto|wrk|fetch] [--no-warn-variant]
//                    [--cpu-prof DIR] [--memory-only] [--keep] [--baseline DIR]
//
// --baseline DIR: also a svc from another checkout (e.g. `git worktree add DIR <commit>`, node_modules
// linked), SVC_LOG=info, loaded in turn with the others in every round; the memory phase runs
// on a fresh baseline server too. The summary adds `ratio_new_to_old` (svc_info / svc_base).
//
// Target: svc ≥ 50% of the hello-world req/s; svc RSS after 100k requests < 150 MB.
// Progress goes to stderr; the JSON summary to stdout. See bench/README.md.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { machine, resetPeakRss, rssOf, sampleRss } from "./lib/machine.ts";
import { findWrk, runLoad, WRK_INSTALL_HINT, type LoadResult, type LoadTool } from "./lib/load.ts";
import { BUN, ROOT, cleanEnv, run, spawnServer, type Child } from "./lib/proc.ts";
import { bootstrap, startSvc, type SvcServer } from "./lib/svc.ts";

const TARGET_RATIO = 0.5;
const TARGET_RSS_MB = 150;

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    requests: { type: "string", default: "100000" },
    connections: { type: "string", default: "50" },
    threads: { type: "string", default: "2" },
    rounds: { type: "string", default: "1" },
    load: { type: "string", default: "auto" },
    "no-warn-variant": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "cpu-prof": { type: "string" },
    "memory-only": { type: "boolean", default: false },
    baseline: { type: "string" },
  },
});
const duration = Number(opt.duration);
const warmup = Number(opt.warmup);
const requests = Number(opt.requests);
const connections = Number(opt.connections);
const threads = Number(opt.threads);
const rounds = Number(opt.rounds);
const baselineRoot = opt.baseline ? resolve(opt.baseline) : null;

const log = (msg: string) => process.stderr.write(`[bench/api] ${msg}\n`);
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);
const loadBefore = load();

/** The svc revision measured: commit, and whether src/ has uncommitted changes. */
async function revision(): Promise<{ commit: string; src_dirty: boolean } | null> {
  const head = await run(["git", "rev-parse", "--short", "HEAD"]);
  if (head.code !== 0) return null;
  const dirty = await run(["git", "status", "--porcelain", "--", "src"]);
  return { commit: head.stdout.trim(), src_dirty: dirty.stdout.trim() !== "" };
}

// ---- load generator ----------------------------------------------------------------------
const wrk = await findWrk();
let tool: LoadTool;
if (opt.load === "wrk" || opt.load === "auto") {
  if (wrk) tool = "wrk";
  else if (opt.load === "wrk") {
    log(WRK_INSTALL_HINT);
    process.exit(1);
  } else {
    log(`${WRK_INSTALL_HINT}; falling back to the Bun fetch generator (bench/lib/fetch-load.ts)`);
    tool = "fetch";
  }
} else if (opt.load === "fetch") tool = "fetch";
else throw new Error(`--load: expected auto, wrk or fetch, got ${opt.load}`);
log(`load generator: ${tool === "wrk" ? `wrk ${wrk!.version}` : "bun fetch loops"} (${connections} connections)`);

const work = mkdtempSync(join(tmpdir(), "svc-bench-api-"));
const children: Child[] = [];
const stopAll = async () => {
  await Promise.all(children.map((c) => c.stop()));
  if (!opt.keep) rmSync(work, { recursive: true, force: true });
};
process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function check(label: string, r: LoadResult): LoadResult {
  if (r.non2xx || r.socket_errors) log(`WARNING ${label}: ${r.non2xx} non-2xx responses, ${r.socket_errors} socket errors — figure not valid`);
  return r;
}

try {
  // ---- servers ---------------------------------------------------------------------------
  const hello = await spawnServer([BUN, join(ROOT, "bench/lib/hello-server.ts")], { env: cleanEnv(), stderrFile: join(work, "hello.stderr.log") });
  children.push(hello);
  // --cpu-prof DIR: profile the SVC_LOG=info server (written as .cpuprofile + .md when it stops).
  const profArgs = opt["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${resolve(opt["cpu-prof"])}`] : [];
  const svcInfo = await startSvc(join(work, "svc-info"), {}, profArgs);
  children.push(svcInfo);
  const fx = await bootstrap(svcInfo, { org: "bench", repo: "widgets" });
  let svcWarn: SvcServer | null = null;
  let fxWarn = fx;
  if (!opt["no-warn-variant"]) {
    svcWarn = await startSvc(join(work, "svc-warn"), { SVC_LOG: "warn" });
    children.push(svcWarn);
    fxWarn = await bootstrap(svcWarn, { org: "bench", repo: "widgets" });
  }
  log(
    `hello-world pid ${hello.pid} ${hello.url}; svc (SVC_LOG=info) pid ${svcInfo.pid} ${svcInfo.url}${svcWarn ? `; svc (SVC_LOG=warn) pid ${svcWarn.pid} ${svcWarn.url}` : ""}`,
  );

  // Every target gets the same request bytes: same path, same Authorization header.
  const targets: { name: "hello" | "svc_info" | "svc_warn" | "svc_base"; url: string; token: string }[] = [
    { name: "hello", url: hello.url + fx.path, token: fx.token },
    { name: "svc_info", url: svcInfo.url + fx.path, token: fx.token },
  ];
  if (svcWarn) targets.push({ name: "svc_warn", url: svcWarn.url + fxWarn.path, token: fxWarn.token });
  if (baselineRoot) {
    const svcBase = await startSvc(join(work, "svc-base"), {}, [], baselineRoot);
    children.push(svcBase);
    const fxBase = await bootstrap(svcBase, { org: "bench", repo: "widgets" });
    log(`baseline svc (${baselineRoot}) pid ${svcBase.pid} ${svcBase.url}`);
    targets.push({ name: "svc_base", url: svcBase.url + fxBase.path, token: fxBase.token });
  }

  // ---- throughput --------------------------------------------------------------------------
  const runs: Record<string, LoadResult[]> = { hello: [], svc_info: [], svc_warn: [], svc_base: [] };
  for (let round = 1; round <= (opt["memory-only"] ? 0 : rounds); round++) {
    for (const t of targets) {
      const base = { url: t.url, connections, threads, headers: { authorization: `Bearer ${t.token}` }, tmpDir: work };
      if (warmup > 0) {
        log(`round ${round}/${rounds}: ${t.name} warm-up ${warmup}s`);
        check(`${t.name} warm-up`, await runLoad(tool, { ...base, durationS: warmup }));
      }
      log(`round ${round}/${rounds}: ${t.name} ${duration}s`);
      const r = check(t.name, await runLoad(tool, { ...base, durationS: duration }));
      log(`  ${t.name}: ${r.rps} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms (${r.requests} requests)`);
      runs[t.name]!.push(r);
    }
  }
  const rpsOf = (name: string) => (runs[name]!.length ? median(runs[name]!.map((r) => r.rps)) : null);
  const helloRps = rpsOf("hello") ?? NaN;
  const infoRps = rpsOf("svc_info") ?? NaN;
  const warnRps = rpsOf("svc_warn");
  const throughputServed = runs.svc_info!.reduce((a, r) => a + r.requests, 0);
  const rssAfterThroughput = rssOf(svcInfo.pid);

  // Free the cores for the memory phase.
  for (const c of children) await c.stop();
  if (profArgs.length) log(`CPU profile of the SVC_LOG=info server written to ${resolve(opt["cpu-prof"]!)}`);

  // ---- memory: a fresh svc (SVC_LOG=info), RSS before and after N requests ----------------
  const memoryBase = baselineRoot ? await memoryPhase("svc-mem-base", baselineRoot) : null;
  const { mem, before, after, settled, peakDuring, peakReset } = await memoryPhase("svc-mem", ROOT);
  async function memoryPhase(name: string, root: string) {
    const svcMem = await startSvc(join(work, name), {}, [], root);
    children.push(svcMem);
    const fxMem = await bootstrap(svcMem, { org: "bench", repo: "widgets" });
    await Bun.sleep(500);
    const before = rssOf(svcMem.pid);
    // Why: VmHWM would otherwise include start-up and sign-in (argon2id), not just the requests.
    const peakReset = resetPeakRss(svcMem.pid);
    log(`memory: ${requests} requests against a fresh svc (pid ${svcMem.pid}), RSS before ${before.rss_mb} MB (boot peak ${before.peak_mb} MB)`);
    const sampler = sampleRss(svcMem.pid);
    const mem = check(
      "memory",
      await runLoad(tool, {
        url: svcMem.url + fxMem.path,
        connections,
        threads,
        durationS: Math.max(120, Math.ceil(requests / 500)),
        maxRequests: requests,
        headers: { authorization: `Bearer ${fxMem.token}` },
        tmpDir: work,
      }),
    );
    const sampledMax = sampler.stop();
    const after = rssOf(svcMem.pid);
    await Bun.sleep(2000);
    const settled = rssOf(svcMem.pid);
    const peakDuring = peakReset ? after.peak_mb : sampledMax;
    log(`  served ${mem.requests} requests; RSS after ${after.rss_mb} MB (peak during the run ${peakDuring} MB, 2 s later ${settled.rss_mb} MB)`);
    await svcMem.stop();
    return { mem, before, after, settled, peakDuring, peakReset };
  }

  const ratio = Math.round((infoRps / helloRps) * 1000) / 1000;
  const summary = {
    benchmark: "API: authenticated GET /v1/orgs/{org}/repos/{repo}",
    date: new Date().toISOString(),
    machine: machine(),
    svc_revision: await revision(),
    note: "hello-world server, svc server(s) and load generator all share this machine's cores; servers are loaded one at a time",
    loadavg_before: loadBefore,
    loadavg_after: load(),
    load_generator:
      tool === "wrk" ? { tool: "wrk", version: wrk!.version, connections, threads } : { tool: "bun fetch loops (bench/lib/fetch-load.ts)", connections },
    commands: {
      bench: `bun bench/api.ts ${process.argv.slice(2).join(" ")}`.trim(),
      hello_server: "bun bench/lib/hello-server.ts",
      svc_server: "SVC_DATA_DIR=<tmp> SVC_HTTP_ADDR=127.0.0.1:0 [SVC_LOG=warn] bun src/main.ts serve  (stderr → file)",
      load: Object.fromEntries(
        Object.entries(runs)
          .filter(([, v]) => v.length)
          .map(([k, v]) => [k, v[0]!.command.replace(/svc_[a-z2-7]{16}_[a-z2-7]{32}/, "svc_…")]),
      ),
    },
    duration_s: duration,
    warmup_s: warmup,
    rounds,
    results: Object.fromEntries(
      Object.entries(runs)
        .filter(([, v]) => v.length)
        .map(([k, v]) => [
          k,
          {
            rps: median(v.map((r) => r.rps)),
            p50_ms: v.length === 1 ? v[0]!.p50_ms : median(v.map((r) => r.p50_ms ?? NaN)),
            p99_ms: v.length === 1 ? v[0]!.p99_ms : median(v.map((r) => r.p99_ms ?? NaN)),
            runs: v.map(({ command: _c, tool: _t, ...rest }) => rest),
          },
        ]),
    ),
    ratio_svc_info_to_hello: Number.isNaN(ratio) ? null : ratio,
    ratio_per_round: runs.hello!.map((h, i) => Math.round((runs.svc_info![i]!.rps / h.rps) * 1000) / 1000),
    ...(baselineRoot
      ? {
          baseline: { dir: baselineRoot, commit: (await run(["git", "-C", baselineRoot, "rev-parse", "--short", "HEAD"])).stdout.trim() },
          ratio_new_to_old: Math.round((infoRps / (rpsOf("svc_base") ?? NaN)) * 1000) / 1000,
          ratio_new_to_old_per_round: runs.svc_base!.map((b, i) => Math.round((runs.svc_info![i]!.rps / b.rps) * 1000) / 1000),
          memory_baseline: memoryBase && {
            rss_before_mb: memoryBase.before.rss_mb,
            rss_after_mb: memoryBase.after.rss_mb,
            peak_rss_during_run_mb: memoryBase.peakDuring,
            rps: memoryBase.mem.rps,
          },
        }
      : {}),
    ratio_svc_warn_to_hello: warnRps === null || !helloRps ? null : Math.round((warnRps / helloRps) * 1000) / 1000,
    memory: {
      server: "fresh svc, SVC_LOG=info",
      requests: mem.requests,
      non2xx: mem.non2xx,
      rps: mem.rps,
      rss_before_mb: before.rss_mb,
      rss_after_mb: after.rss_mb,
      rss_after_settled_mb: settled.rss_mb,
      peak_rss_during_run_mb: peakDuring,
      peak_source: peakReset ? "VmHWM reset via /proc/<pid>/clear_refs before the run" : "VmRSS sampled every 100 ms",
      boot_peak_rss_mb: before.peak_mb,
      throughput_server_after: { requests_served: throughputServed, rss_mb: rssAfterThroughput.rss_mb, peak_mb: rssAfterThroughput.peak_mb },
    },
    target: { min_ratio: TARGET_RATIO, max_rss_mb: TARGET_RSS_MB },
    pass: { ratio: Number.isNaN(ratio) ? null : ratio >= TARGET_RATIO, rss: Math.max(after.rss_mb, peakDuring) < TARGET_RSS_MB },
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  for (const c of children) log(`stderr of pid ${c.pid}:\n${c.stderrTail(1500)}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
