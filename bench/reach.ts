// Reads by id on a real repository, before and after the reachability boundary (issue 25 row 1).
//
//   bun bench/reach.ts [--source /work/.mirror/git+git/repo] [--refs 'refs/heads/*,refs/tags/*']
//                      [--before /path/to/older/checkout] [--reads 100] [--rounds 2] [--out FILE]
//
// Pushes the source's refs once into a public repository of a server started from this checkout
// (fs storage, temp data dir), then, on that same data dir, starts the server from each checkout
// in turn (`--before`, an older commit unpacked with `git archive`, and this one; alternately,
// `--rounds` times each, each start with cold caches) and times anonymous reads of commits that
// are no ref's target (spread over the whole history) by full id:
//   API   GET …/commits/{sha}, …/tree/{sha}, …/blob/{sha}?path=Makefile, …/commits/{sha7} (7 digits)
//   web   /{org}/{repo}/commit/{sha}, /tree/{sha}, /blob/{sha}/Makefile, /raw/{sha}/Makefile
//   base  …/tree/master and …/blob/master?path=Makefile (by ref name: no reachability question)
// plus the first read by id after start (this checkout: the reachability index is built then).
// Finally, on this checkout only: the first read by id after a commit to master (the index is
// extended by a walk of the new commit) and after deleting an unmerged branch (the first push's
// reachability record is void: a walk of every commit), then the next reads.
// Prints one JSON summary (and writes it to --out).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { r2, stats } from "./lib/content-util.ts";
import { machine, rssOf } from "./lib/machine.ts";
import { ROOT } from "./lib/proc.ts";
import { bootstrap, startSvc, type SvcServer } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    source: { type: "string", default: "/work/.mirror/git+git/repo" },
    refs: { type: "string", default: "refs/heads/*,refs/tags/*" },
    before: { type: "string" },
    reads: { type: "string", default: "100" },
    rounds: { type: "string", default: "2" },
    out: { type: "string" },
  },
});
const READS = Number(opt.reads);
const t0 = Date.now();
const log = (m: string) => process.stderr.write(`[bench/reach ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}\n`);
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

