// README rendering (issue 33, bench/README §51), two parts, each this tree beside `--baseline DIR`
// (a checkout of the previous main, e.g. `git -C /work/main archive dcddea6 | tar -x -C DIR` with
// node_modules symlinked) in one run:
//   1. in process: a generated README of ~500 KiB (headings, prose with links and emphasis, lists,
//      tables, task lists, inline HTML, fences in TypeScript, Python, shell and Ruby) rendered by
//      each tree's markdownToHtml; this tree both without highlighting (the event loop's path)
//      and with it (the thread's path); `--reps` rounds, interleaved; wall and CPU ms p50;
//   2. the real server (`bun src/main.ts serve`) of each tree: the repository page with that
//      README, sequential GETs (p50/p99 ms), then the page of a hostile README (the test corpus
//      repeated, 3,000 nested details, a 100 KiB fence of a backtracking-prone fragment) fetched
//      `--reps` times while bench/lib/healthz-probe.ts probes /healthz every 50 ms: the probe's
//      p50/p99/max says whether the rendering ever holds the event loop.
//
//   bun bench/web-markdown.ts --baseline DIR [--reps 15] [--out FILE]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { HOSTILE } from "../test/fixtures/markdown/hostile.ts";
import { machine } from "./lib/machine.ts";
import { BUN, ROOT, run } from "./lib/proc.ts";
import { bootstrap, startSvc, type SvcServer } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: { baseline: { type: "string", default: "" }, reps: { type: "string", default: "15" }, out: { type: "string", default: "" } },
});
if (!opt.baseline) throw new Error("--baseline DIR is required (a checkout of the previous main)");
const BASE = opt.baseline;
const REPS = Number(opt.reps);
const work = mkdtempSync(join(tmpdir(), "svc-bench-md-"));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor(s.length * p))]!.toFixed(1);
};

/** A deterministic README of about `bytes`: sections of prose, lists, tables, HTML and fences. */
function bigReadme(bytes: number): string {
  const words = "the server renders markdown with sanitized html and highlighted code for every repository page quickly".split(" ");
  let seed = 51;
  const next = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed;
  };
  const sentence = () => Array.from({ length: 8 + (next() % 12) }, () => words[next() % words.length]).join(" ");
  const code = {
    ts: "export function add(a: number, b: number): number {\n  // add two numbers\n  return a + b; /* inline */\n}\nconst s = `template ${add(1, 2)}`;\n",
    py: 'def greet(name: str) -> str:\n    """Say hi."""\n    return f"hi {name}"  # comment\n',
    bash: 'for f in *.md; do\n  echo "$f" | grep -q README && cat "$f"\ndone\n',
    ruby: 'class Greeter\n  def initialize(name) = @name = name\n  def hi; puts "hi #{@name}"; end\nend\n',
  };
  const parts: string[] = ["# Generated README\n\n## Contents\n"];
  for (let i = 0; i < 40; i++) parts.push(`- [Section ${i}](#section-${i})\n`);
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const lang = (["ts", "py", "bash", "ruby"] as const)[i % 4]!;
    const block = `\n## Section ${i}\n\n${sentence()} [a link](docs/page-${i}.md) and **${sentence()}** with \`code\`.\n\n- ${sentence()}\n- [ ] ${sentence()}\n- [x] ${sentence()}\n\n| Name | Value |\n|:-----|------:|\n| a${i} | ${i} |\n| b${i} | ${i * 2} |\n\n<details><summary>More about ${i}</summary>\n\n${sentence()}\n\n</details>\n\n<img src="img/${i}.png" alt="figure ${i}" width="320">\n\n\`\`\`${lang}\n${code[lang].repeat(3)}\`\`\`\n\n> ${sentence()}\n`;
    parts.push(block);
    size += block.length;
  }
  return parts.join("");
}

/** The hostile README: the test corpus repeated, deep nesting, and a long fence of a fragment grammars backtrack on. */
function hostileReadme(): string {
  const corpus = Object.values(HOSTILE).join("\n\n");
  // Under MARKDOWN_LIMIT (512 KiB), so it is rendered, not shown as text.
  return `# Hostile\n\n${Array.from({ length: 30 }, () => corpus).join("\n\n")}\n\n${"<details><summary>d</summary>".repeat(3000)}deep${"</details>".repeat(3000)}\n\n\`\`\`html\n${"<a b=".repeat(20_000)}\n\`\`\`\n`;
}

const README = bigReadme(500 * 1024);
const EVIL = hostileReadme();
console.log(JSON.stringify({ machine: machine(), load: load(), readme_bytes: README.length, hostile_bytes: EVIL.length }));

