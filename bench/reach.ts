// Reads by id on a real repository, before and after the reachability boundary (issue 25 row 1).
//
//   bun bench/reach.ts [--source /work/.mirror/git+git/repo] [--refs 'refs/heads/*,refs/tags/*']
//                      [--before /path/to/older/checkout] [--reads 100] [--rounds 2] [--out FILE]
//                      [--engine-only]
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
// First, in this process: the index alone over the source's pack (trusting a record of the refs;
// with no record, every commit walked; then master 50 commits further, from that index). Prints one JSON summary (and writes it to --out).
import { Database } from "bun:sqlite";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openFileSource } from "../src/git/file-source.ts";
import { PackIndex } from "../src/git/pack-index.ts";
import { DeltaBaseCache, Pack } from "../src/git/pack-reader.ts";
import { PackSet } from "../src/git/pack-set.ts";
import { ReachIndex } from "../src/git/reachability.ts";
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
    "engine-only": { type: "boolean", default: false },
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

/**
 * Waits until the server has no due background job left (the push's contribution walk reads
 * every pushed commit): measured reads then compete with nothing of the server's own.
 */
async function settled(dataDir: string): Promise<void> {
  for (;;) {
    const db = new Database(join(dataDir, "svc.db"), { readonly: true });
    const n = (db.query("SELECT count(*) AS n FROM jobs WHERE done_at IS NULL AND run_at <= ?").get(Date.now()) as { n: number }).n;
    db.close();
    if (n === 0) return;
    await Bun.sleep(500);
  }
}

/**
 * The index alone, in this process, over the source's own pack: with the refs as its
 * reachability record (after a first push or GC); with no record (one was voided: every commit
 * walked); then from that index, with master 50 commits further (the walk after a push).
 */
async function engine(): Promise<Record<string, unknown>> {
  const packDir = join(opt.source, "objects", "pack");
  const packs: Pack[] = [];
  for (const name of readdirSync(packDir).filter((n) => n.endsWith(".idx"))) {
    const idx = PackIndex.parse(new Uint8Array(readFileSync(join(packDir, name))));
    packs.push(new Pack(name, idx, await openFileSource(join(packDir, name.replace(/\.idx$/, ".pack"))), new DeltaBaseCache(32 * 1024 * 1024)));
  }
  const prefixes = opt.refs.split(",").map((r) => r.replace(/\*$/, ""));
  const tips = (await git(["for-each-ref", "--format=%(objectname)", ...prefixes])).split("\n");
  const master = await git(["rev-parse", "master"]);
  const older = await git(["rev-parse", "master~50"]);
  const out: Record<string, unknown> = { tips: tips.length };
  const time = async (name: string, f: () => Promise<ReachIndex>) => {
    const t = performance.now();
    const index = await f();
    out[name] = { ...index.stats, wall_ms: r2(performance.now() - t) };
    return index;
  };
  // The pack stands for a first push (or GC) of the refs: its record is the refs.
  for (const p of packs) p.reachTips = tips;
  await time("record_trusted", () => ReachIndex.build(new PackSet(packs), tips));
  for (const p of packs) p.reachTips = null;
  const before = await time("no_record_every_commit", () =>
    ReachIndex.build(
      new PackSet(packs),
      tips.map((t) => (t === master ? older : t)),
    ),
  );
  // master 50 commits further: the index above is the closure the walk stops at.
  await time("after_a_push_of_50_commits", () => ReachIndex.build(new PackSet(packs), tips, { previous: [before] }));
  out.rss_mb = Math.round(process.memoryUsage().rss / 2 ** 20);
  return out;
}

const work = mkdtempSync(join(tmpdir(), "svc-bench-reach-"));
const ORG = "big";
const REPO = "git";
let server = null as SvcServer | null;
try {
  log(`load ${load()}; the index alone over ${opt.source}`);
  const engineResult = await engine();
  log(JSON.stringify(engineResult));
  if (opt["engine-only"]) {
    console.log(JSON.stringify({ machine: machine(), load: load(), engine: engineResult }, null, 2));
  } else await servers(engineResult);
} finally {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
}

/** The server runs: push once, reads before and after, then the writes (see the file comment). */
async function servers(engineResult: Record<string, unknown>): Promise<void> {
  log(`load ${load()}; pushing ${opt.refs} of ${opt.source}`);
  server = await startSvc(work);
  const f = await bootstrap(server, { org: ORG, repo: REPO });
  const auth = { authorization: `Bearer ${f.token}`, "content-type": "application/json" };
  await fetch(`${server.url}${f.path}`, { method: "PATCH", headers: auth, body: JSON.stringify({ public: true }) });
  const pushUrl = `${server.url.replace("://", `://x:${f.token}@`)}/${ORG}/${REPO}.git`;
  const pushStarted = performance.now();
  await git(["push", "-q", pushUrl, ...opt.refs.split(",").map((r) => `+${r}:${r}`)]);
  const pushMs = performance.now() - pushStarted;
  log(`pushed in ${(pushMs / 1000).toFixed(1)} s; waiting for the background jobs it queued`);
  await settled(server.dataDir);
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
    const order: [string, string][] = opt.before
      ? round % 2 === 0
        ? [
            ["before", opt.before],
            ["after", ROOT],
          ]
        : [
            ["after", ROOT],
            ["before", opt.before],
          ]
      : [["after", ROOT]];
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
    writes.reads_cold_start = await series(picked.slice(20, 40).map(p.api_commit));
    const commit = await fetch(`${s.url}${base}/commits`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ branch: "master", message: "bench", operations: [{ op: "put", path: "bench.txt", content: "x\n" }] }),
    });
    if (commit.status !== 201) throw new Error(`commit: ${commit.status} ${await commit.text()}`);
    await settled(dataDir);
    writes.first_read_by_id_after_commit_ms = r2(await timed(p.api_commit(picked[3]!)));
    writes.reads_after_commit = await series(picked.slice(40, 60).map(p.api_commit));
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
      await settled(dataDir);
      writes.deleted = deleted;
      writes.first_read_by_id_after_delete_ms = r2(await timed(p.api_commit(picked[5]!)));
      writes.reads_after_delete = await series(picked.slice(60, 80).map(p.api_commit));
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
    engine: engineResult,
    results,
    writes,
  };
  const text = JSON.stringify(summary, null, 2);
  console.log(text);
  if (opt.out) writeFileSync(opt.out, text);
}
