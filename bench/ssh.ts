// SSH benchmark: `git clone` over SSH side by side with the same clone over smart HTTP (same
// server, same repository, protocol v2 both), then 50 SSH clones at once with the server's RSS
// sampled. Issue 5 targets: SSH clone median ≤ 1.2 × HTTP clone median; 50 concurrent SSH
// clones all succeed with the server's peak VmRSS < 400 MB.
//
//   bun bench/ssh.ts [--scale 1] [--seed 1] [--reps 5] [--concurrent 50] [--concurrent-scale 0.1]
//                    [--burst-reps 3] [--cipher NAME] [--diagnose auto|always|never] [--cpu-prof] [--keep] [--out FILE]
//
// Steps: generate the repository with bench/gen-repo.ts (cached under /tmp/svc-bench-ssh/repos;
// a small fast-import generator stands in when gen-repo.ts is absent); start `bun src/main.ts
// serve` with SVC_SSH_ADDR on a temp data dir; bootstrap an owner, a token and an ed25519 key
// (POST /v1/orgs/{org}/ssh-keys); push the repositories over HTTP (`git push --mirror`) and
// compact them with `svc gc --repo` when that command exists. Then, on a freshly restarted
// server (same data dir, so the push's heap is not counted): one warm-up clone per transport
// and `--reps` timed `git clone --bare -q` pairs, SSH and HTTP alternating (which goes first
// alternates too). Then `--concurrent` SSH clones started at once of the `--concurrent-scale`
// repository (default 0.1: 50 clones of the 100 MB repository would mostly measure 50 client
// index-packs on a small machine), again on a fresh server after one warm-up clone, repeated
// `--burst-reps` times (the peak varies by a few hundred MB between bursts; the target is
// judged on the highest).
// VmRSS of the svc process is sampled every 50 ms (VmHWM, reset with clear_refs where
// permitted, cross-checks the peak). Every clone's refs are compared with the source; `git
// fsck` runs on one timed clone per transport and on the first and last concurrent clone.
//
// Diagnostics (when a target is missed, or always with --diagnose always): which SSH cipher
// OpenSSH negotiated; SSH clones forced to each cipher (`ssh -c`) next to HTTP clones; the raw
// throughput of ssh2 on Bun per cipher (a bare ssh2 server in its own process streaming zeros
// to `ssh`, no git involved); the same burst over HTTP, under `bun --smol` (eager GC) and at a
// fifth of the concurrency, to split the peak RSS into transport, garbage and per-clone parts;
// and, with --cpu-prof, CPU profiles of the server serving SSH and HTTP clones, summarised by
// samples per source area and per function (samples inside the clone window only).
//
// Prints a JSON summary on stdout and writes it to /tmp/svc-bench-ssh/ssh-<date>.json.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const WORK_ROOT = "/tmp/svc-bench-ssh";

// ---------------------------------------------------------------------------------------
// Raw ssh2 throughput server (a separate process: `bun bench/ssh.ts --raw-server KEY`).
// Exec "zeros N" streams N MiB of zeros and exits 0; any public key is accepted.