// ---- 1. in process ----
type Render = (source: string, base: { repo: string; ref: string; dir: string }, o?: unknown) => string;
const after = (await import(join(ROOT, "src/http/web/kit/markdown.ts"))) as { markdownToHtml: Render };
const fence = (await import(join(ROOT, "src/http/web/repos/markdown-fence.ts"))) as { FENCE_HIGHLIGHTER: unknown };
const before = (await import(join(BASE, "src/http/web/kit/markdown.ts"))) as { markdownToHtml: Render };
const base = { repo: "/o/r", ref: "main", dir: "" };
const shapes: Record<string, () => string> = {
  before: () => before.markdownToHtml(README, base),
  after_plain: () => after.markdownToHtml(README, base, { fence: null }),
  after_highlighted: () => after.markdownToHtml(README, base, { fence: fence.FENCE_HIGHLIGHTER }),
};
const wall: Record<string, number[]> = {};
const cpu: Record<string, number[]> = {};
const outBytes: Record<string, number> = {};
for (const k of Object.keys(shapes)) shapes[k]!(); // warm-up
for (let r = 0; r < REPS; r++)
  for (const [k, f] of Object.entries(shapes)) {
    const c = cpuMs();
    const t = performance.now();
    outBytes[k] = f().length;
    (wall[k] ??= []).push(performance.now() - t);
    (cpu[k] ??= []).push(cpuMs() - c);
  }
const inProcess = Object.fromEntries(Object.keys(shapes).map((k) => [k, { wall_p50: pct(wall[k]!, 0.5), cpu_p50: pct(cpu[k]!, 0.5), out_bytes: outBytes[k] }]));
console.log(JSON.stringify({ part: "in-process", reps: REPS, load: load(), ...inProcess }));

// ---- 2. the server ----
async function push(s: SvcServer, token: string, org: string, repo: string, files: Record<string, string>): Promise<void> {
  const dir = mkdtempSync(join(work, "git-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const env = { ...process.env, GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@x", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@x" };
  const u = new URL(s.url);
  for (const cmd of [
    ["git", "init", "-q", "-b", "main", dir],
    ["git", "-C", dir, "add", "-A"],
    ["git", "-C", dir, "commit", "-q", "-m", "readme"],
    ["git", "-C", dir, "push", "-q", `${u.protocol}//x-token:${token}@${u.host}/${org}/${repo}.git`, "main"],
  ]) {
    const r = await run(cmd, env as Record<string, string>);
    if (r.code !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr}`);
  }
}

async function serverSide(label: string, root: string) {
  const dir = mkdtempSync(join(work, `${label}-`));
  const s = await startSvc(dir, {}, [], root);
  try {
    const f = await bootstrap(s, { org: "bench", repo: "big" });
    const auth = { authorization: `Bearer ${f.token}` };
    const create = await fetch(`${s.url}/v1/orgs/bench/repos`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "evil" }),
    });
    if (create.status !== 201) throw new Error(`create evil: ${create.status}`);
    await push(s, f.token, "bench", "big", { "README.md": README });
    await push(s, f.token, "bench", "evil", { "README.md": EVIL });
    const get = async (path: string) => {
      const t = performance.now();
      const res = await fetch(`${s.url}${path}`, { headers: auth });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
      return { ms: performance.now() - t, html: text };
    };
    const first = await get("/bench/big");
    const times: number[] = [];
    for (let i = 0; i < 3; i++) await get("/bench/big");
    for (let i = 0; i < REPS; i++) times.push((await get("/bench/big")).ms);
    // The probe in its own process, every 50 ms, while the hostile page is fetched again and again.
    const probe = Bun.spawn([BUN, join(ROOT, "bench/lib/healthz-probe.ts"), s.url, "50"], { stdout: "pipe", stderr: "ignore" });
    await Bun.sleep(500);
    const evil: number[] = [];
    let evilHtml = "";
    for (let i = 0; i < REPS; i++) {
      const r = await get("/bench/evil");
      evil.push(r.ms);
      evilHtml = r.html;
    }
    await Bun.sleep(200);
    probe.kill();
    const probes = (await new Response(probe.stdout).text())
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { ms: number; error?: string });
    const ms = probes.map((p) => p.ms);
    return {
      side: label,
      readme_page: {
        first_ms: +first.ms.toFixed(1),
        p50: pct(times, 0.5),
        p99: pct(times, 0.99),
        highlighted: /class="(hl-kwd|k)"/.test(first.html),
        details_as_html: first.html.includes("<details>"),
      },
      hostile_page: {
        p50: pct(evil, 0.5),
        max: pct(evil, 1),
        shown_as: evilHtml.includes('id="user-content-hostile"') || evilHtml.includes("<h1>Hostile</h1>") ? "rendered" : "text",
      },
      healthz_during_hostile: { probes: ms.length, errors: probes.filter((p) => p.error).length, p50: pct(ms, 0.5), p99: pct(ms, 0.99), max: pct(ms, 1) },
      load: load(),
    };
  } finally {
    await s.stop();
  }
}

const sides = [await serverSide("before", BASE), await serverSide("after", ROOT)];
for (const r of sides) console.log(JSON.stringify({ part: "server", ...r }));
const result = { machine: machine(), reps: REPS, in_process: inProcess, server: sides };
if (opt.out) writeFileSync(opt.out, JSON.stringify(result, null, 2));
rmSync(work, { recursive: true, force: true });
