// Web page server time (issue 19): the real server (`bun src/main.ts serve`, port 0, fs storage),
// repositories pushed with C git, pages fetched over loopback as a signed-in person. Each figure
// is the time from sending the request to having the whole body (p50/p99 over --reps), plus the
// server's CPU per page (from /proc, less sensitive to other load on a shared machine).
//   1. repository root of a 10,000-file repository: one flat directory, and 100 dirs × 100 files;
//   2. a 5,000-line TypeScript file, highlighted: warm (the same blob again: the highlight cache)
//      and cold (a different blob every time: highlight.js does the work);
//   3. a commit page whose diff is 50 files × 10 hunks;
//   4. the change page of the same diff.
// Usage: bun bench/web.ts [--reps 200] [--cold 40] [--only flat,nested,warm,cold,commit,change]
//                         [--cpu-prof DIR] [--out FILE]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
const REPS = Number(arg("reps", "200"));
const COLD = Number(arg("cold", "40"));
const OUT = arg("out", "");
const ONLY = new Set(arg("only", "flat,nested,warm,cold,commit,change").split(","));
const PROF = arg("cpu-prof", "");

const work = mkdtempSync(join(tmpdir(), "svc-bench-web-"));
const svc = await startSvc(work, { SVC_LOG: "error" }, PROF ? ["--cpu-prof", `--cpu-prof-dir=${PROF}`] : []);

/** A git fast-import stream of one commit holding `files` on `ref` (after `from`, when given). */
function commitStream(ref: string, files: Record<string, string>, message: string, o: { from?: string; mark: number; time: number }): string {
  const parts = [`commit ${ref}`, `mark :${o.mark}`, `committer Bench <bench@example.com> ${o.time} +0000`, `data ${Buffer.byteLength(message)}`, message];
  if (o.from) parts.push(`from ${o.from}`);
  for (const [path, text] of Object.entries(files)) parts.push(`M 100644 inline ${path}`, `data ${Buffer.byteLength(text)}`, text);
  return parts.join("\n") + "\n";
}

async function git(args: string[], cwd: string, input?: string): Promise<string> {
  const p = Bun.spawn(["git", ...args], { cwd, stdin: input === undefined ? "ignore" : new TextEncoder().encode(input), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args[0]}: ${err}`);
  return out.trim();
}

/** Builds a local repository from fast-import streams and pushes its branches to svc. */
async function pushRepo(name: string, streams: string, branches: string[], token: string): Promise<void> {
  const dir = join(work, `git-${name}`);
  await git(["init", "-q", "--bare", dir], work);
  await git(["fast-import", "--quiet", "--done"], dir, streams + "done\n");
  const url = `${svc.url.replace("://", `://x:${token}@`)}/bench/${name}.git`;
  await git(["push", "-q", url, ...branches], dir);
}

const f = await bootstrap(svc, { org: "bench", repo: "flat" });
const json = { "content-type": "application/json", authorization: `Bearer ${f.token}` };
for (const name of ["nested", "code"]) {
  const r = await fetch(`${svc.url}/v1/orgs/bench/repos`, { method: "POST", headers: json, body: JSON.stringify({ name }) });
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status}`);
}
const login = await fetch(`${svc.url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }) });
const cookie = login.headers.get("set-cookie")!.split(";")[0]!;

const README = "# Bench\n\nA repository for the web benchmark.\n\n- one\n- two\n\n```ts\nconst x = 1;\n```\n";
const flat: Record<string, string> = { "README.md": README };
for (let i = 0; i < 10_000; i++) flat[`f${String(i).padStart(5, "0")}.txt`] = `file ${i}\n`;
const nested: Record<string, string> = { "README.md": README };
for (let d = 0; d < 100; d++) for (let i = 0; i < 100; i++) nested[`d${String(d).padStart(2, "0")}/f${String(i).padStart(3, "0")}.txt`] = `file ${d}/${i}\n`;

// 5,000 lines of real TypeScript: this repository's own sources, concatenated.
const glob = new Bun.Glob("src/**/*.ts");
let ts = "";
for await (const path of glob.scan({ cwd: ROOT })) {
  ts += await Bun.file(join(ROOT, path)).text();
  if (ts.split("\n").length > 5000) break;
}
const big = ts.split("\n").slice(0, 5000).join("\n") + "\n";
const code: Record<string, string> = { "README.md": README, "src/big.ts": big };
for (let i = 0; i < COLD; i++) code[`cold/big-${i}.ts`] = `// variant ${i}\n` + big;
const lib = (v: number) => Array.from({ length: 200 }, (_, l) => (l % 20 === 10 && v ? `export const line${l} = ${l * 2}; // changed` : `export const line${l} = ${l};`)).join("\n") + "\n";
for (let m = 0; m < 50; m++) code[`lib/m${String(m).padStart(2, "0")}.ts`] = lib(0);
const changed: Record<string, string> = {};
for (let m = 0; m < 50; m++) changed[`lib/m${String(m).padStart(2, "0")}.ts`] = lib(1);

const t0 = 1_790_000_000;
await pushRepo("flat", commitStream("refs/heads/main", flat, "flat", { mark: 1, time: t0 }), ["main"], f.token);
await pushRepo("nested", commitStream("refs/heads/main", nested, "nested", { mark: 1, time: t0 }), ["main"], f.token);
await pushRepo("code", commitStream("refs/heads/main", code, "code", { mark: 1, time: t0 }) + commitStream("refs/heads/feature", changed, "change 50 files", { mark: 2, from: ":1", time: t0 + 60 }), ["main", "feature"], f.token);
const feature = (await (await fetch(`${svc.url}/v1/orgs/bench/repos/code/refs`, { headers: json })).json()).refs.find((r: { name: string }) => r.name === "refs/heads/feature").target;
const opened = await fetch(`${svc.url}/v1/orgs/bench/repos/code/changes`, { method: "POST", headers: json, body: JSON.stringify({ title: "Change 50 files", branch: "feature" }) });
if (opened.status !== 201) throw new Error(`open change: ${opened.status} ${await opened.text()}`);

/** Fetches a page as the signed-in person; answers the milliseconds to the whole body. */
async function page(path: string, expect = 200): Promise<number> {
  const t = performance.now();
  const r = await fetch(svc.url + path, { headers: { cookie } });
  const body = await r.text();
  const ms = performance.now() - t;
  if (r.status !== expect) throw new Error(`${path}: ${r.status} ${body.slice(0, 300)}`);
  return ms;
}

function stats(ms: number[], cpu: number) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: +at(50).toFixed(1), p99_ms: +at(99).toFixed(1), max_ms: +s[s.length - 1]!.toFixed(1), server_cpu_ms_per_page: +((cpu * 1000) / s.length).toFixed(1) };
}