if (process.argv[2] === "--raw-server") {
  const ssh2 = (await import("ssh2")).default as unknown as typeof import("ssh2");
  const hostKey = readFileSync(process.argv[3]!);
  const chunk = new Uint8Array(32 * 1024);
  const server = new ssh2.Server({ hostKeys: [hostKey] }, (client) => {
    client.on("error", () => {});
    client.on("authentication", (ctx) => (ctx.method === "publickey" ? ctx.accept() : ctx.reject(["publickey"])));
    client.on("ready", () => {
      client.on("session", (accept) => {
        const session = accept();
        session.on("env", (ok) => ok?.());
        session.on("exec", async (ok, _no, info) => {
          const ch = ok();
          const mib = Number(/^zeros (\d+)$/.exec(info.command)?.[1] ?? 0);
          let left = mib * 1024 * 1024;
          while (left > 0) {
            const n = Math.min(left, chunk.length);
            left -= n;
            if (!ch.write(n === chunk.length ? chunk : chunk.subarray(0, n))) await new Promise((r) => ch.once("drain", r));
          }
          ch.exit(0);
          ch.end();
        });
      });
    });
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`));
  await new Promise(() => {});
}

// ---------------------------------------------------------------------------------------
// Arguments

interface Args {
  scale: number;
  seed: number;
  reps: number;
  concurrent: number;
  concurrentScale: number;
  burstReps: number;
  cipher: string | null;
  diagnose: "auto" | "always" | "never";
  cpuProf: boolean;
  keep: boolean;
  out: string | null;
}

function parseArgs(argv: string[]): Args {
  const get = (n: string) => {
    const i = argv.indexOf(`--${n}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(
      "usage: bun bench/ssh.ts [--scale 1] [--seed 1] [--reps 5] [--concurrent 50] [--concurrent-scale 0.1] [--burst-reps 3]\n" +
        "                        [--cipher NAME] [--diagnose auto|always|never] [--cpu-prof] [--keep] [--out FILE]\n",
    );
    process.exit(0);
  }
  const scale = Number(get("scale") ?? 1);
  const d = get("diagnose") ?? "auto";
  return {
    scale,
    seed: Number(get("seed") ?? 1),
    reps: Math.max(1, Number(get("reps") ?? 5)),
    concurrent: Math.max(0, Number(get("concurrent") ?? 50)),
    concurrentScale: Number(get("concurrent-scale") ?? Math.min(scale, 0.1)),
    burstReps: Math.max(1, Number(get("burst-reps") ?? 3)),
    cipher: get("cipher") ?? null,
    diagnose: d === "always" || d === "never" ? d : "auto",
    cpuProf: argv.includes("--cpu-prof"),
    keep: argv.includes("--keep"),
    out: get("out") ?? null,
  };
}

const args = parseArgs(process.argv.slice(2));
const log = (s: string) => process.stderr.write(`[ssh-bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

// ---------------------------------------------------------------------------------------
// Processes, timing, /proc

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  wall: number;
  cpu: number;
}

function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_") && !k.startsWith("GIT_")) out[k] = v;
  return out;
}

async function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string>; check?: boolean; timeoutMs?: number } = {}): Promise<RunResult> {
  const t0 = performance.now();
  const p = Bun.spawn(cmd, { cwd: opts.cwd ?? ROOT, env: opts.env ?? baseEnv(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = opts.timeoutMs ? setTimeout(() => p.kill("SIGKILL"), opts.timeoutMs) : null;
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (timer) clearTimeout(timer);
  const wall = (performance.now() - t0) / 1000;
  const ru = p.resourceUsage();
  const cpu = ru ? Number(ru.cpuTime.user + ru.cpuTime.system) / 1e6 : NaN;
  if (opts.check !== false && code !== 0) throw new Error(`${cmd.join(" ")} → exit ${code}\n${stderr.slice(-4000)}`);
  return { code, stdout, stderr, wall, cpu };
}

const median = (xs: number[]) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const r1 = (x: number) => Math.round(x * 10) / 10;

function procField(file: string, key: string): string | null {
  try {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const i = line.indexOf(":");
      if (i > 0 && line.slice(0, i).trim() === key) return line.slice(i + 1).trim();
    }
  } catch {}
  return null;
}
const kbField = (pid: number, key: string) => Number((procField(`/proc/${pid}/status`, key) ?? "0").replace(/\D/g, ""));
const rssMb = (pid: number) => kbField(pid, "VmRSS") / 1024;
const hwmMb = (pid: number) => kbField(pid, "VmHWM") / 1024;

/** CPU seconds (user + system, all threads) of a process. */
function procCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Resets VmHWM to the current RSS; false when not permitted. */
function resetHwm(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Samples VmRSS every `everyMs`; windows report the peak seen while they were open. */
class RssSampler {
  private timer: ReturnType<typeof setInterval>;
  private windows = new Set<{ max: number; samples: number; maxGapMs: number; last: number }>();
  constructor(
    private pid: number,
    everyMs = 50,
  ) {
    this.timer = setInterval(() => this.sample(), everyMs);
  }
  private sample() {
    const v = rssMb(this.pid);
    const t = performance.now();
    if (!v) return;
    for (const w of this.windows) {
      w.max = Math.max(w.max, v);
      w.samples++;
      w.maxGapMs = Math.max(w.maxGapMs, t - w.last);
      w.last = t;
    }
  }
  open(): { close(): { peakMb: number; samples: number; maxGapMs: number } } {
    const w = { max: rssMb(this.pid), samples: 1, maxGapMs: 0, last: performance.now() };
    this.windows.add(w);
    return {
      close: () => {
        this.sample();
        this.windows.delete(w);
        return { peakMb: r1(w.max), samples: w.samples, maxGapMs: Math.round(w.maxGapMs) };
      },
    };
  }
  stop() {
    clearInterval(this.timer);
  }
}

// ---------------------------------------------------------------------------------------
// Machine

async function machine() {
  const firstLine = async (cmd: string[]) => {
    try {
      const r = await run(cmd, { check: false });
      return (r.stdout + r.stderr).trim().split("\n")[0] ?? "unknown";
    } catch {
      return "unknown";
    }
  };
  return {
    cpu: procField("/proc/cpuinfo", "model name") ?? "unknown",
    cores: availableParallelism(),
    memory_mb: Math.round(Number((procField("/proc/meminfo", "MemTotal") ?? "0").replace(/\D/g, "")) / 1024),
    kernel: await firstLine(["uname", "-sr"]),
    git: await firstLine(["git", "--version"]),
    openssh: await firstLine(["ssh", "-V"]),
    bun: Bun.version,
    loadavg_start: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/** The product revision measured: HEAD and the files under src/ and cli/ that differ from it. */
async function revision() {
  const head = await run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], { check: false });
  const dirty = await run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "cli"], { check: false });
  return { head: head.stdout.trim() || "unknown", uncommitted_src_files: dirty.stdout.split("\n").filter(Boolean).length };
}

// ---------------------------------------------------------------------------------------
// The repository

interface RepoInfo {
  path: string;
  scale: number;
  seed: number;
  generator: string;
  commits: number;
  objects: number;
  refs: number;
  pack_mb: number;
  tip: string;
}

async function gitOut(repo: string, a: string[]): Promise<string> {
  return (await run(["git", "-C", repo, ...a])).stdout.trim();
}

async function describeRepo(path: string, scale: number, generator: string): Promise<RepoInfo> {
  const packDir = join(path, "objects", "pack");
  const packBytes = readdirSync(packDir)
    .filter((f) => f.endsWith(".pack"))
    .reduce((a, f) => a + Bun.file(join(packDir, f)).size, 0);
  return {
    path,
    scale,
    seed: args.seed,
    generator,
    commits: Number(await gitOut(path, ["rev-list", "--all", "--count"])),
    objects: Number(/in-pack: (\d+)/.exec(await gitOut(path, ["count-objects", "-v"]))![1]),
    refs: (await gitOut(path, ["for-each-ref", "--format=%(refname)"])).split("\n").filter(Boolean).length,
    pack_mb: r1(packBytes / 1048576),
    tip: await gitOut(path, ["rev-parse", "HEAD"]),
  };
}

/** The benchmark repository at a scale: bench/gen-repo.ts when present, else a fast-import fallback. */
async function repoAt(scale: number): Promise<RepoInfo> {
  const out = join(WORK_ROOT, "repos", `gen-s${args.seed}-x${scale}.git`);
  const gen = join(ROOT, "bench", "gen-repo.ts");
  if (existsSync(gen)) {
    const cmd = [BUN, gen, "--scale", String(scale), "--seed", String(args.seed), "--out", out];
    log(`repository: ${cmd.slice(1).join(" ")}`);
    const p = Bun.spawn(cmd, { cwd: ROOT, env: baseEnv(), stdout: "pipe", stderr: "inherit" });
    const [stdout, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    if (code !== 0) throw new Error(`gen-repo failed (exit ${code})`);
    const res = JSON.parse(stdout) as { cached?: boolean };
    log(`repository ${out}${res.cached ? " (cached)" : ""}`);
    return describeRepo(out, scale, `bun bench/gen-repo.ts --scale ${scale} --seed ${args.seed} --out ${out}`);
  }
  if (!existsSync(join(out, "svc-ssh-bench.ok"))) await fallbackGenerate(out, scale);
  return describeRepo(out, scale, "bench/ssh.ts fallback (git fast-import, then git repack -adf)");
}

/** A plain deterministic history (text files edited over many commits) via git fast-import. */
async function fallbackGenerate(out: string, scale: number): Promise<void> {
  log(`bench/gen-repo.ts absent: generating ${out} with git fast-import`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await run(["git", "init", "-q", "--bare", "--initial-branch=main", out]);
  let seed = args.seed >>> 0 || 1;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const words = Array.from({ length: 4000 }, (_, i) => (i * 2654435761).toString(36).slice(0, 3 + (i % 7)));
  const line = () => Array.from({ length: 4 + Math.floor(rnd() * 10) }, () => words[Math.floor(rnd() * words.length)]).join(" ");
  const nFiles = Math.max(20, Math.round(3000 * scale));
  const nCommits = Math.max(20, Math.round(5000 * scale));
  const files = Array.from({ length: nFiles }, () => Array.from({ length: 40 + Math.floor(rnd() * 200) }, line));
  const p = Bun.spawn(["git", "fast-import", "--quiet"], { cwd: out, stdin: "pipe", stdout: "ignore", stderr: "pipe", env: baseEnv() });
  const enc = new TextEncoder();
  for (let c = 0; c < nCommits; c++) {
    const touched = c === 0 ? files.map((_, i) => i) : Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => Math.floor(rnd() * nFiles));
    const msg = `commit ${c}: ${line()}\n`;
    let s = `commit refs/heads/main\ncommitter Bench <bench@example.com> ${1600000000 + c * 600} +0000\ndata ${enc.encode(msg).length}\n${msg}`;
    for (const i of touched) {
      const f = files[i]!;
      for (let k = 0; k < 3; k++) f[Math.floor(rnd() * f.length)] = line();
      const body = f.join("\n") + "\n";
      s += `M 100644 inline src/d${i % 50}/f${i}.txt\ndata ${enc.encode(body).length}\n${body}`;
    }
    p.stdin.write(s + "\n");
    if (c % 100 === 99) await p.stdin.flush();
  }
  await p.stdin.end();
  if ((await p.exited) !== 0) throw new Error(`git fast-import failed: ${await new Response(p.stderr).text()}`);
  await run(["git", "-C", out, "repack", "-adf", "--window=50", "--depth=50", "-q"]);
  writeFileSync(join(out, "svc-ssh-bench.ok"), "");
}

// ---------------------------------------------------------------------------------------
// The server

interface Svc {
  url: string;
  sshPort: number;
  pid: number;
  env: Record<string, string>;
  proc: ReturnType<typeof Bun.spawn>;
  stop(): Promise<number>;
  stderrTail(): string;
}

async function startSvc(dataDir: string, logFile: string, bunFlags: string[] = []): Promise<Svc> {
  const env = { SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_SSH_ADDR: "127.0.0.1:0", SVC_LOG: "warn" };
  const proc = Bun.spawn([BUN, ...bunFlags, join(ROOT, "src/main.ts"), "serve"], {
    cwd: ROOT,
    env: { ...baseEnv(), ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: Bun.file(logFile),
  });
  const tail = () => {
    try {
      return readFileSync(logFile, "utf8").slice(-3000);
    } catch {
      return "";
    }
  };
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  let m: RegExpExecArray | null = null;
  const deadline = Date.now() + 60_000;
  while (!m) {
    const { value, done } = await reader.read();
    if (done || Date.now() > deadline) throw new Error(`svc did not start: ${tail()}`);
    out += new TextDecoder().decode(value);
    m = /listening http=(\S+) ssh=(\S+)/.exec(out);
  }
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  if (m[2] === "off") throw new Error("svc started without SSH");
  let stopped: Promise<number> | null = null;
  return {
    url: m[1]!,
    sshPort: Number(m[2]!.split(":").pop()),
    pid: proc.pid,
    env,
    proc,
    stderrTail: tail,
    stop() {
      stopped ??= (async () => {
        proc.kill("SIGTERM");
        const t = setTimeout(() => proc.kill("SIGKILL"), 30_000);
        const code = await proc.exited;
        clearTimeout(t);
        return code;
      })();
      return stopped;
    },
  };
}

async function svcCli(env: Record<string, string>, a: string[]): Promise<RunResult> {
  return run([BUN, join(ROOT, "src/main.ts"), ...a], { env: { ...baseEnv(), ...env }, check: false });
}

async function api(
  svc: Svc,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
  expect: number,
): Promise<{ json: any; headers: Headers }> {
  const res = await fetch(svc.url + path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${path}: expected ${expect}, got ${res.status} ${text}`);
  return { json: text ? JSON.parse(text) : null, headers: res.headers };
}

