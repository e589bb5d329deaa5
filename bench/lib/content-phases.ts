// Wall-clock phases of the commit API's write path, timed in-process (no HTTP, no auth), and of
// one background compaction, to explain bench/content.ts figures. Read-only towards product
// code: it calls the same service and git functions createCommit (src/services/commits.ts) calls,
// in the same order, with the object store wrapped to time putFile.
//
//   bun bench/lib/content-phases.ts [--commits 60] [--bulk-ops 10000] [--compact-every 10]
//
// Setup as bench/content.ts: a real server, a 10,000-file repository pushed over HTTP; then the
// server is stopped and the data dir opened in this process. No worker runs here: compaction
// happens only when this script calls compactRepo (every --compact-every commits), so commit
// phases are timed without compaction running alongside, and each compaction is timed alone.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config.ts";
import { openContext } from "../../src/runtime.ts";
import { parseCommit, serializeCommit } from "../../src/git/object.ts";
import { hashObject } from "../../src/git/oid.ts";
import { writePackIndex } from "../../src/git/pack-index.ts";
import { buildPack } from "../../src/git/pack-writer.ts";
import { editTree, type TreeOp } from "../../src/git/tree-edit.ts";
import { type RawObject } from "../../src/git/types.ts";
import { openSnapshot } from "../../src/services/git/snapshot.ts";
import { compactRepo } from "../../src/services/git/maintenance.ts";
import { publish } from "../../src/services/git/publish.ts";
import { refPolicy } from "../../src/services/git/policy.ts";
import { newId } from "../../src/util/ids.ts";
import { orgs, repos } from "../../src/db/schema/index.ts";
import { eq } from "drizzle-orm";
import { git, gitEnv, nestedPath, NESTED_FILES, prng, r2, stats, text, writeWorktree } from "./content-util.ts";
import { BUN, ROOT, cleanEnv, spawnServer } from "./proc.ts";
import { bootstrap } from "./svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    commits: { type: "string", default: "60" },
    "bulk-ops": { type: "string", default: "10000" },
    "compact-every": { type: "string", default: "10" },
    keep: { type: "boolean", default: false },
  },
});
const N = Number(opt.commits);
const BULK = Number(opt["bulk-ops"]);
const EVERY = Number(opt["compact-every"]);
const log = (m: string) => process.stderr.write(`[content-phases] ${m}\n`);

