// A push of many tags (issue 24 item 10: 2,000 tags took 1.4–1.9× C git's time), side by side
// with C git's own receive-pack behind `git http-backend` on this machine, runs interleaved.
//
//   bun bench/tag-push.ts [--tags 2000] [--reps 3] [--out FILE.json]
//
// The source: 2,000 commits, each with an annotated tag (fast-import). Each repetition pushes
// `--mirror` (every branch and tag) into a fresh empty repository on each side over HTTP.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnServer } from "./lib/proc.ts";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc } from "./lib/git-svc.ts";

const { values: args } = parseArgs({ options: { tags: { type: "string", default: "2000" }, reps: { type: "string", default: "3" }, out: { type: "string" } } });
const TAGS = Number(args.tags);
const REPS = Number(args.reps);
const WORK = join(ROOT, "bench/work/tag-push");

async function sh(cmd: string[], opts: { cwd?: string; input?: string } = {}): Promise<{ code: number; stderr: string; seconds: number }> {
  const t0 = performance.now();
  const p = Bun.spawn(cmd, {
    cwd: opts.cwd,
    stdin: opts.input === undefined ? "ignore" : new TextEncoder().encode(opts.input),
    stdout: "ignore",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")}: ${stderr.slice(-1000)}`);
  return { code, stderr, seconds: (performance.now() - t0) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(join(WORK, "served"), { recursive: true });
  const src = join(WORK, "src.git");
  await sh(["git", "init", "-q", "--bare", src]);
  const parts: string[] = [];
  for (let i = 1; i <= TAGS; i++) {
    const body = `file ${i}\n`;
    parts.push(
      "commit refs/heads/main",
      `mark :${i}`,
      `committer A <a@example.com> ${1_700_000_000 + i} +0000`,
      "data 2",
      "c",
      ...(i > 1 ? [`from :${i - 1}`] : []),
      `M 100644 inline f${i % 50}.txt`,
      `data ${body.length}`,
      body,
    );
    parts.push(`tag v${i}`, `from :${i}`, `tagger A <a@example.com> ${1_700_000_000 + i} +0000`, "data 2", "t");
  }
  await sh(["git", "fast-import", "--quiet"], { cwd: src, input: `${parts.join("\n")}\n` });
  const backend = await spawnServer([process.execPath, join(ROOT, "bench/lib/http-backend-server.ts"), join(WORK, "served")], {
    env: process.env as Record<string, string>,
    stderrFile: join(WORK, "origin.log"),
  });
  const svc = await startSvc({ dataDir: join(WORK, "svc"), log: "warn" });
  const results: { svc: number[]; cgit: number[] } = { svc: [], cgit: [] };
  const load0 = loadavg()[0]!;
  try {
    const acct = await bootstrap(svc, "bench");
    for (let k = 0; k < REPS; k++) {
      const bare = join(WORK, "served", `r${k}.git`);
      await sh(["git", "init", "-q", "--bare", bare]);
      await sh(["git", "-C", bare, "config", "http.receivepack", "true"]);
      results.cgit.push((await sh(["git", "-C", src, "push", "-q", "--mirror", `${backend.url}/r${k}.git`])).seconds);
      await createRepo(svc, acct, `r${k}`);
      results.svc.push((await sh(["git", "-C", src, "push", "-q", "--mirror", gitUrl(svc, acct, `r${k}`)])).seconds);
      console.error(`rep ${k}: cgit ${results.cgit[k]!.toFixed(2)} s, svc ${results.svc[k]!.toFixed(2)} s`);
    }
  } finally {
    await svc.stop();
    await backend.stop();
  }
  const summary = {
    tags: TAGS,
    reps: REPS,
    commit: (await Bun.$`git -C ${ROOT} rev-parse --short HEAD`.text()).trim(),
    load_1m: [Math.round(load0 * 100) / 100, Math.round(loadavg()[0]! * 100) / 100],
    cgit_s: results.cgit.map((x) => Math.round(x * 100) / 100),
    svc_s: results.svc.map((x) => Math.round(x * 100) / 100),
    ratio_of_medians: Math.round((median(results.svc) / median(results.cgit)) * 100) / 100,
  };
  console.log(JSON.stringify(summary));
  if (args.out) writeFileSync(args.out, JSON.stringify(summary, null, 2));
}

await main();
