// Blame (issue 33, bench/README.md § 47): the real server (`bun src/main.ts serve`, port 0, fs
// storage) with a generated repository pushed by C git: one 5,000-line TypeScript file and 2,000
// commits of history, each editing one to three lines (replaced, inserted or removed). Figures
// (time from sending the request to having the whole body, p50/p90):
//   - api-cold-server: GET …/blame/main?path=src/big.ts as the first request of a new server on the
//     same data, its stored blames deleted (nothing cached or stored: the thread opens the packs,
//     every version is read and diffed);
//   - api-cold-server-stored: the same first request of a new server, the blame stored by an earlier one;
//   - api-cold-key: on a running server (its thread warm), the blame at main~k for a new k each time,
//     going back in history (no blame of it or of any ancestor stored: the whole walk);
//   - api-after-push: the blame at main~k on a running server right after the one at main~(k+1)
//     (as if main~k had just been pushed: its parent's blame is stored, the walk is one diff);
//   - api-warm: the same request again (the node's blame cache);
//   - page-warm: the blame page /{org}/{repo}/blame/main/src/big.ts (cached blame and highlighting);
//   - git-blame: `git blame --porcelain main -- src/big.ts` on the pushed repository (C git, same machine, in turn with the server's requests);
//   - real: a real file of the fetched mirror of git/git (--real GITDIR, --real-file PATH, default
//     /work/.mirror/git+git/repo and blame.c): the engine in process over the mirror's pack beside
//     C git on the same repository, with how many lines both blame on the same commit.
// Every answer of the generated repository is also compared line by line with git's.
// Usage: bun bench/web-blame.ts [--reps 100] [--cold 5] [--keys 10] [--real GITDIR] [--real-file PATH] [--out FILE]
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blameFile } from "../src/git/blame.ts";
import { openFileSource } from "../src/git/file-source.ts";
import { PackIndex } from "../src/git/pack-index.ts";
import { Pack } from "../src/git/pack-reader.ts";
import { PackSet } from "../src/git/pack-set.ts";
import { BLAME_LIMITS } from "../src/services/git/blame.ts";
import { machine } from "./lib/machine.ts";
import { bootstrap, startSvc, type SvcServer } from "./lib/svc.ts";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const REPS = Number(arg("reps", "100"));
const COLD = Number(arg("cold", "5"));
const KEYS = Number(arg("keys", "10"));
const OUT = arg("out", "");
const REAL = arg("real", "/work/.mirror/git+git/repo");
const REAL_FILE = arg("real-file", "blame.c");
const LINES = 5000;
const COMMITS = 2000;
const FILE = "src/big.ts";

const work = mkdtempSync(join(tmpdir(), "svc-bench-blame-"));

async function git(args: string[], cwd: string, input?: string): Promise<string> {
  const p = Bun.spawn(["git", ...args], { cwd, stdin: input === undefined ? "ignore" : new TextEncoder().encode(input), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args[0]}: ${err}`);
  return out.trim();
}

/** mulberry32: the same history on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The fast-import stream of the history: COMMITS commits of FILE, each editing one to three lines. */
function history(): string {
  const rand = rng(47);
  const text = Array.from({ length: LINES }, (_, i) => `export const value${i} = compute(${Math.floor(rand() * 1e6)}, "${i}");`);
  const parts: string[] = [];
  const t0 = 1_700_000_000;
  for (let c = 1; c <= COMMITS; c++) {
    if (c > 1) {
      const n = 1 + Math.floor(rand() * 3);
      for (let k = 0; k < n; k++) {
        const at = Math.floor(rand() * text.length);
        const r = rand();
        if (r < 0.6) text[at] = `export const edited${c}_${k} = ${Math.floor(rand() * 1e9)};`;
        else if (r < 0.8) text.splice(at, 0, `// added in ${c}.${k}`);
        else text.splice(at, 1);
      }
    }
    const body = `${text.join("\n")}\n`;
    const msg = `Edit ${c}: a few lines\n`;
    const who = `Dev ${c % 7} <dev${c % 7}@example.com> ${t0 + c * 60} +0000`;
    parts.push(`commit refs/heads/main\nmark :${c}\nauthor ${who}\ncommitter ${who}\ndata ${Buffer.byteLength(msg)}\n${msg}`);
    if (c > 1) parts.push(`from :${c - 1}\n`);
    parts.push(`M 100644 inline ${FILE}\ndata ${Buffer.byteLength(body)}\n${body}\n`);
  }
  return `${parts.join("")}done\n`;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const row = (name: string, xs: number[]) => ({ case: name, n: xs.length, p50_ms: +pct(xs, 50).toFixed(1), p90_ms: +pct(xs, 90).toFixed(1) });

