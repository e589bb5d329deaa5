// The push check of LFS locks alone (services/git/lfs-locks.ts `lockRefusals`), in-process on a
// real context (SQLite) and an in-memory object reader: the time one push of a ref spends in it,
// by number of locks, with the locks in the directories the push rewrites (the walk must descend).
//
//   bun bench/lfs-locks-check.ts [--dirs 200] [--files 100] [--iters 30]
//
// Each configuration: `--dirs` directories of `--files` files; the push rewrites all but the last
// file of each directory; another person's locks sit on each directory's last file and then on
// absent paths in the same directories. Reported: p50 and p90 wall ms per call, p50 CPU ms of the
// process during the call (the shared machine's load inflates wall time), and the tree reads.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.ts";
import type { User } from "../src/db/schema/index.ts";
import { serializeCommit, serializeTree, type TreeEntry } from "../src/git/object.ts";
import { hashObject } from "../src/git/oid.ts";
import type { ObjectReader, ObjectType, Oid, RawObject } from "../src/git/types.ts";
import { openContext } from "../src/runtime.ts";
import type { Principal } from "../src/services/access/principal.ts";
import { lockRefusals } from "../src/services/git/lfs-locks.ts";
import { createLock, openLockRepo } from "../src/services/lfs/locks.ts";
import { createUserWithOrg } from "../src/services/people/accounts.ts";
import { createRepo } from "../src/services/repos/repos.ts";
import { machine } from "./lib/machine.ts";

const { values: args } = parseArgs({
  options: { dirs: { type: "string", default: "200" }, files: { type: "string", default: "100" }, iters: { type: "string", default: "30" } },
});
const DIRS = Number(args.dirs);
const FILES = Number(args.files);
const ITERS = Number(args.iters);

class Objects implements ObjectReader {
  readonly map = new Map<Oid, RawObject>();
  reads = 0;
  put(type: ObjectType, data: Uint8Array): Oid {
    const oid = hashObject(type, data);
    this.map.set(oid, { type, data });
    return oid;
  }
  async has(oid: Oid) {
    return this.map.has(oid);
  }
  async read(oid: Oid) {
    this.reads++;
    return this.map.get(oid) ?? null;
  }
  async readHeader(oid: Oid) {
    const o = this.map.get(oid);
    return o ? { type: o.type, size: o.data.length } : null;
  }
}

const sig = { name: "A", email: "a@example.com", timestamp: 1_700_000_000, timezone: "+0000" };
const name = (f: number) => `f${String(f).padStart(5, "0")}.bin`;

function commitOf(objects: Objects, version: number): Oid {
  const top: TreeEntry[] = [];
  for (let d = 0; d < DIRS; d++) {
    const entries: TreeEntry[] = [];
    for (let f = 0; f < FILES; f++) {
      const body = f === FILES - 1 ? `kept ${d}\n` : `v${version} ${d}/${f}\n`;
      entries.push({ mode: "100644", name: name(f), oid: objects.put("blob", new TextEncoder().encode(body)) });
    }
    top.push({ mode: "40000", name: `d${String(d).padStart(4, "0")}`, oid: objects.put("tree", serializeTree(entries)) });
  }
  const tree = objects.put("tree", serializeTree(top));
  return objects.put("commit", serializeCommit({ tree, parents: [], author: sig, committer: sig, message: `v${version}\n`, extraHeaders: [] }));
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function main() {
  const root = mkdtempSync(join(tmpdir(), "svc-bench-lfs-check-"));
  const ctx = await openContext(
    loadConfig({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" }),
  );
  try {
    const password = "a long enough password";
    const olga: User = await createUserWithOrg(ctx, { org: "studio", email: "olga@example.com", name: "Olga", password, role: "owner" });
    const mel: User = await createUserWithOrg(ctx, { org: "studio", email: "mel@example.com", name: "Mel", password, role: "member" });
    const session: Principal = { kind: "session", user: olga, sessionId: "bench" };
    const objects = new Objects();
    const old = commitOf(objects, 1);
    const next = commitOf(objects, 2);
    const refs = [{ name: "refs/heads/main", oid: old }];
    const push = [{ ref: "refs/heads/main", oldOid: old, newOid: next }];
    const rows: { locks: number; p50_ms: number; p90_ms: number; cpu_p50_ms: number; tree_reads: number }[] = [];
    let made = 0;
    for (const locks of [0, 1, 100, 1000, 10_000]) {
      await createRepo(ctx, session, "studio", { name: `game${locks}` });
      ctx.facts.fresh();
      const t = await openLockRepo(ctx, { kind: "principal", principal: session }, "studio", `game${locks}`, "upload");
      for (let i = 0; i < locks; i++) {
        const path = i < DIRS ? `d${String(i).padStart(4, "0")}/${name(FILES - 1)}` : `d${String(i % DIRS).padStart(4, "0")}/absent-${i}.bin`;
        const r = await createLock(ctx, t, { path });
        if (r.kind !== "created") throw new Error(`lock ${path}`);
        made++;
      }
      const times: number[] = [];
      const cpus: number[] = [];
      let reads = 0;
      for (let i = 0; i < ITERS + 3; i++) {
        objects.reads = 0;
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        const out = await lockRefusals(ctx, t.repo, refs, objects, push, mel.id);
        const cpu = process.cpuUsage(c0);
        const ms = performance.now() - t0;
        if (out.size) throw new Error("refused");
        if (i >= 3) {
          times.push(ms);
          cpus.push((cpu.user + cpu.system) / 1000);
        }
        reads = objects.reads;
      }
      rows.push({ locks, p50_ms: +pct(times, 0.5).toFixed(2), p90_ms: +pct(times, 0.9).toFixed(2), cpu_p50_ms: +pct(cpus, 0.5).toFixed(2), tree_reads: reads });
    }
    console.log(
      JSON.stringify(
        { machine: machine(), load_at_start: loadavg()[0], dirs: DIRS, files: DIRS * FILES, rewritten: DIRS * (FILES - 1), locks_made: made, rows },
        null,
        2,
      ),
    );
  } finally {
    ctx.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