/** `reps` fetches of the paths `pathOf(i)` gives, after `warm` unmeasured ones. */
async function measure(pathOf: (i: number) => string, reps: number, warm = 5) {
  for (let i = 0; i < warm; i++) await page(pathOf(i));
  const c0 = cpuSeconds(svc.pid);
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) ms.push(await page(pathOf(i)));
  return stats(ms, cpuSeconds(svc.pid) - c0);
}

const sizes = { html_kb: {} as Record<string, number> };
for (const [k, p] of Object.entries({ flat: "/bench/flat", nested: "/bench/nested", file: "/bench/code/blob/main/src/big.ts", commit: `/bench/code/commit/${feature}`, change: "/bench/code/changes/1" })) {
  sizes.html_kb[k] = Math.round((await (await fetch(svc.url + p, { headers: { cookie } })).text()).length / 1024);
}
const cases: [string, string, () => Promise<ReturnType<typeof stats>>][] = [
  ["flat", "repo_root_flat_10k", () => measure(() => "/bench/flat", REPS)],
  ["nested", "repo_root_nested_10k", () => measure(() => "/bench/nested", REPS)],
  ["warm", "file_5000_lines_highlighted_warm", () => measure(() => "/bench/code/blob/main/src/big.ts", REPS)],
  ["cold", "file_5000_lines_highlighted_cold", () => measure((i) => `/bench/code/blob/main/cold/big-${i}.ts`, COLD, 0)],
  ["commit", "commit_diff_50_files", () => measure(() => `/bench/code/commit/${feature}`, REPS)],
  ["change", "change_page_50_files", () => measure(() => "/bench/code/changes/1", REPS)],
];
const results: Record<string, unknown> = { machine: machine(), command: `bun ${process.argv.slice(1).join(" ").replace(ROOT + "/", "")}`, load_before: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ") };
for (const [key, name, fn] of cases) if (ONLY.has(key)) results[name] = await fn();
Object.assign(results, sizes, { load_after: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ") });
console.log(JSON.stringify(results, null, 2));
if (OUT) writeFileSync(OUT, JSON.stringify(results, null, 2));
await svc.stop();
rmSync(work, { recursive: true, force: true });
