// Git transport benchmark: svc (git smart-HTTP from packs in object storage) side by side with
// C git (`git daemon`) on the same machine, against the same generated repository.
//
//   bun bench/git.ts [--scale 1] [--seed 1] [--reps 5] [--push-reps 3] [--only cgit|svc]
//                    [--probe] [--cpu-prof] [--heap-prof] [--restart] [--skip-nobitmap]
//                    [--keep] [--out FILE.json] [--baseline DIR]
//   bun bench/git.ts --real REPO.git [--steps 20] [--reps 3] [--single-push] [--no-gc] ...
//                    (real-repository mode: bench/lib/git-real.ts)
//
// --probe: while svc serves git, GET /v1/orgs/bench/repos/bench-1 every 100 ms (one at a time)
//          and report the worst latency (how long the event loop was blocked).
// --cpu-prof / --heap-prof: run svc under `bun --cpu-prof --cpu-prof-md` (or heap) and restart
//          it between the push, clone and fetch phases so each phase has its own profile
//          (summarize with `bun bench/lib/git-prof.ts <file.cpuprofile>`). Keeps the work dir.
// --restart: restart svc between phases without profiling (cold caches for clones).
// --keep:  keep bench/work/git-run-*/ (svc data dir, logs) for bench/lib/git-mem.ts.
// --baseline DIR: also run a second svc from another checkout (e.g. `git worktree add DIR <commit>`,
//          node_modules linked) on its own data dir; every push, clone and fetch goes to C git, svc
//          and the baseline in turn (A B A B …), and `ratiosNewVsOld` compares svc with the baseline.
//
// Measures (wall clock, medians of repetitions, runs of both sides interleaved so machine
// noise hits both alike; CPU seconds of client and server as well):
//   - full clone: `git clone --bare git://…` from git daemon vs `git clone --bare http://…` from
//     svc (after compaction when `svc gc` exists);
//   - incremental fetch of 10 new commits into a clone at the old tip;
//   - push of the whole repository (`git push --mirror`) to svc vs `git index-pack --stdin` of
//     the same pack (and, for reference, a push to git daemon's receive-pack);
//   - peak RSS of the svc process while it receives the push and serves each clone.
// Prints a JSON summary on stdout and writes it to bench/out/git-<date>.json.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, cpSync, linkSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { defaultRepoPath, generate, packStats, type GenResult } from "./gen-repo.ts";
import { gitEnv, machineInfo, mb, median, procCpu, round, RssSampler, run, freePort, waitPort, type RunResult } from "./lib/git-util.ts";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc, type SvcAccount, type SvcServer } from "./lib/git-svc.ts";

interface Args {
  scale: number;
  seed: number;
  reps: number;
  pushReps: number;
  only: "cgit" | "svc" | null;
  cpuProf: boolean;
  heapProf: boolean;
  /** Restart svc (same data dir) between push, clone and fetch phases: separate profiles, cold caches. */
  restart: boolean;
  keep: boolean;
  out: string | null;
  noBitmap: boolean;
  /** Probe API latency while svc serves git (event-loop blocking). */
  probe: boolean;
  /** Another checkout to run side by side (new/old ratios). */
  baseline: string | null;
}