// ---------------------------------------------------------------------------------------
// Git clients

const ORG = "bench";
const SSH_OPTS = [
  "-o",
  "IdentitiesOnly=yes",
  "-o",
  "StrictHostKeyChecking=no",
  "-o",
  "UserKnownHostsFile=/dev/null",
  "-o",
  "LogLevel=ERROR",
  "-o",
  "BatchMode=yes",
];

function sshCommand(key: string, cipher: string | null): string {
  return ["ssh", "-i", key, ...SSH_OPTS, ...(cipher ? ["-c", cipher] : [])].join(" ");
}

interface Clients {
  home: string;
  key: string;
  token: string;
  httpUrl(repo: string): string;
  sshUrl(repo: string): string;
  env(cipher?: string | null, extra?: Record<string, string>): Record<string, string>;
}

function clients(svc: Svc, home: string, key: string, token: string): Clients {
  const u = new URL(svc.url);
  return {
    home,
    key,
    token,
    httpUrl: (repo) => `${u.protocol}//x:${token}@${u.host}/${ORG}/${repo}.git`,
    sshUrl: (repo) => `ssh://git@127.0.0.1:${svc.sshPort}/${ORG}/${repo}.git`,
    env: (cipher = args.cipher, extra = {}) => ({
      ...baseEnv(),
      HOME: home,
      XDG_CONFIG_HOME: home,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      GIT_SSH_COMMAND: sshCommand(key, cipher),
      ...extra,
    }),
  };
}

