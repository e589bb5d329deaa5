// Real-repository mode of bench/git.ts (issue 12): a real public repository's first-parent
// history pushed in N fast-forward steps to svc and to C git's receive-pack behind `git daemon`,
// then cloned from both (the many-pack state), then cloned again from svc after `svc gc`.
//
//   bun bench/git.ts --real bench/work/repos/git-git.git [--steps 20] [--reps 3] [--only cgit|svc]
//                    [--single-push | --single-push-rev REV] [--no-gc] [--full-fsck] [--cpu-prof] [--keep] [--out FILE]
//                    [--mem-trace | --mem-trace-gc] [--isolate-compaction]
//
// --mem-trace: after every svc request, svc's idle memory (VmRSS, anonymous and file pages from
//   smaps_rollup, the svc_process_memory_bytes and svc_git_cache_bytes gauges, and the JS heap's
//   object types from bench/lib/mem-probe.ts, preloaded); --mem-trace-gc also after a full
//   collection. --isolate-compaction: after each svc step, wait for its compaction and record its
//   peak on its own (changes the schedule: svc then compacts between steps).
//
// The repository is a bare copy made with C git itself (never committed):
//   git clone --bare --no-local --single-branch <git.git> bench/work/repos/git-git.git
//
// Step k pushes the k-th of N evenly spaced commits of `git rev-list --first-parent HEAD` as the
// default branch, plus the tags that became reachable at that commit (`git tag --merged`). Both
// servers get the same pushes, one after the other (the side that goes first alternates per
// step). Then the clones (`git clone --bare`) alternate svc and C git; the first clone of each
// side is fsck'd (--connectivity-only unless --full-fsck) and its refs compared with the source.
// Server peak RSS: svc VmHWM after writing 5 to /proc/<pid>/clear_refs before each phase (and
// each step); C git: VmRSS summed over the daemon's process tree every 50 ms, and the peak of
// `git pack-objects` for the same clone (run directly, maxRSS from rusage).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { Database } from "bun:sqlite";
import { loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc, type SvcAccount, type SvcServer } from "./git-svc.ts";
import { freePort, gitEnv, machineInfo, mb, median, procCpu, round, RssSampler, run, waitPort } from "./git-util.ts";

interface RealArgs {
  repo: string;
  steps: number;
  reps: number;
  only: "cgit" | "svc" | null;
  singlePush: boolean;
  /** Single push of this revision (and the tags merged into it) instead of the whole repository. */
  singlePushRev: string | null;
  gc: boolean;
  fullFsck: boolean;
  cpuProf: boolean;
  keep: boolean;
  out: string | null;
  /** Record svc's idle memory (VmRSS, smaps_rollup, /metrics memory and cache gauges) after each request. */
  memTrace: boolean;
  /** With --mem-trace: the probe also runs a full collection after each request and reports both. */
  memTraceGc: boolean;
  /** After each svc step, wait for its compaction and measure that alone (attribution; changes the schedule). */
  isolateCompaction: boolean;
}

