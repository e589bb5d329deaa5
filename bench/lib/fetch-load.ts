// Fallback load generator when wrk is unavailable: N concurrent closed-loop fetch loops
// (each sends its next request as soon as the previous answer is read), in its own process.
// Usage: bun bench/lib/fetch-load.ts '{"url":…,"connections":50,"durationS":10,"maxRequests":0,"headers":{…}}'
// Prints one JSON object: requests, duration_s, rps, p50_ms, p99_ms, non2xx, socket_errors.
export {};
const spec = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  connections: number;
  durationS: number;
  maxRequests: number;
  headers: Record<string, string>;
};

const latencies: number[] = [];
let started = 0;
let non2xx = 0;
let errors = 0;
const t0 = performance.now();
const deadline = t0 + spec.durationS * 1000;
const limit = spec.maxRequests > 0 ? spec.maxRequests : Infinity;

async function loop() {
  while (performance.now() < deadline && started < limit) {
    started++;
    const t = performance.now();
    try {
      const res = await fetch(spec.url, { headers: spec.headers, keepalive: true });
      await res.arrayBuffer();
      if (res.status >= 400) non2xx++;
      latencies.push(performance.now() - t);
    } catch {
      errors++;
    }
  }
}

await Promise.all(Array.from({ length: spec.connections }, loop));
const elapsed = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]! * 1000) / 1000 : null;
process.stdout.write(
  JSON.stringify({
    requests: latencies.length,
    duration_s: Math.round(elapsed * 1000) / 1000,
    rps: Math.round(latencies.length / elapsed),
    p50_ms: pct(50),
    p99_ms: pct(99),
    max_ms: latencies.length ? Math.round(latencies[latencies.length - 1]! * 1000) / 1000 : null,
    non2xx,
    socket_errors: errors,
  }),
);
