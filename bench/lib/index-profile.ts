// Where a mirror sync's indexing time goes, in process: indexPack over a bare repository's pack
// file (64 KiB chunks, as the fetch client streams it) with the FsckSession a sync uses, and the
// process's CPU seconds. Run under `bun --cpu-prof-md` for a per-function breakdown.
//
//   bun bench/lib/index-profile.ts [--bare bench/work/mirrors/served/git.git] [--runs 1] [--no-session]
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { FsckSession } from "../../src/git/fsck.ts";
import { indexPack } from "../../src/git/pack-indexer.ts";
import { packChunks } from "./pack-chunks.ts";
import { ROOT } from "./proc.ts";

const { values: args } = parseArgs({
  options: {
    bare: { type: "string", default: join(ROOT, "bench/work/mirrors/served/git.git") },
    runs: { type: "string", default: "1" },
    "no-session": { type: "boolean", default: false },
  },
});

const dir = join(args.bare!, "objects/pack");
const pack = join(dir, readdirSync(dir).find((f) => f.endsWith(".pack"))!);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
for (let r = 0; r < Number(args.runs); r++) {
  const tmp = mkdtempSync(join(tmpdir(), "index-profile-"));
  const session = new FsckSession();
  const c0 = cpu();
  const t0 = performance.now();
  const out = await indexPack(packChunks(pack), { tmpDir: tmp, fsck: args["no-session"] ? undefined : session });
  const t1 = performance.now();
  const c1 = cpu();
  process.stdout.write(
    `${JSON.stringify({ run: r, objects: out.objectCount, wall_s: Math.round(t1 - t0) / 1000, cpu_s: Math.round((c1 - c0) * 1000) / 1000, load: (await Bun.file("/proc/loadavg").text()).trim() })}\n`,
  );
  rmSync(tmp, { recursive: true, force: true });
}
