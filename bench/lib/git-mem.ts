// Memory (and time) anatomy of svc's git engine, in process, without the HTTP layer: runs the
// same engine entry points the transports call and samples process.memoryUsage() every 20 ms.
// Read-only for svc data dirs. Used to attribute the server RSS seen by bench/git.ts.
//
//   clone:      bun bench/lib/git-mem.ts --mode clone --data-dir DIR [--repo bench/bench-1]
//               serveUploadPack (protocol v2 fetch of every ref: thin-pack, ofs-delta, no-progress)
//               from a data dir left by `bun bench/git.ts --keep`, bytes discarded.
//   enumerate:  same data dir; only collectObjects (the object listing of a clone).
//   receive:    bun bench/lib/git-mem.ts --mode receive --bare REPO.git
//               serveReceivePack into an empty repository: every ref of REPO created, its (single)
//               pack streamed in 64 KiB chunks; indexPack + connectivity check; apply() accepts.
//   index-pack: --bare REPO.git; indexPack alone on the same pack stream (no connectivity check).
//
// Options: --runs N (default 2; memory after each run and after a forced GC is reported).
import { heapStats } from "bun:jsc";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { loadConfig } from "../../src/config.ts";
import { orgs, repos } from "../../src/db/schema/index.ts";
import { indexPack } from "../../src/git/pack-indexer.ts";
import { PackSet } from "../../src/git/pack-set.ts";
import { serveReceivePack } from "../../src/git/receive-pack.ts";
import { serveUploadPack } from "../../src/git/upload-pack.ts";
import { collectObjects } from "../../src/git/walk.ts";
import { openContext } from "../../src/runtime.ts";
import { openSnapshot } from "../../src/services/git/snapshot.ts";
import { packChunks } from "./pack-chunks.ts";

