// Content API benchmark: commits, raw blobs and tree listings on a repository of 10,000 files.
//
//   bun bench/content.ts [--commits 200] [--bulk-reps 3] [--bulk-ops 10000] [--blob-reads 500]
//                        [--tree-reads 200] [--log info|warn] [--cpu-prof] [--keep] [--out FILE]
//
// Setup: starts `bun src/main.ts serve` on a temp data dir (fs storage), creates an owner, a
// token and a repository through the public API, generates 10,000 files with real git (9,000
// under pkg/pNN/dM/, one directory `wide/` with exactly 1,000 files), commits them and pushes
// over smart HTTP. Then, sequential requests from this process (one keep-alive connection):
//   (a) 200 one-operation commits, each on the current tip (no expected_parent), each changing
//       one file under pkg/pNN/dM/ — latency per commit, drift over the series, live packs and
//       background compactions seen along the way;
//   (b) one commit of 10,000 put operations (new files), 3 repetitions, each after background
//       compaction has settled;
//   (c) GET /blob/main?path=<nested file>: 500 reads of the same file after 50 warm-up reads;
//   (d) GET /tree/main?path=wide (1,000 entries): 200 reads after 20 warm-up reads.
// Order: (a), (c), (d), (b) — reads run on the repository as (a) and compaction left it.
// Targets (issue 4): (a) p50 ≤ 30 ms and p99 ≤ 100 ms; (b) ≤ 3 s; (c) p50 ≤ 5 ms; (d) ≤ 10 ms
// (taken as p50). Progress goes to stderr, the JSON summary to stdout (and --out FILE).
// Each phase also reports the server's CPU and the CPU every other process on the machine used
// meanwhile (machine_contention): figures taken while other benchmarks or tests run are slower.
// With --cpu-prof the server runs under `bun --cpu-prof --cpu-prof-md`; the profile lands in
// the work dir (kept); slice it per phase with the summary's `windows`:
//   bun bench/lib/content-profile.ts <file>.cpuprofile --from <start> --to <end> [--root getTree]
// bench/lib/content-phases.ts times the steps of the commit path and a compaction in-process.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Observer, drift, phaseMeter, git, gitEnv, nestedPath, NESTED_FILES, LAYOUT, prng, r2, stats, text, writeWorktree } from "./lib/content-util.ts";
import { machine, rssOf } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, spawnServer } from "./lib/proc.ts";
import { bootstrap, type SvcServer } from "./lib/svc.ts";

const TARGETS = { commit1_p50_ms: 30, commit1_p99_ms: 100, commit10k_ms: 3000, blob_p50_ms: 5, tree_ms: 10 };

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    commits: { type: "string", default: "200" },
    "bulk-reps": { type: "string", default: "3" },
    "bulk-ops": { type: "string", default: "10000" },
    "blob-reads": { type: "string", default: "500" },
    "tree-reads": { type: "string", default: "200" },
    log: { type: "string", default: "info" },
    "cpu-prof": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    out: { type: "string" },
  },
});
const N_COMMITS = Number(opt.commits);
const BULK_REPS = Number(opt["bulk-reps"]);
const BULK_OPS = Number(opt["bulk-ops"]);
const BLOB_READS = Number(opt["blob-reads"]);
const TREE_READS = Number(opt["tree-reads"]);
const BLOB_WARMUP = 50;
const TREE_WARMUP = 20;

