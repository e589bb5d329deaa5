// The compare page's server time (issue 33, § 48 in bench/README.md): the real server (`bun
// src/main.ts serve`, port 0, fs storage), repositories pushed with C git, pages and API calls
// fetched over loopback as a signed-in person (so the page draws its "Open a change" form).
//   synthetic: 600 files of 120 lines on `main`'s root; `topic` is 1,000 commits after it, commit
//     k replacing one line of file k mod 500 (500 files changed, 1,000 lines each way); `main`
//     has 20 commits of its own on the other 100 files (topic is 1,000 ahead, 20 behind).
//   real: a real range of git/git (`--real GITDIR`, default /work/.mirror/git+git/repo;
//     `--real-range A...B`, default v2.43.0...v2.44.0) replayed as in bench/web.ts: a root commit
//     with A's tree (`main`) and the commits of A..B in order on it (same trees, messages,
//     authors and dates; parents before A mapped to the root) as `topic`.
// Each repository: the page `compare/main...topic` warm (its diff in the node's cache after the
// first request) and cold (`main...topic~i`, a new head tree each time, so nothing is cached but
// the process's warm code), the API `GET …/compare/main...topic` the same two ways, and C git on
// the same local repository: `git log main..topic`, `git diff --stat main...topic`,
// `git diff -p main...topic` (a process each, as a person would run them).
// --baseline DIR runs a second server from another checkout with the same data (e.g. main@dcddea6,
// unpacked with `git archive`, node_modules linked); requests alternate between the servers. A
// server without the compare page answers 404 there: reported as skipped.
// Usage: bun bench/web-compare.ts [--reps 40] [--cold 15] [--only synthetic,real] [--real GITDIR]
//                                 [--real-range A...B] [--baseline DIR] [--cpu-prof DIR] [--out FILE]
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cpuSeconds } from "./lib/content-util.ts";
import { machine } from "./lib/machine.ts";
import { ROOT } from "./lib/proc.ts";
import { bootstrap, startSvc, type SvcServer } from "./lib/svc.ts";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const REPS = Number(arg("reps", "40"));
const COLD = Number(arg("cold", "15"));
const OUT = arg("out", "");
const ONLY = new Set(arg("only", "synthetic,real").split(","));
const BASELINE = arg("baseline", "");
const PROF = arg("cpu-prof", "");
const REAL = arg("real", "/work/.mirror/git+git/repo");
const REAL_RANGE = arg("real-range", "v2.43.0...v2.44.0");

const work = mkdtempSync(join(tmpdir(), "svc-bench-compare-"));

async function git(args: string[], cwd: string, input?: string, env?: Record<string, string>): Promise<string> {
  const p = Bun.spawn(["git", ...args], {
    cwd,
    env: env ? { ...process.env, ...env } : undefined,
    stdin: input === undefined ? "ignore" : new TextEncoder().encode(input),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args[0]}: ${err}`);
  return out.trim();
}

/** One fast-import commit of `files` (whole contents) on `ref`. */
function commitStream(ref: string, files: Record<string, string>, message: string, o: { from?: string; mark: number; time: number }): string {
  const parts = [`commit ${ref}`, `mark :${o.mark}`, `committer Bench <bench@example.com> ${o.time} +0000`, `data ${Buffer.byteLength(message)}`, message];
  if (o.from) parts.push(`from ${o.from}`);
  for (const [path, text] of Object.entries(files)) parts.push(`M 100644 inline ${path}`, `data ${Buffer.byteLength(text)}`, text);
  return parts.join("\n") + "\n";
}

/** The synthetic repository (see the header), built once with git fast-import. */
async function syntheticRepo(): Promise<string> {
  const dir = join(work, "git-synthetic");
  await git(["init", "-q", "--bare", dir], work);
  const path = (i: number) => `src/part${String(Math.floor(i / 50)).padStart(2, "0")}/module${String(i).padStart(3, "0")}.ts`;
  const files: string[][] = Array.from({ length: 600 }, (_, i) =>
    Array.from({ length: 120 }, (_, l) => `export function f${i}_${l}(x: number): number { return x + ${l}; }`),
  );
  const text = (i: number) => files[i]!.join("\n") + "\n";
  const t0 = 1_790_000_000;
  let s = commitStream("refs/heads/main", Object.fromEntries(files.map((_, i) => [path(i), text(i)])), "root", { mark: 1, time: t0 });
  // topic: 1,000 commits, each replacing one line of one of the first 500 files.
  for (let k = 0; k < 1000; k++) {
    const i = k % 500;
    const l = 3 + Math.floor(k / 500) * 60;
    files[i]![l] = `export function f${i}_${l}(x: number): number { return x * ${l}; } // commit ${k}`;
    s += commitStream("refs/heads/topic", { [path(i)]: text(i) }, `Change f${i}_${l} in commit ${k}\n\nWhy: the bench needs a body too.\n`, {
      mark: 2 + k,
      from: k === 0 ? ":1" : `:${1 + k}`,
      time: t0 + 60 + k,
    });
  }
  // main: 20 commits of its own on the other 100 files.
  for (let k = 0; k < 20; k++) {
    const i = 500 + k * 5;
    files[i]![7] = `export const main${k} = ${k};`;
    s += commitStream("refs/heads/main", { [path(i)]: text(i) }, `Main work ${k}\n`, {
      mark: 2000 + k,
      from: k === 0 ? ":1" : `:${1999 + k}`,
      time: t0 + 30 + k,
    });
  }
  await git(["fast-import", "--quiet", "--done"], dir, s + "done\n");
  return dir;
}