const work = mkdtempSync(join(tmpdir(), "svc-bench-phases-"));
try {
  // ---- setup through the real server -----------------------------------------------------------
  const dataDir = join(work, "data");
  mkdirSync(dataDir);
  const svcEnv = { SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "warn" };
  const child = await spawnServer([BUN, join(ROOT, "src/main.ts"), "serve"], {
    env: { ...cleanEnv(), ...svcEnv },
    stderrFile: join(work, "server.stderr.log"),
  });
  const fx = await bootstrap({ ...child, dataDir, env: svcEnv }, { org: "bench", repo: "content" });
  const home = join(work, "home");
  const tree = join(work, "tree");
  mkdirSync(home);
  mkdirSync(tree);
  const env = gitEnv(home);
  await git(["init", "-q", "-b", "main"], { cwd: tree, env });
  writeWorktree(tree);
  await git(["add", "-A"], { cwd: tree, env });
  await git(["commit", "-q", "-m", "10,000 files"], { cwd: tree, env });
  await git(["push", "-q", `${child.url.replace("http://", `http://x:${fx.token}@`)}/bench/content.git`, "main"], { cwd: tree, env });
  await child.stop();
  log(`pushed 10,000 files; server stopped; opening ${dataDir} in-process`);

  // ---- in-process context, object store wrapped to time putFile ---------------------------------
  const ctx = await openContext(loadConfig({ ...svcEnv, SVC_HTTP_ADDR: "127.0.0.1:8080" }));
  let putMs = 0;
  const inner = ctx.store;
  ctx.store = {
    ...inner,
    putFile: async (key: string, path: string) => {
      const t = performance.now();
      try {
        return await inner.putFile(key, path);
      } finally {
        putMs += performance.now() - t;
      }
    },
  } as typeof inner;
  const org = ctx.db.read.select().from(orgs).where(eq(orgs.name, "bench")).get()!;
  const repo = ctx.db.read.select().from(repos).where(eq(repos.orgId, org.id)).get()!;

  const phases: Record<string, number[]> = {};
  const rec = (name: string, ms: number) => (phases[name] ??= []).push(ms);
  const compactions: { after_commit: number; merges: number; ms: number; put_file_ms: number }[] = [];

  /** One commit through createCommit's steps; returns total ms. */
  async function commit(ops: TreeOp[], message: string, record: (name: string, ms: number) => void): Promise<number> {
    const t0 = performance.now();
    let t = t0;
    const lap = (name: string) => {
      const n = performance.now();
      record(name, n - t);
      t = n;
    };
    const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
    lap("openSnapshot (refs + packs rows, open each pack idx)");
    const tip = snapshot.refs.find((r) => r.name === "refs/heads/main")!.oid;
    const baseTree = parseCommit((await snapshot.objects.read(tip))!.data).tree;
    lap("read tip commit");
    const edited = await editTree(snapshot.objects, baseTree, ops);
    lap("editTree");
    const when = { timestamp: Math.floor(Date.now() / 1000), timezone: "+0000" };
    const commitData = serializeCommit({
      tree: edited.tree,
      parents: [tip],
      author: { name: "b", email: "b@x", ...when },
      committer: { name: "svc", email: "svc@x", ...when },
      message,
      extraHeaders: [],
    });
    const oid = hashObject("commit", commitData);
    const objects: RawObject[] = [];
    for (const o of edited.objects) if (!(await snapshot.objects.has(hashObject(o.type, o.data)))) objects.push(o);
    objects.push({ type: "commit", data: commitData });
    lap("hash + has() checks over live packs");
    const built = buildPack(objects);
    lap("buildPack (hash + zlib deflate per object)");
    const idx = writePackIndex(built.entries, built.checksum);
    lap("writePackIndex");
    const base = join(ctx.tmpDir, `commit-${newId()}`);
    writeFileSync(`${base}.pack`, built.pack);
    writeFileSync(`${base}.idx`, idx);
    lap("writeFileSync pack + idx to tmp");
    putMs = 0;
    const results = await publish(
      ctx,
      org,
      repo,
      [{ ref: "refs/heads/main", oldOid: tip, newOid: oid, fastForward: true }],
      {
        name: built.checksum,
        packPath: `${base}.pack`,
        idxPath: `${base}.idx`,
        objectCount: objects.length,
        size: built.pack.byteLength,
        idxSize: idx.byteLength,
      },
      { atomic: true, event: { via: "api", commit: oid, branch: "main" }, actorUserId: null, policy: refPolicy(repo, "commit-api") },
    );
    const outcome = results.get("refs/heads/main")!;
    if (outcome.kind !== "applied") throw new Error(`publish refused: ${JSON.stringify(outcome)}`);
    const pubMs = performance.now() - t;
    record("publish: store.putFile pack + idx (copy, fsync file, rename, fsync dir)", putMs);
    record("publish: ref CAS transaction + compaction check", pubMs - putMs);
    t = performance.now();
    await Promise.all([rm(`${base}.pack`, { force: true }), rm(`${base}.idx`, { force: true })]);
    lap("rm tmp files");
    return performance.now() - t0;
  }

  // ---- 1-operation commits ----------------------------------------------------------------------
  const rand = prng(7);
  const totals: number[] = [];
  for (let i = 0; i < N; i++) {
    const path = nestedPath((i * 337) % NESTED_FILES);
    totals.push(await commit([{ kind: "put", path: path.split("/"), data: new TextEncoder().encode(text(rand, 300, `edit ${i}`)) }], `edit ${i}`, rec));
    if (EVERY > 0 && (i + 1) % EVERY === 0) {
      putMs = 0;
      const t = performance.now();
      const merges = await compactRepo(ctx, { repoId: repo.id });
      compactions.push({ after_commit: i + 1, merges, ms: r2(performance.now() - t), put_file_ms: r2(putMs) });
    }
  }
  const onePhase = Object.fromEntries(
    Object.entries(phases).map(([k, v]) => [k, { p50_ms: stats(v).p50_ms, mean_ms: stats(v).mean_ms, p99_ms: stats(v).p99_ms }]),
  );

  // ---- one 10,000-operation commit --------------------------------------------------------------
  const bulkPhases: Record<string, number> = {};
  const brand = prng(99);
  const enc = new TextEncoder();
  const ops: TreeOp[] = [];
  for (let i = 0; i < BULK; i++)
    ops.push({
      kind: "put",
      path: ["bulk", `d${String(Math.floor(i / 100)).padStart(3, "0")}`, `f${String(i % 100).padStart(3, "0")}.txt`],
      data: enc.encode(text(brand, 100 + Math.floor(brand() * 200), `bulk ${i}`)),
    });
  const bulkTotal = await commit(ops, "bulk", (name, ms) => (bulkPhases[name] = r2((bulkPhases[name] ?? 0) + ms)));
  ctx.close();

  const out = {
    note: "in-process, no HTTP/auth/JSON; no compaction runs during commits (it is called between them and timed alone)",
    commit_1_op: { n: N, total: stats(totals), phases: onePhase },
    compactions,
    commit_10k_ops: { ops: BULK, total_ms: r2(bulkTotal), phases: bulkPhases },
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
} finally {
  if (!opt.keep) rmSync(work, { recursive: true, force: true });
  else log(`kept ${work}`);
}