function parseArgs(argv: string[]): Args {
  const get = (n: string) => {
    const i = argv.indexOf(`--${n}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  if (argv.includes("--help")) {
    process.stdout.write(
      "usage: bun bench/git.ts [--scale 1] [--seed 1] [--reps 5] [--push-reps 3] [--only cgit|svc] [--probe] [--cpu-prof] [--heap-prof] [--restart] [--skip-nobitmap] [--keep] [--out FILE] [--baseline DIR]\n",
    );
    process.exit(0);
  }
  const only = get("only");
  return {
    scale: Number(get("scale") ?? 1),
    seed: Number(get("seed") ?? 1),
    reps: Number(get("reps") ?? 5),
    pushReps: Math.max(1, Number(get("push-reps") ?? 3)),
    only: only === "cgit" || only === "svc" ? only : null,
    cpuProf: argv.includes("--cpu-prof"),
    heapProf: argv.includes("--heap-prof"),
    restart: argv.includes("--restart") || argv.includes("--cpu-prof") || argv.includes("--heap-prof"),
    keep: argv.includes("--keep"),
    out: get("out") ?? null,
    noBitmap: !argv.includes("--skip-nobitmap"),
    probe: argv.includes("--probe"),
    baseline: get("baseline") ? resolve(get("baseline")!) : null,
  };
}

if (process.argv.includes("--real")) {
  // Real-repository mode (bench/lib/git-real.ts): a real repository pushed in steps, cloned from many packs.
  await (await import("./lib/git-real.ts")).runReal(process.argv.slice(2));
  process.exit(0);
}

const args = parseArgs(process.argv.slice(2));
const log = (s: string) => process.stderr.write(`[git-bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

// ---------------------------------------------------------------------------------------
// Setup

const gen: GenResult = await generate({ scale: args.scale, seed: args.seed, out: defaultRepoPath(args.seed, args.scale), extra: 10 });
log(`repository ${gen.repo}: ${gen.commits} commits, ${gen.objects} objects, pack ${mb(gen.packBytes)} MB${gen.cached ? " (cached)" : ""}`);
const packFile = packStats(gen.repo).packs[0]!;
const baseTip = gen.tip;
const nextTip = gen.nextTip!;

mkdirSync(join(ROOT, "bench/work"), { recursive: true });
const work = mkdtempSync(join(ROOT, "bench/work/git-run-"));
const home = join(work, "home");
mkdirSync(home);
const env = gitEnv(home);
const git = (argv: string[], opts: { cwd?: string; stdin?: string; check?: boolean } = {}) => run(["git", ...argv], { env, ...opts });
const machine = await machineInfo();
const source = {
  commit: (await run(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT, check: false })).stdout.trim(),
  dirty: (await run(["git", "status", "--porcelain", "--", "src", "cli"], { cwd: ROOT, check: false })).stdout.trim().split("\n").filter(Boolean).length,
};
log(`work dir ${work}; ${machine.cpu}, ${machine.cores} cores, load ${JSON.stringify(machine.loadavg)}`);

const srv = join(work, "srv");
mkdirSync(srv);
symlinkSync(gen.repo, join(srv, "repo.git"));
// a copy without the reachability bitmap (hard links; the bitmap file left out)
if (args.noBitmap) {
  const nb = join(srv, "repo-nobitmap.git");
  cpSync(gen.repo, nb, { recursive: true, filter: (src) => src !== join(gen.repo, "objects/pack") });
  const pd = join(gen.repo, "objects/pack");
  mkdirSync(join(nb, "objects/pack"), { recursive: true });
  for (const f of readdirSync(pd)) if (!f.endsWith(".bitmap")) linkSync(join(pd, f), join(nb, "objects/pack", f));
}
for (let i = 1; i <= args.pushReps; i++) await git(["init", "--quiet", "--bare", "--initial-branch=main", join(srv, `push-${i}.git`)]);

const port = freePort();
// run git-daemon itself (not the `git` wrapper, which would fork it) so its pid is the server's
const execPath = (await git(["--exec-path"])).stdout.trim();
const daemon = Bun.spawn(
  [
    join(execPath, "git-daemon"),
    "--export-all",
    `--base-path=${srv}`,
    `--port=${port}`,
    "--reuseaddr",
    "--listen=127.0.0.1",
    "--enable=receive-pack",
    "--informative-errors",
  ],
  { env, stdout: "ignore", stderr: "pipe" },
);
await waitPort(port);
const daemonUrl = (name: string) => `git://127.0.0.1:${port}/${name}`;
log(`git daemon pid ${daemon.pid} on port ${port}`);

// ---------------------------------------------------------------------------------------
// Measurement helpers

interface Sample {
  wall: number;
  clientCpu: number;
  serverCpu: number;
  rss?: ReturnType<RssSampler["stop"]>;
  timeline?: [number, number][];
  apiLatency?: { count: number; maxMs: number; p50Ms: number };
  /** 1-minute load average when the run started. */
  load1?: number;
}

/** About `n` evenly spaced [ms, MB] points of an RSS timeline, the peak kept. */
function downsample(tl: [number, number][], n = 40): [number, number][] {
  if (!tl.length) return [];
  const step = Math.max(1, Math.floor(tl.length / n));
  let peak = tl[0]!;
  for (const p of tl) if (p[1] > peak[1]) peak = p;
  const out = tl.filter((_, i) => i % step === 0 || i === tl.length - 1);
  if (!out.includes(peak)) out.push(peak);
  return out.sort((a, b) => a[0] - b[0]).map(([t, b]) => [t, mb(b)]);
}

const summarize = (xs: Sample[]) => ({
  medianWall: round(median(xs.map((x) => x.wall))),
  minWall: round(Math.min(...xs.map((x) => x.wall))),
  medianClientCpu: round(median(xs.map((x) => x.clientCpu))),
  medianServerCpu: round(median(xs.map((x) => x.serverCpu))),
  ...(xs[0]?.timeline ? { rssTimelineFirstRun: downsample(xs[0].timeline) } : {}),
  runs: xs.map((x) => ({
    wall: round(x.wall),
    load1: x.load1,
    clientCpu: round(x.clientCpu),
    serverCpu: round(x.serverCpu),
    ...(x.apiLatency ? { apiLatencyMaxMs: x.apiLatency.maxMs, apiLatencyP50Ms: x.apiLatency.p50Ms } : {}),
    ...(x.rss
      ? { rssPeakMB: mb(Math.max(x.rss.peakSampledBytes, x.rss.peakHwmBytes ?? 0)), rssStartMB: mb(x.rss.startBytes), rssEndMB: mb(x.rss.endBytes) }
      : {}),
  })),
});

/** Runs a git client command against the daemon; server CPU = daemon's reaped children. */
async function cgitTimed(argv: string[], cwd?: string, rssTree = true): Promise<Sample> {
  const load1 = round(loadavg()[0]!, 2);
  const before = procCpu(daemon.pid).children;
  const sampler = rssTree ? new RssSampler(daemon.pid, 50, true).start() : null;
  const r = await git(argv, { cwd });
  const rss = sampler?.stop();
  await Bun.sleep(300); // let the daemon reap the connection's process tree
  return { wall: r.wall, clientCpu: r.cpu, serverCpu: procCpu(daemon.pid).children - before, rss, load1 };
}

let svc: SvcServer | null = null;
/**
 * While a git command runs, a small API request (GET the repository) every 100 ms, one at a
 * time: its worst latency shows how long the server's event loop was blocked.
 */
function latencyProbe(): { stop(): Promise<{ count: number; maxMs: number; p50Ms: number }> } {
  let running = true;
  const lat: number[] = [];
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      try {
        const res = await fetch(`${svc!.url}/v1/orgs/${acct!.org}/repos/${svcRepo}`, { headers: { authorization: `Bearer ${acct!.token}` } });
        await res.arrayBuffer();
      } catch {}
      lat.push(performance.now() - t);
      await Bun.sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { count: lat.length, maxMs: round(Math.max(0, ...lat), 0), p50Ms: round(median(lat), 1) };
    },
  };
}

async function svcTimed(argv: string[], cwd?: string, server: SvcServer = svc!): Promise<Sample & { result: RunResult }> {
  const load1 = round(loadavg()[0]!, 2);
  const before = procCpu(server.pid).self;
  const sampler = new RssSampler(server.pid, 50).start();
  const probe = args.probe && server === svc ? latencyProbe() : null;
  const r = await git(argv, { cwd });
  const rss = sampler.stop();
  const serverCpu = procCpu(server.pid).self - before;
  const apiLatency = probe ? await probe.stop() : undefined;
  return { wall: r.wall, clientCpu: r.cpu, serverCpu, rss, timeline: sampler.timeline, apiLatency, load1, result: r };
}

async function revParse(repo: string, ref = "refs/heads/main"): Promise<string> {
  return (await git(["rev-parse", ref], { cwd: repo })).stdout.trim();
}

const commands: Record<string, string> = {};
const notes: string[] = [];
const results: Record<string, any> = {};

// ---------------------------------------------------------------------------------------
// C git baselines: index-pack, push to daemon

if (args.only !== "svc") {
  log("index-pack baseline");
  const ip: Sample[] = [];
  const ip1: Sample[] = [];
  for (let i = 0; i < args.pushReps; i++) {
    for (const [threads, acc] of [
      [0, ip],
      [1, ip1],
    ] as const) {
      const dir = join(work, `ip-${i}-${threads}.git`);
      await git(["init", "--quiet", "--bare", dir]);
      const load1 = round(loadavg()[0]!, 2);
      const r = await git(["index-pack", "--stdin", ...(threads ? [`--threads=${threads}`] : [])], { cwd: dir, stdin: packFile });
      acc.push({ wall: r.wall, clientCpu: r.cpu, serverCpu: 0, load1 });
      rmSync(dir, { recursive: true, force: true });
    }
  }
  commands.indexPack = "git index-pack --stdin < <pack> (in a fresh bare repository)";
  commands.indexPack1 = "git index-pack --stdin --threads=1 < <pack>";
  results.indexPack = summarize(ip);
  results.indexPack1 = summarize(ip1);

  log("push --mirror to git daemon (receive-pack)");
  const pushes: Sample[] = [];
  for (let i = 1; i <= args.pushReps; i++) pushes.push(await cgitTimed(["push", "--quiet", "--mirror", daemonUrl(`push-${i}.git`)], gen.repo));
  commands.cgitPush = "git push --mirror git://127.0.0.1:PORT/push-N.git (empty bare repository, daemon --enable=receive-pack)";
  results.cgitPush = summarize(pushes);
  // the first daemon copy gets the 10 extra commits, as svc will (incremental fetch source)
  const inc = await cgitTimed(["push", "--quiet", daemonUrl("push-1.git"), "refs/heads/main:refs/heads/main"], gen.next!);
  commands.cgitPush10 = "git push git://…/push-1.git main (10 new commits)";
  results.cgitPush10 = summarize([inc]);
}

// ---------------------------------------------------------------------------------------
// svc: start, bootstrap, push

let acct: SvcAccount | null = null;
let svcAvailable = args.only !== "cgit";
const profRoot = join(work, "prof");
const profFlags = (phase: string) => [
  ...(args.cpuProf ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${join(profRoot, phase)}`] : []),
  ...(args.heapProf ? ["--heap-prof", "--heap-prof-md", `--heap-prof-dir=${join(profRoot, phase)}`] : []),
];
const svcLogs: string[] = [];
/** Stops svc and starts it again on the same data dir (profiles are written at exit). */
async function restartSvc(phase: string): Promise<void> {
  if (!args.restart || !svc) return;
  const dataDir = svc.dataDir;
  await svc.stop();
  svcLogs.push(svc.logs());
  svc = await startSvc({ dataDir, log: "info", bunFlags: profFlags(phase) });
  log(`svc restarted for ${phase}: pid ${svc.pid} at ${svc.url}`);
}
const svcPackInfo = (): Record<string, { packs: number; bytes: number }> => {
  const out: Record<string, { packs: number; bytes: number }> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".pack") && p.includes("/packs/")) {
        const k = relative(svc!.dataDir, p).split("/packs/")[0]!;
        out[k] ??= { packs: 0, bytes: 0 };
        out[k].packs++;
        out[k].bytes += statSync(p).size;
      }
    }
  };
  walk(svc!.dataDir);
  return out;
};

if (svcAvailable) {
  const dataDir = join(work, "svc-data");
  mkdirSync(dataDir);
  svc = await startSvc({ dataDir, log: "info", bunFlags: profFlags("push") });
  log(`svc pid ${svc.pid} at ${svc.url}${args.cpuProf || args.heapProf ? " (profiling)" : ""}`);
  acct = await bootstrap(svc);
  await createRepo(svc, acct, "probe");
  const probe = await git(["ls-remote", gitUrl(svc, acct, "probe")], { check: false });
  if (probe.code !== 0) {
    svcAvailable = false;
    notes.push(`svc does not serve git yet: git ls-remote → exit ${probe.code}: ${probe.stderr.trim().slice(0, 300)}`);
    log(notes.at(-1)!);
  }
}

// --baseline: the same server from another checkout, its own data dir, measured in turn with svc.
let base: SvcServer | null = null;
let baseAcct: SvcAccount | null = null;
const baseRevision = args.baseline ? (await run(["git", "rev-parse", "--short", "HEAD"], { cwd: args.baseline, check: false })).stdout.trim() : null;
if (svcAvailable && args.baseline) {
  const dataDir = join(work, "base-data");
  mkdirSync(dataDir);
  base = await startSvc({ dataDir, log: "info", root: args.baseline });
  baseAcct = await bootstrap(base);
  log(`baseline svc (${args.baseline} at ${baseRevision}) pid ${base.pid} at ${base.url}`);
}

const svcRepo = "bench-1";
if (svcAvailable) {
  log(`push --mirror to svc${base ? " and the baseline, in turn" : ""}`);
  const pushes: Sample[] = [];
  const basePushes: Sample[] = [];
  for (let i = 1; i <= args.pushReps; i++) {
    await createRepo(svc!, acct!, `bench-${i}`);
    const s = await svcTimed(["push", "--quiet", "--mirror", gitUrl(svc!, acct!, `bench-${i}`)], gen.repo);
    if (s.result.code !== 0) throw new Error(`push to svc failed: ${s.result.stderr}`);
    pushes.push(s);
    log(
      `  push ${i}: ${round(s.wall, 2)} s, server cpu ${round(s.serverCpu, 2)} s, rss peak ${mb(Math.max(s.rss!.peakSampledBytes, s.rss!.peakHwmBytes ?? 0))} MB`,
    );
    if (base) {
      await createRepo(base, baseAcct!, `bench-${i}`);
      const b = await svcTimed(["push", "--quiet", "--mirror", gitUrl(base, baseAcct!, `bench-${i}`)], gen.repo, base);
      if (b.result.code !== 0) throw new Error(`push to the baseline failed: ${b.result.stderr}`);
      basePushes.push(b);
      log(`  push ${i} (baseline): ${round(b.wall, 2)} s, server cpu ${round(b.serverCpu, 2)} s`);
    }
  }
  commands.svcPush = "git push --mirror http://x:TOKEN@127.0.0.1:PORT/bench/bench-N.git (new empty repository)";
  results.svcPush = summarize(pushes);
  if (base) results.basePush = summarize(basePushes);
  const remote = (await git(["ls-remote", gitUrl(svc!, acct!, svcRepo)])).stdout.trim().split("\n");
  const local = (await git(["for-each-ref", "--format=%(objectname)\t%(refname)"], { cwd: gen.repo })).stdout.trim().split("\n");
  const missing = local.filter((l) => !remote.includes(l));
  if (missing.length) notes.push(`after push, svc lacks ${missing.length} of ${local.length} refs (e.g. ${missing[0]})`);
  results.svcPacksAfterPush = svcPackInfo();

  // compaction, if the CLI has it
  const help = await svc!.cli(["--help"]);
  if (/\bgc\b/.test(help.stdout + help.stderr)) {
    log("svc gc");
    const t0 = performance.now();
    const g = await svc!.cli(["gc", "--repo", `${acct!.org}/${svcRepo}`]);
    const wall = (performance.now() - t0) / 1000;
    commands.svcGc = `bun src/main.ts gc --repo ${acct!.org}/${svcRepo}`;
    results.svcGc = { code: g.code, wall: round(wall), stdout: g.stdout.trim().slice(0, 2000), stderr: g.stderr.trim().slice(0, 2000) };
    if (g.code !== 0) notes.push(`svc gc failed (exit ${g.code}); clone measured on the pushed pack`);
    if (base) {
      const t1 = performance.now();
      const bg = await base.cli(["gc", "--repo", `${baseAcct!.org}/${svcRepo}`]);
      results.baseGc = { code: bg.code, wall: round((performance.now() - t1) / 1000) };
      if (bg.code !== 0) notes.push(`baseline gc failed (exit ${bg.code})`);
    }
  } else {
    notes.push("svc has no `gc` command yet: clone measured on the pack as pushed (one pack: the push of the whole repository)");
  }
  results.svcPacksBeforeClone = svcPackInfo();
  await restartSvc("clone");
}

// ---------------------------------------------------------------------------------------
// Clones, interleaved

const cgitClones: Sample[] = [];
const cgitClonesNoBitmap: Sample[] = [];
const svcClones: Sample[] = [];
const baseClones: Sample[] = [];
const template = join(work, "template.git"); // a clone at the old tip, for fetches
log(`clones × ${args.reps}`);
async function baseClone(i: number): Promise<void> {
  if (base) {
    const dst = join(work, `c-base-${i}.git`);
    const s = await svcTimed(["clone", "--quiet", "--bare", gitUrl(base, baseAcct!, svcRepo), dst], undefined, base);
    if (s.result.code !== 0) throw new Error(`baseline clone failed: ${s.result.stderr}`);
    if ((await revParse(dst)) !== baseTip) throw new Error("baseline clone: wrong tip");
    baseClones.push(s);
    rmSync(dst, { recursive: true, force: true });
    log(`  clone ${i + 1} (baseline): ${round(s.wall, 2)} s`);
  }
}
for (let i = 0; i < args.reps; i++) {
  // the baseline goes first on odd repetitions, last on even ones (no side always follows the other)
  if (i % 2 === 1) await baseClone(i);
  if (args.only !== "svc") {
    const dst = join(work, `c-cgit-${i}.git`);
    const s = await cgitTimed(["clone", "--quiet", "--bare", daemonUrl("repo.git"), dst]);
    if ((await revParse(dst)) !== baseTip) throw new Error("C git clone: wrong tip");
    cgitClones.push(s);
    if (i === 0) cpSync(dst, template, { recursive: true });
    rmSync(dst, { recursive: true, force: true });
    if (args.noBitmap) {
      const dst2 = join(work, `c-cgit-nb-${i}.git`);
      cgitClonesNoBitmap.push(await cgitTimed(["clone", "--quiet", "--bare", daemonUrl("repo-nobitmap.git"), dst2]));
      rmSync(dst2, { recursive: true, force: true });
    }
  }
  if (svcAvailable) {
    const dst = join(work, `c-svc-${i}.git`);
    const s = await svcTimed(["clone", "--quiet", "--bare", gitUrl(svc!, acct!, svcRepo), dst]);
    if (s.result.code !== 0) throw new Error(`svc clone failed: ${s.result.stderr}`);
    const tip = await revParse(dst);
    if (tip !== baseTip) throw new Error(`svc clone: main is ${tip}, expected ${baseTip}`);
    if (i === 0) {
      const fsck = await git(["fsck", "--connectivity-only", "--no-progress"], { cwd: dst, check: false });
      const count = (await git(["count-objects", "-v"], { cwd: dst })).stdout;
      results.svcCloneCheck = {
        fsckExit: fsck.code,
        fsckErr: fsck.stderr.trim().slice(0, 500),
        inPack: Number(/in-pack: (\d+)/.exec(count)?.[1]),
        expected: gen.objects,
        packMB: mb(packStats(dst).packBytes),
      };
      if (!existsSync(template)) cpSync(dst, template, { recursive: true });
    }
    svcClones.push(s);
    rmSync(dst, { recursive: true, force: true });
    log(
      `  clone ${i + 1}: cgit ${cgitClones.at(-1) ? round(cgitClones.at(-1)!.wall, 2) : "-"} s, svc ${round(s.wall, 2)} s, svc rss peak ${mb(Math.max(s.rss!.peakSampledBytes, s.rss!.peakHwmBytes ?? 0))} MB`,
    );
  } else log(`  clone ${i + 1}: cgit ${round(cgitClones.at(-1)!.wall, 2)} s`);
  if (i % 2 === 0) await baseClone(i);
}
commands.cgitClone = "git clone --bare git://127.0.0.1:PORT/repo.git (git daemon --export-all --base-path=… --reuseaddr; repository with bitmap)";
commands.cgitCloneNoBitmap = "same, repository copy without the .bitmap file";
commands.svcClone = "git clone --bare http://x:TOKEN@127.0.0.1:PORT/bench/bench-1.git";
if (cgitClones.length) results.cgitClone = summarize(cgitClones);
if (cgitClonesNoBitmap.length) results.cgitCloneNoBitmap = summarize(cgitClonesNoBitmap);
if (svcClones.length) results.svcClone = summarize(svcClones);
if (baseClones.length) results.baseClone = summarize(baseClones);

// ---------------------------------------------------------------------------------------
// Incremental fetch of 10 commits

if (svcAvailable) {
  await restartSvc("fetch");
  const s = await svcTimed(["push", "--quiet", gitUrl(svc!, acct!, svcRepo), "refs/heads/main:refs/heads/main"], gen.next!);
  if (s.result.code !== 0) throw new Error(`incremental push to svc failed: ${s.result.stderr}`);
  commands.svcPush10 = "git push http://…/bench/bench-1.git main (10 new commits)";
  results.svcPush10 = summarize([s]);
  if (base) {
    const b = await svcTimed(["push", "--quiet", gitUrl(base, baseAcct!, svcRepo), "refs/heads/main:refs/heads/main"], gen.next!, base);
    if (b.result.code !== 0) throw new Error(`incremental push to the baseline failed: ${b.result.stderr}`);
    results.basePush10 = summarize([b]);
  }
}
const cgitFetches: Sample[] = [];
const svcFetches: Sample[] = [];
const baseFetches: Sample[] = [];
const refspecs = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"];
if (existsSync(template)) {
  log(`fetches × ${args.reps}`);
  for (let i = 0; i < args.reps; i++) {
    for (const side of i % 2 ? (["cgit", "base", "svc"] as const) : (["cgit", "svc", "base"] as const)) {
      if (side === "cgit" && args.only === "svc") continue;
      if (side === "svc" && !svcAvailable) continue;
      if (side === "base" && !base) continue;
      const dst = join(work, `f-${side}-${i}.git`);
      await git(["clone", "--quiet", "--bare", "--local", template, dst]);
      if ((await revParse(dst)) !== baseTip) throw new Error("template not at the old tip");
      const url = side === "cgit" ? daemonUrl("push-1.git") : side === "svc" ? gitUrl(svc!, acct!, svcRepo) : gitUrl(base!, baseAcct!, svcRepo);
      const argv = ["fetch", "--quiet", url, ...refspecs];
      const s = side === "cgit" ? await cgitTimed(argv, dst) : await svcTimed(argv, dst, side === "svc" ? svc! : base!);
      const tip = await revParse(dst);
      if (tip !== nextTip) throw new Error(`${side} fetch: main is ${tip}, expected ${nextTip}`);
      (side === "cgit" ? cgitFetches : side === "svc" ? svcFetches : baseFetches).push(s);
      rmSync(dst, { recursive: true, force: true });
    }
  }
}
commands.cgitFetch =
  "git fetch git://…/push-1.git '+refs/heads/*:refs/heads/*' '+refs/tags/*:refs/tags/*' (in a clone at the old tip; the daemon copy got the 10 commits by push)";
commands.svcFetch = "git fetch http://…/bench/bench-1.git (same refspecs, same starting clone; svc got the 10 commits by push)";
if (cgitFetches.length) results.cgitFetch = summarize(cgitFetches);
if (svcFetches.length) results.svcFetch = summarize(svcFetches);
if (baseFetches.length) results.baseFetch = summarize(baseFetches);

// ---------------------------------------------------------------------------------------
// Shut down, summarize

daemon.kill("SIGTERM");
await daemon.exited;
const profiles: string[] = [];
if (svc) {
  results.svcPacksAtEnd = svcPackInfo();
  await svc.stop();
  svcLogs.push(svc.logs());
  writeFileSync(join(work, "svc.log"), svcLogs.join(""));
  if (base) {
    await base.stop();
    writeFileSync(join(work, "base.log"), base.logs());
  }
  if (existsSync(profRoot)) for (const ph of readdirSync(profRoot)) for (const f of readdirSync(join(profRoot, ph))) profiles.push(join(profRoot, ph, f));
}

const ratio = (a?: { medianWall: number }, b?: { medianWall: number }) => (a && b ? round(a.medianWall / b.medianWall, 2) : null);
const ratioMin = (a?: { minWall: number }, b?: { minWall: number }) => (a && b ? round(a.minWall / b.minWall, 2) : null);
type Sum = { medianClientCpu: number; medianServerCpu: number };
const cpuOf = (x?: Sum) => (x ? x.medianClientCpu + x.medianServerCpu : NaN);
const ratioCpu = (a?: Sum, b?: Sum) => (a && b ? round(cpuOf(a) / cpuOf(b), 2) : null);
const peakOf = (s?: ReturnType<typeof summarize>) => (s ? Math.max(...s.runs.map((r: any) => r.rssPeakMB ?? 0)) : null);
const ratios = {
  clone: ratio(results.svcClone, results.cgitClone),
  cloneVsNoBitmap: ratio(results.svcClone, results.cgitCloneNoBitmap),
  fetch: ratio(results.svcFetch, results.cgitFetch),
  pushVsIndexPack: ratio(results.svcPush, results.indexPack),
  pushVsIndexPack1Thread: ratio(results.svcPush, results.indexPack1),
  pushVsCgitPush: ratio(results.svcPush, results.cgitPush),
};
/** Less sensitive to other load on the machine: fastest run of each side, and CPU seconds (client + server). */
const ratiosRobust = {
  cloneMinWall: ratioMin(results.svcClone, results.cgitClone),
  fetchMinWall: ratioMin(results.svcFetch, results.cgitFetch),
  pushVsIndexPackMinWall: ratioMin(results.svcPush, results.indexPack),
  cloneCpu: ratioCpu(results.svcClone, results.cgitClone),
  fetchCpu: ratioCpu(results.svcFetch, results.cgitFetch),
  pushVsIndexPackCpu: ratioCpu(results.svcPush, results.indexPack),
};
/** --baseline: svc (this checkout) over the baseline checkout, per operation; wall medians, fastest runs, CPU. */
const ratiosNewVsOld = base
  ? {
      baseline: { dir: args.baseline, commit: baseRevision },
      clone: ratio(results.svcClone, results.baseClone),
      cloneMinWall: ratioMin(results.svcClone, results.baseClone),
      cloneCpu: ratioCpu(results.svcClone, results.baseClone),
      fetch: ratio(results.svcFetch, results.baseFetch),
      fetchMinWall: ratioMin(results.svcFetch, results.baseFetch),
      fetchCpu: ratioCpu(results.svcFetch, results.baseFetch),
      push: ratio(results.svcPush, results.basePush),
      pushMinWall: ratioMin(results.svcPush, results.basePush),
      pushCpu: ratioCpu(results.svcPush, results.basePush),
      push10: ratio(results.svcPush10, results.basePush10),
      clonePeakRss: round(peakOf(results.svcClone)! / peakOf(results.baseClone)!, 2),
      pushPeakRss: round(peakOf(results.svcPush)! / peakOf(results.basePush)!, 2),
    }
  : null;
const rss = {
  pushPeakMB: peakOf(results.svcPush),
  clonePeakMB: peakOf(results.svcClone),
  fetchPeakMB: peakOf(results.svcFetch),
  cgitClonePeakTreeMB: peakOf(results.cgitClone),
};
const target = (value: number | null, limit: number) => ({ limit, value, met: value === null ? null : value <= limit });
const summary = {
  date: new Date().toISOString(),
  machine,
  source,
  loadavgAtEnd: (await machineInfo()).loadavg,
  repository: {
    path: gen.repo,
    seed: gen.seed,
    scale: gen.scale,
    commits: gen.commits,
    objects: gen.objects,
    refs: gen.refs,
    packMB: mb(gen.packBytes),
    tip: baseTip,
    nextTip,
    generator: `bun bench/gen-repo.ts --scale ${gen.scale} --seed ${gen.seed} --extra 10`,
  },
  commands,
  results,
  ratios,
  ratiosRobust,
  ...(ratiosNewVsOld ? { ratiosNewVsOld } : {}),
  rss,
  targets: {
    cloneRatio: target(ratios.clone, 1.5),
    fetchRatio: target(ratios.fetch, 2),
    pushVsIndexPackRatio: target(ratios.pushVsIndexPack, 2),
    cloneRssMB: { limit: 300, value: rss.clonePeakMB, met: rss.clonePeakMB === null ? null : rss.clonePeakMB < 300 },
  },
  notes,
  profiles,
  workDir: work,
};
const json = JSON.stringify(summary, null, 2);
process.stdout.write(json + "\n");
const outFile = args.out ?? join(ROOT, "bench/out", `git-${summary.date.replace(/[:.]/g, "-")}.json`);
mkdirSync(resolve(outFile, ".."), { recursive: true });
writeFileSync(outFile, json + "\n");
log(`summary written to ${outFile}`);
if (!args.keep && !args.cpuProf && !args.heapProf) rmSync(work, { recursive: true, force: true });
else log(`kept ${work}`);
