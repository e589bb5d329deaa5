// Micro-benchmark of the claim path in one process (no sockets): the real context and HTTP
// application driven with app.handle(), so a CPU profile shows only the claim and verdict.
//
//   bun [--cpu-prof --cpu-prof-dir=DIR] bench/claim-path.ts [--jobs 4000] [--workers 50]
//
// Queues --jobs jobs (matrix workflows, triggers drained by hand), registers --workers machines,
// then each machine claims and completes until the queue is empty. Prints claims/s and the CPU
// (user + system) per claim-and-verdict pair; checks that no job was handed out twice.
// bench/runners.ts is the measure of record (real server, real sockets); this is for profiling.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.ts";
import { buildApp } from "../src/http/app.ts";
import { openContext } from "../src/runtime.ts";
import { CI_TRIGGER } from "../src/services/ci/trigger.ts";
import { createUserWithOrg } from "../src/services/people/accounts.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: { jobs: { type: "string", default: "4000" }, workers: { type: "string", default: "50" }, "setup-only": { type: "boolean", default: false } },
});
const JOBS = Number(opt.jobs);
const WORKERS = Number(opt.workers);
const dir = mkdtempSync(join(tmpdir(), "svc-bench-claim-"));
const ctx = await openContext(
  loadConfig({
    SVC_DATA_DIR: join(dir, "data"),
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_BASE_URL: "http://svc.test",
    SVC_LOG: "error",
    SVC_RUNNER_CLAIM_WAIT_MS: "200",
  }),
);
const app = buildApp(ctx);
const handle = app.fetch;
async function call(method: string, path: string, o: { body?: unknown; token?: string; cookie?: string } = {}) {
  const headers: Record<string, string> = {};
  if (o.body !== undefined) headers["content-type"] = "application/json";
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.cookie) headers.cookie = o.cookie;
  ctx.facts.fresh();
  const res = await handle(new Request(`http://svc.test${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) }));
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const PASSWORD = "a long enough password";
await createUserWithOrg(ctx, { org: "acme", email: "o@acme.example", name: "Owner", password: PASSWORD, role: "owner" });
const login = await handle(
  new Request("http://svc.test/v1/auth/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "o@acme.example", password: PASSWORD }),
  }),
);
const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
const owner = (method: string, path: string, body?: unknown) => call(method, path, { body: body ?? {}, cookie });
if ((await owner("POST", "/v1/orgs/acme/repos", { name: "app" })).status !== 201) throw new Error("repo");

const perFile = 250;
const files = Math.ceil(JOBS / perFile);
const cells = Array.from({ length: perFile }, (_, i) => i).join(", ");
const ops = Array.from({ length: files }, (_, f) => ({
  op: "put",
  path: `.svc/workflows/bulk-${f}.yml`,
  content: `on: push\njobs:\n  bulk:\n    runs-on: [self-hosted, bulk]\n    strategy:\n      matrix:\n        n: [${cells}]\n    steps:\n      - run: echo\n`,
}));
if ((await owner("POST", "/v1/orgs/acme/repos/app/commits", { branch: "main", message: "bulk", operations: ops })).status !== 201) throw new Error("commit");
while ((await ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
const creds: string[] = [];
for (let i = 0; i < WORKERS; i++) {
  const tok = await owner("POST", "/v1/orgs/acme/runners/registration-token", {});
  const r = await call("POST", "/v1/runners/register", { token: tok.body.token, body: { name: `m${i}`, os: "linux", arch: "x64", labels: ["bulk"] } });
  if (r.status !== 201) throw new Error(`register ${r.status}`);
  creds.push(r.body.credential);
}
if (opt["setup-only"]) {
  // Leaves the data dir for experiments with its queue full.
  console.log(JSON.stringify({ dataDir: join(dir, "data"), credentials: creds }));
  ctx.close();
  process.exit(0);
}
const total = files * perFile;
const seen = new Set<string>();
let dupes = 0;
(globalThis as any).__resetSql?.();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(
  creds.map(async (cred) => {
    for (;;) {
      const r = await call("POST", "/v1/runners/claim", { token: cred });
      if (r.status === 204) return;
      if (r.status !== 200) throw new Error(`claim ${r.status} ${JSON.stringify(r.body)}`);
      if (seen.has(r.body.job_id)) dupes++;
      seen.add(r.body.job_id);
      const c = await call("POST", `/v1/runner/jobs/${r.body.job_id}/complete`, { token: r.body.token, body: { verdict: "success" } });
      if (c.status !== 204) throw new Error(`complete ${c.status}`);
      if (seen.size === total) return;
    }
  }),
);
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
console.log(
  JSON.stringify({
    jobs: total,
    claimed: seen.size,
    duplicates: dupes,
    seconds: +wall.toFixed(2),
    claims_per_s: Math.round(seen.size / wall),
    cpu_ms_per_claim_and_complete: +(cpuMs / seen.size).toFixed(3),
  }),
);
(globalThis as any).__dumpSql?.();
ctx.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
