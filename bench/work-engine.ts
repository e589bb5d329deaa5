// The durable-work engine (issue 26 §2) against the code before it, side by side in one run:
//
//   bun bench/work-engine.ts --base DIR [--idle-s 30] [--reps 30] [--out FILE]
//
// For each checkout (DIR, e.g. `git archive <commit>` unpacked with node_modules linked, and this
// one), alternating, a fresh server (`bun src/main.ts serve`, fs storage, temp data dir):
//   idle       write transactions/s and statements/s (read + write) of an idle server over
//              --idle-s seconds (from /metrics: svc_sqlite_transaction_duration_seconds_count and
//              svc_sqlite_statement_duration_seconds_count), after a 3 s settle;
//   webhook    a push (POST …/commits) to a repository with one webhook on a local receiver:
//              from the push's answer to the receiver's request, p50/p90/max over --reps;
//   claim      push-to-claim: a runner long-polls the claim; a push of a workflow for it; from
//              the push's answer to the claim's answer;
//   lander     a change queued on an empty queue (fast-forward): from the land request's answer
//              to the first 2 ms poll that sees `landed`.
// The JSON summary goes to stdout (and --out); progress to stderr.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { machine } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { startSvc, type SvcServer } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  options: {
    base: { type: "string" },
    "idle-s": { type: "string", default: "30" },
    reps: { type: "string", default: "30" },
    out: { type: "string" },
  },
});
if (!opt.base) throw new Error("--base DIR: the checkout to compare with");
const IDLE_S = Number(opt["idle-s"]);
const REPS = Number(opt.reps);
const TOKEN = "bench-metrics-token";
const log = (s: string) => process.stderr.write(`${s}\n`);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const r1 = (x: number) => Math.round(x * 10) / 10;
const stats = (xs: number[]) => ({ p50_ms: r1(pct(xs, 50)), p90_ms: r1(pct(xs, 90)), max_ms: r1(Math.max(...xs)), n: xs.length });

/** The receiver: records when each delivery arrived. */
const arrivals: { at: number; body: string }[] = [];
let arrived: (() => void) | null = null;
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = await req.text();
    arrivals.push({ at: performance.now(), body });
    arrived?.();
    return new Response("ok");
  },
});

async function metric(s: SvcServer, name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  let sum = 0;
  for (const line of text.split("\n")) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  return sum;
}

