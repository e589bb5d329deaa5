// Web page server time (issue 19): the real server (`bun src/main.ts serve`, port 0, fs storage),
// repositories pushed with C git, pages fetched over loopback as a signed-in person. Each figure
// is the time from sending the request to having the whole body (p50/p99 over --reps), plus the
// server's CPU per page (from /proc, less sensitive to other load on a shared machine).
//   1. repository root of a 10,000-file repository: one flat directory, and 100 dirs × 100 files;
//   2. a 5,000-line TypeScript file, highlighted: warm (the same blob again: the highlight cache)
//      and cold (a different blob every time: the highlighter does the work); each case counts
//      the pages that came back highlighted;
//   3. a commit page whose diff is 50 files × 10 hunks;
//   4. the change page of the same diff;
//   5. (issue 28) a change of 300 files / ~5,100 changed lines with 200 comments and 5 reviews
//      posted through the API (150 line comments on 60 files, 20 of them suggestions, 30
//      replies, 20 general): the change page (`review`), its files tab (`review-files`, when the
//      server has one) and the diff API (`review-diff`); the first (uncached) request of each is
//      reported apart. Beside these cases a /healthz prober runs in its own process every 10 ms
//      (bench/lib/healthz-probe.ts) and the server's `svc_event_loop_delay_max_seconds` is read
//      (reset by the scrape before each case): the longest the loop was blocked during it.
//   6. (issue 28, `--only real-files,real-change`) a real history: `--real GITDIR` (default the
//      fetched mirror of git/git, /work/.mirror/git+git/repo) and `--real-range A..B` (default
//      v2.43.0..v2.43.1: 391 files, +1,996 −1,189): the commits of A..B replayed in order (same
//      trees, messages, authors and dates; merges kept, parents before A mapped to the root) on a
//      root commit holding A's tree, pushed as `main` (A) and `maint` (B); the change from maint
//      to main, its files tab (`real-files`) and conversation tab (`real-change`), probed as in 5.
//   7. (issue 33, `--only change-page,issue,runs,home,org`) pages the one repository layout and the
//      header changed: the 50-file change's conversation tab, an issue with a Markdown body and 20
//      comments, the (empty) runs list, the signed-in home page and the org page.
// Every probed case also reports the page's size (`page_kb`).
// --baseline DIR runs a second server from another checkout (e.g. an older commit unpacked with
// `git archive`, node_modules linked) with the same data; every case then fetches from both
// servers in turn, request by request, so both see the same load.
// Usage: bun bench/web.ts [--reps 200] [--cold 40] [--only flat,nested,warm,cold,commit,change,review,review-files,review-diff,real-files,real-change,
//                         change-page,issue,runs,home,org]
//                         [--real GITDIR] [--real-range A..B] [--baseline DIR] [--cpu-prof DIR] [--out FILE]
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
const REPS = Number(arg("reps", "200"));
const COLD = Number(arg("cold", "40"));
const OUT = arg("out", "");
const ONLY = new Set(arg("only", "flat,nested,warm,cold,commit,change,review,review-files,review-diff").split(","));
const METRICS_TOKEN = "bench-web-metrics";
const PROF = arg("cpu-prof", "");
const BASELINE = arg("baseline", "");

const REAL = arg("real", "/work/.mirror/git+git/repo");
const REAL_RANGE = arg("real-range", "v2.43.0..v2.43.1");
const REAL_CASES = ["real-files", "real-change"];

const work = mkdtempSync(join(tmpdir(), "svc-bench-web-"));

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

/** Builds a local repository from fast-import streams (once) and pushes its branches to a server. */
async function pushRepo(svc: SvcServer, name: string, streams: string, branches: string[], token: string): Promise<void> {
  const dir = join(work, `git-${name}`);
  if (!existsSync(dir)) {
    await git(["init", "-q", "--bare", dir], work);
    await git(["fast-import", "--quiet", "--done"], dir, streams + "done\n");
  }
  const url = `${svc.url.replace("://", `://x:${token}@`)}/bench/${name}.git`;
  await git(["push", "-q", url, ...branches], dir);
}

/**
 * A local repository holding the real range `A..B` of `REAL` replayed on a root commit with A's
 * tree (objects borrowed through alternates; commit ids differ, trees are the real ones): `main`
 * is the root, `maint` the replayed B. Built once per run.
 */
