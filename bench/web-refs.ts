// Branches page and archives (issue 33, bench/README.md §49): the real server (`bun src/main.ts
// serve`, port 0, fs storage, SQLite), repositories pushed with C git, fetched over loopback.
//   1. `branches`: the branches page of a repository with 1,000 branches (each 1–5 commits off a
//      500-commit main, forked at spread-out points, so every row walks for its ahead/behind),
//      page 1 (100 rows) and a later page, beside the API's GET …/branches?limit=100 and the
//      repository's root page; p50/p99 of the whole-body time and the server's CPU per request.
//   2. `archive`: the tree of git/git (`--real GITDIR`, default /work/.mirror/git+git/repo, its
//      HEAD's tree as one root commit: ~4,850 files, ~48 MB) downloaded as .tar.gz and .zip from
//      svc, against `git archive --format=tar.gz|zip` of the same commit on the same machine
//      (wall time, --archive-reps each, alternating); beside every svc download a /healthz prober
//      in its own process every 10 ms (bench/lib/healthz-probe.ts): its p50/p99/max during the
//      downloads, the server's own event-loop delay gauge over each download, and the svc server's
//      peak RSS (VmHWM) before and after; the same prober and gauge over 3 s of the idle server
//      first, for what the machine's load alone costs. git archive runs on a bare clone of what
//      svc stores.
// Usage: bun bench/web-refs.ts [--reps 100] [--archive-reps 5] [--only branches,archive] [--real GITDIR] [--cpu-prof DIR] [--out FILE]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds } from "./lib/content-util.ts";
import { machine } from "./lib/machine.ts";
import { ROOT } from "./lib/proc.ts";
import { bootstrap, startSvc } from "./lib/svc.ts";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const REPS = Number(arg("reps", "100"));
const ARCHIVE_REPS = Number(arg("archive-reps", "5"));
const ONLY = new Set(arg("only", "branches,archive").split(","));
const REAL = arg("real", "/work/.mirror/git+git/repo");
const OUT = arg("out", "");
const PROF = arg("cpu-prof", "");
const BRANCHES = 1000;
const MAIN_COMMITS = 500;

const work = mkdtempSync(join(tmpdir(), "svc-bench-refs-"));

async function git(args: string[], cwd: string, input?: string): Promise<string> {
  const p = Bun.spawn(["git", ...args], { cwd, stdin: input === undefined ? "ignore" : new TextEncoder().encode(input), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")}: ${err}`);
  return out.trim();
}

/** A fast-import stream: main with MAIN_COMMITS commits, then BRANCHES branches of 1–5 commits each off main at spread-out points. */
function branchesStream(): string {
  const out: string[] = [];
  let mark = 0;
  const time = 1_700_000_000;
  const commit = (ref: string, from: string | null, path: string, text: string, t: number) => {
    mark++;
    const msg = `Change ${path} (${mark})\n`;
    out.push(`commit ${ref}`, `mark :${mark}`, `author Bench <bench@example.com> ${t} +0000`, `committer Bench <bench@example.com> ${t} +0000`);
    out.push(`data ${Buffer.byteLength(msg)}`, msg);
    if (from) out.push(`from ${from}`);
    out.push(`M 100644 inline ${path}`, `data ${Buffer.byteLength(text)}`, text);
    return `:${mark}`;
  };
  const mains: string[] = [];
  let prev: string | null = null;
  for (let i = 0; i < MAIN_COMMITS; i++) {
    prev = commit("refs/heads/main", prev, `src/file${i % 50}.txt`, `main ${i}\n`, time + i * 60);
    mains.push(prev);
  }
  for (let b = 0; b < BRANCHES; b++) {
    // Forked from the last 200 commits of main: each row's walk goes back up to 200 commits.
    const at = MAIN_COMMITS - 1 - ((b * 37) % 200);
    let tip = mains[at]!;
    const n = 1 + (b % 5);
    for (let k = 0; k < n; k++)
      tip = commit(`refs/heads/topic/${String(b).padStart(4, "0")}`, tip, `topic/${b}.txt`, `topic ${b} ${k}\n`, time + at * 60 + 30 + k);
  }
  return `${out.join("\n")}\ndone\n`;
}

function statsOf(ms: number[], cpuS: number) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: +at(50).toFixed(1), p99_ms: +at(99).toFixed(1), server_cpu_ms: +((cpuS * 1000) / s.length).toFixed(1) };
}

