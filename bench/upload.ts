// The upload (fetch/clone) side under load (issues 24 and 25), with a /healthz prober in its own
// process beside every measurement (bench/lib/healthz-prober.ts):
//
//   bun bench/upload.ts clones  [--repo DIR.git] [--clients 20] [--steps 4] [--root DIR] [--out FILE]
//       N concurrent `git clone --bare` over HTTP of one repository (default: gen-repo at
//       --scale 0.35, a ~34 MiB pack), first as pushed in --steps pushes (several packs: clones
//       walk the history), then after `svc gc` (one pack with its reachability record: clones
//       stream it); plus one clone alone before each. Prints clone times, throughput and the
//       prober's latencies.
//   bun bench/upload.ts hostile [--repo DIR.git] [--lines 100000] [--root DIR] [--out FILE]
//       One upload-pack request at a time carrying --lines have / want / shallow / deepen-not /
//       ref-prefix lines (v0 and v2), each with the prober: the worst stall per case.
//   bun bench/upload.ts thin    [--repo /work/.mirror/git+git/repo] [--branch master]
//                               [--steps 1000,100,10,0] [--root DIR] [--out FILE]
//       Incremental fetches of a real repository side by side with C git (`git daemon` on the
//       same repository, no bitmap): a client at <branch>~1000 fetches <branch>~100, then ~10,
//       then the tip; the pack as it crossed the wire (GIT_TRACE_PACKFILE) and the fetch's time.
//
// --root runs the server from another checkout (e.g. an export of the previous main with this
// checkout's node_modules linked) for side-by-side figures.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { defaultRepoPath, generate } from "./gen-repo.ts";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc, type SvcAccount, type SvcServer } from "./lib/git-svc.ts";
import { freePort, gitEnv, machineInfo, mb, median, procCpu, round, run, waitPort } from "./lib/git-util.ts";