/** Per line, the commit `git blame --porcelain` names. */
function porcelain(out: string): string[] {
  const shas: string[] = [];
  for (const line of out.split("\n")) {
    const m = /^([0-9a-f]{40}) \d+ (\d+)/.exec(line);
    if (m) shas[Number(m[2]) - 1] = m[1]!;
  }
  return shas;
}

function perLine(ranges: { start: number; count: number; commit: string | { sha: string } }[]): string[] {
  const out: string[] = [];
  for (const r of ranges) for (let i = 0; i < r.count; i++) out[r.start - 1 + i] = typeof r.commit === "string" ? r.commit : r.commit.sha;
  return out;
}

const agree = (a: string[], b: string[]) => a.filter((x, i) => x === b[i]).length;

async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; body: string; status: number }> {
  const t = performance.now();
  const r = await fetch(url, { headers });
  const body = await r.text();
  return { ms: performance.now() - t, body, status: r.status };
}

async function gitBlameMs(dir: string, rev: string, path: string): Promise<{ ms: number; out: string }> {
  const t = performance.now();
  const out = await git(["blame", "--porcelain", rev, "--", path], dir);
  return { ms: performance.now() - t, out };
}

/** The packs of a bare repository, opened in this process. */
async function openPacks(dir: string): Promise<{ set: PackSet; close(): Promise<void> }> {
  const packDir = join(dir, "objects", "pack");
  const names = (await Array.fromAsync(new Bun.Glob("*.idx").scan(packDir))).sort();
  const packs: Pack[] = [];
  const sources: { close(): Promise<void> }[] = [];
  for (const n of names) {
    const idx = PackIndex.parse(new Uint8Array(await Bun.file(join(packDir, n)).arrayBuffer()));
    const source = await openFileSource(join(packDir, n.replace(/\.idx$/, ".pack")));
    sources.push(source);
    packs.push(new Pack(idx.packChecksum, idx, source));
  }
  return { set: new PackSet(packs), close: async () => void (await Promise.all(sources.map((s) => s.close()))) };
}