/** Peak resident memory of a process (VmHWM), MiB. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : -1;
}

const METRICS_TOKEN = "bench-web-refs-metrics";
const svc = await startSvc(work, { SVC_LOG: "warn", SVC_METRICS_TOKEN: METRICS_TOKEN }, PROF ? ["--cpu-prof", "--cpu-prof-dir", PROF] : []);

/** The server's svc_event_loop_delay_max_seconds in ms since the previous scrape (a scrape resets it). */
async function loopDelayMaxMs(): Promise<number | null> {
  const r = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const m = /^svc_event_loop_delay_max_seconds (\S+)$/m.exec(await r.text());
  return m ? +(Number(m[1]) * 1000).toFixed(1) : null;
}
const results: Record<string, unknown> = { machine: machine(), when: new Date().toISOString() };
try {
  const fx = await bootstrap(svc, { org: "bench", repo: "branches" });
  const login = await fetch(`${svc.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const pushUrl = (repo: string) => `${svc.url.replace("://", `://x:${fx.token}@`)}/bench/${repo}.git`;

  /** `reps` timed GETs of each path in turn (after 5 warm-ups), with the server's CPU per request. */
  const timed = async (paths: Record<string, { path: string; headers: Record<string, string> }>, reps: number) => {
    const out: Record<string, unknown> = {};
    for (const [name, p] of Object.entries(paths)) {
      for (let i = 0; i < 5; i++) await (await fetch(svc.url + p.path, { headers: p.headers })).arrayBuffer();
      const c0 = cpuSeconds(svc.pid);
      const ms: number[] = [];
      let kb = 0;
      for (let i = 0; i < reps; i++) {
        const t0 = performance.now();
        const r = await fetch(svc.url + p.path, { headers: p.headers });
        const body = await r.arrayBuffer();
        ms.push(performance.now() - t0);
        if (r.status !== 200) throw new Error(`${p.path}: ${r.status}`);
        kb = Math.round(body.byteLength / 1024);
      }
      out[name] = { ...statsOf(ms, cpuSeconds(svc.pid) - c0), kb };
    }
    return out;
  };

  if (ONLY.has("branches")) {
    const dir = join(work, "git-branches");
    await git(["init", "-q", "--bare", dir], work);
    await git(["fast-import", "--quiet", "--done"], dir, branchesStream());
    const t0 = performance.now();
    await git(["push", "-q", pushUrl("branches"), "--all"], dir);
    const pushS = (performance.now() - t0) / 1000;
    const page1 = await (await fetch(`${svc.url}/bench/branches/branches`, { headers: { cookie } })).text();
    const next = /href="\/bench\/branches\/branches\?cursor=([^"]+)"/.exec(page1)?.[1];
    if (!next) throw new Error("the branches page has no next page");
    const web = { cookie };
    const api = { authorization: `Bearer ${fx.token}` };
    results.branches = {
      branches: BRANCHES + 1,
      push_s: +pushS.toFixed(1),
      rows_on_page: (page1.match(/class="branch-row"/g) ?? []).length,
      ...(await timed(
        {
          branches_page_1: { path: "/bench/branches/branches", headers: web },
          branches_page_2: { path: `/bench/branches/branches?cursor=${next}`, headers: web },
          api_branches_limit_100: { path: "/v1/orgs/bench/repos/branches/branches?limit=100", headers: api },
          repo_root_page: { path: "/bench/branches", headers: web },
        },
        REPS,
      )),
    };
    console.log(JSON.stringify(results.branches));
  }

  if (ONLY.has("archive")) {
    // The HEAD tree of git/git as one root commit, in a scratch repository borrowing the mirror's objects.
    const scratch = join(work, "git-real");
    await git(["init", "-q", "--bare", scratch], work);
    writeFileSync(join(scratch, "objects/info/alternates"), `${join(REAL, "objects")}\n`);
    const tree = await git(["rev-parse", "HEAD^{tree}"], REAL);
    const env = { GIT_AUTHOR_DATE: "1764300000 +0000", GIT_COMMITTER_DATE: "1764300000 +0000" };
    const p = Bun.spawn(["git", "commit-tree", tree, "-m", "git/git HEAD tree"], {
      cwd: scratch,
      env: { ...process.env, ...env, GIT_AUTHOR_NAME: "Bench", GIT_AUTHOR_EMAIL: "b@x", GIT_COMMITTER_NAME: "Bench", GIT_COMMITTER_EMAIL: "b@x" },
      stdout: "pipe",
    });
    const commit = (await new Response(p.stdout).text()).trim();
    await git(["update-ref", "refs/heads/main", commit], scratch);
    await fetch(`${svc.url}/v1/orgs/bench/repos`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${fx.token}` },
      body: JSON.stringify({ name: "git" }),
    });
    await git(["push", "-q", pushUrl("git"), "main"], scratch);
    // git archive reads a clone of what svc stores (the same pack), not the mirror's deep delta chains.
    const local = join(work, "git-local");
    await git(["clone", "-q", "--bare", pushUrl("git"), local], work);
    const files = Number(await git(["ls-tree", "-r", "--name-only", "main"], local).then((s) => s.split("\n").length));
    // The same prober and gauge over 3 s of an idle server: what this machine's load alone costs.
    await loopDelayMaxMs();
    const idleProber = Bun.spawn([process.execPath, join(ROOT, "bench/lib/healthz-probe.ts"), svc.url, "10"], { stdout: "pipe", stderr: "ignore" });
    await Bun.sleep(3000);
    idleProber.kill();
    const idle = (await new Response(idleProber.stdout).text())
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).ms as number)
      .sort((a, b) => a - b);
    const idleLoop = await loopDelayMaxMs();
    const rssBefore = peakRssMb(svc.pid);
    const runs: Record<string, number[]> = {};
    const sizes: Record<string, number> = {};
    const healthz: number[] = [];
    const loop: number[] = [];
    const add = (k: string, v: number) => (runs[k] ??= []).push(v);
    for (let i = 0; i < ARCHIVE_REPS; i++) {
      for (const format of ["tar.gz", "zip"] as const) {
        const prober = Bun.spawn([process.execPath, join(ROOT, "bench/lib/healthz-probe.ts"), svc.url, "10"], { stdout: "pipe", stderr: "ignore" });
        // The prober's first line says it is running.
        const reader = (prober.stdout as ReadableStream<Uint8Array>).getReader();
        let text = new TextDecoder().decode((await reader.read()).value);
        await loopDelayMaxMs();
        const t0 = performance.now();
        const r = await fetch(`${svc.url}/v1/orgs/bench/repos/git/archive/main?format=${format}`, { headers: { authorization: `Bearer ${fx.token}` } });
        const bytes = (await r.arrayBuffer()).byteLength;
        add(`svc_${format}`, performance.now() - t0);
        loop.push((await loopDelayMaxMs()) ?? -1);
        if (r.status !== 200) throw new Error(`archive ${format}: ${r.status}`);
        prober.kill();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
        }
        // Skip the line before the download began.
        healthz.push(
          ...text
            .trim()
            .split("\n")
            .slice(1)
            .filter(Boolean)
            .map((l) => JSON.parse(l).ms as number),
        );
        sizes[`svc_${format}_mb`] = +(bytes / 1024 / 1024).toFixed(1);
        const g0 = performance.now();
        const out = join(work, `git.${format}`);
        await git(["archive", `--format=${format}`, "--prefix=git-main/", "-o", out, "main"], local);
        add(`git_archive_${format}`, performance.now() - g0);
        sizes[`git_archive_${format}_mb`] = +(Bun.file(out).size / 1024 / 1024).toFixed(1);
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const h = [...healthz].sort((a, b) => a - b);
    results.archive = {
      files,
      wall_ms_median: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, Math.round(med(v))])),
      ratio_svc_over_git: {
        "tar.gz": +(med(runs["svc_tar.gz"]!) / med(runs["git_archive_tar.gz"]!)).toFixed(2),
        zip: +(med(runs.svc_zip!) / med(runs.git_archive_zip!)).toFixed(2),
      },
      sizes_mb: sizes,
      healthz_during_svc_archives: { n: h.length, p50_ms: h[Math.floor(h.length / 2)], p99_ms: h[Math.ceil(h.length * 0.99) - 1], max_ms: h.at(-1) },
      event_loop_delay_max_ms_per_download: loop,
      idle_3s: {
        healthz_p50_ms: idle[Math.floor(idle.length / 2)],
        healthz_p99_ms: idle[Math.ceil(idle.length * 0.99) - 1],
        healthz_max_ms: idle.at(-1),
        event_loop_delay_max_ms: idleLoop,
      },
      svc_peak_rss_mb: { before_archives: rssBefore, after_archives: peakRssMb(svc.pid) },
    };
    console.log(JSON.stringify(results.archive));
  }
} finally {
  await svc.stop();
  rmSync(work, { recursive: true, force: true });
}
const text = JSON.stringify(results, null, 2);
if (OUT) writeFileSync(OUT, text);
console.log(text);
