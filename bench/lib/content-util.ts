// Helpers for bench/content.ts: latency statistics, drift analysis, the generated 10,000-file
// worktree, git commands with a clean environment, and a read-only look into the server's
// SQLite file (live packs, compaction jobs, server-side commit durations) for observation only.
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// ---- statistics -------------------------------------------------------------------------------

export interface Stats {
  n: number;
  p50_ms: number;
  p99_ms: number;
  mean_ms: number;
  min_ms: number;
  max_ms: number;
}

export const r2 = (x: number) => Math.round(x * 100) / 100;

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    n: xs.length,
    p50_ms: r2(percentile(s, 50)),
    p99_ms: r2(percentile(s, 99)),
    mean_ms: r2(mean),
    min_ms: r2(s[0] ?? NaN),
    max_ms: r2(s[s.length - 1] ?? NaN),
  };
}

/** Least-squares slope of y over its index, in y-units per index step. */
export function slope(ys: number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, i) => {
    num += (i - mx) * (y - my);
    den += (i - mx) ** 2;
  });
  return num / den;
}

/**
 * Whether a latency series drifts: stats per consecutive block, the least-squares trend, and the
 * ratio of the last block's median to the first's. Spikes (above 3× the overall median) are
 * listed separately: they are one-off stalls, not drift.
 */
export function drift(xs: number[], blocks = 4) {
  if (xs.length < blocks) return null;
  const size = Math.ceil(xs.length / blocks);
  const per = [];
  for (let b = 0; b < blocks; b++) {
    const part = xs.slice(b * size, (b + 1) * size);
    if (part.length) per.push({ requests: `${b * size + 1}-${b * size + part.length}`, ...stats(part) });
  }
  const med = percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
  // The trend of a series without its spikes, so one stall does not read as drift.
  const capped = xs.map((x) => Math.min(x, 3 * med));
  const trend = slope(capped) * 100;
  const ratio = per[per.length - 1]!.p50_ms / per[0]!.p50_ms;
  return {
    blocks: per,
    trend_ms_per_100_requests: r2(trend),
    last_to_first_block_p50_ratio: r2(ratio),
    // Why these bounds: ±25% between the first and last quarter is beyond run-to-run noise here.
    drifts: ratio > 1.25 || ratio < 0.8,
  };
}

// ---- deterministic content --------------------------------------------------------------------

/** mulberry32: a small deterministic PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega".split(" ");

/** Text of roughly `bytes` bytes: lines of words. */
export function text(rand: () => number, bytes: number, head: string): string {
  let s = `${head}\n`;
  while (s.length < bytes) {
    let line = "";
    for (let w = 0; w < 8; w++) line += `${WORDS[Math.floor(rand() * WORDS.length)]} `;
    s += `${line.trimEnd()}\n`;
  }
  return s;
}

// ---- the repository ---------------------------------------------------------------------------

export const LAYOUT = {
  /** The directory with exactly WIDE_ENTRIES entries (all files). */
  wideDir: "wide",
  wideEntries: 1000,
  /** Nested files: pkg/pNN/dM/fKK.txt (30 × 10 × 30 = 9,000). */
  pkgs: 30,
  dirsPerPkg: 10,
  filesPerDir: 30,
};

/** Path of the k-th nested file (0 ≤ k < 9,000). */
export function nestedPath(k: number): string {
  const { dirsPerPkg, filesPerDir } = LAYOUT;
  const f = k % filesPerDir;
  const d = Math.floor(k / filesPerDir) % dirsPerPkg;
  const p = Math.floor(k / (filesPerDir * dirsPerPkg));
  return `pkg/p${String(p).padStart(2, "0")}/d${d}/f${String(f).padStart(2, "0")}.txt`;
}

export const NESTED_FILES = LAYOUT.pkgs * LAYOUT.dirsPerPkg * LAYOUT.filesPerDir;

/** Writes the 10,000 files into `dir`; returns how many files and bytes. */
export function writeWorktree(dir: string, seed = 1): { files: number; bytes: number } {
  const rand = prng(seed);
  let files = 0;
  let bytes = 0;
  const put = (rel: string, body: string) => {
    writeFileSync(join(dir, rel), body);
    files++;
    bytes += body.length;
  };
  mkdirSync(join(dir, LAYOUT.wideDir), { recursive: true });
  for (let i = 0; i < LAYOUT.wideEntries; i++)
    put(`${LAYOUT.wideDir}/e${String(i).padStart(4, "0")}.txt`, text(rand, 100 + Math.floor(rand() * 900), `wide ${i}`));
  for (let k = 0; k < NESTED_FILES; k++) {
    const rel = nestedPath(k);
    if (k % LAYOUT.filesPerDir === 0) mkdirSync(join(dir, rel, ".."), { recursive: true });
    put(rel, text(rand, 200 + Math.floor(rand() * 1800), `nested ${k}`));
  }
  return { files, bytes };
}

/** Environment for client git: no system/global config, no prompts, fixed identity. */
export function gitEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_") && !k.startsWith("SVC_")) env[k] = v;
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "Bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
    GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
    GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
  };
}

