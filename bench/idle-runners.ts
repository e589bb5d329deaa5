// Benchmark: what idle runner machines cost the database (issue 27: ≤ 0.02 queries/s per runner).
//
//   bun bench/idle-runners.ts [--machines 200] [--seconds 60] [--claim-wait-ms 20000] [--root DIR]
//
// N machines (one process) long-poll POST /v1/runners/claim against one real server with nothing
// queued. After every machine has been through one whole wait, the database statements the server
// runs over --seconds are counted with the existing statement timing hooks (GET /metrics:
// svc_sqlite_statement_duration_seconds_count, read + write connections; the scrape's own
// statements measured by two back-to-back scrapes and subtracted). Prints statements/s, per
// machine, and the claims answered. --root runs another checkout (e.g. an older commit unpacked
// with `git archive`, node_modules symlinked) to compare before/after. See bench/README.md.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { machine } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { startSvc } from "./lib/svc.ts";

// Bun's fetch runs at most 256 requests at once unless told otherwise: re-run with room for every machine.
if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
  const child = Bun.spawn([BUN, ...process.argv.slice(1)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" },
    stdio: ["inherit", "inherit", "inherit"],
  });
  process.exit(await child.exited);
}

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    machines: { type: "string", default: "200" },
    seconds: { type: "string", default: "60" },
    "claim-wait-ms": { type: "string", default: "20000" },
    root: { type: "string" },
  },
});
const MACHINES = Number(opt.machines);
const WINDOW_MS = Number(opt.seconds) * 1000;
const CLAIM_WAIT_MS = Number(opt["claim-wait-ms"]);
const root = opt.root ?? ROOT;
const log = (s: string) => process.stderr.write(`[idle-runners] ${s}\n`);
const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
const METRICS_TOKEN = "bench-metrics-token";

const dir = mkdtempSync(join(tmpdir(), "svc-bench-idle-"));
const server = await startSvc(dir, { SVC_LOG: "warn", SVC_RUNNER_CLAIM_WAIT_MS: String(CLAIM_WAIT_MS), SVC_METRICS_TOKEN: METRICS_TOKEN }, [], root);
log(
  `server ${server.url} (${root}); load average before: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
);

const email = "bench@example.com";
const password = "correct horse battery staple";
const created = await run(
  [BUN, join(root, "src/main.ts"), "user-create", "--org", "bench", "--email", email, "--name", "Bench", "--password", password, "--role", "owner"],
  {
    ...cleanEnv(),
    ...server.env,
  },
);
if (created.code !== 0) throw new Error(created.stderr);
const login = await fetch(`${server.url}/v1/auth/login`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email, password }),
});
const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
async function api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : { cookie, origin: server.url };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const admin = (await api("POST", "/v1/orgs/bench/tokens", { scopes: ["org:admin"], label: "bench", kind: "service" })).body.token as string;

/** Statements run so far (read + write connections), from the server's own timing hooks. */
async function statements(): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`metrics: ${res.status} ${text.slice(0, 200)}`);
  let n = 0;
  for (const m of text.matchAll(/^svc_sqlite_statement_duration_seconds_count\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

log(`registering ${MACHINES} machines`);
const creds: string[] = [];
for (let i = 0; i < MACHINES; i += 50) {
  creds.push(
    ...(await Promise.all(
      Array.from({ length: Math.min(50, MACHINES - i) }, async (_, k) => {
        const tok = await api("POST", "/v1/orgs/bench/runners/registration-token", {}, admin);
        const r = await api("POST", "/v1/runners/register", { name: `idle-${i + k}`, os: "linux", arch: "x64", labels: ["idle"] }, tok.body.token);
        if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.credential as string;
      }),
    )),
  );
}

const stop = new AbortController();
let answered = 0;
let unexpected = 0;
let errors = 0;
const loops = creds.map(async (cred) => {
  while (!stop.signal.aborted) {
    try {
      const res = await fetch(`${server.url}/v1/runners/claim`, {
        method: "POST",
        headers: { authorization: `Bearer ${cred}` },
        signal: AbortSignal.any([stop.signal, AbortSignal.timeout(CLAIM_WAIT_MS + 30_000)]),
      });
      await res.arrayBuffer();
      if (res.status === 204) answered++;
      else unexpected++;
    } catch {
      if (stop.signal.aborted) return;
      errors++;
    }
  }
});

// Warm-up: every machine through one whole wait (their first claim and credential lookups are not idle cost).
log(`warm-up: ${MACHINES} machines through one wait`);
while (answered < MACHINES) await Bun.sleep(250);
const scrapeA = await statements();
const scrapeB = await statements();
const perScrape = Math.max(0, scrapeB - scrapeA);
const t0 = performance.now();
const s0 = await statements();
const answered0 = answered;
log(`measuring ${WINDOW_MS / 1000} s`);
await Bun.sleep(WINDOW_MS);
const s1 = await statements();
const seconds = (performance.now() - t0) / 1000;
const claims = answered - answered0;
stop.abort();
await Promise.all(loops);
await server.stop();
rmSync(dir, { recursive: true, force: true });

const stmts = s1 - s0 - perScrape;
const summary = {
  machine: machine(),
  command: `bun bench/idle-runners.ts ${process.argv.slice(2).join(" ")}`.trim(),
  root,
  machines: MACHINES,
  claim_wait_ms: CLAIM_WAIT_MS,
  seconds: round(seconds, 1),
  claims_answered_204: claims,
  unexpected_answers: unexpected,
  errors,
  statements: stmts,
  statements_per_scrape: perScrape,
  statements_per_second: round(stmts / seconds, 2),
  statements_per_second_per_machine: round(stmts / seconds / MACHINES, 4),
  statements_per_claim: claims ? round(stmts / claims, 2) : null,
  load_after: loadavg().map((x) => round(x, 1)),
};
console.log(JSON.stringify(summary, null, 2));