async function main() {
  const results: Record<string, unknown>[] = [];
  const notes: string[] = [];
  const bare = join(work, "git-blame");
  await git(["init", "-q", "--bare", bare], work);
  const t0 = performance.now();
  await git(["fast-import", "--quiet", "--done"], bare, history());
  await git(["repack", "-a", "-d", "-q"], bare);
  notes.push(`generated ${COMMITS} commits of a ${LINES}-line file in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const svcDir = join(work, "svc");
  let svc: SvcServer = await startSvc(svcDir, { SVC_LOG: "error" });
  const fx = await bootstrap(svc, { org: "bench", repo: "blame" });
  await git(["push", "-q", `${svc.url.replace("://", `://x:${fx.token}@`)}/bench/blame.git`, "main"], bare);
  const auth = { authorization: `Bearer ${fx.token}` };
  const api = (rev: string) => `/v1/orgs/bench/repos/blame/blame/${encodeURIComponent(rev)}?path=${encodeURIComponent(FILE)}`;

  // Cold: the first request of a new server on the same data, nothing stored (stored blames deleted).
  const repos = join(svc.dataDir, "objects", "repos");
  const blameDirs = () =>
    readdirSync(repos)
      .map((id) => join(repos, id, "blame"))
      .filter((d) => existsSync(d));
  const gitTimes: number[] = [];
  const cold: number[] = [];
  const theirs = porcelain((await gitBlameMs(bare, "main", FILE)).out);
  for (let i = 0; i < COLD; i++) {
    await svc.stop();
    for (const d of blameDirs()) rmSync(d, { recursive: true, force: true });
    svc = await startSvc(svcDir, { SVC_LOG: "error" });
    const r = await timed(`${svc.url}${api("main")}`, auth);
    if (r.status !== 200) throw new Error(`blame answered ${r.status}: ${r.body.slice(0, 300)}`);
    cold.push(r.ms);
    gitTimes.push((await gitBlameMs(bare, "main", FILE)).ms);
    const body = JSON.parse(r.body) as { ranges: { start: number; count: number; commit: { sha: string } }[]; truncated: boolean };
    if (i === 0)
      notes.push(`main: ${agree(perLine(body.ranges), theirs)} of ${theirs.length} lines blamed on the same commit as git blame; truncated: ${body.truncated}`);
  }
  results.push(row("api-cold-server (nothing stored: the whole walk)", cold));
  notes.push(`stored blames: ${blameDirs().length} dir(s) after the cold runs`);

  // Cold, stored: the first request of a new server, the blame stored by an earlier one.
  const coldStored: number[] = [];
  for (let i = 0; i < COLD; i++) {
    await svc.stop();
    svc = await startSvc(svcDir, { SVC_LOG: "error" });
    const r = await timed(`${svc.url}${api("main")}`, auth);
    coldStored.push(r.ms);
    if (agree(perLine((JSON.parse(r.body) as { ranges: { start: number; count: number; commit: { sha: string } }[] }).ranges), theirs) !== theirs.length)
      throw new Error("the stored blame differs from git's");
  }
  results.push(row("api-cold-server-stored (a new server, the blame in storage)", coldStored));

  // Cold key: a running server, a commit nobody blamed whose ancestors nobody blamed either (older
  // and older commits: a stored blame is of a descendant, which the walk never reaches).
  const coldKey: number[] = [];
  let coldAgree = 0;
  let coldLines = 0;
  for (let k = 20; k < 20 + KEYS; k++) {
    const rev = `main~${k}`;
    const r = await timed(`${svc.url}${api(rev)}`, auth);
    coldKey.push(r.ms);
    const g = await gitBlameMs(bare, rev, FILE);
    gitTimes.push(g.ms);
    const body = JSON.parse(r.body) as { ranges: { start: number; count: number; commit: { sha: string } }[]; walked?: number };
    const want = porcelain(g.out);
    coldAgree += agree(perLine(body.ranges), want);
    coldLines += want.length;
  }
  notes.push(`main~20..main~${19 + KEYS} cold on a running server: ${coldAgree} of ${coldLines} lines blamed on the same commit as git blame`);
  results.push(row("api-cold-key (a running server, nothing stored: the whole walk)", coldKey));

  // After a push: main~(k+1) blamed (and stored), then main~k, as if main~k had just been pushed.
  const afterPush: number[] = [];
  const pushTimes: number[] = [];
  let keyAgree = 0;
  let keyLines = 0;
  const base = await timed(`${svc.url}${api(`main~${KEYS + 1}`)}`, auth);
  notes.push(`main~${KEYS + 1} (the base of the push case, a whole walk on a warm server): ${base.ms.toFixed(0)} ms`);
  for (let k = KEYS; k >= 1; k--) {
    const rev = `main~${k}`;
    const r = await timed(`${svc.url}${api(rev)}`, auth);
    afterPush.push(r.ms);
    pushTimes.push(Math.round(r.ms));
    const g = await gitBlameMs(bare, rev, FILE);
    gitTimes.push(g.ms);
    const want = porcelain(g.out);
    keyAgree += agree(perLine((JSON.parse(r.body) as { ranges: { start: number; count: number; commit: { sha: string } }[] }).ranges), want);
    keyLines += want.length;
  }
  notes.push(`after-push times in order (ms): ${pushTimes.join(", ")}`);
  notes.push(`main~${KEYS}..main~1 after a push: ${keyAgree} of ${keyLines} lines blamed on the same commit as git blame`);
  results.push(row("api-after-push (a new commit whose parent's blame is stored)", afterPush));

  const warm: number[] = [];
  for (let i = 0; i < REPS; i++) warm.push((await timed(`${svc.url}${api("main")}`, auth)).ms);
  results.push(row("api-warm", warm));

  // The page, signed in (a session cookie from the bench user's password).
  const login = await fetch(`${svc.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  const cookie = { cookie: login.headers.get("set-cookie")!.split(";")[0]! };
  const pageUrl = `${svc.url}/bench/blame/blame/main/${FILE}`;
  const firstPage = await timed(pageUrl, cookie);
  if (firstPage.status !== 200) throw new Error(`page answered ${firstPage.status}`);
  notes.push(`page: ${Math.round(firstPage.body.length / 1024)} KiB, first view ${firstPage.ms.toFixed(0)} ms (highlighting ${LINES} lines)`);
  const pageWarm: number[] = [];
  for (let i = 0; i < Math.min(REPS, 40); i++) pageWarm.push((await timed(pageUrl, cookie)).ms);
  results.push(row("page-warm", pageWarm));
  results.push(row("git-blame (C git)", gitTimes));
  await svc.stop();

  // The engine alone, in this process, over the generated repository's pack: its first run (the
  // code not yet compiled), then warm; CPU time beside wall time (the steadier figure on a shared box).
  {
    const { set, close } = await openPacks(bare);
    const tip = await git(["rev-parse", "main"], bare);
    const first: number[] = [];
    const warmRuns: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < 1 + Math.min(REPS, 10); i++) {
      const c0 = process.cpuUsage();
      const t = performance.now();
      const o = await blameFile(new PackSet(set.packs), tip, FILE.split("/"), BLAME_LIMITS);
      (i === 0 ? first : warmRuns).push(performance.now() - t);
      const c = process.cpuUsage(c0);
      if (i > 0) cpu.push((c.user + c.system) / 1000);
      if (i === 0 && o.kind === "ok" && agree(perLine(o.ranges), theirs) !== theirs.length) throw new Error("the engine differs from git blame");
    }
    results.push(row("engine in process, first run (no JIT yet)", first));
    results.push(row("engine in process, warm", warmRuns));
    results.push(row("engine in process, warm: CPU ms (all threads)", cpu));
    await close();
  }

  // A real file: the engine over the mirror's pack in this process, beside C git.
  if (existsSync(REAL)) {
    const { set, close } = await openPacks(REAL);
    const head = await git(["rev-parse", "HEAD"], REAL);
    const ours: number[] = [];
    const theirsReal: number[] = [];
    let outcome: Awaited<ReturnType<typeof blameFile>> | null = null;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      outcome = await blameFile(set, head, REAL_FILE.split("/"), BLAME_LIMITS);
      ours.push(performance.now() - t);
      theirsReal.push((await gitBlameMs(REAL, head, REAL_FILE)).ms);
    }
    const want = porcelain((await gitBlameMs(REAL, head, REAL_FILE)).out);
    if (outcome?.kind === "ok") {
      notes.push(
        `real ${REAL_FILE} at ${head.slice(0, 10)}: ${outcome.lines} lines, ${outcome.walked} commits walked, truncated ${outcome.truncated}; ${agree(perLine(outcome.ranges), want)} of ${want.length} lines on the same commit as git blame`,
      );
    }
    results.push(row(`real ${REAL_FILE}: engine (first run cold)`, ours));
    results.push(row(`real ${REAL_FILE}: C git`, theirsReal));
    await close();
  } else notes.push(`no ${REAL}: the real-file case was skipped`);

  const report = { machine: machine(), command: `bun bench/web-blame.ts ${process.argv.slice(2).join(" ")}`.trim(), results, notes };
  console.log(JSON.stringify(report, null, 2));
  if (OUT) writeFileSync(OUT, JSON.stringify(report, null, 2));
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