const t0 = Date.now();
const log = (msg: string) => process.stderr.write(`[bench/content ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);
const loadBefore = load();

const work = mkdtempSync(join(tmpdir(), "svc-bench-content-"));
let server: SvcServer | null = null;
let observer: Observer | null = null;
const keep = opt.keep || opt["cpu-prof"];
const cleanup = async () => {
  observer?.close();
  if (server) await server.stop();
  if (!keep) rmSync(work, { recursive: true, force: true });
};
process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));

/** A log note on how busy the rest of the machine was during a phase. */
function contention(p: { server_cpu_s: number; other_processes_share_of_cores: number }): string {
  return `server CPU ${p.server_cpu_s} s, other processes used ${Math.round(p.other_processes_share_of_cores * 100)}% of the cores`;
}

/** One request, timed from send to the last body byte; throws on an unexpected status. */
async function timed(url: string, init: RequestInit, expect: number): Promise<{ ms: number; body: string }> {
  const start = performance.now();
  const res = await fetch(url, init);
  const body = await res.text();
  const ms = performance.now() - start;
  if (res.status !== expect) throw new Error(`${init.method ?? "GET"} ${url}: expected ${expect}, got ${res.status}: ${body.slice(0, 500)}`);
  return { ms, body };
}

try {
  // ---- server and account ----------------------------------------------------------------------
  const dataDir = join(work, "data");
  mkdirSync(dataDir, { recursive: true });
  const svcEnv: Record<string, string> = { SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: opt.log! };
  const profDir = join(work, "prof");
  const cmd = opt["cpu-prof"]
    ? [BUN, "--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${profDir}`, join(ROOT, "src/main.ts"), "serve"]
    : [BUN, join(ROOT, "src/main.ts"), "serve"];
  const child = await spawnServer(cmd, { env: { ...cleanEnv(), ...svcEnv }, stderrFile: join(work, "server.stderr.log") });
  server = { ...child, dataDir, env: svcEnv };
  const fx = await bootstrap(server, { org: "bench", repo: "content" });
  const api = `${server.url}${fx.path}`;
  const auth = { authorization: `Bearer ${fx.token}` };
  log(`svc pid ${server.pid} at ${server.url} (SVC_LOG=${opt.log}${opt["cpu-prof"] ? ", --cpu-prof" : ""}); work dir ${work}`);

  // ---- the 10,000-file repository, made with real git and pushed over HTTP ---------------------
  const home = join(work, "home");
  const tree = join(work, "tree");
  mkdirSync(home);
  mkdirSync(tree);
  const env = gitEnv(home);
  await git(["init", "-q", "-b", "main"], { cwd: tree, env });
  const genStart = performance.now();
  const gen = writeWorktree(tree);
  await git(["add", "-A"], { cwd: tree, env });
  await git(["commit", "-q", "-m", "10,000 files"], { cwd: tree, env });
  const baseCommit = (await git(["rev-parse", "HEAD"], { cwd: tree, env })).stdout.trim();
  const genS = (performance.now() - genStart) / 1000;
  const pushUrl = `${server.url.replace("http://", `http://x:${fx.token}@`)}/${fx.org}/${fx.repo}.git`;
  const push = await git(["push", "-q", pushUrl, "main"], { cwd: tree, env });
  log(
    `generated ${gen.files} files (${(gen.bytes / 1e6).toFixed(1)} MB) in ${genS.toFixed(1)} s; pushed ${baseCommit.slice(0, 12)} in ${push.wall_s.toFixed(2)} s`,
  );
  const listed = await timed(`${api}/tree/main?path=${LAYOUT.wideDir}`, { headers: auth }, 200);
  const wideCount = (JSON.parse(listed.body) as { entries: unknown[] }).entries.length;
  if (wideCount !== LAYOUT.wideEntries) throw new Error(`${LAYOUT.wideDir}/ lists ${wideCount} entries, expected ${LAYOUT.wideEntries}`);
  observer = new Observer(dataDir, Observer.repoIdOf(dataDir, fx.repo));
  const packsAfterPush = observer.packs();

  // ---- (a) one-operation commits ---------------------------------------------------------------
  log(`(a) ${N_COMMITS} one-operation commits`);
  const rand = prng(42);
  const commitMs: number[] = [];
  // Whether a compaction/GC job was running (claimed by the worker) just before or after each commit.
  const duringCompaction: boolean[] = [];
  const packTrace: { after_commit: number; live_packs: number; by_tier: Record<string, number>; compactions_done: number; compaction_pending: number }[] = [];
  let lastMetric = observer.commitDurations().lastId;
  let tip = baseCommit;
  const cores = machine().cores;
  let meter = phaseMeter(server.pid, cores);
  // Epoch-ms intervals of each measured phase (to slice a --cpu-prof profile with bench/lib/content-profile.ts).
  const windows: Record<string, [number, number]> = {};
  let w0 = Date.now();
  let lastEdit = { path: nestedPath(1), content: "" };
  for (let i = 0; i < N_COMMITS; i++) {
    // Why a stride: successive commits touch different directories, not the same tree path.
    const path = nestedPath((i * 337) % NESTED_FILES);
    const content = text(rand, 300, `edit ${i} of ${path}`);
    lastEdit = { path, content };
    const body = JSON.stringify({ message: `bench edit ${i}`, operations: [{ op: "put", path, content }] });
    const runningBefore = observer.compactionRunning();
    const r = await timed(`${api}/commits`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body }, 201);
    duringCompaction.push(runningBefore || observer.compactionRunning());
    const out = JSON.parse(r.body) as { commit: string; parent: string };
    if (out.parent !== tip) throw new Error(`commit ${i}: parent ${out.parent}, expected ${tip}`);
    tip = out.commit;
    commitMs.push(r.ms);
    if ((i + 1) % 10 === 0 || i === 0) {
      const p = observer.packs();
      const j = observer.jobs();
      packTrace.push({ after_commit: i + 1, live_packs: p.live, by_tier: p.by_tier, compactions_done: j.compact_done, compaction_pending: j.compact_pending });
    }
  }
  const commitPhase = meter.stop();
  windows.commit_1_op = [w0, Date.now()];
  const serverCommit = observer.commitDurations(lastMetric);
  lastMetric = serverCommit.lastId;
  const commitStats = stats(commitMs);
  const commitDrift = drift(commitMs);
  const med = commitStats.p50_ms;
  const spikes = commitMs.map((ms, i) => ({ commit: i + 1, ms: r2(ms), compaction_running: duringCompaction[i]! })).filter((s) => s.ms > 3 * med);
  const withCompaction = stats(commitMs.filter((_, i) => duringCompaction[i]));
  const withoutCompaction = stats(commitMs.filter((_, i) => !duringCompaction[i]));
  log(
    `    p50 ${commitStats.p50_ms} ms, p99 ${commitStats.p99_ms} ms, mean ${commitStats.mean_ms} ms, max ${commitStats.max_ms} ms; drift ratio ${commitDrift?.last_to_first_block_p50_ratio}, ${spikes.length} spikes > 3× p50 (${spikes.filter((x) => x.compaction_running).length} during compaction); ${contention(commitPhase)}`,
  );
  log(
    `    during compaction: n ${withCompaction.n}, p50 ${withCompaction.p50_ms} ms, p99 ${withCompaction.p99_ms} ms; otherwise: n ${withoutCompaction.n}, p50 ${withoutCompaction.p50_ms} ms, p99 ${withoutCompaction.p99_ms} ms`,
  );
  const settleStart = Date.now();
  const settled = await observer.quiesce(300_000);
  const settleS = (Date.now() - settleStart) / 1000;
  const packsAfterCommits = observer.packs();
  log(`    compaction settled=${settled} after ${settleS.toFixed(1)} s; live packs ${packsAfterCommits.live} ${JSON.stringify(packsAfterCommits.by_tier)}`);

  // ---- (c) warm raw blob reads -----------------------------------------------------------------
  const { path: blobPath, content: blobContent } = lastEdit;
  const blobUrl = `${api}/blob/main?path=${encodeURIComponent(blobPath)}`;
  log(`(c) blob ${blobPath}: ${BLOB_WARMUP} warm-up + ${BLOB_READS} reads`);
  for (let i = 0; i < BLOB_WARMUP; i++) {
    const r = await timed(blobUrl, { headers: auth }, 200);
    if (i === 0 && blobContent && r.body !== blobContent) throw new Error(`blob ${blobPath} does not hold the last committed content`);
  }
  meter = phaseMeter(server.pid, cores);
  w0 = Date.now();
  const blobMs: number[] = [];
  for (let i = 0; i < BLOB_READS; i++) blobMs.push((await timed(blobUrl, { headers: auth }, 200)).ms);
  const blobPhase = meter.stop();
  windows.blob_reads = [w0, Date.now()];
  const blobStats = stats(blobMs);
  log(`    p50 ${blobStats.p50_ms} ms, p99 ${blobStats.p99_ms} ms; ${contention(blobPhase)}`);

  // ---- (d) tree listing of the 1,000-entry directory -------------------------------------------
  const treeUrl = `${api}/tree/main?path=${LAYOUT.wideDir}`;
  log(`(d) tree ${LAYOUT.wideDir}/ (${LAYOUT.wideEntries} entries): ${TREE_WARMUP} warm-up + ${TREE_READS} reads`);
  let treeBytes = 0;
  for (let i = 0; i < TREE_WARMUP; i++) treeBytes = (await timed(treeUrl, { headers: auth }, 200)).body.length;
  meter = phaseMeter(server.pid, cores);
  w0 = Date.now();
  const treeMs: number[] = [];
  for (let i = 0; i < TREE_READS; i++) treeMs.push((await timed(treeUrl, { headers: auth }, 200)).ms);
  const treePhase = meter.stop();
  windows.tree_reads = [w0, Date.now()];
  const treeStats = stats(treeMs);
  log(`    p50 ${treeStats.p50_ms} ms, p99 ${treeStats.p99_ms} ms (${treeBytes} bytes of JSON); ${contention(treePhase)}`);

  // ---- (b) 10,000-operation commits ------------------------------------------------------------
  const bulk: {
    rep: number;
    ms: number;
    server_ms: number | null;
    phase: ReturnType<ReturnType<typeof phaseMeter>["stop"]>;
    request_bytes: number;
    waited_for_compaction_s: number;
    live_packs_before: number;
  }[] = [];
  for (let rep = 1; rep <= BULK_REPS; rep++) {
    const q0 = Date.now();
    await observer.quiesce(300_000);
    const waited = (Date.now() - q0) / 1000;
    const livePacks = observer.packs().live;
    const brand = prng(1000 + rep);
    const ops = [];
    for (let i = 0; i < BULK_OPS; i++) {
      ops.push({
        op: "put",
        path: `bulk${rep}/d${String(Math.floor(i / 100)).padStart(3, "0")}/f${String(i % 100).padStart(3, "0")}.txt`,
        content: text(brand, 100 + Math.floor(brand() * 200), `bulk ${rep} file ${i}`),
      });
    }
    const body = JSON.stringify({ message: `bench bulk ${rep}`, operations: ops });
    log(`(b) rep ${rep}/${BULK_REPS}: ${BULK_OPS} puts, ${(body.length / 1e6).toFixed(2)} MB request (${livePacks} live packs)`);
    meter = phaseMeter(server.pid, cores);
    w0 = Date.now();
    const r = await timed(`${api}/commits`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body }, 201);
    const phase = meter.stop();
    windows[`commit_10k_ops_${rep}`] = [w0, Date.now()];
    const out = JSON.parse(r.body) as { commit: string; parent: string };
    if (out.parent !== tip) throw new Error(`bulk ${rep}: parent ${out.parent}, expected ${tip}`);
    tip = out.commit;
    const sm = observer.commitDurations(lastMetric);
    lastMetric = sm.lastId;
    bulk.push({
      rep,
      ms: r2(r.ms),
      server_ms: sm.ms[0] ?? null,
      phase,
      request_bytes: body.length,
      waited_for_compaction_s: r2(waited),
      live_packs_before: livePacks,
    });
    log(`    ${r2(r.ms)} ms (server-side ${sm.ms[0]} ms, server CPU ${phase.server_cpu_s} s, other processes ${phase.other_processes_cpu_s} CPU-s)`);
  }
  const check = await timed(`${api}/tree/main?path=bulk1/d000`, { headers: auth }, 200);
  const checkCount = (JSON.parse(check.body) as { entries: unknown[] }).entries.length;
  if (BULK_REPS > 0 && checkCount !== Math.min(100, BULK_OPS)) throw new Error(`bulk1/d000 lists ${checkCount} entries`);
  const bulkStats = stats(bulk.map((b) => b.ms));
  const rss = rssOf(server.pid);

  const pass = {
    commit1_p50: commitStats.p50_ms <= TARGETS.commit1_p50_ms,
    commit1_p99: commitStats.p99_ms <= TARGETS.commit1_p99_ms,
    commit10k: BULK_REPS > 0 && bulkStats.max_ms <= TARGETS.commit10k_ms,
    blob_p50: blobStats.p50_ms <= TARGETS.blob_p50_ms,
    tree: treeStats.p50_ms <= TARGETS.tree_ms,
  };
  const summary = {
    benchmark: "Content API: commits, blobs, trees",
    date: new Date().toISOString(),
    machine: machine(),
    loadavg_before: loadBefore,
    loadavg_after: load(),
    note: "server and bench client share this machine's cores; requests are sequential on one keep-alive connection; times are client-side, send to last body byte",
    commands: {
      bench: `bun bench/content.ts ${process.argv.slice(2).join(" ")}`.trim(),
      server: `SVC_DATA_DIR=<tmp> SVC_HTTP_ADDR=127.0.0.1:0 SVC_LOG=${opt.log} bun ${opt["cpu-prof"] ? "--cpu-prof --cpu-prof-md " : ""}src/main.ts serve  (fs storage, stderr → file)`,
      push: "git push http://x:<token>@host/bench/content.git main",
    },
    repository: {
      files: gen.files,
      bytes: gen.bytes,
      layout: `${NESTED_FILES} files under pkg/pNN/dM/ (${LAYOUT.pkgs}×${LAYOUT.dirsPerPkg} dirs × ${LAYOUT.filesPerDir}), ${LAYOUT.wideEntries} files in ${LAYOUT.wideDir}/`,
      generate_and_commit_s: r2(genS),
      push_s: r2(push.wall_s),
      live_packs_after_push: packsAfterPush.live,
    },
    commit_1_op: {
      ...commitStats,
      server_side_ms: stats(serverCommit.ms),
      phase: commitPhase,
      drift: commitDrift,
      // The same, over the commits that did not overlap a running compaction (order kept).
      drift_without_compaction: drift(commitMs.filter((_, i) => !duringCompaction[i])),
      max_live_packs_seen: Math.max(...packTrace.map((t) => t.live_packs)),
      // Commits that overlapped a running background compaction/GC job vs the rest.
      while_compaction_running: withCompaction,
      while_no_compaction_running: withoutCompaction,
      spikes_over_3x_p50: spikes,
      packs_trace: packTrace,
      compaction_settled_after_s: settled ? r2(settleS) : null,
      live_packs_after: packsAfterCommits,
      targets: { p50_ms: TARGETS.commit1_p50_ms, p99_ms: TARGETS.commit1_p99_ms },
    },
    commit_10k_ops: { ...bulkStats, reps: bulk, target_ms: TARGETS.commit10k_ms },
    blob_read_warm: {
      path: blobPath,
      warmup: BLOB_WARMUP,
      ...blobStats,
      server_cpu_ms_per_read: r2((blobPhase.server_cpu_s * 1000) / BLOB_READS),
      phase: blobPhase,
      target_p50_ms: TARGETS.blob_p50_ms,
    },
    tree_list_1000: {
      path: LAYOUT.wideDir,
      entries: LAYOUT.wideEntries,
      response_bytes: treeBytes,
      warmup: TREE_WARMUP,
      ...treeStats,
      server_cpu_ms_per_read: r2((treePhase.server_cpu_s * 1000) / TREE_READS),
      phase: treePhase,
      target_ms: TARGETS.tree_ms,
      target_taken_as: "p50",
    },
    server_rss_mb_at_end: rss.rss_mb,
    server_peak_rss_mb: rss.peak_mb,
    // Share of all cores used by processes other than the server and this bench, per phase.
    machine_contention: {
      commit_1_op: commitPhase.other_processes_share_of_cores,
      blob_reads: blobPhase.other_processes_share_of_cores,
      tree_reads: treePhase.other_processes_share_of_cores,
      commit_10k_ops: bulk.map((b) => b.phase.other_processes_share_of_cores),
      busy: [commitPhase, blobPhase, treePhase, ...bulk.map((b) => b.phase)].some((p) => p.other_processes_share_of_cores > 0.2),
    },
    windows,
    pass,
    all_targets_met: Object.values(pass).every(Boolean),
  };
  const json = `${JSON.stringify(summary, null, 2)}\n`;
  process.stdout.write(json);
  if (opt.out) writeFileSync(opt.out, json);
  if (opt["cpu-prof"]) {
    await server.stop();
    log(
      `cpu profile(s): ${readdirSync(profDir)
        .map((f) => join(profDir, f))
        .join(", ")}`,
    );
  }
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  if (server) log(`server stderr tail:\n${server.stderrTail(2000)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
  if (keep) log(`kept ${work}`);
}