async function git(args: string[], cwd = opt.source): Promise<string> {
  const p = Bun.spawn(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")}: ${err}`);
  return out.trim();
}

async function timed(url: string, expect = 200): Promise<number> {
  const t = performance.now();
  const res = await fetch(url);
  await res.arrayBuffer();
  const ms = performance.now() - t;
  if (res.status !== expect) throw new Error(`GET ${url}: ${res.status}, expected ${expect}`);
  return ms;
}

const work = mkdtempSync(join(tmpdir(), "svc-bench-reach-"));
const ORG = "big";
const REPO = "git";
let server: SvcServer | null = null;
try {
  log(`load ${load()}; pushing ${opt.refs} of ${opt.source}`);
  server = await startSvc(work);
  const f = await bootstrap(server, { org: ORG, repo: REPO });
  const auth = { authorization: `Bearer ${f.token}`, "content-type": "application/json" };
  await fetch(`${server.url}${f.path}`, { method: "PATCH", headers: auth, body: JSON.stringify({ public: true }) });
  const pushUrl = `${server.url.replace("://", `://x:${f.token}@`)}/${ORG}/${REPO}.git`;
  const pushStarted = performance.now();
  await git(["push", "-q", pushUrl, ...opt.refs.split(",").map((r) => `+${r}:${r}`)]);
  const pushMs = performance.now() - pushStarted;
  log(`pushed in ${(pushMs / 1000).toFixed(1)} s`);
  await server.stop();

  // Commits that are no ref's target, spread over the history, each with a Makefile.
  const tips = new Set((await git(["for-each-ref", "--format=%(objectname)^{}", ...opt.refs.split(",").map((r) => r.replace(/\*$/, ""))])).split("\n"));
  const all = (await git(["rev-list", "master"])).split("\n");
  const picked: string[] = [];
  for (let i = 1; picked.length < READS && i < all.length; i += Math.max(1, Math.floor(all.length / (READS * 1.2)))) {
    const c = all[i]!;
    if (tips.has(c)) continue;
    if ((await git(["ls-tree", c, "Makefile"])).length) picked.push(c);
  }
  log(`${picked.length} commits picked (of ${all.length} on master)`);

  const base = `/v1/orgs/${ORG}/repos/${REPO}`;
  const phases = (url: string) => ({
    api_commit: (c: string) => `${url}${base}/commits/${c}`,
    api_commit_abbrev7: (c: string) => `${url}${base}/commits/${c.slice(0, 7)}`,
    api_tree: (c: string) => `${url}${base}/tree/${c}`,
    api_blob: (c: string) => `${url}${base}/blob/${c}?path=Makefile`,
    web_commit: (c: string) => `${url}/${ORG}/${REPO}/commit/${c}`,
    web_tree: (c: string) => `${url}/${ORG}/${REPO}/tree/${c}`,
    web_blob: (c: string) => `${url}/${ORG}/${REPO}/blob/${c}/Makefile`,
    web_raw: (c: string) => `${url}/${ORG}/${REPO}/raw/${c}/Makefile`,
  });

  const dataDir = server.dataDir;
  const series = async (urls: string[]) => {
    const xs: number[] = [];
    for (const u of urls) xs.push(await timed(u));
    return stats(xs);
  };
  /** One start of `root`'s server on the pushed data dir (cold caches): every phase, in order. */
  async function measure(root: string, label: string) {
    const s = await startSvc(join(work, `run-${label}-${Date.now()}`), { SVC_DATA_DIR: dataDir, SVC_LOG: "warn" }, [], root);
    try {
      const loadBefore = load();
      const out: Record<string, unknown> = { first_read_by_id_ms: r2(await timed(phases(s.url).api_commit(picked[0]!))) };
      out.api_tree_master = await series(Array.from({ length: 30 }, () => `${s.url}${base}/tree/master`));
      out.api_blob_master = await series(Array.from({ length: 30 }, () => `${s.url}${base}/blob/master?path=Makefile`));
      for (const [name, make] of Object.entries(phases(s.url))) out[name] = await series(picked.map(make));
      out.rss = rssOf(s.pid);
      out.load = { before: loadBefore, after: load() };
      return out;
    } finally {
      await s.stop();
    }
  }

  const results: Record<string, unknown[]> = { before: [], after: [] };
  for (let round = 0; round < Number(opt.rounds); round++) {
    const order: [string, string][] = opt.before ? (round % 2 === 0 ? [["before", opt.before], ["after", ROOT]] : [["after", ROOT], ["before", opt.before]]) : [["after", ROOT]];
    for (const [label, root] of order) {
      log(`round ${round + 1}: ${label} (${root})`);
      results[label]!.push(await measure(root, label));
    }
  }

  // This checkout: the index after a commit (incremental) and after an unmerged branch's deletion (voided record).
  log("after: a commit to master, then an unmerged branch deleted");
  const s = await startSvc(join(work, "run-writes"), { SVC_DATA_DIR: dataDir, SVC_LOG: "warn" });
  const writes: Record<string, unknown> = {};
  try {
    const p = phases(s.url);
    writes.first_read_by_id_cold_ms = r2(await timed(p.api_commit(picked[1]!)));
    writes.next_read_by_id_ms = r2(await timed(p.api_commit(picked[2]!)));
    const commit = await fetch(`${s.url}${base}/commits`, { method: "POST", headers: auth, body: JSON.stringify({ branch: "master", message: "bench", operations: [{ op: "put", path: "bench.txt", content: "x\n" }] }) });
    if (commit.status !== 201) throw new Error(`commit: ${commit.status} ${await commit.text()}`);
    writes.first_read_by_id_after_commit_ms = r2(await timed(p.api_commit(picked[3]!)));
    writes.next_read_by_id_ms_2 = r2(await timed(p.api_commit(picked[4]!)));
    // An unmerged branch of the source: deleting it voids the first push's record.
    const branches = (await git(["for-each-ref", "--format=%(refname)", "refs/heads/"])).split("\n");
    let deleted: string | null = null;
    for (const b of branches) {
      if (b === "refs/heads/master") continue;
      if ((await git(["rev-list", "--count", b, "--not", "--tags", "master"])) !== "0") {
        deleted = b;
        break;
      }
    }
    if (deleted) {
      const cur = await git(["rev-parse", deleted]);
      const del = await fetch(`${s.url}${base}/refs/${deleted}?expected=${cur}`, { method: "DELETE", headers: auth });
      if (del.status !== 204) throw new Error(`delete ${deleted}: ${del.status} ${await del.text()}`);
      writes.deleted = deleted;
      writes.first_read_by_id_after_delete_ms = r2(await timed(p.api_commit(picked[5]!)));
      const next: number[] = [];
      for (const c of picked.slice(6, 36)) next.push(await timed(p.api_commit(c)));
      writes.reads_after_delete = stats(next);
    }
    writes.rss = rssOf(s.pid);
  } finally {
    await s.stop();
  }

  const summary = {
    machine: machine(),
    load_at_end: load(),
    source: opt.source,
    refs: opt.refs,
    commits_on_master: all.length,
    reads_per_phase: picked.length,
    push_s: r2(pushMs / 1000),
    before_root: opt.before ?? null,
    results,
    writes,
  };
  const text = JSON.stringify(summary, null, 2);
  console.log(text);
  if (opt.out) writeFileSync(opt.out, text);
} finally {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
}
