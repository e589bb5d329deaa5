// Benchmark (issue 25 row 11): does POST /v1/auth/signup take the same time whether or not the
// address already has an account? Starts the real server, registers `--registered` addresses,
// then sends `--requests` signups in a random order, half with a registered address and half
// with a new one (each with a fresh handle), one at a time, and compares the two latency
// distributions: quantiles, mean and the Mann-Whitney U test's two-sided p (normal
// approximation; no difference expected means a large p). Also checks both answers are the
// same bytes. `--root DIR` runs another checkout (e.g. main, for the before figures).
//
//   bun bench/signup-timing.ts [--requests 400] [--registered 20] [--root DIR] [--out FILE]
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { machine } from "./lib/machine.ts";
import { ROOT } from "./lib/proc.ts";
import { startSvc } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    requests: { type: "string", default: "400" },
    registered: { type: "string", default: "20" },
    root: { type: "string", default: ROOT },
    out: { type: "string" },
  },
});
const requests = Number(opt.requests);
const registeredCount = Number(opt.registered);
const log = (msg: string) => process.stderr.write(`[bench/signup-timing] ${msg}\n`);
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

const dir = mkdtempSync(`${tmpdir()}/svc-bench-signup-`);
const loadBefore = load();
const server = await startSvc(dir, { SVC_LOG: "warn", SVC_SIGNUP_LIMIT_PER_ADDRESS: "1000000", SVC_SIGNUP_LIMIT_GLOBAL: "1000000" }, [], opt.root);

async function signup(email: string, handle: string): Promise<{ ms: number; status: number; text: string }> {
  const body = JSON.stringify({ email, handle, name: "Timing Person", password: "a long enough password" });
  const t0 = performance.now();
  const res = await fetch(`${server.url}/v1/auth/signup`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const text = await res.text();
  return { ms: performance.now() - t0, status: res.status, text };
}

/** Mann-Whitney U, two-sided p by the normal approximation with a tie correction. */
function mannWhitney(a: number[], b: number[]): { u: number; z: number; p: number } {
  const all = [...a.map((v) => ({ v, g: 0 })), ...b.map((v) => ({ v, g: 1 }))].sort((x, y) => x.v - y.v);
  const ranks = new Array<number>(all.length);
  let ties = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    const r = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) ranks[k] = r;
    const t = j - i + 1;
    ties += t ** 3 - t;
    i = j + 1;
  }
  let ra = 0;
  all.forEach((x, i) => {
    if (x.g === 0) ra += ranks[i]!;
  });
  const n1 = a.length;
  const n2 = b.length;
  const u = ra - (n1 * (n1 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const n = n1 + n2;
  const sd = Math.sqrt(((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1))));
  const z = (u - mean) / sd;
  // Two-sided p from the standard normal (Abramowitz-Stegun 7.1.26 for erf).
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return { u, z: Math.round(z * 1000) / 1000, p: Math.round((1 - erf) * 10000) / 10000 };
}

function summary(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]! * 100) / 100;
  const mean = s.reduce((n, v) => n + v, 0) / s.length;
  return { n: s.length, min: q(0), p10: q(0.1), p50: q(0.5), p90: q(0.9), p99: q(0.99), max: q(1), mean: Math.round(mean * 100) / 100 };
}

try {
  const registered: string[] = [];
  for (let i = 0; i < registeredCount; i++) {
    const email = `registered-${i}@example.com`;
    const r = await signup(email, `registered-${i}`);
    if (r.status !== 202) throw new Error(`registering ${email}: ${r.status} ${r.text}`);
    registered.push(email);
  }
  // Warm-up: a few of each, not counted.
  for (let i = 0; i < 10; i++) {
    await signup(`warm-${i}@example.com`, `warm-new-${i}`);
    await signup(registered[i % registered.length]!, `warm-reg-${i}`);
  }
  const times = { registered: [] as number[], fresh: [] as number[] };
  let registeredHandle: string | null = null;
  const answers = new Set<string>();
  for (let i = 0; i < requests; i++) {
    const useRegistered = Math.random() < 0.5;
    const handle = `t-${i}`;
    const r = useRegistered ? await signup(registered[i % registered.length]!, handle) : await signup(`fresh-${i}@example.com`, handle);
    if (r.status !== 202) throw new Error(`signup ${i}: ${r.status} ${r.text}`);
    answers.add(r.text);
    (useRegistered ? times.registered : times.fresh).push(r.ms);
    if (useRegistered) registeredHandle ??= handle;
    if ((i + 1) % 100 === 0) log(`${i + 1}/${requests}`);
  }
  // The oracle of the finding: does the handle of a registered address's signup stay free (202) or is it taken (409, as after a new address)?
  const probe = await signup("someone-else@example.com", registeredHandle ?? "t-0");
  const result = {
    when: new Date().toISOString(),
    command: `bun bench/signup-timing.ts ${process.argv.slice(2).join(" ")}`.trim(),
    root: opt.root,
    machine: machine(),
    load_before: loadBefore,
    load_after: load(),
    registered: summary(times.registered),
    fresh: summary(times.fresh),
    mann_whitney: mannWhitney(times.registered, times.fresh),
    distinct_answer_bodies: answers.size,
    handle_after_a_registered_address: probe.status,
  };
  const text = JSON.stringify(result, null, 2);
  if (opt.out) await Bun.write(opt.out, text);
  console.log(text);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