const CLONE = (url: string, dest: string) => ["git", "-c", "protocol.version=2", "clone", "--bare", "-q", url, dest];

interface CloneRun {
  wall: number;
  client_cpu: number;
  server_cpu: number;
  rss_peak_mb: number;
}

async function timedClone(svc: Svc, rss: RssSampler, c: Clients, url: string, dest: string, cipher?: string | null): Promise<CloneRun> {
  rmSync(dest, { recursive: true, force: true });
  const cpu0 = procCpu(svc.pid);
  const w = rss.open();
  const r = await run(CLONE(url, dest), { env: c.env(cipher) });
  const peak = w.close();
  return { wall: r3(r.wall), client_cpu: r3(r.cpu), server_cpu: r3(procCpu(svc.pid) - cpu0), rss_peak_mb: peak.peakMb };
}

/** refs/heads and refs/tags of a bare repository, one `oid name` per line, sorted. */
async function refsOf(repo: string): Promise<string> {
  const out = await gitOut(repo, ["for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/tags"]);
  return out.split("\n").sort().join("\n");
}

async function fsck(repo: string): Promise<{ ok: boolean; seconds: number; output: string }> {
  const r = await run(["git", "-C", repo, "fsck", "--no-dangling", "--no-progress"], { check: false });
  return { ok: r.code === 0, seconds: r3(r.wall), output: (r.stdout + r.stderr).trim().slice(-500) };
}

// ---------------------------------------------------------------------------------------
// Diagnostics

/** OpenSSH's view of the connection: negotiated kex, cipher and MAC (from ssh -v). */
async function negotiated(
  svc: Svc,
  c: Clients,
  repo: string,
  cipher: string | null,
): Promise<{ kex: string | null; cipher: string | null; mac: string | null }> {
  const opts = SSH_OPTS.map((o) => (o === "LogLevel=ERROR" ? "LogLevel=DEBUG1" : o));
  const cmd = [
    "ssh",
    "-i",
    c.key,
    ...opts,
    ...(cipher ? ["-c", cipher] : []),
    "-p",
    String(svc.sshPort),
    "git@127.0.0.1",
    `git-upload-pack '${ORG}/${repo}.git'`,
  ];
  const r = await run(cmd, { env: c.env(), check: false, timeoutMs: 30_000 });
  const sc = /kex: server->client cipher: (\S+) MAC: (\S+)/.exec(r.stderr);
  return { kex: /kex: algorithm: (\S+)/.exec(r.stderr)?.[1] ?? null, cipher: sc?.[1] ?? null, mac: sc?.[2] ?? null };
}

/** True when the client spoke protocol v2 with the server over `url` (GIT_TRACE_PACKET). */
async function speaksV2(c: Clients, url: string): Promise<boolean> {
  const r = await run(["git", "-c", "protocol.version=2", "ls-remote", url], { env: c.env(null, { GIT_TRACE_PACKET: "1" }), check: false });
  return r.code === 0 && /< version 2\b/.test(r.stderr);
}

/** Raw ssh2-on-Bun download throughput per cipher: `ssh -c C … 'zeros N' > /dev/null`. */
async function rawThroughput(work: string, key: string, ciphers: string[], mib: number, reps: number) {
  const hostKey = join(work, "raw_host_ed25519");
  if (!existsSync(hostKey)) await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
  const p = Bun.spawn([BUN, join(ROOT, "bench/ssh.ts"), "--raw-server", hostKey], { cwd: ROOT, env: baseEnv(), stdout: "pipe", stderr: "inherit" });
  const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!/listening (\d+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("raw ssh2 server did not start");
    text += new TextDecoder().decode(value);
  }
  const port = /listening (\d+)/.exec(text)![1]!;
  const out: Record<string, { mb_per_s: number; seconds: number; server_cpu_s: number; client_cpu_s: number } | { error: string }> = {};
  try {
    for (const cipher of ciphers) {
      const walls: number[] = [];
      const scpu: number[] = [];
      const ccpu: number[] = [];
      let error: string | null = null;
      for (let i = 0; i < reps; i++) {
        const cpu0 = procCpu(p.pid);
        const r = await run(
          ["bash", "-o", "pipefail", "-c", `ssh -i '${key}' ${SSH_OPTS.join(" ")} -c ${cipher} -p ${port} bench@127.0.0.1 'zeros ${mib}' | wc -c`],
          { check: false },
        );
        if (r.code !== 0 || Number(r.stdout.trim()) !== mib * 1048576) {
          error = `exit ${r.code}, ${r.stdout.trim()} bytes: ${r.stderr.trim().slice(-300)}`;
          break;
        }
        walls.push(r.wall);
        scpu.push(procCpu(p.pid) - cpu0);
        ccpu.push(r.cpu);
      }
      out[cipher] = error
        ? { error }
        : { mb_per_s: r1(mib / median(walls)), seconds: r3(median(walls)), server_cpu_s: r3(median(scpu)), client_cpu_s: r3(median(ccpu)) };
      log(`raw ssh2 ${cipher}: ${JSON.stringify(out[cipher])}`);
    }
  } finally {
    p.kill("SIGTERM");
    await p.exited;
  }
  return {
    command: `bun bench/ssh.ts --raw-server KEY (ssh2 Server, exec 'zeros N' writes N MiB); ssh -c CIPHER … 'zeros ${mib}' | wc -c`,
    mib,
    reps,
    results: out,
  };
}

