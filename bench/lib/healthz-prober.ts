// A /healthz prober in its own process: GET <url>/healthz one at a time, a new probe every
// `interval` ms (at once if the last took longer), until SIGTERM or SIGINT; then prints a JSON
// summary of the latencies on stdout. How long the server's event loop was held shows up here.
//
//   bun bench/lib/healthz-prober.ts <base-url> [interval-ms]
const base = process.argv[2];
const interval = Number(process.argv[3] ?? 10);
if (!base) {
  process.stderr.write("usage: bun bench/lib/healthz-prober.ts <base-url> [interval-ms]\n");
  process.exit(2);
}

/** [start epoch ms, latency ms] per probe. */
const samples: [number, number][] = [];
let stopped = false;
let failures = 0;

function summary() {
  const lat = samples.map((s) => s[1]).sort((a, b) => a - b);
  const q = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]! : null);
  const round = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
  return {
    probes: lat.length,
    failures,
    p50_ms: round(q(0.5)),
    p90_ms: round(q(0.9)),
    p99_ms: round(q(0.99)),
    max_ms: round(lat.length ? lat[lat.length - 1]! : null),
    over_100ms: lat.filter((x) => x > 100).length,
    over_250ms: lat.filter((x) => x > 250).length,
    samples,
  };
}

const finish = () => {
  stopped = true;
};
process.on("SIGTERM", finish);
process.on("SIGINT", finish);

while (!stopped) {
  const started = performance.now();
  const at = Date.now();
  try {
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    if (!res.ok) failures++;
  } catch {
    failures++;
  }
  const took = performance.now() - started;
  samples.push([at, took]);
  const wait = interval - took;
  if (wait > 0 && !stopped) await Bun.sleep(wait);
}
process.stdout.write(`${JSON.stringify(summary())}\n`);
process.exit(0);
export {};
