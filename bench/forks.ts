// Forks of a large repository (issue 15): time from POST …/forks to fork_state `ready`, and how
// much storage (object store and database) each fork adds. Starts the real server, pushes a real
// repository once (default git.git's branches and tags from the local mirror), forks it N times,
// clones one fork, and prints a JSON summary. Side by side, C git's nearest equivalent of a
// copy-free fork on the same machine: `git clone --bare --shared` of the same local repository.
//
//   bun bench/forks.ts [--source /work/.mirror/git+git/repo] [--forks 5] [--refs 'refs/heads/*,refs/tags/*']
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { client, createUser, login, startServer } from "../test/helpers/server.ts";

const { values: args } = parseArgs({
  options: {
    source: { type: "string", default: "/work/.mirror/git+git/repo" },
    forks: { type: "string", default: "5" },
    refs: { type: "string", default: "refs/heads/*,refs/tags/*" },
    clone: { type: "boolean", default: true },
  },
});

function du(dir: string): number {
  let n = 0;
  try {
    for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? du(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  } catch {}
  return n;
}

async function git(argv: string[], cwd?: string): Promise<number> {
  const t = performance.now();
  const p = Bun.spawn(["git", ...argv], { cwd, stdout: "ignore", stderr: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`git ${argv.join(" ")}: ${err}`);
  return performance.now() - t;
}

const MiB = 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), "svc-bench-forks-"));
const server = await startServer({ dataDir: join(work, "data") });
try {
  const u = await createUser(server, { org: "big", email: "bench@example.com", handle: "bencher" });
  const cookie = await login(server, "bench@example.com", u.password);
  const api = client(server, { cookie });
  const post = (p: string, b: unknown) => api.post(p, b, { origin: server.url });
  const token = (await post("/v1/orgs/big/tokens", { scopes: ["repo:write"], label: "bench" })).body.token as string;
  if ((await post("/v1/orgs/big/repos", { name: "git", public: true })).status !== 201) throw new Error("repo create failed");
  const url = `${server.url.replace("://", `://x:${token}@`)}/big/git.git`;
  const specs = args.refs.split(",").map((r) => `+${r}:${r}`);
  const pushMs = await git(["push", "-q", url, ...specs], args.source);
  const objects = join(server.dataDir, "objects");
  const parentBytes = du(objects);
  const n = Number(args.forks);
  const readyMs: number[] = [];
  const objectGrowth: number[] = [];
  const dbGrowth: number[] = [];
  for (let i = 0; i < n; i++) {
    const beforeObjects = du(objects);
    const beforeDb = du(server.dataDir) - beforeObjects;
    const t = performance.now();
    const r = await post("/v1/orgs/big/repos/git/forks", { org: "bencher", name: `git-${i}` });
    if (r.status !== 202) throw new Error(`fork: ${r.status} ${JSON.stringify(r.body)}`);
    for (;;) {
      const s = (await api.get(`/v1/orgs/bencher/repos/git-${i}`)).body.fork_state;
      if (s === "ready") break;
      if (s === "failed") throw new Error("fork failed");
      await Bun.sleep(2);
    }
    readyMs.push(performance.now() - t);
    const afterObjects = du(objects);
    objectGrowth.push(afterObjects - beforeObjects);
    dbGrowth.push(du(server.dataDir) - afterObjects - beforeDb);
  }
  // C git: a clone sharing the source's objects (alternates) is its copy-free "fork".
  const gitShared: number[] = [];
  for (let i = 0; i < n; i++) {
    const dir = join(work, `shared-${i}.git`);
    gitShared.push(await git(["clone", "-q", "--bare", "--shared", args.source, dir]));
    rmSync(dir, { recursive: true, force: true });
  }
  let cloneMs: { fork: number; parent: number } | null = null;
  if (args.clone) {
    const fork = await git(["clone", "-q", "--bare", `${server.url}/bencher/git-0.git`, join(work, "c-fork.git")]);
    const parent = await git(["clone", "-q", "--bare", `${server.url}/big/git.git`, join(work, "c-parent.git")]);
    cloneMs = { fork, parent };
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    JSON.stringify(
      {
        source: args.source,
        refs: args.refs,
        push_s: +(pushMs / 1000).toFixed(1),
        parent_stored_mib: +(parentBytes / MiB).toFixed(1),
        forks: n,
        ready_ms: readyMs.map((x) => Math.round(x)),
        ready_ms_median: Math.round(med(readyMs)),
        object_store_growth_bytes: objectGrowth,
        database_growth_bytes: dbGrowth,
        git_clone_shared_ms: gitShared.map((x) => Math.round(x)),
        ratio_ready_to_git_shared: +(med(readyMs) / med(gitShared)).toFixed(2),
        clone_ms: cloneMs && { fork: Math.round(cloneMs.fork), parent: Math.round(cloneMs.parent) },
        loadavg: loadavg().map((x) => +x.toFixed(2)),
      },
      null,
      1,
    ),
  );
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
