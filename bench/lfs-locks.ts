// What LFS lock enforcement costs a push (issue 31): the same big push into two repositories of
// one server, one without locks and one where another person holds `--locks` locks in the very
// directories the push rewrites (so the check must descend into them), runs interleaved.
//
//   bun bench/lfs-locks.ts [--dirs 200] [--files 100] [--locks 1000] [--reps 5] [--out FILE.json]
//
// The tree: `--dirs` directories of `--files` files. Each push rewrites every file but the last
// of each directory (19,800 paths by default); the locks sit on each directory's last file (not
// rewritten, so the push passes) and on paths that do not exist yet, up to `--locks`. A final
// push that also rewrites one locked file measures the time to the refusal.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc, type SvcAccount, type SvcServer } from "./lib/git-svc.ts";
import { machine } from "./lib/machine.ts";

const { values: args } = parseArgs({
  options: {
    dirs: { type: "string", default: "200" },
    files: { type: "string", default: "100" },
    locks: { type: "string", default: "1000" },
    reps: { type: "string", default: "5" },
    out: { type: "string" },
  },
});
const DIRS = Number(args.dirs);
const FILES = Number(args.files);
const LOCKS = Number(args.locks);
const REPS = Number(args.reps);
const WORK = join(ROOT, "bench/work/lfs-locks");
const LFS = "application/vnd.git-lfs+json";

async function sh(cmd: string[], opts: { cwd?: string; input?: string; ok?: boolean } = {}): Promise<{ code: number; stderr: string; seconds: number }> {
  const t0 = performance.now();
  const p = Bun.spawn(cmd, {
    cwd: opts.cwd,
    stdin: opts.input === undefined ? "ignore" : new TextEncoder().encode(opts.input),
    stdout: "ignore",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  if (code !== 0 && opts.ok !== false) throw new Error(`${cmd.join(" ")}: ${stderr.slice(-1000)}`);
  return { code, stderr, seconds: (performance.now() - t0) / 1000 };
}

/** One commit on `ref` (from `from`, if any) writing `paths` with `label` in each file. */
function commitStream(ref: string, mark: number, from: string | null, paths: string[], label: string): string {
  const lines = [`commit ${ref}`, `mark :${mark}`, `committer A <a@example.com> ${1_700_000_000 + mark} +0000`, "data 2", "c"];
  if (from) lines.push(`from ${from}`);
  for (const p of paths) {
    const body = `${label} ${p}\n`;
    lines.push(`M 100644 inline ${p}`, `data ${Buffer.byteLength(body)}`, body);
  }
  return `${lines.join("\n")}\n`;
}

const file = (d: number, f: number) => `d${d}/f${f}.bin`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A second member of the org with a repo:write token (the pusher; the bootstrap owner holds the locks). */
async function secondMember(svc: SvcServer, org: string): Promise<string> {
  const email = "pusher@example.com";
  const password = "correct horse battery staple";
  const made = await svc.cli(["user-create", "--org", org, "--email", email, "--name", "Pusher", "--password", password, "--role", "member"]);
  if (made.code !== 0) throw new Error(made.stderr);
  const login = await fetch(`${svc.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const minted = await fetch(`${svc.url}/v1/orgs/${org}/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie, origin: svc.url },
    body: JSON.stringify({ scopes: ["repo:write"], label: "pusher" }),
  });
  return ((await minted.json()) as { token: string }).token;
}

async function main() {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  const svc = await startSvc({ dataDir: join(WORK, "data"), log: "warn" });
  try {
    const owner: SvcAccount = await bootstrap(svc);
    const pusher: SvcAccount = { ...owner, token: await secondMember(svc, owner.org) };
    await createRepo(svc, owner, "plain");
    await createRepo(svc, owner, "locked");

    // The source: one commit with every file, then REPS commits each rewriting all but the last file of each directory.
    const src = join(WORK, "src.git");
    await sh(["git", "init", "-q", "--bare", src]);
    const all: string[] = [];
    const rewritten: string[] = [];
    for (let d = 0; d < DIRS; d++)
      for (let f = 0; f < FILES; f++) {
        all.push(file(d, f));
        if (f < FILES - 1) rewritten.push(file(d, f));
      }
    let stream = commitStream("refs/heads/main", 1, null, all, "base");
    for (let r = 1; r <= REPS; r++) stream += commitStream(`refs/heads/rep${r}`, r + 1, r === 1 ? ":1" : `:${r}`, rewritten, `rep ${r}`);
    // The refused push: the last rewrite plus one locked file.
    stream += commitStream("refs/heads/refused", REPS + 2, `:${REPS + 1}`, [file(0, FILES - 1)], "touch the lock");
    await sh(["git", "fast-import", "--quiet"], { cwd: src, input: `${stream}done\n` });
    for (const repo of ["plain", "locked"]) await sh(["git", "push", "-q", gitUrl(svc, owner, repo), "main:refs/heads/main"], { cwd: src });

    // The locks: each directory's last file (kept by the pushes), then absent paths in the same directories.
    const lockPaths: string[] = [];
    for (let d = 0; d < DIRS && lockPaths.length < LOCKS; d++) lockPaths.push(file(d, FILES - 1));
    for (let i = 0; lockPaths.length < LOCKS; i++) lockPaths.push(`d${i % DIRS}/absent-${i}.bin`);
    const auth = `Basic ${Buffer.from(`x:${owner.token}`).toString("base64")}`;
    for (const path of lockPaths) {
      const r = await fetch(`${svc.url}/${owner.org}/locked.git/info/lfs/locks`, {
        method: "POST",
        headers: { authorization: auth, "content-type": LFS },
        body: JSON.stringify({ path }),
      });
      if (r.status !== 201) throw new Error(`lock ${path}: ${r.status} ${await r.text()}`);
    }

    const times = { plain: [] as number[], locked: [] as number[] };
    for (let r = 1; r <= REPS; r++) {
      // Interleaved, alternating which goes first.
      const order = r % 2 ? ["plain", "locked"] : ["locked", "plain"];
      for (const repo of order)
        times[repo as "plain" | "locked"].push((await sh(["git", "push", "-q", gitUrl(svc, pusher, repo), `rep${r}:refs/heads/main`], { cwd: src })).seconds);
    }
    const refused = await sh(["git", "push", "-q", gitUrl(svc, pusher, "locked"), "refused:refs/heads/main"], { cwd: src, ok: false });
    if (refused.code === 0 || !refused.stderr.includes("is locked by")) throw new Error(`the push touching a lock was not refused: ${refused.stderr}`);

    const result = {
      machine: machine(),
      load_at_start: loadavg()[0],
      dirs: DIRS,
      files: DIRS * FILES,
      paths_rewritten_per_push: rewritten.length,
      locks: LOCKS,
      reps: REPS,
      push_s: { plain: times.plain, locked: times.locked },
      median_s: { plain: median(times.plain), locked: median(times.locked) },
      ratio_locked_over_plain: median(times.locked) / median(times.plain),
      refused_push_s: refused.seconds,
    };
    console.log(JSON.stringify(result, null, 2));
    if (args.out) writeFileSync(args.out, JSON.stringify(result, null, 2));
  } finally {
    await svc.stop();
  }
}

await main();
