// indexPack of one pack file in process, with the receive path's fsck hook: time, peak RSS and
// JS heap while it runs (where a push's memory goes).  bun bench/lib/ip-mem.ts FILE.pack [--no-fsck]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsckSession } from "../../src/git/fsck.ts";
import { indexPack } from "../../src/git/pack-indexer.ts";
import { packChunks } from "./pack-chunks.ts";

const file = process.argv[2]!;
const fsck = !process.argv.includes("--no-fsck");
const MB = (b: number) => Math.round(b / 104857.6) / 10;
const tmp = mkdtempSync(join(tmpdir(), "ip-mem-"));
Bun.gc(true);
const base = process.memoryUsage();
let peak = { rss: 0, heapTotal: 0, arrayBuffers: 0 };
const timer = setInterval(() => {
  const m = process.memoryUsage();
  if (m.rss > peak.rss) peak = { rss: m.rss, heapTotal: m.heapTotal, arrayBuffers: m.arrayBuffers };
}, 10);
const t0 = performance.now();
const session = new FsckSession();
const p = await indexPack(packChunks(file), { tmpDir: tmp, onObject: fsck ? session.inspect : undefined });
clearInterval(timer);
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({
    objects: p.objectCount,
    fresh: MB((globalThis as any).__fresh ?? 0),
    big: MB((globalThis as any).__big ?? 0),
    seconds: Math.round(performance.now() - t0) / 1000,
    cpu: (cpu.user + cpu.system) / 1e6,
    baseRss: MB(base.rss),
    peakRss: MB(peak.rss),
    peakHeapTotal: MB(peak.heapTotal),
    peakArrayBuffers: MB(peak.arrayBuffers),
  }),
);
rmSync(tmp, { recursive: true, force: true });
