// A /healthz prober in its own process, open loop: every `interval` ms it starts a GET
// <url>/healthz whether or not the earlier ones have answered, and records each one's latency,
// until SIGTERM or SIGINT; then prints a JSON summary on stdout. Open loop, so that a stall of
// N seconds counts as the N / interval probes it delays (a closed loop would record it once),
// which is what "p99 of /healthz" means for the requests other clients send meanwhile.
//
//   bun bench/lib/healthz-prober.ts <base-url> [interval-ms]
const base = process.argv[2];
const interval = Number(process.argv[3] ?? 10);
if (!base) {
  process.stderr.write("usage: bun bench/lib/healthz-prober.ts <base-url> [interval-ms]\n");
  process.exit(2);
}

/** At most this many probes outstanding (beyond, a tick is skipped and counted). */
const MAX_OUTSTANDING = 2000;

const latencies: number[] = [];
let failures = 0;
let skipped = 0;
let outstanding = 0;
let stopped = false;

function probe(): void {
  if (outstanding >= MAX_OUTSTANDING) {
    skipped++;
    return;
  }
  outstanding++;
  const started = performance.now();
  fetch(`${base}/healthz`)
    .then(async (res) => {
      await res.arrayBuffer();
      if (!res.ok) failures++;
    })
    .catch(() => {
      failures++;
    })
    .finally(() => {
      latencies.push(performance.now() - started);
      outstanding--;
    });
}

const finish = () => {
  stopped = true;
};
process.on("SIGTERM", finish);
process.on("SIGINT", finish);

const t0 = performance.now();
let ticks = 0;
while (!stopped) {
  probe();
  ticks++;
  // Keep to the schedule even when a tick ran late.
  const next = t0 + ticks * interval - performance.now();
  if (next > 0) await Bun.sleep(next);
}
// Let the probes in flight answer (they are part of the picture).
const deadline = performance.now() + 120_000;
while (outstanding > 0 && performance.now() < deadline) await Bun.sleep(10);

const lat = latencies.sort((a, b) => a - b);
const q = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]! : null);
const round = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
const summary = {
  interval_ms: interval,
  probes: lat.length,
  failures,
  skipped,
  unanswered: outstanding,
  p50_ms: round(q(0.5)),
  p90_ms: round(q(0.9)),
  p99_ms: round(q(0.99)),
  max_ms: round(lat.length ? lat[lat.length - 1]! : null),
  over_100ms: lat.filter((x) => x > 100).length,
  over_250ms: lat.filter((x) => x > 250).length,
};
await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(summary)}\n`, () => resolve()));
process.exit(0);

export {};
