// The home page with the richer activity feed (issue 33, bench/README.md §52), side by side with
// another checkout (`--baseline DIR`, e.g. main@dcddea6 unpacked with `git archive`): both real
// servers (`bun src/main.ts serve`, port 0, fs storage) get the same data, pushed with C git: 4
// repositories, 40 pushes of 1–5 commits each (main and topic branches, tags, a deleted branch),
// so the feed is full (30 entries) and every entry names its branch and commits. Then `/` (the
// home page), `/bench` (the org page, with its people) and `/avatars/bencher?v=i` are fetched as
// the signed-in person from each server in turn, request by request (p50/p99 over --reps, the
// server's CPU per page from /proc).
// Usage: bun bench/people-web.ts [--reps 300] [--baseline DIR] [--cpu-prof DIR] [--out FILE]
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
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
const REPS = Number(arg("reps", "300"));
const BASELINE = arg("baseline", "");
const OUT = arg("out", "");
const PROF = arg("cpu-prof", "");
const work = mkdtempSync(join(tmpdir(), "svc-bench-people-"));

async function git(args: string[], cwd: string): Promise<string> {
  const p = Bun.spawn(["git", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Bench",
      GIT_AUTHOR_EMAIL: "bench@example.com",
      GIT_COMMITTER_NAME: "Bench",
      GIT_COMMITTER_EMAIL: "bench@example.com",
    },
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")}: ${err}`);
  return out.trim();
}

interface Target {
  label: string;
  svc: SvcServer;
  cookie: string;
}

const REPOS = ["site", "api", "docs", "infra"];

/** A server with the bench's pushes; waits until the feed names what each push brought (when the server says that). */
async function setUp(label: string, root: string): Promise<Target> {
  const dir = join(work, label);
  mkdirSync(dir);
  const svc = await startSvc(dir, { SVC_LOG: "error" }, PROF ? ["--cpu-prof", `--cpu-prof-dir=${join(PROF, label)}`] : [], root);
  const f = await bootstrap(svc, { org: "bench", repo: REPOS[0]! });
  const json = { "content-type": "application/json", authorization: `Bearer ${f.token}` };
  for (const name of REPOS.slice(1)) {
    const r = await fetch(`${svc.url}/v1/orgs/bench/repos`, { method: "POST", headers: json, body: JSON.stringify({ name }) });
    if (r.status !== 201) throw new Error(`create ${name}: ${r.status}`);
  }
  const login = await fetch(`${svc.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  for (const repo of REPOS) {
    const wd = join(dir, `w-${repo}`);
    await git(["init", "-q", "-b", "main", wd], dir);
    const url = `${svc.url.replace("://", `://x:${f.token}@`)}/bench/${repo}.git`;
    for (let push = 0; push < 10; push++) {
      const branch = push % 3 === 2 ? `topic-${push}` : "main";
      if (branch !== "main") await git(["checkout", "-q", "-B", branch], wd);
      for (let c = 0; c <= push % 5; c++) {
        writeFileSync(join(wd, `f${push}-${c}.txt`), `${repo} ${push} ${c}\n`);
        await git(["add", "."], wd);
        await git(["commit", "-q", "-m", `${repo}: change ${push}.${c} of the bench history\n\nA body line that the feed does not show.`], wd);
      }
      await git(["push", "-q", url, branch], wd);
      if (push === 4) {
        await git(["tag", `v0.${push}`], wd);
        await git(["push", "-q", url, `v0.${push}`], wd);
      }
      if (branch !== "main") {
        await git(["push", "-q", url, `:refs/heads/${branch}`], wd);
        await git(["checkout", "-q", "main"], wd);
      }
    }
  }
  // The summaries are written by a job just after each push: wait until none is pending (a
  // baseline without them always says "pushed to").
  const deadline = Date.now() + 60_000;
  for (; root === ROOT; ) {
    const home = await (await fetch(`${svc.url}/`, { headers: { cookie } })).text();
    if (!/ pushed to <a/.test(home)) break;
    if (Date.now() > deadline) throw new Error(`${label}: pushes not summarised`);
    await Bun.sleep(100);
  }
  return { label, svc, cookie };
}

async function page(t: Target, path: string): Promise<{ ms: number; kb: number; entries: number }> {
  const start = performance.now();
  const r = await fetch(t.svc.url + path, { headers: { cookie: t.cookie } });
  const body = await r.text();
  const ms = performance.now() - start;
  if (r.status !== 200) throw new Error(`${t.label} ${path}: ${r.status} ${body.slice(0, 300)}`);
  return { ms, kb: +(Buffer.byteLength(body) / 1024).toFixed(1), entries: (body.match(/ <span class="muted">· <time /g) ?? []).length };
}

function stats(ms: number[], cpu: number) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: +at(50).toFixed(2), p99_ms: +at(99).toFixed(2), server_cpu_ms_per_page: +((cpu * 1000) / s.length).toFixed(2) };
}

async function measure(targets: Target[], path: string) {
  for (let i = 0; i < 10; i++) for (const t of targets) await page(t, path);
  const c0 = targets.map((t) => cpuSeconds(t.svc.pid));
  const ms: number[][] = targets.map(() => []);
  const last = targets.map(() => ({ kb: 0, entries: 0 }));
  for (let i = 0; i < REPS; i++)
    for (const [k, t] of targets.entries()) {
      const p = await page(t, path);
      ms[k]!.push(p.ms);
      last[k] = { kb: p.kb, entries: p.entries };
    }
  const out: Record<string, unknown> = {};
  for (const [k, t] of targets.entries())
    out[t.label] = { ...stats(ms[k]!, cpuSeconds(t.svc.pid) - c0[k]!), page_kb: last[k]!.kb, feed_entries: last[k]!.entries };
  if (targets.length === 2) {
    const [a, b] = targets.map((t) => (out[t.label] as { p50_ms: number }).p50_ms);
    out.p50_ratio = +(a! / b!).toFixed(3);
  }
  return out;
}

const targets: Target[] = [];
try {
  targets.push(await setUp("svc", ROOT));
  if (BASELINE) targets.push(await setUp("baseline", resolve(BASELINE)));
  const result = {
    bench: "people-web",
    machine: machine(),
    reps: REPS,
    home: await measure(targets, "/"),
    org: await measure(targets, "/bench"),
    avatar: await measure(targets.slice(0, 1), "/avatars/bencher?v=i"),
  };
  const text = JSON.stringify(result, null, 2);
  console.log(text);
  if (OUT) writeFileSync(OUT, text);
} finally {
  for (const t of targets) await t.svc.stop();
}