/** Self time of a .cpuprofile by source area and by function. */
function summarizeProfile(file: string, fromMs: number, toMs: number) {
  const prof = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  // Why samples, not time deltas: JSC takes no samples while the thread waits in the event
  // loop, so a delta can span idle time and would be charged to whatever ran next.
  const selfCount = new Map<number, number>();
  let t = prof.startTime;
  let inWindow = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    if (t / 1000 < fromMs || t / 1000 > toMs) continue;
    inWindow++;
    selfCount.set(prof.samples[i]!, (selfCount.get(prof.samples[i]!) ?? 0) + 1);
  }
  const area = (url: string, fn: string): string => {
    if (fn === "(idle)") return "idle";
    if (fn === "(garbage collector)") return "gc";
    if (fn === "(program)" || fn === "(root)") return "program";
    if (url.includes("node_modules/ssh2/lib/protocol/crypto")) return "ssh2 crypto";
    if (url.includes("node_modules/ssh2")) return "ssh2 other";
    if (url.includes("node_modules/elysia")) return "elysia";
    if (url.includes("node_modules/")) return "other deps";
    if (url.includes("/src/git/")) return "svc git engine";
    if (url.includes("/src/ssh/")) return "svc ssh";
    if (url.includes("/src/http/")) return "svc http";
    if (url.includes("/src/storage/")) return "svc storage";
    if (url.includes("/src/")) return "svc other";
    if (!url) return `native/builtin`;
    return "bun builtins";
  };
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const [id, n] of selfCount) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    total += n;
    const a = area(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + n);
    const short = url.replace(/^.*\/(node_modules|src)\//, "$1/");
    const key = `${functionName || "(anonymous)"} ${short ? `${short}:${lineNumber + 1}` : ""}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + n);
  }
  const busy = total - (areas.get("idle") ?? 0);
  const pct = (n: number) => Math.round((n / busy) * 1000) / 10;
  return {
    file,
    samples_in_clone_window: inWindow,
    areas_pct_of_samples: Object.fromEntries(
      [...areas]
        .filter(([a]) => a !== "idle")
        .sort((a, b) => b[1] - a[1])
        .map(([a, n]) => [a, pct(n)]),
    ),
    top_functions: [...fns]
      .filter(([k]) => !k.startsWith("(idle)"))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([k, n]) => ({ fn: k, samples: n, pct: pct(n) })),
  };
}

/** Restarts svc under --cpu-prof, serves `n` clones over one transport, summarizes the profile. */
async function profileClones(dataDir: string, work: string, c0: Clients, transport: "ssh" | "http", repo: string, n: number, cipher: string | null) {
  const dir = join(work, `prof-${transport}${cipher ? `-${cipher}` : ""}`);
  mkdirSync(dir, { recursive: true });
  const svc = await startSvc(dataDir, join(dir, "stderr.log"), ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
  const rss = new RssSampler(svc.pid);
  const dest = join(work, `prof-clone-${transport}`);
  try {
    const c = clients(svc, c0.home, c0.key, c0.token);
    const walls: number[] = [];
    const serverCpu: number[] = [];
    const from = Date.now();
    for (let i = 0; i < n; i++) {
      const r = await timedClone(svc, rss, c, transport === "ssh" ? c.sshUrl(repo) : c.httpUrl(repo), dest, cipher);
      walls.push(r.wall);
      serverCpu.push(r.server_cpu);
    }
    const to = Date.now();
    log(`profiled ${transport}${cipher ? ` (${cipher})` : ""} clones: ${walls.join(", ")} s`);
    rss.stop();
    await svc.stop();
    const prof = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!prof) return { transport, cipher, walls, server_cpu: serverCpu, error: "no .cpuprofile written" };
    return { transport, cipher, walls, server_cpu: serverCpu, ...summarizeProfile(join(dir, prof), from, to) };
  } finally {
    rss.stop();
    await svc.stop();
    rmSync(dest, { recursive: true, force: true });
  }
}

/**
 * `n` clones of `repo` started at once against a freshly started server (so the push and
 * earlier clones leave nothing behind in its heap); every clone's exit code and refs are
 * checked, `fsck` runs on the first and last; RSS sampled every 50 ms, VmHWM cross-checks.
 */
async function burst(
  dataDir: string,
  work: string,
  c0: Clients,
  o: { transport: "ssh" | "http"; repo: string; source: RepoInfo; n: number; bunFlags?: string[]; label: string },
) {
  const svc = await startSvc(dataDir, join(work, `svc-${o.label}.log`), o.bunFlags ?? []);
  const rss = new RssSampler(svc.pid, 50);
  const cdir = join(work, `burst-${o.label}`);
  try {
    const c = clients(svc, c0.home, c0.key, c0.token);
    rmSync(cdir, { recursive: true, force: true });
    mkdirSync(cdir);
    // One clone first so the burst measures serving, not first-request warm-up of a new process.
    await run(CLONE(o.transport === "ssh" ? c.sshUrl(o.repo) : c.httpUrl(o.repo), join(cdir, "warm")), { env: c.env() });
    rmSync(join(cdir, "warm"), { recursive: true, force: true });
    await Bun.sleep(1000);
    const hwmReset = resetHwm(svc.pid);
    const rssBefore = r1(rssMb(svc.pid));
    const cpu0 = procCpu(svc.pid);
    const w = rss.open();
    const t0 = performance.now();
    const url = o.transport === "ssh" ? c.sshUrl(o.repo) : c.httpUrl(o.repo);
    const results = await Promise.all(
      Array.from({ length: o.n }, (_, i) =>
        run(CLONE(url, join(cdir, `c${i}`)), { env: c.env(), check: false }).then((r) => ({
          i,
          code: r.code,
          wall: r3(r.wall),
          stderr: r.stderr.trim().slice(-300),
        })),
      ),
    );
    const wall = (performance.now() - t0) / 1000;
    const peak = w.close();
    const serverCpu = procCpu(svc.pid) - cpu0;
    const hwm = r1(hwmMb(svc.pid));
    await Bun.sleep(2000);
    const rssAfter = r1(rssMb(svc.pid));
    const srcRefs = await refsOf(o.source.path);
    let refsMatch = 0;
    for (const r of results) if (r.code === 0 && (await refsOf(join(cdir, `c${r.i}`))) === srcRefs) refsMatch++;
    const failed = results.filter((r) => r.code !== 0);
    const fsckResults = [];
    for (const i of [0, o.n - 1].filter((v, k, a) => a.indexOf(v) === k)) fsckResults.push({ clone: i, ...(await fsck(join(cdir, `c${i}`))) });
    const walls = results.map((r) => r.wall);
    const ok = failed.length === 0 && refsMatch === o.n && fsckResults.every((f) => f.ok);
    const out = {
      transport: o.transport,
      server: `bun ${[...(o.bunFlags ?? []), "src/main.ts serve"].join(" ")} (fresh process on the same data dir, one warm-up clone)`,
      repository: `${o.repo} (scale ${o.source.scale}, ${o.source.pack_mb} MB pack, ${o.source.objects} objects)`,
      clones: o.n,
      succeeded: results.length - failed.length,
      refs_match_source: refsMatch,
      all_ok: ok,
      failures: failed.slice(0, 5),
      fsck: fsckResults,
      wall_s: r3(wall),
      per_clone_wall_s: { min: r3(Math.min(...walls)), median: r3(median(walls)), max: r3(Math.max(...walls)) },
      server_cpu_s: r3(serverCpu),
      rss_before_mb: rssBefore,
      rss_peak_mb: peak.peakMb,
      rss_after_mb: rssAfter,
      rss_samples: peak.samples,
      rss_max_sample_gap_ms: peak.maxGapMs,
      vm_hwm_mb: hwm,
      vm_hwm_scope: hwmReset ? "since just before the burst (clear_refs 5)" : "since server start (clear_refs not permitted)",
    };
    log(
      `burst ${o.label}: ${out.succeeded}/${o.n} ok in ${out.wall_s} s; RSS ${rssBefore} → peak ${peak.peakMb} MB (VmHWM ${hwm} MB, max sample gap ${peak.maxGapMs} ms)`,
    );
    return out;
  } finally {
    rss.stop();
    await svc.stop();
    rmSync(cdir, { recursive: true, force: true });
  }
}

/** `burst` repeated `reps` times; peaks summarised (min / median / max). */
async function burstSeries(dataDir: string, work: string, c0: Clients, o: Parameters<typeof burst>[3], reps: number) {
  const runs = [];
  for (let i = 0; i < reps; i++) runs.push(await burst(dataDir, work, c0, { ...o, label: `${o.label}-${i + 1}` }));
  const peaks = runs.map((r) => Math.max(r.rss_peak_mb, r.vm_hwm_mb));
  const walls = runs.map((r) => r.wall_s);
  return {
    transport: o.transport,
    server: runs[0]!.server,
    repository: runs[0]!.repository,
    clones: o.n,
    bursts: reps,
    all_ok: runs.every((r) => r.all_ok),
    succeeded_per_burst: runs.map((r) => r.succeeded),
    rss_before_mb: median(runs.map((r) => r.rss_before_mb)),
    rss_peak_mb: { min: Math.min(...peaks), median: median(peaks), max: Math.max(...peaks), each: peaks },
    wall_s: { min: Math.min(...walls), median: r3(median(walls)), max: Math.max(...walls) },
    runs,
  };
}

// ---------------------------------------------------------------------------------------
// Main

const TARGET_RATIO = 1.2;
const TARGET_RSS_MB = 400;

async function main() {
  const started = new Date();
  mkdirSync(WORK_ROOT, { recursive: true });
  const work = mkdtempSync(join(WORK_ROOT, "run-"));
  const notes: string[] = [];
  const mach = await machine();
  const revStart = await revision();
  log(`work dir ${work}; ${mach.cpu}, ${mach.cores} cores, load ${mach.loadavg_start.join(" ")}`);

  const big = await repoAt(args.scale);
  const small = args.concurrentScale === args.scale ? big : await repoAt(args.concurrentScale);
  log(`bench repository: ${big.pack_mb} MB pack, ${big.objects} objects, ${big.commits} commits; concurrent: scale ${small.scale} (${small.pack_mb} MB)`);

  const dataDir = join(work, "data");
  mkdirSync(dataDir, { recursive: true });
  const home = join(work, "home");
  mkdirSync(home, { recursive: true });
  const commands: Record<string, string> = {
    server: "SVC_DATA_DIR=… SVC_HTTP_ADDR=127.0.0.1:0 SVC_SSH_ADDR=127.0.0.1:0 SVC_LOG=warn bun src/main.ts serve",
  };
  let svc = await startSvc(dataDir, join(work, "svc-setup.log"));
  let rss = new RssSampler(svc.pid, 50);
  const stopAll = async () => {
    rss.stop();
    await svc.stop();
  };
  try {
    // Bootstrap: owner, token, key, repositories; push over HTTP; compact.
    const email = "bench@example.com";
    const password = "correct horse battery staple";
    const idleRss = r1(rssMb(svc.pid));
    const uc = await svcCli(svc.env, ["user-create", "--org", ORG, "--email", email, "--name", "Bench", "--password", password, "--role", "owner"]);
    if (uc.code !== 0) throw new Error(`user-create failed: ${uc.stderr}`);
    const login = await api(svc, "POST", "/v1/auth/login", { email, password }, {}, 200);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const token = (await api(svc, "POST", `/v1/orgs/${ORG}/tokens`, { scopes: ["repo:write", "org:admin"], label: "ssh-bench" }, { cookie }, 201)).json
      .token as string;
    const auth = { authorization: `Bearer ${token}` };
    const key = join(work, "id_ed25519");
    await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ssh-bench", "-f", key]);
    await api(svc, "POST", `/v1/orgs/${ORG}/ssh-keys`, { public_key: readFileSync(`${key}.pub`, "utf8").trim(), label: "ssh-bench" }, auth, 201);
    let c = clients(svc, home, key, token);
    const repos = small === big ? ["big"] : ["big", "small"];
    const pushes: Record<string, { wall: number; server_cpu: number; rss_peak_mb: number }> = {};
    for (const name of repos) {
      const src = name === "big" ? big : small;
      await api(svc, "POST", `/v1/orgs/${ORG}/repos`, { name }, auth, 201);
      const w = rss.open();
      const cpu0 = procCpu(svc.pid);
      const push = await run(["git", "-C", src.path, "push", "-q", "--mirror", c.httpUrl(name)], { env: c.env() });
      pushes[name] = { wall: r3(push.wall), server_cpu: r3(procCpu(svc.pid) - cpu0), rss_peak_mb: w.close().peakMb };
      log(`pushed ${name} over HTTP: ${JSON.stringify(pushes[name])}`);
    }
    commands.push = "git push --mirror http://x:TOKEN@127.0.0.1:PORT/bench/<repo>.git";
    const help = await svcCli(svc.env, ["--help"]);
    let gcDone = false;
    if (/\bgc\b/.test(help.stdout + help.stderr)) {
      for (const name of repos) {
        const g = await svcCli(svc.env, ["gc", "--repo", `${ORG}/${name}`]);
        if (g.code !== 0) notes.push(`svc gc --repo ${ORG}/${name} failed (exit ${g.code}): ${g.stderr.slice(-300)}`);
        else log(`gc ${name}: ${g.stdout.trim()}`);
        gcDone ||= g.code === 0;
      }
      commands.gc = `bun src/main.ts gc --repo ${ORG}/<repo> (same data dir, server running)`;
    } else notes.push("svc has no gc command: clones served from the pack as pushed");

    // A fresh server for the clone timings: the push's heap is not carried into them.
    await stopAll();
    svc = await startSvc(dataDir, join(work, "svc-clones.log"));
    rss = new RssSampler(svc.pid, 50);
    c = clients(svc, home, key, token);
    notes.push(
      "the server is restarted (same data dir) after the push and before each burst, so the push's and earlier clones' heap is not counted against the clone figures",
    );

    // Protocol and cipher checks.
    const v2 = { ssh: await speaksV2(c, c.sshUrl(repos.at(-1)!)), http: await speaksV2(c, c.httpUrl(repos.at(-1)!)) };
    if (!v2.ssh || !v2.http) notes.push(`protocol v2 not confirmed: ${JSON.stringify(v2)}`);
    const neg = await negotiated(svc, c, "big", args.cipher);
    log(`protocol v2: ssh ${v2.ssh}, http ${v2.http}; negotiated ${JSON.stringify(neg)}`);

    // Warm-up, then alternating timed clones.
    commands.ssh_clone = `GIT_SSH_COMMAND="${sshCommand("KEY", args.cipher)}" git -c protocol.version=2 clone --bare -q ssh://git@127.0.0.1:PORT/bench/big.git DEST`;
    commands.http_clone = "git -c protocol.version=2 clone --bare -q http://x:TOKEN@127.0.0.1:PORT/bench/big.git DEST";
    const sshDest = join(work, "clone-ssh");
    const httpDest = join(work, "clone-http");
    const srcRefs = await refsOf(big.path);
    const rssFresh = r1(rssMb(svc.pid));
    const warm = { ssh: await timedClone(svc, rss, c, c.sshUrl("big"), sshDest), http: await timedClone(svc, rss, c, c.httpUrl("big"), httpDest) };
    log(`warm-up: ssh ${warm.ssh.wall} s, http ${warm.http.wall} s`);
    const fsckTimed = { ssh: await fsck(sshDest), http: await fsck(httpDest) };
    const refsOk = { ssh: (await refsOf(sshDest)) === srcRefs, http: (await refsOf(httpDest)) === srcRefs };
    if (!fsckTimed.ssh.ok || !fsckTimed.http.ok || !refsOk.ssh || !refsOk.http)
      notes.push(`clone check failed: fsck ${JSON.stringify(fsckTimed)} refs ${JSON.stringify(refsOk)}`);
    const runs: { ssh: CloneRun[]; http: CloneRun[] } = { ssh: [], http: [] };
    for (let i = 0; i < args.reps; i++) {
      const order: ("ssh" | "http")[] = i % 2 === 0 ? ["ssh", "http"] : ["http", "ssh"];
      for (const t of order) {
        const r = await timedClone(svc, rss, c, t === "ssh" ? c.sshUrl("big") : c.httpUrl("big"), t === "ssh" ? sshDest : httpDest);
        if ((await refsOf(t === "ssh" ? sshDest : httpDest)) !== srcRefs) throw new Error(`${t} clone ${i}: refs differ from the source`);
        runs[t].push(r);
      }
      log(`rep ${i + 1}/${args.reps}: ssh ${runs.ssh.at(-1)!.wall} s, http ${runs.http.at(-1)!.wall} s`);
    }
    const summary = (rs: CloneRun[]) => ({
      median_wall: r3(median(rs.map((r) => r.wall))),
      min_wall: r3(Math.min(...rs.map((r) => r.wall))),
      median_server_cpu: r3(median(rs.map((r) => r.server_cpu))),
      median_client_cpu: r3(median(rs.map((r) => r.client_cpu))),
      rss_peak_mb: Math.max(...rs.map((r) => r.rss_peak_mb)),
      runs: rs,
    });
    const clone = {
      ssh: summary(runs.ssh),
      http: summary(runs.http),
      ratio: 0,
      server_cpu_ratio: 0,
      rss_fresh_server_mb: rssFresh,
      ratio_per_pair: runs.ssh.map((r, i) => r3(r.wall / runs.http[i]!.wall)),
    };
    clone.ratio = r3(clone.ssh.median_wall / clone.http.median_wall);
    // Tiny repositories can take under one clock tick (10 ms) of server CPU: no ratio then.
    clone.server_cpu_ratio = clone.http.median_server_cpu > 0 ? r3(clone.ssh.median_server_cpu / clone.http.median_server_cpu) : NaN;
    log(`clone medians: ssh ${clone.ssh.median_wall} s, http ${clone.http.median_wall} s, ratio ${clone.ratio} (server CPU ratio ${clone.server_cpu_ratio})`);
    rmSync(sshDest, { recursive: true, force: true });
    rmSync(httpDest, { recursive: true, force: true });

    // Diagnostics that need this server: per-cipher SSH clones.
    const ciphers = ["aes128-gcm@openssh.com", "aes128-ctr", "chacha20-poly1305@openssh.com"];
    const perCipher: Record<string, unknown> = {};
    const wantCipherRuns = args.diagnose === "always" || (args.diagnose === "auto" && clone.ratio > TARGET_RATIO);
    if (wantCipherRuns) {
      for (const cipher of ciphers) {
        const n = await negotiated(svc, c, "big", cipher);
        if (n.cipher !== cipher) {
          perCipher[cipher] = { error: `not offered by the server (ssh -c ${cipher}: no matching cipher)` };
          continue;
        }
        const rs: CloneRun[] = [];
        const hs: CloneRun[] = [];
        for (let i = 0; i < 3; i++) {
          rs.push(await timedClone(svc, rss, c, c.sshUrl("big"), sshDest, cipher));
          hs.push(await timedClone(svc, rss, c, c.httpUrl("big"), httpDest));
        }
        perCipher[cipher] = {
          mac: n.mac,
          ssh: summary(rs),
          http_alongside: summary(hs),
          ratio: r3(median(rs.map((r) => r.wall)) / median(hs.map((r) => r.wall))),
        };
        log(`ssh clone with -c ${cipher}: median ${r3(median(rs.map((r) => r.wall)))} s vs http ${r3(median(hs.map((r) => r.wall)))} s`);
      }
      rmSync(sshDest, { recursive: true, force: true });
      rmSync(httpDest, { recursive: true, force: true });
    }
    await stopAll();

    // Concurrent SSH clones on a fresh server.
    let concurrent: Awaited<ReturnType<typeof burstSeries>> | null = null;
    const burstRepo = repos.at(-1)!;
    if (args.concurrent > 0) {
      commands.concurrent = `${args.concurrent} × (GIT_SSH_COMMAND=… git -c protocol.version=2 clone --bare -q ssh://git@127.0.0.1:PORT/bench/${burstRepo}.git DEST_i), all spawned at once`;
      concurrent = await burstSeries(
        dataDir,
        work,
        c,
        { transport: "ssh", repo: burstRepo, source: small, n: args.concurrent, label: `ssh-${args.concurrent}` },
        args.burstReps,
      );
    }

    const targets = {
      ssh_clone_within_1_2x_http: { target: `ssh median ≤ ${TARGET_RATIO} × http median`, ratio: clone.ratio, met: clone.ratio <= TARGET_RATIO },
      concurrent_ssh_clones: {
        target: `${args.concurrent} concurrent SSH clones all succeed, server peak VmRSS < ${TARGET_RSS_MB} MB`,
        all_succeeded: concurrent?.all_ok ?? false,
        rss_peak_mb_highest_burst: concurrent ? concurrent.rss_peak_mb.max : NaN,
        met: !!concurrent && concurrent.all_ok && concurrent.rss_peak_mb.max < TARGET_RSS_MB,
      },
    };

    // Diagnostics.
    const diagnostics: Record<string, unknown> = {};
    const always = args.diagnose === "always";
    const auto = args.diagnose === "auto";
    if (wantCipherRuns) {
      diagnostics.ssh_clone_per_cipher = perCipher;
      diagnostics.raw_ssh2_throughput = await rawThroughput(work, key, ciphers, Math.max(64, Math.ceil(big.pack_mb * 2)), 3);
    }
    if (concurrent && (always || (auto && !targets.concurrent_ssh_clones.met))) {
      const n = args.concurrent;
      const fifth = Math.max(1, Math.round(n / 5));
      const bursts = [
        await burstSeries(dataDir, work, c, { transport: "http", repo: burstRepo, source: small, n, label: `http-${n}` }, args.burstReps),
        await burstSeries(
          dataDir,
          work,
          c,
          { transport: "ssh", repo: burstRepo, source: small, n, bunFlags: ["--smol"], label: `ssh-${n}-smol` },
          args.burstReps,
        ),
        await burstSeries(dataDir, work, c, { transport: "ssh", repo: burstRepo, source: small, n: fifth, label: `ssh-${fifth}` }, args.burstReps),
      ];
      diagnostics.bursts = bursts;
    }
    if (args.cpuProf) {
      diagnostics.cpu_profiles = [await profileClones(dataDir, work, c, "ssh", "big", 3, null), await profileClones(dataDir, work, c, "http", "big", 3, null)];
      if (neg.cipher !== "aes128-gcm@openssh.com")
        diagnostics.cpu_profiles = [
          ...(diagnostics.cpu_profiles as unknown[]),
          await profileClones(dataDir, work, c, "ssh", "big", 3, "aes128-gcm@openssh.com"),
        ];
      commands.cpu_prof =
        "bun --cpu-prof --cpu-prof-dir=DIR src/main.ts serve (fresh process on the same data dir; 3 clones; samples inside the clone window counted)";
    }

    const result = {
      benchmark: "ssh",
      date: started.toISOString(),
      machine: { ...mach, loadavg_end: loadavg().map((x) => Math.round(x * 100) / 100) },
      revision: { start: revStart, end: await revision() },
      repository: big,
      concurrent_repository: small,
      compacted_with_gc: gcDone,
      protocol_v2: v2,
      ssh_negotiated: neg,
      commands,
      server_idle_rss_mb: idleRss,
      push_over_http: pushes,
      warm_up: warm,
      checks: { fsck_first_clone: fsckTimed, refs_match_source: refsOk },
      clone,
      concurrent,
      targets,
      diagnostics,
      notes,
      work_dir: args.keep ? work : null,
    };
    const json = JSON.stringify(result, null, 2);
    const outFile = args.out ?? join(WORK_ROOT, `ssh-${started.toISOString().replace(/[:.]/g, "-")}.json`);
    writeFileSync(outFile, json + "\n");
    log(`wrote ${outFile}`);
    process.stdout.write(json + "\n");
  } catch (e) {
    log(`server stderr tail:\n${svc.stderrTail()}`);
    throw e;
  } finally {
    await stopAll();
    if (!args.keep) rmSync(work, { recursive: true, force: true });
  }
}

await main();