/** The real range `A...B` of REAL replayed on a root commit with A's tree (see the header). */
async function realRepo(): Promise<string> {
  const dir = join(work, "git-real");
  const [a, b] = REAL_RANGE.split("...") as [string, string];
  const src = resolve(REAL);
  await git(["init", "-q", "--bare", dir], work);
  writeFileSync(join(dir, "objects/info/alternates"), `${join(src, "objects")}\n`);
  const FORMAT = "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%B";
  const commitTree = async (tree: string, parents: string[], meta: string): Promise<string> => {
    const [an, ae, ad, cn, ce, cd, ...msg] = meta.split("\u0000");
    const env = {
      GIT_AUTHOR_NAME: an!,
      GIT_AUTHOR_EMAIL: ae!,
      GIT_AUTHOR_DATE: ad!,
      GIT_COMMITTER_NAME: cn!,
      GIT_COMMITTER_EMAIL: ce!,
      GIT_COMMITTER_DATE: cd!,
    };
    return git(["commit-tree", tree, ...parents.flatMap((x) => ["-p", x])], dir, msg.join("\u0000"), env);
  };
  const root = await commitTree(await git(["rev-parse", `${a}^{tree}`], src), [], (await git(["log", "-1", "--date=raw", FORMAT, a], src)) + "\n");
  const mapped = new Map<string, string>();
  const list = (await git(["rev-list", "--reverse", "--topo-order", "--parents", `${a}..${b}`], src)).split("\n").filter(Boolean);
  for (const row of list) {
    const [id, ...parents] = row.split(" ") as [string, ...string[]];
    const meta = await git(["log", "-1", "--date=raw", FORMAT, id], src);
    const ps = [...new Set(parents.map((x) => mapped.get(x) ?? root))];
    mapped.set(id, await commitTree(await git(["rev-parse", `${id}^{tree}`], src), ps, meta + "\n"));
  }
  await git(["update-ref", "refs/heads/main", root], dir);
  await git(["update-ref", "refs/heads/topic", mapped.get(await git(["rev-parse", `${b}^{commit}`], src)) ?? root], dir);
  await git(["repack", "-a", "-d", "-q"], dir);
  rmSync(join(dir, "objects/info/alternates"));
  return dir;
}

interface Target {
  label: string;
  svc: SvcServer;
  cookie: string;
  token: string;
}