function parse(argv: string[]): RealArgs {
  const get = (n: string) => {
    const i = argv.indexOf(`--${n}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = get("only");
  return {
    repo: resolve(get("real")!),
    steps: Math.max(1, Number(get("steps") ?? 20)),
    reps: Math.max(1, Number(get("reps") ?? 3)),
    only: only === "cgit" || only === "svc" ? only : null,
    singlePush: argv.includes("--single-push") || get("single-push-rev") !== undefined,
    singlePushRev: get("single-push-rev") ?? null,
    gc: !argv.includes("--no-gc"),
    fullFsck: argv.includes("--full-fsck"),
    cpuProf: argv.includes("--cpu-prof"),
    keep: argv.includes("--keep"),
    out: get("out") ?? null,
    memTrace: argv.includes("--mem-trace") || argv.includes("--mem-trace-gc"),
    memTraceGc: argv.includes("--mem-trace-gc"),
    isolateCompaction: argv.includes("--isolate-compaction"),
  };
}

const log = (s: string) => process.stderr.write(`[git-real ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

interface Sample {
  wall: number;
  clientCpu: number;
  serverCpu: number;
  /** Server peak RSS in MB (svc: VmHWM/sampled; C git: process tree sampled). */
  peakMB: number;
  load1: number;
}

const sumSamples = (xs: Sample[]) => ({
  medianWall: round(median(xs.map((x) => x.wall))),
  minWall: round(Math.min(...xs.map((x) => x.wall))),
  medianServerCpu: round(median(xs.map((x) => x.serverCpu))),
  medianClientCpu: round(median(xs.map((x) => x.clientCpu))),
  peakMB: Math.max(...xs.map((x) => x.peakMB)),
  runs: xs.map((x) => ({ wall: round(x.wall), serverCpu: round(x.serverCpu), clientCpu: round(x.clientCpu), peakMB: x.peakMB, load1: x.load1 })),
});

/** Runs the real-repository mode; prints and writes the JSON summary. */
export async function runReal(argv: string[]): Promise<void> {
  const args = parse(argv);
  if (!existsSync(join(args.repo, "objects"))) throw new Error(`${args.repo} is not a bare git repository`);
  mkdirSync(join(ROOT, "bench/work"), { recursive: true });
  const work = mkdtempSync(join(ROOT, "bench/work/git-real-"));
  const home = join(work, "home");
  mkdirSync(home);
  const env = gitEnv(home);
  const git = (a: string[], o: { cwd?: string; check?: boolean; stdin?: string } = {}) => run(["git", ...a], { env, ...o });
  const machine = await machineInfo();
  const source = {
    commit: (await run(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT, check: false })).stdout.trim(),
    dirty: (await run(["git", "status", "--porcelain", "--", "src", "cli"], { cwd: ROOT, check: false })).stdout.trim().split("\n").filter(Boolean).length,
  };
  log(`work dir ${work}; ${machine.cpu}, ${machine.cores} cores, load ${JSON.stringify(machine.loadavg)}`);

  // ---- the repository and its steps
  const head = (await git(["symbolic-ref", "HEAD"], { cwd: args.repo })).stdout.trim();
  const branch = head.replace(/^refs\/heads\//, "");
  const firstParent = (await git(["rev-list", "--first-parent", "--reverse", head], { cwd: args.repo })).stdout.trim().split("\n");
  const count = await git(["count-objects", "-v"], { cwd: args.repo });
  const repoInfo = {
    path: relative(ROOT, args.repo),
    branch,
    tip: firstParent.at(-1)!,
    firstParentCommits: firstParent.length,
    objects: Number(/in-pack: (\d+)/.exec(count.stdout)?.[1]),
    packMiB: round(Number(/size-pack: (\d+)/.exec(count.stdout)?.[1]) / 1024, 1),
    refs: (await git(["for-each-ref", "--format=%(refname)"], { cwd: args.repo })).stdout.trim().split("\n").length,
  };
  log(
    `repository ${repoInfo.path}: ${repoInfo.objects} objects, ${repoInfo.packMiB} MiB, ${repoInfo.firstParentCommits} first-parent commits, ${repoInfo.refs} refs`,
  );
  const stepCommits: string[] = [];
  for (let k = 1; k <= args.steps; k++) stepCommits.push(firstParent[Math.ceil((k * firstParent.length) / args.steps) - 1]!);
  const pushedTags = new Set<string>();
  const stepRefspecs: string[][] = [];
  for (const c of stepCommits) {
    const tags = (await git(["for-each-ref", `--merged=${c}`, "--format=%(refname)", "refs/tags"], { cwd: args.repo })).stdout
      .trim()
      .split("\n")
      .filter(Boolean);
    const fresh = tags.filter((t) => !pushedTags.has(t));
    for (const t of fresh) pushedTags.add(t);
    stepRefspecs.push([`${c}:refs/heads/${branch}`, ...fresh.map((t) => `${t}:${t}`)]);
  }
  const expectedRefs = new Map<string, string>();
  for (const line of (await git(["for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/tags"], { cwd: args.repo })).stdout
    .trim()
    .split("\n")) {
    const [oid, name] = line.split(" ");
    if (name === head || pushedTags.has(name!)) expectedRefs.set(name!, oid!);
  }

  // ---- C git: git daemon with receive-pack on an empty bare repository
  const srv = join(work, "srv");
  mkdirSync(srv);
  const cgitRepo = join(srv, "steps.git");
  await git(["init", "--quiet", "--bare", `--initial-branch=${branch}`, cgitRepo]);
  const port = freePort();
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

  // ---- svc
  let svc: SvcServer | null = null;
  let acct: SvcAccount | null = null;
  const profRoot = join(work, "prof");
  const probeOut = join(work, "mem-probe.jsonl");
  const bunFlags = (phase: string) => [
    ...(args.cpuProf ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${join(profRoot, phase)}`] : []),
    ...(args.memTrace ? ["--preload", join(ROOT, "bench/lib/mem-probe.ts")] : []),
  ];
  const svcEnv = { SVC_METRICS_TOKEN: METRICS_TOKEN, ...(args.memTrace ? { MEM_PROBE_OUT: probeOut, ...(args.memTraceGc ? { MEM_PROBE_GC: "1" } : {}) } : {}) };
  const svcLogs: string[] = [];
  const dataDir = join(work, "svc-data");
  if (args.only !== "cgit") {
    mkdirSync(dataDir);
    svc = await startSvc({ dataDir, log: "warn", bunFlags: bunFlags("push"), env: svcEnv });
    acct = await bootstrap(svc);
    await createRepo(svc, acct, "steps", branch);
    log(`svc pid ${svc.pid} at ${svc.url}; git daemon pid ${daemon.pid} on port ${port}`);
  }
  const restartSvc = async (phase: string) => {
    if (!svc || !args.cpuProf) return;
    await svc.stop();
    svcLogs.push(svc.logs());
    svc = await startSvc({ dataDir, log: "warn", bunFlags: bunFlags(phase), env: svcEnv });
  };
  const svcUrl = (name: string) => gitUrl(svc!, acct!, name);

  /** Runs a client git command against the daemon: server CPU of its reaped children, tree RSS. */
  const cgitTimed = async (argv: string[], cwd?: string): Promise<Sample & { code: number; stderr: string }> => {
    const load1 = round(loadavg()[0]!, 2);
    const before = procCpu(daemon.pid).children;
    const sampler = new RssSampler(daemon.pid, 50, true).start();
    const r = await git(argv, { cwd, check: false });
    const rss = sampler.stop();
    await Bun.sleep(300);
    return {
      wall: r.wall,
      clientCpu: r.cpu,
      serverCpu: procCpu(daemon.pid).children - before,
      peakMB: mb(rss.peakSampledBytes),
      load1,
      code: r.code,
      stderr: r.stderr,
    };
  };
  /** Runs a client git command against svc: its own CPU, VmHWM after clear_refs (and samples). */
  const svcTimed = async (argv: string[], cwd?: string): Promise<Sample & { code: number; stderr: string }> => {
    const load1 = round(loadavg()[0]!, 2);
    const before = procCpu(svc!.pid).self;
    const sampler = new RssSampler(svc!.pid, 50).start();
    const r = await git(argv, { cwd, check: false });
    const rss = sampler.stop();
    return {
      wall: r.wall,
      clientCpu: r.cpu,
      serverCpu: procCpu(svc!.pid).self - before,
      peakMB: mb(Math.max(rss.peakSampledBytes, rss.peakHwmBytes ?? 0)),
      load1,
      code: r.code,
      stderr: r.stderr,
    };
  };
  /** svc's memory right after a request (`--mem-trace`): RSS, anonymous vs file pages, heap and cache gauges, in MB. */
  const memTrace: Record<string, unknown>[] = [];
  const traceMem = async (label: string) => {
    if (!svc || !args.memTrace) return;
    const row: Record<string, unknown> = { label, ...(await svcMemory(svc)) };
    const lines = existsSync(probeOut) ? readFileSync(probeOut, "utf8").split("\n").filter(Boolean).length : 0;
    process.kill(svc.pid, "SIGUSR2");
    for (let i = 0; i < 200; i++) {
      const all = existsSync(probeOut) ? readFileSync(probeOut, "utf8").split("\n").filter(Boolean) : [];
      if (all.length > lines) {
        row.probe = JSON.parse(all.at(-1)!);
        break;
      }
      await Bun.sleep(50);
    }
    memTrace.push(row);
    log(`  mem ${label}: ${JSON.stringify(row)}`);
  };
  await traceMem("start");
  const svcDb = () => new Database(join(dataDir, "svc.db"), { readonly: true });
  /** Live packs of the svc repository, and whether compaction/GC work is pending. */
  const svcState = () => {
    const db = svcDb();
    try {
      const packs = db
        .query(
          "select count(*) as n, coalesce(sum(size),0) as bytes from packs p join repos r on r.id = p.repo_id where r.name = 'steps' and p.replaced_at is null",
        )
        .get() as { n: number; bytes: number };
      const pending = db.query("select count(*) as n from jobs where kind in ('repo.compact','repo.gc') and done_at is null").get() as { n: number };
      return { packs: packs.n, packMiB: round(packs.bytes / 1048576, 1), pendingJobs: pending.n };
    } finally {
      db.close();
    }
  };
  const cgitPacks = () => {
    const dir = join(cgitRepo, "objects/pack");
    const packs = readdirSync(dir).filter((f) => f.endsWith(".pack"));
    return {
      packs: packs.length,
      packMiB: round(packs.reduce((s, f) => s + statSync(join(dir, f)).size, 0) / 1048576, 1),
      loose: readdirSync(join(cgitRepo, "objects")).filter((d) => /^[0-9a-f]{2}$/.test(d)).length,
    };
  };

  const results: Record<string, unknown> = {};
  const notes: string[] = [];

  // ---- pushes in steps
  const pushes: { step: number; refs: number; cgit?: Sample; svc?: Sample }[] = [];
  let svcPushHwm = 0;
  for (let k = 0; k < args.steps; k++) {
    const refspecs = stepRefspecs[k]!;
    const row: (typeof pushes)[number] = { step: k + 1, refs: refspecs.length };
    const order = k % 2 === 0 ? (["cgit", "svc"] as const) : (["svc", "cgit"] as const);
    for (const side of order) {
      if (side === "cgit" && args.only === "svc") continue;
      if (side === "svc" && !svc) continue;
      const argv = ["push", "--quiet", side === "cgit" ? daemonUrl("steps.git") : svcUrl("steps"), ...refspecs];
      const s = side === "cgit" ? await cgitTimed(argv, args.repo) : await svcTimed(argv, args.repo);
      if (s.code !== 0) throw new Error(`step ${k + 1}: push to ${side} failed: ${s.stderr.slice(-2000)}`);
      row[side] = { wall: s.wall, clientCpu: s.clientCpu, serverCpu: s.serverCpu, peakMB: s.peakMB, load1: s.load1 };
      if (side === "svc") {
        svcPushHwm = Math.max(svcPushHwm, s.peakMB);
        await traceMem(`step ${k + 1} (peak ${s.peakMB})`);
        if (args.isolateCompaction) {
          // Attribution: let this step's compaction run alone and measure its peak separately.
          const sampler = new RssSampler(svc!.pid, 50).start();
          const t0 = performance.now();
          while (svcState().pendingJobs > 0 && performance.now() - t0 < 600_000) await Bun.sleep(200);
          const rss = sampler.stop();
          if (performance.now() - t0 > 1000)
            await traceMem(
              `step ${k + 1} compaction (${round((performance.now() - t0) / 1000, 1)} s, peak ${mb(Math.max(rss.peakSampledBytes, rss.peakHwmBytes ?? 0))})`,
            );
        }
      }
    }
    pushes.push(row);
    log(
      `step ${k + 1}/${args.steps} (${refspecs.length} refs): cgit ${row.cgit ? round(row.cgit.wall, 2) : "-"} s, svc ${row.svc ? round(row.svc.wall, 2) : "-"} s, svc peak ${row.svc?.peakMB ?? "-"} MB, cgit tree peak ${row.cgit?.peakMB ?? "-"} MB`,
    );
  }
  const total = (side: "cgit" | "svc") =>
    round(
      pushes.reduce((s, r) => s + (r[side]?.wall ?? 0), 0),
      2,
    );
  const totalCpu = (side: "cgit" | "svc") =>
    round(
      pushes.reduce((s, r) => s + (r[side]?.serverCpu ?? 0), 0),
      2,
    );
  results.pushes = {
    steps: pushes,
    cgitTotalWall: total("cgit"),
    svcTotalWall: total("svc"),
    cgitTotalServerCpu: totalCpu("cgit"),
    svcTotalServerCpu: totalCpu("svc"),
    svcPeakMB: svcPushHwm,
    cgitPeakMB: Math.max(0, ...pushes.map((r) => r.cgit?.peakMB ?? 0)),
  };

  // let svc's background compaction settle, then record the many-pack state
  if (svc) {
    const t0 = performance.now();
    while (svcState().pendingJobs > 0 && performance.now() - t0 < 600_000) await Bun.sleep(500);
    results.svcSettleSeconds = round((performance.now() - t0) / 1000, 1);
    results.svcPacksBeforeClone = svcState();
    await traceMem("settled");
  }
  if (args.only !== "svc") results.cgitPacksBeforeClone = cgitPacks();

  // refs equal on both sides?
  const refsOf = async (url: string) => {
    const out = (await git(["ls-remote", url])).stdout.trim().split("\n");
    const m = new Map<string, string>();
    for (const l of out) {
      const [oid, name] = l.split("\t");
      if (name && !name.endsWith("^{}") && name !== "HEAD") m.set(name, oid!);
    }
    return m;
  };
  const sameRefs = (m: Map<string, string>) => m.size === expectedRefs.size && [...expectedRefs].every(([n, o]) => m.get(n) === o);
  if (svc) results.svcRefsMatch = sameRefs(await refsOf(svcUrl("steps")));
  if (args.only !== "svc") results.cgitRefsMatch = sameRefs(await refsOf(daemonUrl("steps.git")));

  // ---- clones
  await restartSvc("clone");
  const checkClone = async (dst: string) => {
    const fsck = await git(["fsck", ...(args.fullFsck ? [] : ["--connectivity-only"]), "--no-progress", "--no-dangling"], { cwd: dst, check: false });
    const refs = new Map<string, string>();
    for (const l of (await git(["for-each-ref", "--format=%(objectname) %(refname)"], { cwd: dst })).stdout.trim().split("\n")) {
      const [oid, name] = l.split(" ");
      refs.set(name!, oid!);
    }
    const count = (await git(["count-objects", "-v"], { cwd: dst })).stdout;
    return { fsckExit: fsck.code, fsckErr: fsck.stderr.trim().slice(0, 500), refsMatch: sameRefs(refs), objects: Number(/in-pack: (\d+)/.exec(count)?.[1]) };
  };
  const cloneRound = async (label: string, sides: ("cgit" | "svc")[]) => {
    const out: Record<string, Sample[]> = { cgit: [], svc: [] };
    const checks: Record<string, unknown> = {};
    for (let i = 0; i < args.reps; i++) {
      const order = i % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const dst = join(work, `clone-${label}-${side}-${i}.git`);
        const argv = ["clone", "--quiet", "--bare", side === "cgit" ? daemonUrl("steps.git") : svcUrl("steps"), dst];
        const s = side === "cgit" ? await cgitTimed(argv) : await svcTimed(argv);
        if (s.code !== 0) throw new Error(`${label}: clone from ${side} failed: ${s.stderr.slice(-2000)}`);
        if (i === 0) checks[side] = await checkClone(dst);
        if (side === "svc") await traceMem(`${label} clone ${i + 1} (peak ${s.peakMB})`);
        rmSync(dst, { recursive: true, force: true });
        out[side]!.push({ wall: s.wall, clientCpu: s.clientCpu, serverCpu: s.serverCpu, peakMB: s.peakMB, load1: s.load1 });
        log(`  ${label} clone ${i + 1} ${side}: ${round(s.wall, 2)} s, server cpu ${round(s.serverCpu, 2)} s, server peak ${s.peakMB} MB`);
      }
    }
    const r: Record<string, unknown> = { checks };
    for (const side of sides) if (out[side]!.length) r[side] = sumSamples(out[side]!);
    return r;
  };
  const sides = (["cgit", "svc"] as const).filter((s) => (s === "cgit" ? args.only !== "svc" : svc !== null));
  log(`clones of the many-pack state × ${args.reps}`);
  results.clone = await cloneRound("many-pack", [...sides]);

  // C git's pack-objects for the same clone, run directly (its own peak RSS)
  if (args.only !== "svc") {
    const wants = (await git(["for-each-ref", "--format=%(objectname)"], { cwd: cgitRepo })).stdout;
    const wantsFile = join(work, "wants.txt");
    writeFileSync(wantsFile, wants);
    const po: { wall: number; maxRssMB: number }[] = [];
    for (let i = 0; i < args.reps; i++) {
      const t0 = performance.now();
      const p = Bun.spawn(["git", "pack-objects", "--revs", "--thin", "--stdout", "--delta-base-offset", "--include-tag", "-q"], {
        cwd: cgitRepo,
        env,
        stdin: Bun.file(wantsFile),
        stdout: "ignore",
        stderr: "ignore",
      });
      if ((await p.exited) !== 0) throw new Error("git pack-objects failed");
      po.push({ wall: round((performance.now() - t0) / 1000), maxRssMB: mb(Number(p.resourceUsage()!.maxRSS)) });
    }
    results.cgitPackObjects = {
      command:
        "git for-each-ref --format=%(objectname) | git pack-objects --revs --thin --stdout --delta-base-offset --include-tag (in the daemon's many-pack repository)",
      runs: po,
      medianWall: round(median(po.map((p) => p.wall))),
      peakMB: Math.max(...po.map((p) => p.maxRssMB)),
    };
  }

  // ---- svc gc, then clones again (C git still on its many-pack state)
  if (svc && args.gc) {
    log("svc gc");
    const r = await run([process.execPath, join(ROOT, "src/main.ts"), "gc", "--repo", `${acct!.org}/steps`], {
      cwd: ROOT,
      env: { ...cleanSvcEnv(), ...svc.env },
      check: false,
    });
    results.svcGc = {
      code: r.code,
      wall: round(r.wall),
      maxRssMB: mb(r.maxRss),
      cpu: round(r.cpu),
      stdout: r.stdout.trim().slice(0, 1000),
      stderr: r.stderr.trim().slice(0, 1000),
    };
    results.svcPacksAfterGc = svcState();
    log(`  gc: ${round(r.wall, 1)} s, peak ${mb(r.maxRss)} MB, ${r.stdout.trim()}`);
    await restartSvc("clone-after-gc");
    log(`clones after svc gc × ${args.reps}`);
    results.cloneAfterGc = await cloneRound("after-gc", [...sides]);
  }

  // ---- one push of the whole repository (the day-one import)
  if (args.singlePush) {
    await restartSvc("single-push");
    const rev = args.singlePushRev ? (await git(["rev-parse", `${args.singlePushRev}^{commit}`], { cwd: args.repo })).stdout.trim() : null;
    const singleTags = rev
      ? (await git(["for-each-ref", `--merged=${rev}`, "--format=%(refname)", "refs/tags"], { cwd: args.repo })).stdout.trim().split("\n").filter(Boolean)
      : [...pushedTags];
    const singleHead = rev ?? head;
    const diskUsage = Number((await git(["rev-list", "--objects", "--disk-usage", singleHead, ...singleTags], { cwd: args.repo })).stdout.trim());
    log(`single push of ${rev ? `${rev} and ${singleTags.length} tags` : "the whole repository"} (${round(diskUsage / 1e6, 1)} MB on disk in the source)`);
    const one: Record<string, unknown> = { rev: singleHead, tags: singleTags.length, sourceDiskUsageMB: round(diskUsage / 1e6, 1) };
    for (const side of sides) {
      let url: string;
      if (side === "cgit") {
        await git(["init", "--quiet", "--bare", `--initial-branch=${branch}`, join(srv, "single.git")]);
        url = daemonUrl("single.git");
      } else {
        await createRepo(svc!, acct!, "single", branch);
        url = svcUrl("single");
      }
      const refspecs = [`${singleHead}:${head}`, ...singleTags.map((t) => `${t}:${t}`)];
      const s =
        side === "cgit" ? await cgitTimed(["push", "--quiet", url, ...refspecs], args.repo) : await svcTimed(["push", "--quiet", url, ...refspecs], args.repo);
      one[side] = { code: s.code, wall: round(s.wall), serverCpu: round(s.serverCpu), peakMB: s.peakMB, load1: s.load1, stderr: s.stderr.trim().slice(-1000) };
      log(`  ${side}: exit ${s.code}, ${round(s.wall, 2)} s, peak ${s.peakMB} MB`);
      if (side === "svc") await traceMem(`single push (peak ${s.peakMB})`);
    }
    if (svc) {
      const db = svcDb();
      try {
        const p = db
          .query("select count(*) as n, coalesce(sum(size),0) as bytes from packs p join repos r on r.id = p.repo_id where r.name = 'single'")
          .get() as { n: number; bytes: number };
        one.svcStoredPackMB = round(p.bytes / 1e6, 1);
      } finally {
        db.close();
      }
    }
    results.singlePush = one;
  }

  // ---- shut down, summarize
  daemon.kill("SIGTERM");
  await daemon.exited;
  const profiles: string[] = [];
  if (svc) {
    await svc.stop();
    svcLogs.push(svc.logs());
    writeFileSync(join(work, "svc.log"), svcLogs.join(""));
    if (existsSync(profRoot)) for (const ph of readdirSync(profRoot)) for (const f of readdirSync(join(profRoot, ph))) profiles.push(join(profRoot, ph, f));
  }
  const r = results as any;
  const ratio = (a?: number, b?: number) => (a && b ? round(a / b, 2) : null);
  const ratios = {
    pushTotal: ratio(r.pushes.svcTotalWall, r.pushes.cgitTotalWall),
    pushServerCpu: ratio(r.pushes.svcTotalServerCpu, r.pushes.cgitTotalServerCpu),
    clone: ratio(r.clone?.svc?.medianWall, r.clone?.cgit?.medianWall),
    cloneAfterGcVsCgitManyPack: ratio(r.cloneAfterGc?.svc?.medianWall, r.cloneAfterGc?.cgit?.medianWall ?? r.clone?.cgit?.medianWall),
    clonePeakVsPackObjects: ratio(r.clone?.svc?.peakMB, r.cgitPackObjects?.peakMB),
    singlePush: ratio(r.singlePush?.svc?.wall, r.singlePush?.cgit?.wall),
  };
  const singleUnder100 = r.singlePush?.svc && r.singlePush.sourceDiskUsageMB <= 100 ? [r.singlePush.svc.peakMB as number] : [];
  const maxPushPeakUnder100MB = Math.max(0, ...r.pushes.steps.filter((s: any) => s.svc).map((s: any) => s.svc.peakMB), ...singleUnder100);
  const target = (value: number | null, limit: number) => ({ limit, value, met: value === null ? null : value <= limit });
  const summary = {
    date: new Date().toISOString(),
    mode: "real",
    machine,
    loadavgAtEnd: (await machineInfo()).loadavg,
    source,
    repository: repoInfo,
    steps: args.steps,
    reps: args.reps,
    commands: {
      prepare: "git clone --bare --no-local --single-branch <git.git> <repo>",
      steps: `step k: git push git://127.0.0.1:PORT/steps.git | http://x:TOKEN@127.0.0.1:PORT/bench/steps.git <k-th of ${args.steps} evenly spaced first-parent commits>:refs/heads/${branch} <tags merged into it, not pushed before>`,
      cgitServer: "git daemon --export-all --base-path=… --reuseaddr --enable=receive-pack (empty bare repository)",
      clone: "git clone --bare <url> (alternating svc and C git)",
      fsck: `git fsck ${args.fullFsck ? "" : "--connectivity-only "}--no-dangling (first clone of each side)`,
      gc: "bun src/main.ts gc --repo bench/steps",
    },
    results,
    ratios,
    targets: {
      pushTotalVsReceivePack: target(ratios.pushTotal, 1.2),
      cloneVsDaemonManyPack: target(ratios.clone, 1.2),
      cloneAfterGcVsDaemonManyPack: target(ratios.cloneAfterGcVsCgitManyPack, 0.8),
      clonePeakVsPackObjects: target(ratios.clonePeakVsPackObjects, 1.2),
      pushPeakMB: target(maxPushPeakUnder100MB || null, 400),
    },
    notes,
    memTrace,
    profiles,
    workDir: work,
  };
  const json = JSON.stringify(summary, null, 2);
  process.stdout.write(json + "\n");
  const outFile = args.out ?? join(ROOT, "bench/out", `git-real-${summary.date.replace(/[:.]/g, "-")}.json`);
  mkdirSync(resolve(outFile, ".."), { recursive: true });
  writeFileSync(outFile, json + "\n");
  log(`summary written to ${outFile}`);
  if (!args.keep && !args.cpuProf) rmSync(work, { recursive: true, force: true });
  else log(`kept ${work}`);
}

const METRICS_TOKEN = "bench-metrics-token-0123456789";

/** svc's memory now, in MB: VmRSS, anonymous and file-backed resident pages, and the /metrics memory gauges. */
async function svcMemory(svc: SvcServer): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const kb = (text: string, key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  const status = readFileSync(`/proc/${svc.pid}/status`, "utf8");
  out.rss = round(kb(status, "VmRSS") / 1024, 1);
  out.hwm = round(kb(status, "VmHWM") / 1024, 1);
  const rollup = readFileSync(`/proc/${svc.pid}/smaps_rollup`, "utf8");
  out.anon = round(kb(rollup, "Anonymous") / 1024, 1);
  out.file = round((kb(rollup, "Rss") - kb(rollup, "Anonymous")) / 1024, 1);
  const res = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  for (const line of (await res.text()).split("\n")) {
    const m = /^(svc_process_memory_bytes|svc_git_cache_bytes)\{(?:kind|cache)="([a-z_]+)"\} (\S+)$/.exec(line);
    if (m) out[m[2]!] = round(Number(m[3]) / 1048576, 1);
  }
  return out;
}

function cleanSvcEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SVC_") && v !== undefined) out[k] = v;
  return out;
}