const argv = process.argv.slice(2);
const get = (n: string) => {
  const i = argv.indexOf(`--${n}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const mode = get("mode") ?? "clone";
const runs = Number(get("runs") ?? 2);
const MB = (b: number) => Math.round(b / 104857.6) / 10;
const enc = new TextEncoder();
const pkt = (s: string | Uint8Array) => {
  const b = typeof s === "string" ? enc.encode(s) : s;
  const out = new Uint8Array(b.length + 4);
  out.set(enc.encode((b.length + 4).toString(16).padStart(4, "0")));
  out.set(b, 4);
  return out;
};
type Mem = ReturnType<typeof process.memoryUsage>;
const fmt = (m: Mem) => ({ rss: MB(m.rss), heapUsed: MB(m.heapUsed), heapTotal: MB(m.heapTotal), external: MB(m.external), arrayBuffers: MB(m.arrayBuffers) });

function barePack(bare: string): string {
  const dir = join(bare, "objects/pack");
  const packs = readdirSync(dir).filter((f) => f.endsWith(".pack"));
  if (packs.length !== 1) throw new Error(`${bare}: expected one pack, found ${packs.length}`);
  return join(dir, packs[0]!);
}

function bareRefs(bare: string): { oid: string; name: string }[] {
  const p = Bun.spawnSync(["git", "for-each-ref", "--format=%(objectname) %(refname)"], { cwd: bare });
  return p.stdout
    .toString()
    .trim()
    .split("\n")
    .map((l) => {
      const [oid, name] = l.split(" ") as [string, string];
      return { oid, name };
    });
}

/** One measured operation; returns facts to report. */
type Op = () => Promise<Record<string, unknown>>;

async function measure(op: Op): Promise<Record<string, unknown>> {
  Bun.gc(true);
  const before = process.memoryUsage();
  let peak: Mem = before;
  let peakAt = 0;
  const t0 = performance.now();
  const timeline: [number, number, number, number][] = [];
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const t = Math.round(performance.now() - t0);
    timeline.push([t, MB(m.rss), MB(m.heapUsed), MB(m.arrayBuffers)]);
    if (m.rss > peak.rss) {
      peak = m;
      peakAt = t;
    }
  }, 20);
  const facts = await op();
  clearInterval(timer);
  const seconds = Math.round(performance.now() - t0) / 1000;
  const end = process.memoryUsage();
  Bun.gc(true);
  const afterGc = process.memoryUsage();
  const hs = heapStats();
  const retainedTypes = Object.entries(hs.objectTypeCounts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8);
  const step = Math.max(1, Math.floor(timeline.length / 15));
  return {
    seconds,
    ...facts,
    peakAtMs: Math.round(peakAt),
    before: fmt(before),
    peak: fmt(peak),
    end: fmt(end),
    afterGc: fmt(afterGc),
    heapObjectsAfterGc: hs.objectCount,
    retainedTypes,
    timeline:
      "ms, rss, heapUsed, arrayBuffers (MB): " +
      timeline
        .filter((_, i) => i % step === 0)
        .map((p) => p.join("/"))
        .join(" "),
  };
}

let ops: Op;
let label: string;
let cleanup = () => {};
if (mode === "clone" || mode === "enumerate") {
  const dataDir = get("data-dir");
  if (!dataDir) throw new Error("--data-dir is required");
  const [orgName, repoName] = (get("repo") ?? "bench/bench-1").split("/") as [string, string];
  label = `${orgName}/${repoName}`;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_")) env[k] = v;
  const ctx = await openContext(loadConfig({ ...env, SVC_DATA_DIR: dataDir, SVC_LOG: "warn" }));
  cleanup = () => ctx.close();
  const row = ctx.db.read
    .select({ repo: repos })
    .from(repos)
    .innerJoin(orgs, eq(repos.orgId, orgs.id))
    .where(and(eq(orgs.name, orgName), eq(repos.name, repoName)))
    .get();
  if (!row) throw new Error(`no repository ${label}`);
  ops = async () => {
    const snapshot = await openSnapshot(ctx.db.read, ctx.git, row.repo);
    const wants = [...new Set(snapshot.refs.map((r) => r.oid))];
    if (mode === "enumerate") {
      const listed = await collectObjects(snapshot.objects, { wants, haves: [], shallow: [] });
      const hs = heapStats(); // the listing is still alive here
      const top = Object.entries(hs.objectTypeCounts)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8);
      return { objects: listed.oids.length, heapObjectsWithListingAlive: hs.objectCount, heapSizeMB: MB(hs.heapSize), topTypes: top };
    }
    const req = [
      pkt("command=fetch\n"),
      pkt("agent=git/2.39.5\n"),
      pkt("object-format=sha1\n"),
      enc.encode("0001"),
      pkt("thin-pack\n"),
      pkt("no-progress\n"),
      pkt("ofs-delta\n"),
      ...wants.map((w) => pkt(`want ${w}\n`)),
      pkt("done\n"),
      enc.encode("0000"),
    ];
    async function* input() {
      for (const r of req) yield r;
    }
    let bytes = 0;
    const m = await serveUploadPack(snapshot, { input: input(), write: (c: Uint8Array) => void (bytes += c.length) }, { protocol: 2, statelessRpc: true });
    return { sentMB: MB(bytes), metrics: m };
  };
} else if (mode === "receive" || mode === "index-pack") {
  const bare = get("bare");
  if (!bare) throw new Error("--bare is required");
  label = bare;
  const packPath = barePack(bare);
  const refs = bareRefs(bare);
  const tmp = mkdtempSync(join(tmpdir(), "svc-git-mem-"));
  cleanup = () => rmSync(tmp, { recursive: true, force: true });
  ops = async () => {
    if (mode === "index-pack") {
      const p = await indexPack(packChunks(packPath), { tmpDir: tmp });
      rmSync(p.packPath, { force: true });
      rmSync(p.idxPath, { force: true });
      return { objects: p.objectCount };
    }
    const zero = "0".repeat(40);
    async function* input() {
      let first = true;
      for (const r of refs) {
        yield pkt(`${zero} ${r.oid} ${r.name}${first ? "\0report-status side-band-64k ofs-delta quiet" : ""}\n`);
        first = false;
      }
      yield enc.encode("0000");
      yield* packChunks(packPath);
    }
    let replyBytes = 0;
    const res = await serveReceivePack(
      { refs: [], head: "refs/heads/main", objects: new PackSet([]) },
      { input: input(), write: (c: Uint8Array) => void (replyBytes += c.length) },
      {
        statelessRpc: true,
        tmpDir: tmp,
        hooks: {
          async apply(commands) {
            return new Map(commands.map((c) => [c.ref, null]));
          },
        },
      },
    );
    return { objects: res.objects, error: res.error ?? null, refsOk: [...res.results.values()].filter((v) => v === null).length };
  };
} else throw new Error(`unknown --mode ${mode}`);

const baseline = fmt(process.memoryUsage());
const out: Record<string, unknown>[] = [];
for (let i = 0; i < runs; i++) out.push({ run: i + 1, ...(await measure(ops)) });
cleanup();
process.stdout.write(JSON.stringify({ mode, target: label, baseline, runs: out }, null, 2) + "\n");