async function setUp(label: string, root: string, repos: Record<string, string>): Promise<Target> {
  const dir = join(work, label);
  mkdirSync(dir);
  const svc = await startSvc(dir, { SVC_LOG: "error" }, PROF ? ["--cpu-prof", `--cpu-prof-dir=${join(PROF, label)}`] : [], root);
  const f = await bootstrap(svc, { org: "bench", repo: "scratch" });
  const json = { "content-type": "application/json", authorization: `Bearer ${f.token}` };
  for (const [name, gitDir] of Object.entries(repos)) {
    const r = await fetch(`${svc.url}/v1/orgs/bench/repos`, { method: "POST", headers: json, body: JSON.stringify({ name }) });
    if (r.status !== 201) throw new Error(`create ${name}: ${r.status}`);
    await git(["push", "-q", `${svc.url.replace("://", `://x:${f.token}@`)}/bench/${name}.git`, "main", "topic"], gitDir);
  }
  const login = await fetch(`${svc.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  return { label, svc, cookie: login.headers.get("set-cookie")!.split(";")[0]!, token: f.token };
}

/** One request: milliseconds to the whole body, its size; null when the server has no such page (404). */
async function fetchOne(t: Target, path: string): Promise<{ ms: number; kb: number } | null> {
  const start = performance.now();
  const r = await fetch(t.svc.url + path, { headers: { cookie: t.cookie } });
  const body = await r.text();
  const ms = performance.now() - start;
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`${t.label} ${path}: ${r.status} ${body.slice(0, 300)}`);
  return { ms, kb: Math.round(Buffer.byteLength(body) / 1024) };
}

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: +at(50).toFixed(1), p99_ms: +at(99).toFixed(1), max_ms: +s[s.length - 1]!.toFixed(1) };
}

/** `reps` requests of `pathOf(i)` to every target in turn (after `warm` unmeasured ones), with the server's CPU per request. */
async function measure(targets: Target[], pathOf: (i: number) => string, reps: number, warm: number) {
  const out: Record<string, unknown> = {};
  const ms: number[][] = targets.map(() => []);
  const kb: number[] = targets.map(() => 0);
  const gone = targets.map(() => false);
  for (let i = 0; i < warm; i++) for (const [k, t] of targets.entries()) if ((await fetchOne(t, pathOf(i))) === null) gone[k] = true;
  const c0 = targets.map((t) => cpuSeconds(t.svc.pid));
  for (let i = 0; i < reps; i++) {
    for (const [k, t] of targets.entries()) {
      if (gone[k]) continue;
      const r = await fetchOne(t, pathOf(warm + i));
      if (!r) {
        gone[k] = true;
        continue;
      }
      ms[k]!.push(r.ms);
      kb[k] = r.kb;
    }
  }
  for (const [k, t] of targets.entries()) {
    out[t.label] = gone[k]
      ? { skipped: "404: this server has no such page" }
      : { ...stats(ms[k]!), server_cpu_ms_per_request: +(((cpuSeconds(t.svc.pid) - c0[k]!) * 1000) / reps).toFixed(1), kb: kb[k] };
  }
  return targets.length === 1 ? out[targets[0]!.label] : out;
}

/** C git on the local repository: each command `reps` times, a process each. */
async function cgit(dir: string, reps: number) {
  const cmds: Record<string, string[]> = {
    log: ["log", "main..topic"],
    diff_stat: ["diff", "--stat", "main...topic"],
    diff_patch: ["diff", "-p", "main...topic"],
  };
  const out: Record<string, unknown> = {};
  let sum = 0;
  for (const [name, args] of Object.entries(cmds)) {
    const ms: number[] = [];
    let cpuUs = 0;
    for (let i = 0; i < reps; i++) {
      const t = performance.now();
      const p = Bun.spawn(["git", ...args], { cwd: dir, stdout: "pipe", stderr: "ignore" });
      await new Response(p.stdout).arrayBuffer();
      if ((await p.exited) !== 0) throw new Error(`git ${args.join(" ")} failed`);
      ms.push(performance.now() - t);
      cpuUs += Number(p.resourceUsage()?.cpuTime.total ?? Number.NaN);
    }
    out[name] = { ...stats(ms), cpu_ms_per_run: +(cpuUs / 1000 / reps).toFixed(1) };
    sum += stats(ms).p50_ms;
  }
  out.sum_of_p50_ms = +sum.toFixed(1);
  return out;
}

const repos: Record<string, string> = {};
const shape: Record<string, unknown> = {};
if (ONLY.has("synthetic")) repos.synthetic = await syntheticRepo();
if (ONLY.has("real") && existsSync(REAL)) repos.real = await realRepo();
for (const [name, dir] of Object.entries(repos)) {
  shape[name] = {
    ahead: Number(await git(["rev-list", "--count", "main..topic"], dir)),
    behind: Number(await git(["rev-list", "--count", "topic..main"], dir)),
    shortstat: await git(["diff", "--shortstat", "main...topic"], dir),
  };
}
const targets = [await setUp("svc", ROOT, repos)];
if (BASELINE) targets.push(await setUp("baseline", resolve(BASELINE), repos));

const results: Record<string, unknown> = {
  machine: machine(),
  command: `bun ${process.argv
    .slice(1)
    .join(" ")
    .replace(ROOT + "/", "")}`,
  load_before: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
  shape,
};
for (const [name, dir] of Object.entries(repos)) {
  const page = `/bench/${name}/compare/main...topic`;
  const api = `/v1/orgs/bench/repos/${name}/compare/main...topic`;
  // Cold: each request a head the node has not diffed (the page's and the API's apart).
  results[name] = {
    page_first_request: await measure(targets, () => page, 1, 0),
    page_warm: await measure(targets, () => page, REPS, 3),
    page_cold: await measure(targets, (i) => `${page}~${i + 1}`, COLD, 0),
    api_warm: await measure(targets, () => api, REPS, 3),
    api_cold: await measure(targets, (i) => `${api}~${i + 1 + COLD}`, COLD, 0),
    c_git: await cgit(dir, Math.min(REPS, 20)),
  };
}
results.load_after = (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
console.log(JSON.stringify(results, null, 2));
if (OUT) writeFileSync(OUT, JSON.stringify(results, null, 2));
for (const t of targets) await t.svc.stop();
rmSync(work, { recursive: true, force: true });
