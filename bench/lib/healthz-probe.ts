// The /healthz prober of bench/stall.ts, as its own process (so the benchmark's own work never
// delays a probe): one GET at a time, a new one every `interval` ms (at once after a slow one),
// each written to stdout as a JSON line `{ "at": <epoch ms when sent>, "ms": <latency> }`.
// A probe that fails is written with `"error"`. Runs until killed.
//
//   bun bench/lib/healthz-probe.ts <base url> [interval ms, default 100]
export {};
const base = process.argv[2];
const interval = Number(process.argv[3] ?? "100");
if (!base) throw new Error("usage: bun bench/lib/healthz-probe.ts <base url> [interval ms]");
const url = `${base}/healthz`;
for (;;) {
  const at = performance.timeOrigin + performance.now();
  const t0 = performance.now();
  let line: string;
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    line = JSON.stringify({ at: Math.round(at), ms: Math.round((performance.now() - t0) * 10) / 10, status: res.status });
  } catch (e) {
    line = JSON.stringify({ at: Math.round(at), ms: Math.round((performance.now() - t0) * 10) / 10, error: String(e).slice(0, 200) });
  }
  process.stdout.write(`${line}\n`);
  const left = interval - (performance.now() - t0);
  if (left > 0) await Bun.sleep(left);
}
