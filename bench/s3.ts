// Object storage as it really behaves (issue 20): svc on S3 (s3rver behind a latency and fault
// proxy, test/helpers/fault-proxy.ts) side by side with svc on the local disk, one machine, one
// run, the same real repository (a subset of git/git made from the mirror on this machine).
//
//   bun bench/s3.ts [--only latency|faults] [--delay 20] [--steps 10] [--clone-reps 3]
//                   [--fetch-reps 5] [--tag v2.24.0] [--fault-tag v1.6.0] [--fault-ops 200]
//                   [--fault-workers 4] [--fault-delay 5] [--slowdown 0.05] [--reset 0.01]
//                   [--seed 1] [--no-gc] [--keep] [--out FILE]
//
// latency: every request to S3 gets --delay ms before it is forwarded. The repository is pushed
//   in --steps fast-forward steps (the last one with all tags) to both servers, alternating which
//   goes first; both are compacted with `svc gc` (not with --no-gc: the clones are then of the
//   stepped state, one pack per push plus what compaction merged, as a repository is between GC
//   passes); then clones (--clone-reps, alternating), a push
//   of 10 more commits, and incremental fetches of them (--fetch-reps, alternating). Reported:
//   wall time per side and ratios, server CPU, client CPU, the CPU of s3rver and the proxy (they
//   share the machine with the client and svc), server peak RSS, and the S3 requests and bytes
//   each operation cost (counted by the proxy), and for the clones the proxy's timeline split
//   by phase (idx reads, pack reads, other): requests, bytes, and serial time (≤ 1 request in
//   flight while the operation ran). Each timed operation waits for both servers to
//   be idle first (background work after the other side's push).
// faults: a third svc on S3 behind the proxy answering --slowdown of requests 503 SlowDown and
//   resetting --reset of connections mid-body. --fault-ops pushes, clones and fetches (seeded
//   mix, --fault-workers at once) over 4 repositories of a smaller subset; each must succeed
//   (clone/fetch then `git fsck` clean) or fail with a message, the repository unchanged. Then
//   svc stops, a GC runs past its grace period (bench/lib/s3-audit.ts, clock moved forward), and
//   the bucket is listed directly: no object may be left that no live pack row names, and no
//   multipart upload may be left open. Every repository is cloned once more and checked.
//
// The subsets are made once under bench/work/repos/ from /work/.mirror/git+git/repo with
// `git clone --bare --no-local --single-branch --branch <tag>`, plus 10 first-parent commits of
// master after the tag (refs/heads/next) for the incremental fetch.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { gitEnv, machineInfo, mb, median, procCpu, round, RssSampler, run } from "./lib/git-util.ts";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc, type SvcAccount, type SvcServer } from "./lib/git-svc.ts";
import { Rng } from "./lib/git-prng.ts";
import { spawnFaultProxy, type FaultProxyHandle, type ProxyStats, type TraceEntry } from "../test/helpers/fault-proxy.ts";
import { timeline, type Timeline } from "./lib/s3-timeline.ts";
import { startS3rver, type S3rverHandle } from "../test/helpers/s3rver.ts";

const MIRROR = "/work/.mirror/git+git/repo";

interface Args {
  only: "latency" | "faults" | null;
  delay: number;
  steps: number;
  cloneReps: number;
  fetchReps: number;
  tag: string;
  faultTag: string;
  faultOps: number;
  faultWorkers: number;
  faultDelay: number;
  slowDown: number;
  reset: number;
  seed: number;
  noGc: boolean;
  keep: boolean;
  out: string | null;
}