async function realRepo(): Promise<{ dir: string; commits: number; files: number; stat: string }> {
  const dir = join(work, "git-real");
  const [a, b] = REAL_RANGE.split("..") as [string, string];
  const src = resolve(REAL);
  await git(["init", "-q", "--bare", dir], work);
  writeFileSync(join(dir, "objects/info/alternates"), `${join(src, "objects")}\n`);
  const env = (c: Record<string, string>) => Object.entries(c);
  /** `git commit-tree` with the original commit's people, dates and message. */
  const commitTree = async (tree: string, parents: string[], meta: string): Promise<string> => {
    const [an, ae, ad, cn, ce, cd, ...msg] = meta.split("\u0000");
    const p = Bun.spawn(["git", "commit-tree", tree, ...parents.flatMap((x) => ["-p", x])], {
      cwd: dir,
      env: {
        ...process.env,
        ...Object.fromEntries(
          env({
            GIT_AUTHOR_NAME: an!,
            GIT_AUTHOR_EMAIL: ae!,
            GIT_AUTHOR_DATE: ad!,
            GIT_COMMITTER_NAME: cn!,
            GIT_COMMITTER_EMAIL: ce!,
            GIT_COMMITTER_DATE: cd!,
          }),
        ),
      },
      stdin: new TextEncoder().encode(msg.join("\u0000")),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`git commit-tree: ${err}`);
    return out.trim();
  };
  const FORMAT = "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%B";
  const root = await commitTree(await git(["rev-parse", `${a}^{tree}`], src), [], (await git(["log", "-1", "--date=raw", FORMAT, a], src)) + "\n");
  const mapped = new Map<string, string>();
  const list = (await git(["rev-list", "--reverse", "--topo-order", "--parents", `${a}..${b}`], src)).split("\n").filter(Boolean);
  for (const row of list) {
    const [id, ...parents] = row.split(" ") as [string, ...string[]];
    const meta = await git(["log", "-1", "--date=raw", FORMAT, id], src);
    const ps = [...new Set(parents.map((x) => mapped.get(x) ?? root))];
    mapped.set(id, await commitTree(await git(["rev-parse", `${id}^{tree}`], src), ps, meta + "\n"));
  }
  const tip = mapped.get(await git(["rev-parse", `${b}^{commit}`], src)) ?? root;
  await git(["update-ref", "refs/heads/main", root], dir);
  await git(["update-ref", "refs/heads/maint", tip], dir);
  // The pack pushed must not lean on the mirror: repack everything reachable into this repository.
  await git(["repack", "-a", "-d", "-q"], dir);
  rmSync(join(dir, "objects/info/alternates"));
  const stat = await git(["diff", "--shortstat", root, tip], dir);
  return { dir, commits: list.length, files: Number(/(\d+) files? changed/.exec(stat)?.[1] ?? 0), stat };
}

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
const lib = (v: number) =>
  Array.from({ length: 200 }, (_, l) => (l % 20 === 10 && v ? `export const line${l} = ${l * 2}; // changed` : `export const line${l} = ${l};`)).join("\n") +
  "\n";
for (let m = 0; m < 50; m++) code[`lib/m${String(m).padStart(2, "0")}.ts`] = lib(0);
const changed: Record<string, string> = {};
for (let m = 0; m < 50; m++) changed[`lib/m${String(m).padStart(2, "0")}.ts`] = lib(1);

// The review change: 300 files of 120 lines; on the branch each has 8 lines replaced and 1
// inserted (17 changed lines a file, 5,100 in all).
const REVIEW_FILES = 300;
const reviewBase: Record<string, string> = { "README.md": README };
const reviewHead: Record<string, string> = {};
const reviewPath = (i: number) => `src/mod${String(Math.floor(i / 30)).padStart(2, "0")}/file${String(i).padStart(3, "0")}.ts`;
for (let i = 0; i < REVIEW_FILES; i++) {
  const lines = Array.from({ length: 120 }, (_, l) => `export function f${i}_${l}(x: number): number { return x + ${l}; }\n`);
  reviewBase[reviewPath(i)] = lines.join("");
  const changed = lines.map((line, l) => (l % 14 === 5 ? `export function f${i}_${l}(x: number): number { return x * ${l}; } // reviewed\n` : line));
  changed.splice(60, 0, `// inserted in file ${i}\n`);
  reviewHead[reviewPath(i)] = changed.join("");
}
/** New-side line numbers of the changed lines of each file (1-based): the 8 replaced and the inserted one. */
const reviewLines = (() => {
  const out: number[] = [];
  for (let l = 0; l < 120; l++) if (l % 14 === 5) out.push(l < 60 ? l + 1 : l + 2);
  out.push(61);
  return out.sort((a, b) => a - b);
})();

const t0 = 1_790_000_000;
const streams = {
  flat: commitStream("refs/heads/main", flat, "flat", { mark: 1, time: t0 }),
  nested: commitStream("refs/heads/main", nested, "nested", { mark: 1, time: t0 }),
  code:
    commitStream("refs/heads/main", code, "code", { mark: 1, time: t0 }) +
    commitStream("refs/heads/feature", changed, "change 50 files", { mark: 2, from: ":1", time: t0 + 60 }),
  review:
    commitStream("refs/heads/main", reviewBase, "base", { mark: 1, time: t0 }) +
    commitStream("refs/heads/feature", reviewHead, "change 300 files", { mark: 2, from: ":1", time: t0 + 60 }),
};

/** A server with the bench's repositories and a signed-in person's cookie. */
interface Target {
  label: string;
  svc: SvcServer;
  cookie: string;
  feature: string;
  /** The number of the issue opened on `code` (with a Markdown body and comments). */
  issue: number;
  /** What was posted on the review change (comments refused by a server without the comments API are not counted). */
  review: { comments: number; reviews: number; setup_s: number };
  /** The real history's change (when asked for). */
  real?: { range: string; commits: number; files: number; stat: string; push_s: number };
}

/**
 * Posts the review change's 200 comments and 5 reviews as the bench person (a comment-type review:
 * the author cannot approve): 150 line comments on 60 files (20 suggestions), 30 replies, 20
 * general comments. Stops at the first refusal (a server without the comments API).
 */
async function postReview(svc: SvcServer, token: string): Promise<{ comments: number; reviews: number }> {
  const base = `${svc.url}/v1/orgs/bench/repos/review/changes/1`;
  const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };
  const post = async (path: string, body: unknown) => {
    const r = await fetch(base + path, { method: "POST", headers, body: JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  let comments = 0;
  const roots: string[] = [];
  for (let k = 0; k < 150; k++) {
    const file = reviewPath((k % 60) * 5);
    const line = reviewLines[Math.floor(k / 60) * 3 + (k % 3)]!;
    const body =
      k < 20
        ? `Better:\n\n\`\`\`suggestion\nexport function f${(k % 60) * 5}_x(x: number): number { return x - 1; }\n\`\`\`\n`
        : `Comment ${k} on this line: is the multiplication intended? See #1 and @bencher.`;
    const r = await post("/comments", { body, path: file, line, side: "new" });
    if (r.status !== 201) {
      console.error(`line comment refused: ${r.status} ${JSON.stringify(r.body)}`);
      return { comments, reviews: 0 };
    }
    roots.push(r.body.id);
    comments++;
  }
  for (let k = 0; k < 30; k++) {
    const r = await post("/comments", { body: `Reply ${k}: agreed, fixed in the next patchset.`, in_reply_to: roots[k * 5]! });
    if (r.status !== 201) throw new Error(`reply: ${r.status} ${JSON.stringify(r.body)}`);
    comments++;
  }
  for (let k = 0; k < 20; k++) {
    const r = await post("/comments", { body: `General remark ${k}: the change reads well overall; a few notes on the line comments.` });
    if (r.status !== 201) throw new Error(`general comment: ${r.status} ${JSON.stringify(r.body)}`);
    comments++;
  }
  let reviews = 0;
  for (let k = 0; k < 5; k++) {
    const r = await post("/reviews", { verdict: "comment", body: `Review ${k}: see the comments.` });
    if (r.status !== 201) {
      console.error(`review refused: ${r.status} ${JSON.stringify(r.body)}`);
      break;
    }
    reviews++;
  }
  return { comments, reviews };
}

/** Starts a server from checkout `root` and gives it the bench's data (the same commits every time). */
async function setUp(label: string, root: string): Promise<Target> {
  const dir = join(work, label);
  mkdirSync(dir);
  const svc = await startSvc(
    dir,
    { SVC_LOG: "error", SVC_METRICS_TOKEN: METRICS_TOKEN },
    PROF ? ["--cpu-prof", `--cpu-prof-dir=${join(PROF, label)}`] : [],
    root,
  );
  const f = await bootstrap(svc, { org: "bench", repo: "flat" });
  const json = { "content-type": "application/json", authorization: `Bearer ${f.token}` };
  for (const name of ["nested", "code", "review"]) {
    const r = await fetch(`${svc.url}/v1/orgs/bench/repos`, { method: "POST", headers: json, body: JSON.stringify({ name }) });
    if (r.status !== 201) throw new Error(`create ${name}: ${r.status}`);
  }
  const login = await fetch(`${svc.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  await pushRepo(svc, "flat", streams.flat, ["main"], f.token);
  await pushRepo(svc, "nested", streams.nested, ["main"], f.token);
  await pushRepo(svc, "code", streams.code, ["main", "feature"], f.token);
  const feature = (await (await fetch(`${svc.url}/v1/orgs/bench/repos/code/refs`, { headers: json })).json()).refs.find(
    (r: { name: string }) => r.name === "refs/heads/feature",
  ).target;
  const opened = await fetch(`${svc.url}/v1/orgs/bench/repos/code/changes`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ title: "Change 50 files", branch: "feature" }),
  });
  if (opened.status !== 201) throw new Error(`open change: ${opened.status} ${await opened.text()}`);
  // (issue 33) An issue with a Markdown body (a highlighted code block) and 20 comments, for `issue`.
  const issued = await fetch(`${svc.url}/v1/orgs/bench/repos/code/issues`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ title: "Upload fails on files over 2 GiB", body: `${README}\nSee #1 and @bencher.\n` }),
  });
  if (issued.status !== 201) throw new Error(`open issue: ${issued.status} ${await issued.text()}`);
  const issue = (await issued.json()).number as number;
  for (let k = 0; k < 20; k++) {
    const r = await fetch(`${svc.url}/v1/orgs/bench/repos/code/issues/${issue}/comments`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ body: `Comment ${k}: *seen* it too, see #1.\n\n\`\`\`ts\nconst n = ${k};\n\`\`\`\n` }),
    });
    if (r.status !== 201) throw new Error(`issue comment: ${r.status} ${await r.text()}`);
  }
  let review = { comments: 0, reviews: 0, setup_s: 0 };
  if (["review", "review-files", "review-diff"].some((k) => ONLY.has(k))) {
    const s0 = performance.now();
    await pushRepo(svc, "review", streams.review, ["main", "feature"], f.token);
    const r = await fetch(`${svc.url}/v1/orgs/bench/repos/review/changes`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ title: "Change 300 files", branch: "feature" }),
    });
    if (r.status !== 201) throw new Error(`open review change: ${r.status} ${await r.text()}`);
    review = { ...(await postReview(svc, f.token)), setup_s: +((performance.now() - s0) / 1000).toFixed(1) };
  }
  let real: Target["real"];
  if (REAL_CASES.some((k) => ONLY.has(k))) {
    const r = (realBuilt ??= realRepo());
    const built = await r;
    const create = await fetch(`${svc.url}/v1/orgs/bench/repos`, { method: "POST", headers: json, body: JSON.stringify({ name: "real" }) });
    if (create.status !== 201) throw new Error(`create real: ${create.status}`);
    const s0 = performance.now();
    await git(["push", "-q", `${svc.url.replace("://", `://x:${f.token}@`)}/bench/real.git`, "main", "maint"], built.dir);
    const push_s = +((performance.now() - s0) / 1000).toFixed(1);
    const opened = await fetch(`${svc.url}/v1/orgs/bench/repos/real/changes`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ title: `git ${REAL_RANGE}`, branch: "maint", description: `The real range ${REAL_RANGE} of git/git.` }),
    });
    if (opened.status !== 201) throw new Error(`open real change: ${opened.status} ${await opened.text()}`);
    real = { range: REAL_RANGE, commits: built.commits, files: built.files, stat: built.stat, push_s };
  }
  return { label, svc, cookie, feature, issue, review, real };
}
let realBuilt: ReturnType<typeof realRepo> | undefined;