/** Runs git; throws on failure. Returns stdout and wall seconds. */
export async function git(args: string[], opts: { cwd: string; env: Record<string, string> }): Promise<{ stdout: string; wall_s: number }> {
  const t0 = performance.now();
  const p = Bun.spawn(["git", ...args], { cwd: opts.cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ").replace(/svc_[A-Za-z0-9_]+/, "svc_…")} → exit ${code}\n${stderr.slice(-3000)}`);
  return { stdout, wall_s: (performance.now() - t0) / 1000 };
}

// ---- processes --------------------------------------------------------------------------------

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

// ---- read-only observation of the server's database -------------------------------------------

/** Reads (never writes) the server's svc.db: live packs, compaction jobs, server-side durations. */
export class Observer {
  private readonly db: Database;
  constructor(
    dataDir: string,
    private readonly repoId: string,
  ) {
    this.db = new Database(join(dataDir, "svc.db"), { readonly: true });
  }

  static repoIdOf(dataDir: string, name: string): string {
    const db = new Database(join(dataDir, "svc.db"), { readonly: true });
    try {
      const row = db.query("select id from repos where name = ?").get(name) as { id: string } | null;
      if (!row) throw new Error(`repository ${name} not found in svc.db`);
      return row.id;
    } finally {
      db.close();
    }
  }

  /** Live packs by tier, e.g. { "0": 3, "1": 2 }, and their total. */
  packs(): { live: number; by_tier: Record<string, number>; objects: number } {
    const rows = this.db
      .query("select tier, count(*) as n, sum(object_count) as o from packs where repo_id = ? and replaced_at is null group by tier order by tier")
      .all(this.repoId) as { tier: number; n: number; o: number }[];
    const by: Record<string, number> = {};
    let live = 0;
    let objects = 0;
    for (const r of rows) {
      by[String(r.tier)] = r.n;
      live += r.n;
      objects += r.o;
    }
    return { live, by_tier: by, objects };
  }

  /** Compaction/GC jobs: done and still pending (for this repository). */
  jobs(): { compact_done: number; compact_pending: number; gc_pending: number } {
    const q = (kind: string, done: boolean) =>
      (
        this.db
          .query(`select count(*) as n from jobs where kind = ? and done_at is ${done ? "not null" : "null"} and json_extract(payload, '$.repoId') = ?`)
          .get(kind, this.repoId) as { n: number }
      ).n;
    return { compact_done: q("repo.compact", true), compact_pending: q("repo.compact", false), gc_pending: q("repo.gc", false) };
  }

  /** True while a compaction or GC job of the repository is claimed by the worker (running). */
  compactionRunning(): boolean {
    const row = this.db
      .query(
        "select count(*) as n from jobs where kind in ('repo.compact', 'repo.gc') and done_at is null and locked_until > ? and json_extract(payload, '$.repoId') = ?",
      )
      .get(Date.now(), this.repoId) as { n: number };
    return row.n > 0;
  }

  /** Server-side api.commit durations (ms, integer) recorded after row id `afterId`. */
  commitDurations(afterId = 0): { lastId: number; ms: number[] } {
    const rows = this.db
      .query("select id, duration_ms as d from metrics where repo_id = ? and kind = 'api.commit' and id > ? order by id")
      .all(this.repoId, afterId) as { id: number; d: number }[];
    return { lastId: rows.length ? rows[rows.length - 1]!.id : afterId, ms: rows.map((r) => r.d) };
  }

  /** Waits until no compaction or GC job of the repository is pending; false on timeout. */
  async quiesce(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const j = this.jobs();
      if (j.compact_pending === 0 && j.gc_pending === 0) return true;
      await Bun.sleep(200);
    }
    return false;
  }

  close(): void {
    this.db.close();
  }
}

// ---- contention: what else ran on the machine during a phase -----------------------------------

/** Busy CPU seconds of the whole machine so far (all cores), from /proc/stat. */
export function machineBusySeconds(): number {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!;
    return busy / 100;
  } catch {
    return NaN;
  }
}

/**
 * Measures a phase: wall time, CPU of the server and of this process, and the CPU every other
 * process on the machine used meanwhile (other benchmarks, tests), as a share of all cores.
 */
export function phaseMeter(serverPid: number, cores: number) {
  const w0 = performance.now();
  const s0 = cpuSeconds(serverPid);
  const b0 = process.cpuUsage();
  const m0 = machineBusySeconds();
  return {
    stop() {
      const wall = (performance.now() - w0) / 1000;
      const server = cpuSeconds(serverPid) - s0;
      const b = process.cpuUsage(b0);
      const bench = (b.user + b.system) / 1e6;
      const other = Math.max(0, machineBusySeconds() - m0 - server - bench);
      return {
        wall_s: r2(wall),
        server_cpu_s: r2(server),
        bench_cpu_s: r2(bench),
        other_processes_cpu_s: r2(other),
        // Why: with 2 cores, anything well above 0 here means the figures ran on a busy machine.
        other_processes_share_of_cores: r2(other / (wall * cores)),
      };
    },
  };
}