const argv = process.argv.slice(2);
const mode = argv[0];
const get = (n: string) => {
  const i = argv.indexOf(`--${n}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const root = resolve(get("root") ?? ROOT);
const workRoot = join(ROOT, "bench", "work");
const work = join(workRoot, `upload-run-${Date.now()}`);
mkdirSync(work, { recursive: true });
const home = join(work, "home");
mkdirSync(home, { recursive: true });
const env = gitEnv(home);
const BUN = process.execPath;
/**
 * Client git runs at this niceness (--client-nice, default 19): on one machine the 20 clients'
 * index-pack would otherwise take the cores from the server whose responsiveness is measured;
 * in production they run elsewhere.
 */
const clientNice = Number(get("client-nice") ?? 19);
const client = (cmd: string[]) => (clientNice > 0 ? ["nice", "-n", String(clientNice), ...cmd] : cmd);

interface ProbeSummary {
  probes: number;
  failures: number;
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  over_100ms: number;
  over_250ms: number;
}

/** Starts the prober; stop() ends it and returns its summary (samples dropped). */
function startProber(url: string, intervalMs = 10): { stop(): Promise<ProbeSummary> } {
  const p = Bun.spawn([BUN, join(ROOT, "bench/lib/healthz-prober.ts"), url, String(intervalMs)], { stdout: "pipe", stderr: "inherit" });
  return {
    async stop() {
      await Bun.sleep(50);
      p.kill("SIGTERM");
      const text = await new Response(p.stdout).text();
      await p.exited;
      const { samples: _samples, ...rest } = JSON.parse(text);
      return rest as ProbeSummary;
    },
  };
}

async function server(): Promise<{ svc: SvcServer; acct: SvcAccount }> {
  const svc = await startSvc({ dataDir: join(work, "svc"), log: "warn", root });
  const acct = await bootstrap(svc);
  return { svc, acct };
}

function packCount(svc: SvcServer): number {
  const reposDir = join(svc.dataDir, "objects", "repos");
  let n = 0;
  if (!existsSync(reposDir)) return 0;
  for (const id of readdirSync(reposDir)) {
    const dir = join(reposDir, id, "packs");
    if (existsSync(dir)) n += readdirSync(dir).filter((f) => f.endsWith(".pack")).length;
  }
  return n;
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  return n;
}

async function ensureGenRepo(): Promise<string> {
  const repo = get("repo");
  if (repo) return resolve(repo);
  const path = defaultRepoPath(1, 0.35);
  if (!existsSync(path)) await generate({ scale: 0.35, seed: 1, out: path, extra: 0 });
  return path;
}

async function clones(): Promise<Record<string, unknown>> {
  const repo = await ensureGenRepo();
  const clients = Number(get("clients") ?? 20);
  const steps = Number(get("steps") ?? 4);
  const { svc, acct } = await server();
  try {
    await createRepo(svc, acct, "big");
    const url = gitUrl(svc, acct, "big");
    // The history in `steps` pushes of main (older first), then everything: several packs.
    const firstParents = (await run(["git", "rev-list", "--first-parent", "--reverse", "main"], { cwd: repo, env })).stdout.trim().split("\n");
    for (let k = 1; k < steps; k++) {
      const at = firstParents[Math.floor((k * firstParents.length) / steps)]!;
      await run(["git", "push", "-q", url, `${at}:refs/heads/main`], { cwd: repo, env });
    }
    await run(["git", "push", "-q", "--mirror", url], { cwd: repo, env });
    // Compaction merges the pushed packs 5 s after the last write: let it settle first.
    await Bun.sleep(15_000);
    const results: Record<string, unknown> = { repo, pack_bytes: dirBytes(join(repo, "objects", "pack")), clients, client_nice: clientNice };
    results.as_pushed = await measureClones(svc, url, clients, "pushed");
    const gc = await svc.cli(["gc", "--repo", `${acct.org}/big`]);
    if (gc.code !== 0) throw new Error(`gc failed: ${gc.stderr}`);
    results.after_gc = await measureClones(svc, url, clients, "gc");
    return results;
  } finally {
    await svc.stop();
  }
}

async function measureClones(svc: SvcServer, url: string, clients: number, label: string): Promise<Record<string, unknown>> {
  const packs = packCount(svc);
  const single = join(work, `${label}-single.git`);
  const cpu0 = procCpu(svc.pid).self;
  const one = await run(client(["git", "clone", "-q", "--bare", url, single]), { env });
  const cpuOne = procCpu(svc.pid).self - cpu0;
  const bytes = dirBytes(join(single, "objects", "pack"));
  rmSync(single, { recursive: true, force: true });
  const prober = startProber(svc.url);
  await Bun.sleep(300);
  const cpu1 = procCpu(svc.pid).self;
  const t0 = performance.now();
  const times = await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const dir = join(work, `${label}-${i}.git`);
      const r = await run(client(["git", "clone", "-q", "--bare", url, dir]), { env });
      rmSync(dir, { recursive: true, force: true });
      return r.wall;
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const cpuAll = procCpu(svc.pid).self - cpu1;
  const probe = await prober.stop();
  return {
    packs_on_server: packs,
    single_clone_s: round(one.wall, 2),
    single_clone_server_cpu_s: round(cpuOne, 2),
    clone_pack_mib: mb(bytes),
    concurrent_wall_s: round(wall, 2),
    concurrent_clone_median_s: round(median(times), 2),
    concurrent_clone_max_s: round(Math.max(...times), 2),
    concurrent_throughput_mib_s: round((clients * bytes) / 1048576 / wall, 1),
    concurrent_server_cpu_s: round(cpuAll, 2),
    healthz: probe,
  };
}

/** A pkt-line. */
function pkt(text: string): string {
  const n = Buffer.byteLength(text) + 5;
  return `${n.toString(16).padStart(4, "0")}${text}\n`;
}
const FLUSH = "0000";
const DELIM = "0001";

function randomOid(i: number): string {
  return new Bun.CryptoHasher("sha1").update(`bench-${i}`).digest("hex");
}

async function hostile(): Promise<Record<string, unknown>> {
  const repo = await ensureGenRepo();
  const lines = Number(get("lines") ?? 100_000);
  const { svc, acct } = await server();
  try {
    await createRepo(svc, acct, "big");
    const url = gitUrl(svc, acct, "big");
    await run(["git", "push", "-q", "--mirror", url], { cwd: repo, env });
    const main = (await run(["git", "rev-parse", "main"], { cwd: repo, env })).stdout.trim();
    const commits = (await run(["git", "rev-list", "--all"], { cwd: repo, env })).stdout.trim().split("\n");
    const objects = (await run(["git", "rev-list", "--objects", "--all"], { cwd: repo, env })).stdout
      .trim()
      .split("\n")
      .map((l) => l.slice(0, 40));
    const fill = (known: string[]) => Array.from({ length: lines }, (_, i) => (i < known.length ? known[i]! : randomOid(i)));
    const cases: { name: string; v2: boolean; body: string }[] = [
      {
        name: `v0: ${lines} haves (every commit, then unknown ids), done`,
        v2: false,
        body:
          pkt(`want ${main} multi_ack_detailed side-band-64k ofs-delta thin-pack no-progress`) +
          FLUSH +
          fill(commits)
            .map((o) => pkt(`have ${o}`))
            .join("") +
          pkt("done"),
      },
      {
        name: `v0: ${lines} unknown haves, no done (stateless round)`,
        v2: false,
        body:
          pkt(`want ${main} multi_ack_detailed side-band-64k ofs-delta`) +
          FLUSH +
          fill([])
            .map((o) => pkt(`have ${o}`))
            .join("") +
          FLUSH,
      },
      {
        name: `v2: ${lines} haves (every commit, then unknown ids)`,
        v2: true,
        body:
          pkt("command=fetch") +
          DELIM +
          pkt(`want ${main}`) +
          fill(commits)
            .map((o) => pkt(`have ${o}`))
            .join("") +
          FLUSH,
      },
      {
        name: `v0: ${lines} wants (every object id, then unknown ids)`,
        v2: false,
        body:
          fill(objects)
            .map((o, i) => pkt(i === 0 ? `want ${o} side-band-64k ofs-delta no-progress` : `want ${o}`))
            .join("") +
          FLUSH +
          pkt("done"),
      },
      {
        name: `v0: ${lines} shallow lines, deepen 1`,
        v2: false,
        body:
          pkt(`want ${main} side-band-64k ofs-delta shallow no-progress`) +
          fill(commits)
            .map((o) => pkt(`shallow ${o}`))
            .join("") +
          pkt("deepen 1") +
          FLUSH +
          pkt("done"),
      },
      {
        name: `v0: ${lines} deepen-not lines`,
        v2: false,
        body:
          pkt(`want ${main} side-band-64k ofs-delta shallow deepen-not no-progress`) +
          Array.from({ length: lines }, () => pkt("deepen-not refs/heads/main")).join("") +
          FLUSH +
          pkt("done"),
      },
      {
        name: `v2: 65,535 ref-prefix lines (the most git matches)`,
        v2: true,
        body: pkt("command=ls-refs") + DELIM + Array.from({ length: 65535 }, (_, i) => pkt(`ref-prefix refs/heads/x${i}`)).join("") + FLUSH,
      },
      {
        name: `v2: ${lines} ref-prefix lines`,
        v2: true,
        body: pkt("command=ls-refs") + DELIM + Array.from({ length: lines }, (_, i) => pkt(`ref-prefix refs/heads/x${i}`)).join("") + FLUSH,
      },
    ];
    const target = new URL(`${svc.url}/${acct.org}/big.git/git-upload-pack`);
    const auth = `Basic ${Buffer.from(`x:${acct.token}`).toString("base64")}`;
    const out: Record<string, unknown>[] = [];
    // The floor: the prober against the idle server (the machine's own scheduling delays).
    {
      const prober = startProber(svc.url);
      await Bun.sleep(3000);
      const probe = await prober.stop();
      out.push({ case: "idle server, 3 s", healthz: probe });
      process.stderr.write(`idle: healthz p99 ${probe.p99_ms} ms max ${probe.max_ms} ms\n`);
    }
    for (const c of cases) {
      const prober = startProber(svc.url);
      await Bun.sleep(300);
      const cpu0 = procCpu(svc.pid).self;
      const t0 = performance.now();
      const res = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/x-git-upload-pack-request", authorization: auth, ...(c.v2 ? { "git-protocol": "version=2" } : {}) },
        body: c.body,
      });
      const answer = new Uint8Array(await res.arrayBuffer());
      const took = (performance.now() - t0) / 1000;
      const cpu = procCpu(svc.pid).self - cpu0;
      const probe = await prober.stop();
      const head = new TextDecoder().decode(answer.subarray(0, 160)).replace(/[^\x20-\x7e]/g, ".");
      out.push({
        case: c.name,
        request_mib: mb(c.body.length),
        status: res.status,
        response_bytes: answer.length,
        response_head: head,
        request_s: round(took, 2),
        server_cpu_s: round(cpu, 2),
        healthz: probe,
      });
      process.stderr.write(`${c.name}: ${round(took, 2)} s, healthz p99 ${probe.p99_ms} ms max ${probe.max_ms} ms\n`);
    }
    return { repo, lines, cases: out };
  } finally {
    await svc.stop();
  }
}

async function thin(): Promise<Record<string, unknown>> {
  const mirror = resolve(get("repo") ?? "/work/.mirror/git+git/repo");
  const branch = get("branch") ?? "master";
  const steps = (get("steps") ?? "1000,100,10,0").split(",").map(Number);
  // The served repository: the branch alone, with a ref at each step (both servers serve it).
  const src = join(workRoot, "repos", `thin-${branch}.git`);
  if (!existsSync(src)) {
    await run(["git", "clone", "-q", "--bare", "--single-branch", "--branch", branch, "--no-tags", mirror, src], { env });
  }
  // The served branch is the mirror's tip; each step is counted back from it.
  const tip = (await run(["git", "rev-parse", `refs/heads/${branch}`], { cwd: mirror, env })).stdout.trim();
  await run(["git", "update-ref", `refs/heads/${branch}`, tip], { cwd: src, env });
  for (const s of steps) await run(["git", "update-ref", `refs/heads/step${s}`, `${tip}~${s}`], { cwd: src, env });
  const hasBitmap = readdirSync(join(src, "objects", "pack")).some((f) => f.endsWith(".bitmap"));
  // C git: git daemon over the same repository.
  const port = freePort();
  const daemon = Bun.spawn(["git", "daemon", "--export-all", `--base-path=${join(workRoot, "repos")}`, "--reuseaddr", "--listen=127.0.0.1", `--port=${port}`], {
    env,
    stdout: "ignore",
    stderr: "ignore",
  });
  await waitPort(port);
  const { svc, acct } = await server();
  try {
    await createRepo(svc, acct, "thin", branch);
    const url = gitUrl(svc, acct, "thin");
    const push0 = performance.now();
    await run(["git", "push", "-q", url, `refs/heads/*:refs/heads/*`], { cwd: src, env });
    const pushS = (performance.now() - push0) / 1000;
    // One client at the oldest step, for each server (same objects: a pack of that step's closure).
    const first = steps[0]!;
    const base = join(work, "client-base.git");
    await run(["git", "init", "-q", "--bare", base], { env });
    const packed = Bun.spawn(["git", "pack-objects", "--revs", "--stdout", "-q"], { cwd: src, env, stdin: "pipe", stdout: "pipe" });
    packed.stdin.write(`refs/heads/step${first}\n`);
    packed.stdin.end();
    const indexer = Bun.spawn(["git", "index-pack", "--stdin"], { cwd: base, env, stdin: packed.stdout, stdout: "ignore" });
    if ((await indexer.exited) !== 0) throw new Error("index-pack of the client failed");
    const stepOid = (s: number) => run(["git", "rev-parse", `refs/heads/step${s}`], { cwd: src, env }).then((r) => r.stdout.trim());
    await run(["git", "update-ref", `refs/heads/${branch}`, await stepOid(first)], { cwd: base, env });
    const clients = { cgit: join(work, "client-cgit.git"), svc: join(work, "client-svc.git") };
    cpSync(base, clients.cgit, { recursive: true });
    cpSync(base, clients.svc, { recursive: true });
    const remotes = { cgit: `git://127.0.0.1:${port}/thin-${branch}.git`, svc: url };
    const rows: Record<string, unknown>[] = [];
    for (const s of steps.slice(1)) {
      const row: Record<string, unknown> = { fetch: `${branch}~${steps[steps.indexOf(s) - 1]} → ${branch}~${s}` };
      const commits = (
        await run(["git", "rev-list", "--count", `refs/heads/step${steps[steps.indexOf(s) - 1]}..refs/heads/step${s}`], { cwd: src, env })
      ).stdout.trim();
      row.commits = Number(commits);
      for (const side of ["cgit", "svc"] as const) {
        const trace = join(work, `trace-${side}-${s}.pack`);
        const cpu0 = side === "svc" ? procCpu(svc.pid).self : 0;
        const r = await run(["git", "fetch", "-q", remotes[side], `+refs/heads/step${s}:refs/heads/${branch}`], {
          cwd: clients[side],
          env: { ...env, GIT_TRACE_PACKFILE: trace },
        });
        const bytes = statSync(trace).size;
        row[`${side}_pack_kib`] = round(bytes / 1024, 1);
        row[`${side}_fetch_s`] = round(r.wall, 2);
        if (side === "svc") row.svc_server_cpu_s = round(procCpu(svc.pid).self - cpu0, 2);
        rmSync(trace, { force: true });
      }
      row.ratio = round((row.svc_pack_kib as number) / (row.cgit_pack_kib as number), 2);
      rows.push(row);
      process.stderr.write(`${JSON.stringify(row)}\n`);
    }
    for (const side of ["cgit", "svc"] as const) await run(["git", "fsck", "--connectivity-only", "--no-progress"], { cwd: clients[side], env });
    return { repo: mirror, branch, c_git_bitmap: hasBitmap, push_s: round(pushS, 1), fetches: rows };
  } finally {
    daemon.kill();
    await svc.stop();
  }
}

const started = new Date().toISOString();
const machine = await machineInfo();
let result: Record<string, unknown>;
if (mode === "clones") result = await clones();
else if (mode === "hostile") result = await hostile();
else if (mode === "thin") result = await thin();
else {
  process.stderr.write("usage: bun bench/upload.ts clones|hostile|thin [options] (see the top of this file)\n");
  process.exit(2);
}
const summary = { mode, started, root, machine, loadavg_after: loadavg().map((x) => round(x, 2)), ...result };
const text = JSON.stringify(summary, null, 2);
process.stdout.write(`${text}\n`);
if (get("out")) writeFileSync(get("out")!, text);
if (!argv.includes("--keep")) rmSync(work, { recursive: true, force: true });