const targets = [await setUp("svc", ROOT)];
if (BASELINE) targets.push(await setUp("baseline", resolve(BASELINE)));

/** Fetches a page as the signed-in person; answers the milliseconds to the whole body and whether it holds highlighted code. */
async function page(t: Target, path: string, expect = 200): Promise<{ ms: number; highlighted: boolean; kb: number }> {
  const start = performance.now();
  const r = await fetch(t.svc.url + path, { headers: { cookie: t.cookie } });
  const body = await r.text();
  const ms = performance.now() - start;
  if (r.status !== expect) throw new Error(`${t.label} ${path}: ${r.status} ${body.slice(0, 300)}`);
  return { ms, highlighted: /<span class="(hl(js)?-|[a-z]")/.test(body), kb: Math.round(Buffer.byteLength(body) / 1024) };
}

function stats(ms: number[], cpu: number, highlighted: number) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return {
    n: s.length,
    p50_ms: +at(50).toFixed(1),
    p99_ms: +at(99).toFixed(1),
    max_ms: +s[s.length - 1]!.toFixed(1),
    server_cpu_ms_per_page: +((cpu * 1000) / s.length).toFixed(1),
    pages_highlighted: highlighted,
  };
}

/** The server's svc_event_loop_delay_max_seconds in ms since the previous scrape (a scrape resets it). */
async function loopDelayMaxMs(t: Target): Promise<number | null> {
  const r = await fetch(`${t.svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const m = /^svc_event_loop_delay_max_seconds (\S+)$/m.exec(await r.text());
  return m ? +(Number(m[1]) * 1000).toFixed(1) : null;
}

/**
 * `measure` with a /healthz prober in its own process every 10 ms beside it (bench/lib/healthz-probe.ts)
 * and the server's event-loop delay gauge read over the case; also the first request's time (before
 * any warm-up: the diff not yet in the node's cache).
 */
async function probed(pathOf: (t: Target, i: number) => string, reps: number) {
  const firstPages = await Promise.all(targets.map(async (t) => page(t, pathOf(t, -1))));
  const first = targets.map((t, k) => [t.label, +firstPages[k]!.ms.toFixed(1)] as const);
  for (const t of targets) await loopDelayMaxMs(t);
  const probes = targets.map((t) =>
    Bun.spawn([process.execPath, join(ROOT, "bench/lib/healthz-probe.ts"), t.svc.url, "10"], { stdout: "pipe", stderr: "ignore" }),
  );
  const measured = await measure(pathOf, reps);
  const loop = await Promise.all(targets.map(loopDelayMaxMs));
  const healthz = await Promise.all(
    probes.map(async (p) => {
      p.kill();
      const lines = (await new Response(p.stdout).text()).trim().split("\n").filter(Boolean);
      const ms = lines.map((l) => JSON.parse(l).ms as number).sort((a, b) => a - b);
      return {
        n: ms.length,
        p50_ms: ms[Math.floor(ms.length / 2)] ?? null,
        p99_ms: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)] ?? null,
        max_ms: ms.at(-1) ?? null,
      };
    }),
  );
  const extra = targets.map((t, k) => ({
    first_request_ms: first[k]![1],
    page_kb: firstPages[k]!.kb,
    event_loop_delay_max_ms: loop[k],
    healthz_probe_10ms: healthz[k],
    ...(t.real ? { real: t.real } : {}),
    posted: t.review,
  }));
  if (targets.length === 1) return { ...(measured as object), ...extra[0] };
  return Object.fromEntries(targets.map((t, k) => [t.label, { ...(measured as Record<string, object>)[t.label], ...extra[k] }]));
}

/** `reps` fetches of the paths `pathOf(t, i)` gives from every target in turn, after `warm` unmeasured ones. */
async function measure(pathOf: (t: Target, i: number) => string, reps: number, warm = 5) {
  for (let i = 0; i < warm; i++) for (const t of targets) await page(t, pathOf(t, i));
  const c0 = targets.map((t) => cpuSeconds(t.svc.pid));
  const ms: number[][] = targets.map(() => []);
  const lit = targets.map(() => 0);
  for (let i = 0; i < reps; i++) {
    for (const [k, t] of targets.entries()) {
      const p = await page(t, pathOf(t, i));
      ms[k]!.push(p.ms);
      if (p.highlighted) lit[k]!++;
    }
  }
  const out = targets.map((t, k) => [t.label, stats(ms[k]!, cpuSeconds(t.svc.pid) - c0[k]!, lit[k]!)] as const);
  return out.length === 1 ? out[0]![1] : Object.fromEntries(out);
}

/** Each page's size in KB, from one target. */
async function sizesOf(t: Target): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [k, p] of Object.entries({
    flat: "/bench/flat",
    nested: "/bench/nested",
    file: "/bench/code/blob/main/src/big.ts",
    commit: `/bench/code/commit/${t.feature}`,
    change: "/bench/code/changes/1/files",
  })) {
    out[k] = Math.round((await (await fetch(t.svc.url + p, { headers: { cookie: t.cookie } })).text()).length / 1024);
  }
  return out;
}
const sizes = {
  html_kb: targets.length === 1 ? await sizesOf(targets[0]!) : Object.fromEntries(await Promise.all(targets.map(async (t) => [t.label, await sizesOf(t)]))),
};
const cases: [string, string, () => Promise<unknown>][] = [
  ["flat", "repo_root_flat_10k", () => measure(() => "/bench/flat", REPS)],
  ["nested", "repo_root_nested_10k", () => measure(() => "/bench/nested", REPS)],
  ["warm", "file_5000_lines_highlighted_warm", () => measure(() => "/bench/code/blob/main/src/big.ts", REPS)],
  ["cold", "file_5000_lines_highlighted_cold", () => measure((_, i) => `/bench/code/blob/main/cold/big-${i}.ts`, COLD, 0)],
  ["commit", "commit_diff_50_files", () => measure((t) => `/bench/code/commit/${t.feature}`, REPS)],
  ["change", "change_page_50_files", () => measure(() => "/bench/code/changes/1/files", REPS)],
  ["review", "review_change_page_300_files_200_comments", () => probed(() => "/bench/review/changes/1", REPS)],
  ["review-files", "review_files_tab_300_files_200_comments", () => probed(() => "/bench/review/changes/1/files", REPS)],
  ["review-diff", "review_diff_api_300_files", () => probed(() => "/v1/orgs/bench/repos/review/changes/1/diff", REPS)],
  // (issue 33, behind --only) pages the one repository layout and the header changed.
  ["change-page", "change_conversation_50_files", () => measure(() => "/bench/code/changes/1", REPS)],
  ["issue", "issue_page_20_comments", () => measure((t) => `/bench/code/issues/${t.issue}`, REPS)],
  ["runs", "runs_list_empty", () => measure(() => "/bench/code/runs", REPS)],
  ["home", "home_signed_in", () => measure(() => "/", REPS)],
  ["org", "org_page_4_repos", () => measure(() => "/bench", REPS)],
  ["real-files", "real_git_files_tab", () => probed(() => "/bench/real/changes/1/files", REPS)],
  ["real-change", "real_git_change_page", () => probed(() => "/bench/real/changes/1", REPS)],
];
const results: Record<string, unknown> = {
  machine: machine(),
  command: `bun ${process.argv
    .slice(1)
    .join(" ")
    .replace(ROOT + "/", "")}`,
  load_before: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
};
for (const [key, name, fn] of cases) {
  if (!ONLY.has(key)) continue;
  try {
    results[name] = await fn();
  } catch (e) {
    // A page this server does not have yet (e.g. the files tab before the review page landed).
    if (!key.startsWith("review") && !key.startsWith("real")) throw e;
    results[name] = { skipped: String(e).slice(0, 300) };
  }
}
Object.assign(results, sizes, { load_after: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ") });
console.log(JSON.stringify(results, null, 2));
if (OUT) writeFileSync(OUT, JSON.stringify(results, null, 2));
for (const t of targets) await t.svc.stop();
rmSync(work, { recursive: true, force: true });