function parseArgs(argv: string[]): Args {
  const get = (n: string) => {
    const i = argv.indexOf(`--${n}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = get("only");
  return {
    only: only === "latency" || only === "faults" ? only : null,
    delay: Number(get("delay") ?? 20),
    steps: Number(get("steps") ?? 10),
    cloneReps: Number(get("clone-reps") ?? 3),
    fetchReps: Number(get("fetch-reps") ?? 5),
    tag: get("tag") ?? "v2.24.0",
    faultTag: get("fault-tag") ?? "v1.6.0",
    faultOps: Number(get("fault-ops") ?? 200),
    faultWorkers: Number(get("fault-workers") ?? 4),
    faultDelay: Number(get("fault-delay") ?? 5),
    slowDown: Number(get("slowdown") ?? 0.05),
    reset: Number(get("reset") ?? 0.01),
    seed: Number(get("seed") ?? 1),
    noGc: argv.includes("--no-gc"),
    keep: argv.includes("--keep"),
    out: get("out") ?? null,
  };
}

const args = parseArgs(process.argv.slice(2));
const log = (s: string) => process.stderr.write(`[s3-bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

mkdirSync(join(ROOT, "bench/work/repos"), { recursive: true });
const work = mkdtempSync(join(ROOT, "bench/work/s3-run-"));
const home = join(work, "home");
mkdirSync(home);
const env = gitEnv(home);
const git = (argv: string[], opts: { cwd?: string; check?: boolean } = {}) => run(["git", ...argv], { env, ...opts });

// ---------------------------------------------------------------------------------------
// Repositories

interface Subset {
  path: string;
  tag: string;
  tip: string;
  /** First-parent history of main, oldest first. */
  chain: string[];
  nextTip: string;
  packMB: number;
}

/** A bare subset of git/git up to `tag` (main = the tag's commit) plus refs/heads/next 10 commits later. */
async function subset(tag: string): Promise<Subset> {
  const path = join(ROOT, "bench/work/repos", `git-${tag}.git`);
  if (!existsSync(join(path, "refs/heads/next"))) {
    rmSync(path, { recursive: true, force: true });
    log(`making ${path} from ${MIRROR} (history up to ${tag})`);
    await git(["clone", "--quiet", "--bare", "--no-local", "--single-branch", "--branch", tag, MIRROR, path]);
    await git(["update-ref", "refs/heads/main", `${tag}^{commit}`], { cwd: path });
    const after = (await git(["rev-list", "--first-parent", "--reverse", "--ancestry-path", `${tag}..master`], { cwd: MIRROR })).stdout.trim().split("\n");
    await git(["fetch", "--quiet", "--no-tags", MIRROR, `${after[9]}:refs/heads/next`], { cwd: path });
  }
  const tip = (await git(["rev-parse", "refs/heads/main"], { cwd: path })).stdout.trim();
  const nextTip = (await git(["rev-parse", "refs/heads/next"], { cwd: path })).stdout.trim();
  const chain = (await git(["rev-list", "--first-parent", "--reverse", "refs/heads/main"], { cwd: path })).stdout.trim().split("\n");
  return { path, tag, tip, chain, nextTip, packMB: mb(packBytes(path)) };
}

function packBytes(repo: string): number {
  const dir = join(repo, "objects", "pack");
  if (!existsSync(dir)) return 0;
  return readdirSync(dir)
    .filter((f) => f.endsWith(".pack"))
    .reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

// ---------------------------------------------------------------------------------------
// Servers

interface Side {
  name: string;
  /** Replaced when the server is restarted. */
  svc: SvcServer;
  acct: SvcAccount;
  proxy: FaultProxyHandle | null;
  /** The fake bucket's processes (s3rver, the proxy): their CPU is the machine's, not svc's. */
  helperPids: number[];
}

function s3Env(s3: S3rverHandle, endpoint: string): Record<string, string> {
  return { SVC_STORAGE: "s3", SVC_S3_ENDPOINT: endpoint, SVC_S3_BUCKET: s3.bucket, SVC_S3_ACCESS_KEY: s3.accessKey, SVC_S3_SECRET_KEY: s3.secretKey };
}

async function startSide(name: string, extraEnv: Record<string, string>, proxy: FaultProxyHandle | null, helperPids: number[] = []): Promise<Side> {
  const dataDir = join(work, `svc-${name}`);
  mkdirSync(dataDir);
  const svc = await startSvc({ dataDir, log: "warn", env: extraEnv });
  const acct = await bootstrap(svc);
  log(`svc ${name}: pid ${svc.pid} at ${svc.url}`);
  return { name, svc, acct, proxy, helperPids };
}

// ---------------------------------------------------------------------------------------
// Measurement

interface Sample {
  wall: number;
  clientCpu: number;
  serverCpu: number;
  /** CPU seconds of s3rver and the proxy during the operation (0 on fs). */
  helperCpu: number;
  rssStartMB: number;
  rssPeakMB: number;
  load1: number;
  code: number;
  stderr: string;
  s3?: ProxyStats;
  /** With a tracing proxy: the operation's requests by phase, bytes and serial time. */
  timeline?: Timeline;
}

/** Whether the proxy keeps a timeline (the latency run); timed() then reads it per operation. */
let traceOn = false;

/** The servers of the run; each timed operation first waits for all of them to be idle. */
let running: Side[] = [];

/**
 * Waits until every svc process is idle (under 5% of a core over half a second; 60 s at most):
 * one side's background work after a push (the contributions job walks every new commit) must
 * not run during the other side's timed operation.
 */
async function settle(): Promise<void> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const before = running.map((s) => procCpu(s.svc.pid).self);
    await Bun.sleep(500);
    if (!running.some((s, i) => procCpu(s.svc.pid).self - before[i]! > 0.025) || performance.now() > deadline) return;
  }
}

async function timed(side: Side, argv: string[], cwd?: string): Promise<Sample> {
  await settle();
  const load1 = round(loadavg()[0]!, 2);
  const before = procCpu(side.svc.pid).self;
  const helperCpu = () => side.helperPids.reduce((n, pid) => n + procCpu(pid).self, 0);
  const helpersBefore = helperCpu();
  const s3Before = side.proxy ? await side.proxy.stats() : null;
  if (side.proxy) await side.proxy.resetStats();
  if (side.proxy && traceOn) await side.proxy.trace();
  const t0 = performance.now();
  const sampler = new RssSampler(side.svc.pid, 50).start();
  const r = await git(argv, { cwd, check: false });
  const rss = sampler.stop();
  const sample: Sample = {
    wall: r.wall,
    clientCpu: r.cpu,
    serverCpu: procCpu(side.svc.pid).self - before,
    helperCpu: round(helperCpu() - helpersBefore, 2),
    rssStartMB: mb(rss.startBytes),
    rssPeakMB: mb(Math.max(rss.peakSampledBytes, rss.peakHwmBytes ?? 0)),
    load1,
    code: r.code,
    stderr: r.stderr.trim().slice(-2000),
  };
  if (side.proxy && s3Before) sample.s3 = await side.proxy.stats();
  if (side.proxy && traceOn) {
    const { now, entries } = await side.proxy.trace();
    // The proxy's clock: the operation ended about when trace() answered.
    sample.timeline = timeline(entries as TraceEntry[], now - (performance.now() - t0), now);
  }
  return sample;
}

const summarize = (xs: Sample[]) => ({
  medianWall: round(median(xs.map((x) => x.wall))),
  minWall: round(Math.min(...xs.map((x) => x.wall))),
  medianServerCpu: round(median(xs.map((x) => x.serverCpu))),
  medianClientCpu: round(median(xs.map((x) => x.clientCpu))),
  medianHelperCpu: round(median(xs.map((x) => x.helperCpu))),
  peakRssMB: Math.max(...xs.map((x) => x.rssPeakMB)),
  runs: xs.map((x) => ({
    wall: round(x.wall),
    serverCpu: round(x.serverCpu),
    clientCpu: round(x.clientCpu),
    helperCpu: x.helperCpu,
    rssStartMB: x.rssStartMB,
    rssPeakMB: x.rssPeakMB,
    load1: x.load1,
    ...(x.s3 ? { s3: x.s3 } : {}),
    ...(x.timeline ? { timeline: x.timeline } : {}),
  })),
});

const results: Record<string, unknown> = {};
const notes: string[] = [];
const url = (side: Side, repo: string) => gitUrl(side.svc, side.acct, repo);
const check = (s: Sample, what: string) => {
  if (s.code !== 0) throw new Error(`${what} failed (exit ${s.code}): ${s.stderr}`);
};

// ---------------------------------------------------------------------------------------
// Latency: fs vs S3 with --delay ms per request

async function latencyRun(): Promise<void> {
  const repo = await subset(args.tag);
  log(`repository ${repo.path}: pack ${repo.packMB} MB, ${repo.chain.length} first-parent commits, main ${repo.tip.slice(0, 12)}`);
  const s3 = await startS3rver();
  const proxy = await spawnFaultProxy(s3.endpoint, { delayMs: args.delay, seed: args.seed, trace: true });
  traceOn = true;
  const sides: Side[] = [await startSide("fs", {}, null), await startSide("s3", s3Env(s3, proxy.endpoint), proxy, [s3.pid, proxy.pid])];
  running = sides;
  try {
    const name = "git";
    for (const side of sides) await createRepo(side.svc, side.acct, name);

    // Pushes: --steps fast-forward steps of main; the last one carries every tag too.
    const pushes: Record<string, Sample[]> = { fs: [], s3: [] };
    for (let k = 1; k <= args.steps; k++) {
      const at = repo.chain[Math.ceil((repo.chain.length * k) / args.steps) - 1]!;
      const refspecs = k === args.steps ? ["refs/heads/main:refs/heads/main", "refs/tags/*:refs/tags/*"] : [`${at}:refs/heads/main`];
      const order = k % 2 ? sides : [...sides].reverse();
      for (const side of order) {
        const s = await timed(side, ["push", "--quiet", url(side, name), ...refspecs], repo.path);
        check(s, `push step ${k} to ${side.name}`);
        pushes[side.name]!.push(s);
      }
      log(`  push ${k}/${args.steps}: fs ${round(pushes.fs!.at(-1)!.wall, 2)} s, s3 ${round(pushes.s3!.at(-1)!.wall, 2)} s`);
    }
    const pushTotal = (xs: Sample[]) => round(xs.reduce((n, x) => n + x.wall, 0));
    results.push = {
      fs: { totalWall: pushTotal(pushes.fs!), ...summarize(pushes.fs!) },
      s3: { totalWall: pushTotal(pushes.s3!), ...summarize(pushes.s3!) },
      ratio: round(pushTotal(pushes.s3!) / pushTotal(pushes.fs!), 3),
    };

    // One pack per repository, as a long-lived repository has after its periodic GC (with
    // --no-gc the stepped state stays, as a repository is between GC passes).
    const gc: Record<string, unknown> = {};
    for (const side of args.noGc ? [] : sides) {
      const t0 = performance.now();
      const g = await side.svc.cli(["gc", "--repo", `${side.acct.org}/${name}`]);
      if (g.code !== 0) throw new Error(`gc on ${side.name}: ${g.stderr}`);
      gc[side.name] = { wall: round((performance.now() - t0) / 1000), out: g.stdout.trim() };
    }
    results.gc = args.noGc ? "skipped (--no-gc)" : gc;
    await settle();
    results.packsBeforeClone = Object.fromEntries(sides.map((side) => [side.name, livePacks(side)]));
    // Fresh processes for the clones: peak RSS is the clone's, and the first clone is cold (idx
    // files and peeled tags read from storage again).
    for (const side of sides) {
      await side.svc.stop();
      writeFileSync(join(work, `svc-${side.name}-push.log`), side.svc.logs());
      side.svc = await startSvc({ dataDir: side.svc.dataDir, log: "warn", env: side.name === "s3" ? s3Env(s3, proxy.endpoint) : {} });
    }

    // Clones.
    const clones: Record<string, Sample[]> = { fs: [], s3: [] };
    const cloneCheck: Record<string, { fsckExit: number; packMB: number }> = {};
    results.cloneCheck = cloneCheck;
    const template = join(work, "template.git");
    for (let i = 0; i < args.cloneReps; i++) {
      const order = i % 2 ? [...sides].reverse() : sides;
      for (const side of order) {
        const dst = join(work, `clone-${side.name}-${i}.git`);
        const s = await timed(side, ["clone", "--quiet", "--bare", url(side, name), dst]);
        check(s, `clone from ${side.name}`);
        const tip = (await git(["rev-parse", "refs/heads/main"], { cwd: dst })).stdout.trim();
        if (tip !== repo.tip) throw new Error(`clone from ${side.name}: main ${tip}, expected ${repo.tip}`);
        if (i === 0) {
          const fsck = await git(["fsck", "--connectivity-only", "--no-progress"], { cwd: dst, check: false });
          cloneCheck[side.name] = { fsckExit: fsck.code, packMB: mb(packBytes(dst)) };
          if (side.name === "s3") await git(["clone", "--quiet", "--bare", "--local", dst, template]);
        }
        clones[side.name]!.push(s);
        rmSync(dst, { recursive: true, force: true });
        log(
          `  clone ${i + 1} from ${side.name}: ${round(s.wall, 2)} s, server cpu ${round(s.serverCpu, 2)} s, client cpu ${round(s.clientCpu, 2)} s, s3rver+proxy cpu ${s.helperCpu} s, load ${s.load1}, rss peak ${s.rssPeakMB} MB${s.s3 ? `, S3 ${s.s3.requests} requests / ${mb(s.s3.bytesDown)} MB` : ""}${s.timeline ? `, timeline ${JSON.stringify(s.timeline)}` : ""}`,
        );
      }
    }
    const clonePackMB = cloneCheck.s3!.packMB;
    results.clone = {
      fs: summarize(clones.fs!),
      s3: summarize(clones.s3!),
      ratio: round(median(clones.s3!.map((x) => x.wall)) / median(clones.fs!.map((x) => x.wall)), 3),
      s3RequestsPerMiB: clones.s3!.map((x) => round((x.s3?.requests ?? 0) / clonePackMB, 3)),
    };

    // Ten more commits, then incremental fetches into a clone at the old tip.
    const push10: Record<string, Sample> = {};
    for (const side of sides) {
      const s = await timed(side, ["push", "--quiet", url(side, name), "refs/heads/next:refs/heads/main"], repo.path);
      check(s, `push of 10 commits to ${side.name}`);
      push10[side.name] = s;
    }
    results.push10 = { fs: summarize([push10.fs!]), s3: summarize([push10.s3!]), ratio: round(push10.s3!.wall / push10.fs!.wall, 3) };
    const fetches: Record<string, Sample[]> = { fs: [], s3: [] };
    const refspecs = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"];
    for (let i = 0; i < args.fetchReps; i++) {
      const order = i % 2 ? [...sides].reverse() : sides;
      for (const side of order) {
        const dst = join(work, `fetch-${side.name}-${i}.git`);
        await git(["clone", "--quiet", "--bare", "--local", template, dst]);
        const s = await timed(side, ["fetch", "--quiet", url(side, name), ...refspecs], dst);
        check(s, `fetch from ${side.name}`);
        const tip = (await git(["rev-parse", "refs/heads/main"], { cwd: dst })).stdout.trim();
        if (tip !== repo.nextTip) throw new Error(`fetch from ${side.name}: main ${tip}, expected ${repo.nextTip}`);
        fetches[side.name]!.push(s);
        rmSync(dst, { recursive: true, force: true });
      }
      log(
        `  fetch ${i + 1}: fs ${round(fetches.fs!.at(-1)!.wall, 3)} s, s3 ${round(fetches.s3!.at(-1)!.wall, 3)} s (${fetches.s3!.at(-1)!.s3?.requests} S3 requests)`,
      );
    }
    results.fetch = {
      fs: summarize(fetches.fs!),
      s3: summarize(fetches.s3!),
      ratio: round(median(fetches.s3!.map((x) => x.wall)) / median(fetches.fs!.map((x) => x.wall)), 3),
    };
    results.latency = {
      delayMs: args.delay,
      repository: { path: repo.path, tag: repo.tag, packMB: repo.packMB, tip: repo.tip, nextTip: repo.nextTip, firstParentCommits: repo.chain.length },
    };
  } finally {
    for (const side of sides) {
      await side.svc.stop();
      writeFileSync(join(work, `svc-${side.name}.log`), side.svc.logs());
    }
    await proxy.stop();
    await s3.stop();
  }
}

// ---------------------------------------------------------------------------------------
// Faults: a mixed run through SlowDown and resets, then a GC past the grace period and an audit

type OpKind = "push" | "clone" | "fetch";
interface OpResult {
  op: number;
  kind: OpKind;
  repo: string;
  ok: boolean;
  wall: number;
  /** For failures: git's last lines; for successes of clone/fetch: fsck's verdict. */
  detail: string;
}

async function faultRun(): Promise<void> {
  const repo = await subset(args.faultTag);
  log(`fault repository ${repo.path}: pack ${repo.packMB} MB, ${repo.chain.length} first-parent commits`);
  const s3 = await startS3rver();
  const proxy = await spawnFaultProxy(s3.endpoint, { seed: args.seed, delayMs: args.faultDelay, slowDown: args.slowDown, reset: args.reset });
  let side = await startSide("faults", s3Env(s3, proxy.endpoint), proxy);
  running = [];
  const repos = ["f1", "f2", "f3", "f4"];
  const state = new Map(
    repos.map((r) => [r, { cursor: 0, pushed: [] as string[], attempted: [] as string[], clone: null as string | null, busy: Promise.resolve() }]),
  );
  const rng = new Rng(args.seed);
  const plan: { kind: OpKind; repo: string }[] = Array.from({ length: args.faultOps }, () => {
    const x = rng.float();
    return { kind: x < 0.3 ? "push" : x < 0.65 ? "clone" : "fetch", repo: rng.pick(repos) };
  });
  const results_: OpResult[] = [];
  const violations: string[] = [];
  const startedAt = performance.now();
  try {
    for (const r of repos) await createRepo(side.svc, side.acct, r);
    const stepSize = Math.max(1, Math.floor(repo.chain.length / 40));
    let nextOp = 0;
    // Operations on one repository run one at a time (pushes are fast-forwards of one branch);
    // the workers keep several repositories busy at once.
    const runOp = async (index: number): Promise<void> => {
      const { repo: name } = plan[index]!;
      const st = state.get(name)!;
      let kind = plan[index]!.kind;
      if (kind !== "push" && st.pushed.length === 0) kind = "push";
      if (kind === "fetch" && !st.clone) kind = "clone";
      const t0 = performance.now();
      let ok = false;
      let detail = "";
      if (kind === "push") {
        st.cursor = Math.min(
          repo.chain.length - 1,
          st.cursor + (st.pushed.length === 0 ? Math.floor(repo.chain.length / 4) : 1 + Math.floor(rng.float() * stepSize)),
        );
        const sha = repo.chain[st.cursor]!;
        st.attempted.push(sha);
        const r = await git(["push", "--quiet", url(side, name), `${sha}:refs/heads/main`], { cwd: repo.path, check: false });
        ok = r.code === 0;
        if (ok) st.pushed.push(sha);
        detail = ok ? sha : r.stderr.trim().split("\n").slice(-3).join(" | ");
      } else if (kind === "clone") {
        const dst = join(work, `fclone-${name}-${index}.git`);
        const r = await git(["clone", "--quiet", "--bare", url(side, name), dst], { check: false });
        ok = r.code === 0;
        if (ok) {
          const fsck = await git(["fsck", "--no-progress", "--no-dangling"], { cwd: dst, check: false });
          const tip = (await git(["rev-parse", "refs/heads/main"], { cwd: dst, check: false })).stdout.trim();
          ok = fsck.code === 0 && st.attempted.includes(tip);
          detail = ok ? `fsck clean, main ${tip.slice(0, 12)}` : `BAD CLONE: fsck exit ${fsck.code} ${fsck.stderr.trim().slice(0, 300)} main ${tip}`;
          if (fsck.code !== 0 || !st.attempted.includes(tip)) violations.push(`${name} op ${index}: ${detail}`);
          if (st.clone) rmSync(st.clone, { recursive: true, force: true });
          st.clone = dst;
        } else {
          detail = r.stderr.trim().split("\n").slice(-3).join(" | ");
          if (existsSync(dst)) violations.push(`${name} op ${index}: failed clone left ${dst}`);
        }
      } else {
        const dst = st.clone!;
        const before = (await git(["rev-parse", "refs/heads/main"], { cwd: dst })).stdout.trim();
        const r = await git(["fetch", "--quiet", url(side, name), "+refs/heads/*:refs/heads/*"], { cwd: dst, check: false });
        ok = r.code === 0;
        const fsck = await git(["fsck", "--no-progress", "--no-dangling"], { cwd: dst, check: false });
        const tip = (await git(["rev-parse", "refs/heads/main"], { cwd: dst, check: false })).stdout.trim();
        if (fsck.code !== 0) violations.push(`${name} op ${index}: fsck after fetch (exit ${r.code}): ${fsck.stderr.trim().slice(0, 300)}`);
        if (!ok && tip !== before) violations.push(`${name} op ${index}: failed fetch moved main`);
        detail = ok ? `fsck ${fsck.code === 0 ? "clean" : "BAD"}, main ${tip.slice(0, 12)}` : r.stderr.trim().split("\n").slice(-3).join(" | ");
        ok = ok && fsck.code === 0;
      }
      results_.push({ op: index, kind, repo: name, ok, wall: round((performance.now() - t0) / 1000), detail });
    };
    const worker = async (): Promise<void> => {
      while (nextOp < plan.length) {
        const index = nextOp++;
        const st = state.get(plan[index]!.repo)!;
        const mine = st.busy.then(() => runOp(index));
        st.busy = mine.catch(() => {});
        await mine;
        if (results_.length % 20 === 0) log(`  ${results_.length}/${plan.length} operations, ${results_.filter((r) => !r.ok).length} failed`);
      }
    };
    await Promise.all(Array.from({ length: args.faultWorkers }, worker));
    const proxyStats = await proxy.stats();
    const runWall = round((performance.now() - startedAt) / 1000);
    await side.svc.stop();
    writeFileSync(join(work, "svc-faults.log"), side.svc.logs());

    // GC past the grace period, in its own process with the clock moved forward (faults still on).
    log("gc and sweep past the grace period");
    const auditRun = Bun.spawn([process.execPath, join(ROOT, "bench/lib/s3-audit.ts")], {
      cwd: ROOT,
      env: { ...cleanEnv(), ...side.svc.env, S3_DIRECT_ENDPOINT: s3.endpoint },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [auditOut, auditErr, auditCode] = await Promise.all([new Response(auditRun.stdout).text(), new Response(auditRun.stderr).text(), auditRun.exited]);
    if (auditCode !== 0) throw new Error(`audit failed: ${auditErr.slice(-3000)}`);
    const auditJson = JSON.parse(auditOut.trim().split("\n").at(-1)!);

    // Every repository still serves what was pushed: clone once more with faults off.
    await proxy.configure({ slowDown: 0, reset: 0 });
    side = { ...side, svc: await startSvc({ dataDir: side.svc.dataDir, log: "warn", env: s3Env(s3, proxy.endpoint) }) };
    const finalChecks: Record<string, unknown> = {};
    for (const name of repos) {
      const st = state.get(name)!;
      const dst = join(work, `final-${name}.git`);
      const r = await git(["clone", "--quiet", "--bare", url(side, name), dst], { check: false });
      const fsck = r.code === 0 ? await git(["fsck", "--no-progress", "--no-dangling"], { cwd: dst, check: false }) : null;
      const tip = r.code === 0 ? (await git(["rev-parse", "refs/heads/main"], { cwd: dst, check: false })).stdout.trim() : "";
      // A push that failed on the client may still have been applied (its answer was lost): the
      // ref is the last successful push or a later attempt, never an older state.
      const lastOk = st.pushed.at(-1) ?? "";
      const acceptable = st.attempted.slice(Math.max(0, st.attempted.lastIndexOf(lastOk)));
      const good = r.code === 0 && fsck?.code === 0 && (st.pushed.length === 0 || acceptable.includes(tip));
      if (!good) violations.push(`${name}: final clone exit ${r.code}, fsck ${fsck?.code}, main ${tip}, last ok push ${lastOk}`);
      finalChecks[name] = { cloneExit: r.code, fsckExit: fsck?.code ?? null, main: tip, lastSuccessfulPush: lastOk, good };
    }
    await side.svc.stop();

    const byKind = (k: OpKind) => {
      const xs = results_.filter((r) => r.kind === k);
      return { total: xs.length, ok: xs.filter((r) => r.ok).length, failed: xs.filter((r) => !r.ok).length, medianWall: round(median(xs.map((x) => x.wall))) };
    };
    results.faults = {
      config: { slowDown: args.slowDown, reset: args.reset, delayMs: args.faultDelay, seed: args.seed, ops: args.faultOps, workers: args.faultWorkers },
      repository: { path: repo.path, tag: repo.tag, packMB: repo.packMB },
      runWall,
      push: byKind("push"),
      clone: byKind("clone"),
      fetch: byKind("fetch"),
      failures: results_.filter((r) => !r.ok),
      proxy: proxyStats,
      audit: auditJson,
      finalChecks,
      violations,
    };
  } finally {
    await side.svc.stop().catch(() => {});
    await proxy.stop();
    await s3.stop();
  }
}

/** The live packs of the side's repository, from its database (count and sizes, newest first). */
function livePacks(side: Side): { count: number; sizesMB: number[] } | string {
  try {
    const { Database } = require("bun:sqlite") as typeof import("bun:sqlite");
    const db = new Database(join(side.svc.dataDir, "svc.db"), { readonly: true });
    try {
      const rows = db.query("SELECT size FROM packs WHERE replaced_at IS NULL ORDER BY created_at DESC").all() as { size: number }[];
      return { count: rows.length, sizesMB: rows.map((r) => mb(r.size)) };
    } finally {
      db.close();
    }
  } catch (err) {
    return String(err);
  }
}

function cleanEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SVC_") && v !== undefined) out[k] = v;
  return out;
}

// ---------------------------------------------------------------------------------------

const machine = await machineInfo();
const source = {
  commit: (await run(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT, check: false })).stdout.trim(),
  dirty: (await run(["git", "status", "--porcelain", "--", "src", "cli"], { cwd: ROOT, check: false })).stdout.trim().split("\n").filter(Boolean).length,
};
log(`work dir ${work}; ${machine.cpu}, ${machine.cores} cores, load ${JSON.stringify(machine.loadavg)}`);
try {
  if (args.only !== "faults") await latencyRun();
  if (args.only !== "latency") await faultRun();
} finally {
  const summary = { date: new Date().toISOString(), machine, source, loadavgAtEnd: (await machineInfo()).loadavg, args, results, notes, workDir: work };
  const json = JSON.stringify(summary, null, 2);
  process.stdout.write(json + "\n");
  const outFile = args.out ?? join(ROOT, "bench/out", `s3-${summary.date.replace(/[:.]/g, "-")}.json`);
  mkdirSync(resolve(outFile, ".."), { recursive: true });
  writeFileSync(outFile, json + "\n");
  log(`summary written to ${outFile}`);
  if (!args.keep) rmSync(work, { recursive: true, force: true });
}