async function measure(root: string, label: string) {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-work-"));
  const s = await startSvc(dir, { SVC_LOG: "warn", SVC_METRICS_TOKEN: TOKEN, SVC_WEBHOOK_ALLOW_PRIVATE: "1", SVC_RUNNER_CLAIM_WAIT_MS: "30000" }, [], root);
  try {
    const email = "bench@example.com";
    const password = "correct horse battery staple";
    const created = await run(
      [BUN, join(root, "src/main.ts"), "user-create", "--org", "bench", "--email", email, "--name", "Bench", "--password", password, "--role", "owner"],
      { ...cleanEnv(), ...s.env },
    );
    if (created.code !== 0) throw new Error(created.stderr);
    const login = await fetch(`${s.url}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const api = async (method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> => {
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : { cookie, origin: s.url };
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(`${s.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    const ok = async (p: Promise<{ status: number; body: any }>) => {
      const r = await p;
      if (r.status >= 300) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const admin = (await ok(api("POST", "/v1/orgs/bench/tokens", { scopes: ["org:admin"], label: "bench", kind: "service" }))).token as string;
    const a = (method: string, path: string, body?: unknown) => ok(api(method, path, body, admin));

    // idle
    await Bun.sleep(3000);
    const tx0 = await metric(s, "svc_sqlite_transaction_duration_seconds_count");
    const st0 = await metric(s, "svc_sqlite_statement_duration_seconds_count");
    const t0 = performance.now();
    await Bun.sleep(IDLE_S * 1000);
    const secs = (performance.now() - t0) / 1000;
    // The two scrapes themselves read nothing from SQLite's write side; their statements are counted (a few).
    const tx1 = await metric(s, "svc_sqlite_transaction_duration_seconds_count");
    const st1 = await metric(s, "svc_sqlite_statement_duration_seconds_count");
    const idle = { write_tx_per_s: r1((tx1 - tx0) / secs), statements_per_s: r1((st1 - st0) / secs), seconds: r1(secs) };
    log(`${label} idle: ${JSON.stringify(idle)}`);

    // webhook
    await a("POST", "/v1/orgs/bench/repos", { name: "hooked" });
    await a("POST", "/v1/orgs/bench/repos/hooked/webhooks", { url: `http://127.0.0.1:${receiver.port}/hook` });
    const hook: number[] = [];
    for (let i = 0; i < REPS; i++) {
      arrivals.length = 0;
      const got = new Promise<void>((r) => (arrived = r));
      await a("POST", "/v1/orgs/bench/repos/hooked/commits", { branch: "main", message: `h${i}`, operations: [{ op: "put", path: `h${i}`, content: "x" }] });
      const answered = performance.now();
      await got;
      hook.push(Math.max(0, arrivals[0]!.at - answered));
    }
    log(`${label} webhook: ${JSON.stringify(stats(hook))}`);

    // push-to-claim
    await a("POST", "/v1/orgs/bench/repos", { name: "app" });
    const reg = await a("POST", "/v1/orgs/bench/runners/registration-token", {});
    const runner = await ok(api("POST", "/v1/runners/register", { name: "hot", os: "linux", arch: "x64", labels: ["hot"] }, reg.token));
    const claimLat: number[] = [];
    for (let i = 0; i < REPS; i++) {
      const pending = fetch(`${s.url}/v1/runners/claim`, { method: "POST", headers: { authorization: `Bearer ${runner.credential}` } }).then(async (r) => ({
        at: performance.now(),
        status: r.status,
        body: r.status === 200 ? ((await r.json()) as { job_id: string; token: string }) : null,
      }));
      await Bun.sleep(30);
      await a("POST", "/v1/orgs/bench/repos/app/commits", {
        branch: "main",
        message: `w${i}`,
        operations: [
          {
            op: "put",
            path: ".svc/workflows/hot.yml",
            content: `# ${i}\non: push\njobs:\n  hot:\n    runs-on: [self-hosted, hot]\n    steps:\n      - run: echo\n`,
          },
        ],
      });
      const answered = performance.now();
      const got = await pending;
      if (got.status !== 200 || !got.body) throw new Error(`claim ${i}: ${got.status}`);
      claimLat.push(Math.max(0, got.at - answered));
      const done = await fetch(`${s.url}/v1/runner/jobs/${got.body.job_id}/complete`, {
        method: "POST",
        headers: { authorization: `Bearer ${got.body.token}`, "content-type": "application/json" },
        body: JSON.stringify({ verdict: "success" }),
      });
      if (done.status !== 204) throw new Error(`complete: ${done.status}`);
    }
    log(`${label} push-to-claim: ${JSON.stringify(stats(claimLat))}`);

    // lander
    await a("POST", "/v1/orgs/bench/repos", { name: "land" });
    const base = "/v1/orgs/bench/repos/land";
    await a("POST", `${base}/commits`, { branch: "main", message: "seed", operations: [{ op: "put", path: "README", content: "seed\n" }] });
    const land: number[] = [];
    for (let i = 0; i < REPS; i++) {
      const tip = (await a("GET", `${base}/refs`)).refs.find((r: { name: string }) => r.name === "refs/heads/main").target;
      await a("PUT", `${base}/refs/refs/heads/l${i}`, { target: tip, expected: null });
      await a("POST", `${base}/commits`, { branch: `l${i}`, message: `l${i}`, operations: [{ op: "put", path: `l/${i}`, content: `${i}\n` }] });
      const ch = await a("POST", `${base}/changes`, { title: `l${i}`, branch: `l${i}` });
      await a("POST", `${base}/changes/${ch.number}/land`);
      const answered = performance.now();
      for (;;) {
        const c = await a("GET", `${base}/changes/${ch.number}`);
        if (c.state === "landed") break;
        if (c.state === "ejected") throw new Error(`ejected: ${JSON.stringify(c.verdict)}`);
        await Bun.sleep(2);
      }
      land.push(performance.now() - answered);
    }
    log(`${label} lander: ${JSON.stringify(stats(land))}`);
    return { idle, webhook_after_push_answer: stats(hook), push_to_claim_after_push_answer: stats(claimLat), lander_queued_to_landed: stats(land) };
  } finally {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const summary: Record<string, unknown> = {
  machine: machine(),
  command: `bun bench/work-engine.ts ${process.argv.slice(2).join(" ")}`,
  started_at: new Date().toISOString(),
  load_before: loadavg().map(r1),
};
const runs: Record<string, unknown[]> = { before: [], after: [] };
for (let round = 0; round < 2; round++) {
  runs.before!.push(await measure(opt.base, "before"));
  runs.after!.push(await measure(ROOT, "after"));
}
summary.runs = runs;
summary.load_after = loadavg().map(r1);
receiver.stop(true);
const text = JSON.stringify(summary, null, 2);
if (opt.out) writeFileSync(opt.out, text);
process.stdout.write(`${text}\n`);
