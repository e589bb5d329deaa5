// Preloaded into svc by `bench/git.ts --real … --mem-trace` (`bun --preload`): on SIGUSR2 it
// appends one JSON line to $MEM_PROBE_OUT with process.memoryUsage() and the JS object types
// holding the most instances (bun:jsc heapStats), then, when $MEM_PROBE_GC is set, the same
// after a full collection (Bun.gc(true)) — which alters what it measures, so it is opt-in.
import { appendFileSync } from "node:fs";
import { heapStats } from "bun:jsc";

const out = process.env.MEM_PROBE_OUT;
const MB = (b: number) => Math.round(b / 104857.6) / 10;

function snapshot(): Record<string, unknown> {
  const m = process.memoryUsage();
  const h = heapStats();
  const types = Object.entries(h.objectTypeCounts as Record<string, number>)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
  return {
    rss: MB(m.rss),
    heapUsed: MB(m.heapUsed),
    heapTotal: MB(m.heapTotal),
    external: MB(m.external),
    arrayBuffers: MB(m.arrayBuffers),
    objects: h.objectCount,
    types: Object.fromEntries(types),
  };
}

if (out) {
  process.on("SIGUSR2", () => {
    const row: Record<string, unknown> = { t: Date.now(), before: snapshot() };
    if (process.env.MEM_PROBE_GC) {
      Bun.gc(true);
      row.afterGc = snapshot();
    }
    appendFileSync(out, JSON.stringify(row) + "\n");
  });
}
