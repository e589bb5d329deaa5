// PostgreSQL vs SQLite, and several nodes (issue 27, plan-27 §5.1).
//
//   bun bench/pg.ts [--rounds 3] [--duration 8] [--connections 16] [--commit-connections 4]
//                   [--tag v1.6.0] [--git-reps 2] [--only api|git] [--apart] [--out FILE]
//   bun bench/pg.ts --nodes 3 [--reps 100] [--runners 1000] [--seconds 60] [--claim-wait-ms 20000]
//                   [--only claim|idle] [--out FILE]
//
// One node (default): the same checkout started twice on this machine, one node on SQLite (its
// data dir) and one on PostgreSQL (Debian's server from test/helpers/postgres.ts, fsync,
// synchronous_commit and full_page_writes ON, pg_stat_statements loaded), both on fs storage.
// Rounds in which both sides run each phase at the same time (each with its own load generator,
// so both see the same machine load; --apart: one after the other, the first side alternating):
// authenticated GET of a repository and
// 1-operation API commits (each connection its own branch, no expected_parent) at the same
// concurrency, req/s and p50/p99; then git push of a git/git subset (history up to --tag, made
// once under bench/work/repos/ from /work/.mirror/git+git/repo) into a fresh repository and a
// clone of it, wall seconds. Every phase also reports the statements per request the node ran
// (its own statement timing hooks, GET /metrics, minus the scrape's own) and, on PostgreSQL,
// the server's count and execution time per request (pg_stat_statements), with the load average.
//
// --nodes N (≥ 2): N nodes over one PostgreSQL (durable as above) and one s3rver bucket.
// claim: --reps times, a machine's long-poll claim is held on node B while an API commit of a
//   workflow (a push) on node A queues its job; measured from the push's answer to the claim's
//   answer (pairs rotate over the nodes). Target p99 ≤ 1 s.
// idle: --runners machines spread over the nodes long-poll with nothing queued; after every
//   machine has been through one whole wait, --seconds of database statements are counted at
//   the server (pg_stat_statements calls, transaction control included and not) and by each
//   node's hooks, per second per machine. Target ≤ 0.02. The top statements are listed.
// Progress goes to stderr, the JSON summary to stdout (and --out). See bench/README.md §25.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startPostgres, type PostgresDatabase } from "../test/helpers/postgres.ts";
import { startS3rver } from "../test/helpers/s3rver.ts";
import { diffPg, nodeStatements, pgCounters, pgTopStatements, scrapeCost, type PgCounters } from "./lib/db-stats.ts";
import { gitEnv, procCpu, processTree, run as runTimed } from "./lib/git-util.ts";
import { findWrk, runLoad } from "./lib/load.ts";
import { machine } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { startSvc, type SvcServer } from "./lib/svc.ts";

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
    nodes: { type: "string", default: "1" },
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "8" },
    connections: { type: "string", default: "16" },
    "commit-connections": { type: "string", default: "4" },
    tag: { type: "string", default: "v1.6.0" },
    "git-reps": { type: "string", default: "2" },
    reps: { type: "string", default: "100" },
    runners: { type: "string", default: "1000" },
    seconds: { type: "string", default: "60" },
    "claim-wait-ms": { type: "string", default: "20000" },
    only: { type: "string" },
    root: { type: "string" },
    out: { type: "string" },
    keep: { type: "boolean", default: false },
    apart: { type: "boolean", default: false },
  },
});
const NODES = Number(opt.nodes);
/** The checkout the nodes run (another one to compare with: an older commit unpacked with `git archive`, node_modules linked). */
const SVC_ROOT = opt.root ?? ROOT;
const METRICS_TOKEN = "bench-metrics-token";
const MIRROR = "/work/.mirror/git+git/repo";
const log = (s: string) => process.stderr.write(`[pg] ${new Date().toISOString().slice(11, 19)} ${s}\n`);
const round = (x: number, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);
const load = () => loadavg().map((x) => Math.round(x * 10) / 10);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN;
};
const median = (xs: number[]) => pct(xs, 50);

const work = mkdtempSync(join(tmpdir(), "svc-bench-pg-"));
const pg = await startPostgres({ durable: true, settings: { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "all" } });
log(`PostgreSQL ${pg.version} at ${pg.url} (fsync on); load ${load().join(" ")}`);

/** CPU seconds the PostgreSQL server has used: the postmaster, its live backends, and the exited ones it reaped. */
function pgCpu(): number {
  const postmaster = Number(readFileSync(join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  let total = procCpu(postmaster).children;
  for (const p of processTree(postmaster)) {
    try {
      total += procCpu(p).self;
    } catch {
      // exited meanwhile (its CPU is in the postmaster's children from now on)
    }
  }
  return total;
}

/** A database for svc, with pg_stat_statements, and an admin connection to it (the counters are per database). */
async function benchDatabase(): Promise<{ db: PostgresDatabase; sql: InstanceType<typeof Bun.SQL> }> {
  const db = await pg.createDatabase();
  const sql = new Bun.SQL({ url: db.url, max: 1 });
  await sql.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  return { db, sql };
}

// ---------------------------------------------------------------------------------------
// Accounts

interface Account {
  org: string;
  token: string;
}

async function call(url: string, method: string, path: string, body: unknown, headers: Record<string, string>, expect: number): Promise<any> {
  const h: Record<string, string> = { ...headers };
  if (body !== undefined) h["content-type"] = "application/json";
  const res = await fetch(url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${path}: expected ${expect}, got ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** Owner (CLI), sign-in, a service token with repo and org admin scopes. */
async function bootstrap(s: SvcServer, org = "bench"): Promise<Account> {
  const email = "bench@example.com";
  const password = "correct horse battery staple";
  const made = await run(
    [BUN, join(SVC_ROOT, "src/main.ts"), "user-create", "--org", org, "--email", email, "--name", "Bench", "--password", password, "--role", "owner"],
    { ...cleanEnv(), ...s.env },
  );
  if (made.code !== 0) throw new Error(`user-create: ${made.stderr}`);
  const res = await fetch(`${s.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`login: ${res.status}`);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const minted = await call(
    s.url,
    "POST",
    `/v1/orgs/${org}/tokens`,
    { scopes: ["repo:read", "repo:write", "org:admin"], label: "bench", kind: "service" },
    { cookie, origin: s.url },
    201,
  );
  return { org, token: minted.token };
}

const bearer = (a: Account) => ({ authorization: `Bearer ${a.token}` });

// ---------------------------------------------------------------------------------------
// One node: PostgreSQL vs SQLite

interface Side {
  name: "sqlite" | "pg";
  svc: SvcServer;
  acct: Account;
  scrape: number;
  sql: InstanceType<typeof Bun.SQL> | null;
  dbName: string | null;
}

/** What a phase cost in statements: per request at the node, and at the server on PostgreSQL. */
async function measured<T>(side: Side, requests: (r: T) => number, fn: () => Promise<T>): Promise<{ result: T; cost: Record<string, unknown> }> {
  if (side.sql) await side.sql.unsafe("SELECT pg_stat_statements_reset()");
  const n0 = await nodeStatements(side.svc.url, METRICS_TOKEN);
  const p0 = side.sql ? await pgCounters(side.sql, side.dbName!) : null;
  const cpu0 = procCpu(side.svc.pid).self;
  const pgCpu0 = pgCpu();
  const result = await fn();
  const cpu1 = procCpu(side.svc.pid).self;
  const pgCpu1 = pgCpu();
  const n1 = await nodeStatements(side.svc.url, METRICS_TOKEN);
  const p1 = side.sql ? await pgCounters(side.sql, side.dbName!) : null;
  const n = requests(result);
  const stmts = n1.count - n0.count - side.scrape;
  const cost: Record<string, unknown> = {
    statements_per_request: round(stmts / n, 2),
    client_ms_per_statement: round(((n1.seconds - n0.seconds) * 1000) / Math.max(1, stmts), 3),
    svc_cpu_ms_per_request: round(((cpu1 - cpu0) * 1000) / n, 3),
  };
  if (p0 && p1) {
    const d = diffPg(p0, p1);
    cost.server_statements_per_request = round(d.calls / n, 2);
    cost.server_tx_control_per_request = round(d.txControl / n, 2);
    cost.server_exec_ms_per_request = round(d.execMs / n, 3);
    cost.server_exec_ms_per_statement = round(d.execMs / Math.max(1, d.calls), 4);
    // The whole server's CPU (parse, bind, protocol, commit, WAL writer…), not only execution.
    cost.pg_cpu_ms_per_request = round(((pgCpu1 - pgCpu0) * 1000) / n, 3);
    cost.top_statements = (await pgTopStatements(side.sql!, side.dbName!, 8)).map((t) => ({ ...t, per_request: round(t.calls / n, 2) }));
  }
  return { result, cost };
}

/** A closed loop of `connections` workers for `seconds`: requests, rps, p50/p99. */
async function closedLoop(connections: number, seconds: number, one: (worker: number, i: number) => Promise<void>) {
  const lat: number[] = [];
  let errors = 0;
  let firstError = "";
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        const s = performance.now();
        try {
          await one(w, i);
          lat.push(performance.now() - s);
        } catch (e) {
          errors++;
          firstError ||= String(e);
        }
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  return {
    requests: lat.length,
    errors,
    first_error: firstError || undefined,
    rps: round(lat.length / wall, 1),
    p50_ms: round(pct(lat, 50), 1),
    p99_ms: round(pct(lat, 99), 1),
  };
}

async function apiGet(side: Side, seconds: number, connections: number, tmp: string) {
  const url = `${side.svc.url}/v1/orgs/${side.acct.org}/repos/app`;
  const wrk = await findWrk();
  if (wrk) {
    const r = await runLoad("wrk", { url, connections, threads: 1, durationS: seconds, headers: bearer(side.acct), tmpDir: tmp });
    return { requests: r.requests, errors: r.non2xx + r.socket_errors, rps: round(r.rps, 1), p50_ms: r.p50_ms, p99_ms: r.p99_ms, tool: "wrk" };
  }
  return {
    ...(await closedLoop(connections, seconds, async () => {
      const res = await fetch(url, { headers: bearer(side.acct) });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET ${res.status}`);
    })),
    tool: "fetch",
  };
}

let commitRound = 0;
async function apiCommit(side: Side, seconds: number, connections: number) {
  const r = ++commitRound;
  return closedLoop(connections, seconds, async (w, i) => {
    const res = await fetch(`${side.svc.url}/v1/orgs/${side.acct.org}/repos/app/commits`, {
      method: "POST",
      headers: { ...bearer(side.acct), "content-type": "application/json" },
      body: JSON.stringify({
        branch: `w${r}-${w}`,
        message: `bench ${i}`,
        operations: [{ op: "put", path: `d${i % 16}/f${i}.txt`, content: `${r} ${w} ${i}\n` }],
      }),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`commit ${res.status} ${text.slice(0, 200)}`);
  });
}

/** A bare subset of git/git up to `tag` (refs/heads/main = the tag's commit), made once. */
async function subset(tag: string): Promise<string> {
  const path = join(ROOT, "bench/work/repos", `git-${tag}.git`);
  if (!existsSync(join(path, "refs/heads/main")) && !existsSync(join(path, "packed-refs"))) {
    rmSync(path, { recursive: true, force: true });
    mkdirSync(join(ROOT, "bench/work/repos"), { recursive: true });
    log(`making ${path} from ${MIRROR}`);
    await runTimed(["git", "clone", "--quiet", "--bare", "--no-local", "--single-branch", "--branch", tag, MIRROR, path], { env: gitEnv(work) });
    await runTimed(["git", "update-ref", "refs/heads/main", `${tag}^{commit}`], { cwd: path, env: gitEnv(work) });
  }
  return path;
}

function gitUrl(side: Side, repo: string): string {
  const u = new URL(side.svc.url);
  return `${u.protocol}//x:${side.acct.token}@${u.host}/${side.acct.org}/${repo}.git`;
}

async function onePush(side: Side, source: string, repo: string) {
  await call(side.svc.url, "POST", `/v1/orgs/${side.acct.org}/repos`, { name: repo }, bearer(side.acct), 201);
  const r = await runTimed(["git", "push", "--quiet", gitUrl(side, repo), "refs/heads/main:refs/heads/main"], { cwd: source, env: gitEnv(work) });
  return { requests: 1, seconds: r.wall };
}

async function oneClone(side: Side, repo: string, rep: number) {
  const dest = join(work, `clone-${side.name}-${rep}.git`);
  const r = await runTimed(["git", "clone", "--quiet", "--bare", gitUrl(side, repo), dest], { env: gitEnv(work) });
  rmSync(dest, { recursive: true, force: true });
  return { requests: 1, seconds: r.wall };
}

async function oneNode(): Promise<Record<string, unknown>> {
  const rounds = Number(opt.rounds);
  const duration = Number(opt.duration);
  const conns = Number(opt.connections);
  const commitConns = Number(opt["commit-connections"]);
  const { db, sql } = await benchDatabase();
  const common = { SVC_LOG: "warn", SVC_METRICS_TOKEN: METRICS_TOKEN };
  const sides: Side[] = [];
  for (const name of ["sqlite", "pg"] as const) {
    const dir = join(work, name);
    mkdirSync(dir);
    const svc = await startSvc(dir, name === "pg" ? { ...common, SVC_DATABASE_URL: db.url } : common, [], SVC_ROOT);
    const acct = await bootstrap(svc);
    await call(svc.url, "POST", `/v1/orgs/${acct.org}/repos`, { name: "app" }, bearer(acct), 201);
    await call(svc.url, "GET", `/v1/orgs/${acct.org}/repos/app`, undefined, bearer(acct), 200);
    const scrape = await scrapeCost(svc.url, METRICS_TOKEN);
    sides.push({ name, svc, acct, scrape, sql: name === "pg" ? sql : null, dbName: name === "pg" ? db.name : null });
    log(`${name}: ${svc.url} (pid ${svc.pid}), ${scrape} statements per /metrics scrape`);
  }
  const out: Record<string, unknown> = { rounds, duration_s: duration, connections: conns, commit_connections: commitConns };
  const order = (r: number) => (r % 2 === 0 ? sides : [...sides].reverse());
  // Both sides at once (default): on a shared machine whose load swings from second to second,
  // only simultaneous phases see the same load; --apart runs them one after the other.
  const each = async (list: Side[], fn: (s: Side) => Promise<void>) => {
    if (opt.apart) for (const s of list) await fn(s);
    else await Promise.all(list.map(fn));
  };
  type Row = Record<string, unknown>;
  const rows: { phase: string; side: string; round: number; load: number[]; row: Row }[] = [];
  try {
    if (opt.only !== "git") {
      // Warm both (JIT, caches, connection pools).
      for (const s of sides) {
        await apiGet(s, 2, conns, work);
        await apiCommit(s, 2, commitConns);
      }
      for (let r = 0; r < rounds; r++) {
        await each(order(r), async (s) => {
          const { result, cost } = await measured(
            s,
            (x) => Math.max(1, x.requests),
            () => apiGet(s, duration, conns, work),
          );
          rows.push({ phase: "api_get_repo", side: s.name, round: r, load: load(), row: { ...result, ...cost } });
          log(`GET repo ${s.name} round ${r}: ${result.rps} req/s p99 ${result.p99_ms} ms, ${cost.statements_per_request} stmts/req; load ${load()[0]}`);
        });
        await each(order(r + 1), async (s) => {
          const { result, cost } = await measured(
            s,
            (x) => Math.max(1, x.requests),
            () => apiCommit(s, duration, commitConns),
          );
          rows.push({ phase: "api_commit", side: s.name, round: r, load: load(), row: { ...result, ...cost } });
          log(`commit ${s.name} round ${r}: ${result.rps} req/s p99 ${result.p99_ms} ms, ${cost.statements_per_request} stmts/req; load ${load()[0]}`);
        });
      }
    }
    if (opt.only !== "api") {
      const source = await subset(opt.tag!);
      const reps = Number(opt["git-reps"]);
      for (let r = 0; r < reps; r++) {
        await each(order(r), async (s) => {
          const { result, cost } = await measured(
            s,
            (x) => x.requests,
            () => onePush(s, source, `push-${r}`),
          );
          rows.push({ phase: "git_push", side: s.name, round: r, load: load(), row: { ...result, ...cost } });
          log(`push ${s.name} rep ${r}: ${round(result.seconds)} s, ${cost.statements_per_request} stmts; load ${load()[0]}`);
        });
        await each(order(r + 1), async (s) => {
          const { result, cost } = await measured(
            s,
            (x) => x.requests,
            () => oneClone(s, `push-${r}`, r),
          );
          rows.push({ phase: "git_clone", side: s.name, round: r, load: load(), row: { ...result, ...cost } });
          log(`clone ${s.name} rep ${r}: ${round(result.seconds)} s, ${cost.statements_per_request} stmts; load ${load()[0]}`);
        });
      }
    }
  } finally {
    for (const s of sides) await s.svc.stop();
    await sql.close();
  }
  // Ratios pg/sqlite per round (same round = same load), then medians.
  const ratio: Record<string, unknown> = {};
  for (const phase of ["api_get_repo", "api_commit", "git_push", "git_clone"]) {
    const per: { rps?: number; p99?: number; seconds?: number }[] = [];
    for (const r of new Set(rows.filter((x) => x.phase === phase).map((x) => x.round))) {
      const a = rows.find((x) => x.phase === phase && x.round === r && x.side === "sqlite")?.row;
      const b = rows.find((x) => x.phase === phase && x.round === r && x.side === "pg")?.row;
      if (!a || !b) continue;
      if (phase.startsWith("api")) per.push({ rps: (b.rps as number) / (a.rps as number), p99: (b.p99_ms as number) / (a.p99_ms as number) });
      else per.push({ seconds: (b.seconds as number) / (a.seconds as number) });
    }
    if (!per.length) continue;
    ratio[phase] = phase.startsWith("api")
      ? {
          pg_over_sqlite_rps: per.map((p) => round(p.rps!)),
          median_rps: round(median(per.map((p) => p.rps!))),
          pg_over_sqlite_p99: per.map((p) => round(p.p99!)),
          target: "rps ≥ 0.7",
        }
      : { pg_over_sqlite_seconds: per.map((p) => round(p.seconds!)), median: round(median(per.map((p) => p.seconds!))), target: "≤ 1.1" };
  }
  out.phases = rows;
  out.ratios = ratio;
  return out;
}

// ---------------------------------------------------------------------------------------
// Several nodes

async function severalNodes(): Promise<Record<string, unknown>> {
  const { db, sql } = await benchDatabase();
  const s3 = await startS3rver();
  const env: Record<string, string> = {
    SVC_LOG: "warn",
    SVC_METRICS_TOKEN: METRICS_TOKEN,
    SVC_DATABASE_URL: db.url,
    SVC_STORAGE: "s3",
    SVC_S3_ENDPOINT: s3.endpoint,
    SVC_S3_BUCKET: s3.bucket,
    SVC_S3_ACCESS_KEY: s3.accessKey,
    SVC_S3_SECRET_KEY: s3.secretKey,
    SVC_RUNNER_CLAIM_WAIT_MS: String(Number(opt["claim-wait-ms"])),
  };
  const nodes: SvcServer[] = [];
  const out: Record<string, unknown> = { nodes: NODES, root: SVC_ROOT };
  let busy = 0;
  try {
    for (let i = 0; i < NODES; i++) {
      const dir = join(work, `node-${i}`);
      mkdirSync(dir);
      nodes.push(await startSvc(dir, env, [], SVC_ROOT));
      log(`node ${i}: ${nodes[i]!.url} (pid ${nodes[i]!.pid})`);
    }
    const acct = await bootstrap(nodes[0]!);
    await call(nodes[0]!.url, "POST", `/v1/orgs/${acct.org}/repos`, { name: "app" }, bearer(acct), 201);
    // Minting and registering write authority facts, which all move one epoch row: many at once
    // conflict under SERIALIZABLE and may end in 503 database_busy after the retries; try again.
    const retryBusy = async <T>(fn: () => Promise<T>): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await fn();
        } catch (e) {
          if (attempt >= 10 || !String(e).includes("got 503")) throw e;
          busy++;
        }
      }
    };
    const register = async (node: SvcServer, name: string, labels: string[]): Promise<string> => {
      const tok = await retryBusy(() => call(node.url, "POST", `/v1/orgs/${acct.org}/runners/registration-token`, {}, bearer(acct), 201));
      const r = await retryBusy(() =>
        call(node.url, "POST", "/v1/runners/register", { name, os: "linux", arch: "x64", labels }, { authorization: `Bearer ${tok.token}` }, 201),
      );
      return r.credential as string;
    };
    const claimOn = (node: SvcServer, cred: string, signal?: AbortSignal) =>
      fetch(`${node.url}/v1/runners/claim`, {
        method: "POST",
        headers: { authorization: `Bearer ${cred}` },
        signal: AbortSignal.any([...(signal ? [signal] : []), AbortSignal.timeout(Number(opt["claim-wait-ms"]) + 30_000)]),
      });

    if (opt.only !== "idle") {
      const reps = Number(opt.reps);
      const hot = await register(nodes[0]!, "hot", ["hot"]);
      const fromAnswer: number[] = [];
      const fromStart: number[] = [];
      // Where the time went, from the job row's own stamps (ms, the nodes' clocks = this machine's):
      // push answer → job queued (the ci.trigger job ran), queued → claimed (the wake and the claim
      // transaction on B), claimed → the claim's answer at the client.
      const toQueued: number[] = [];
      const toClaimed: number[] = [];
      const toAnswer: number[] = [];
      let commits = 0;
      log(`push-to-claim: ${reps} reps over ${NODES} nodes; load ${load().join(" ")}`);
      const load0 = load();
      for (let i = 0; i < reps; i++) {
        const a = nodes[i % NODES]!;
        const b = nodes[(i + 1) % NODES]!;
        const pending = claimOn(b, hot).then(async (r) => ({
          at: performance.now(),
          status: r.status,
          body: r.status === 200 ? ((await r.json()) as { job_id: string; token: string }) : null,
        }));
        // The claim must be waiting on B before the push (as a runner's is); the measure starts at the push.
        await Bun.sleep(100);
        const t0 = performance.now();
        await call(
          a.url,
          "POST",
          `/v1/orgs/${acct.org}/repos/app/commits`,
          {
            branch: "main",
            message: `push ${++commits}`,
            operations: [
              {
                op: "put",
                path: ".svc/workflows/hot.yml",
                content: `# ${i}\non: push\njobs:\n  hot:\n    runs-on: [self-hosted, hot]\n    steps:\n      - run: echo\n`,
              },
            ],
          },
          bearer(acct),
          201,
        );
        const t1 = performance.now();
        const w1 = Date.now();
        const got = await pending;
        const w2 = Date.now();
        if (got.status !== 200 || !got.body) throw new Error(`rep ${i}: the machine waiting on node ${(i + 1) % NODES} got ${got.status}`);
        fromAnswer.push(Math.max(0, got.at - t1));
        fromStart.push(got.at - t0);
        const [job] = (await sql.unsafe("SELECT queued_at::float8 AS q, started_at::float8 AS s FROM workflow_jobs WHERE id = $1", [got.body.job_id])) as {
          q: number;
          s: number;
        }[];
        if (job) {
          toQueued.push(Math.max(0, job.q - w1));
          toClaimed.push(job.s - job.q);
          toAnswer.push(w2 - job.s);
        }
        const done = await fetch(`${nodes[(i + 2) % NODES]!.url}/v1/runner/jobs/${got.body.job_id}/complete`, {
          method: "POST",
          headers: { authorization: `Bearer ${got.body.token}`, "content-type": "application/json" },
          body: JSON.stringify({ verdict: "success" }),
        });
        if (done.status !== 204) throw new Error(`complete: ${done.status}`);
        if ((i + 1) % 25 === 0) log(`  ${i + 1}: p50 ${round(median(fromAnswer), 1)} ms, p99 ${round(pct(fromAnswer, 99), 1)} ms`);
      }
      out.push_to_claim = {
        reps,
        from_push_answer_p50_ms: round(median(fromAnswer), 1),
        from_push_answer_p99_ms: round(pct(fromAnswer, 99), 1),
        from_push_answer_max_ms: round(Math.max(...fromAnswer), 1),
        from_push_start_p50_ms: round(median(fromStart), 1),
        from_push_start_p99_ms: round(pct(fromStart, 99), 1),
        push_answer_to_queued_p50_p99_ms: [median(toQueued), pct(toQueued, 99)],
        queued_to_claimed_p50_p99_ms: [median(toClaimed), pct(toClaimed, 99)],
        claimed_to_answer_p50_p99_ms: [median(toAnswer), pct(toAnswer, 99)],
        load_before: load0,
        load_after: load(),
        target: "p99 ≤ 1000 ms",
      };
      log(`push-to-claim: ${JSON.stringify(out.push_to_claim)}`);
    }

    if (opt.only !== "claim") {
      const runners = Number(opt.runners);
      const seconds = Number(opt.seconds);
      log(`registering ${runners} machines`);
      const creds: string[] = [];
      for (let i = 0; i < runners; i += 10)
        creds.push(
          ...(await Promise.all(Array.from({ length: Math.min(10, runners - i) }, (_, k) => register(nodes[(i + k) % NODES]!, `idle-${i + k}`, ["idle"])))),
        );
      log(`registered (${busy} registration-token mints answered 503 database_busy and were retried)`);
      const stop = new AbortController();
      let answered = 0;
      let unexpected = 0;
      let errors = 0;
      const loops = creds.map(async (cred, i) => {
        const node = nodes[i % NODES]!;
        while (!stop.signal.aborted) {
          try {
            const res = await claimOn(node, cred, stop.signal);
            await res.arrayBuffer();
            if (res.status === 204) answered++;
            else unexpected++;
          } catch {
            if (stop.signal.aborted) return;
            errors++;
          }
        }
      });
      log(`warm-up: ${runners} machines through one wait`);
      while (answered < runners) await Bun.sleep(250);
      const scrapes = await Promise.all(nodes.map((n) => scrapeCost(n.url, METRICS_TOKEN)));
      await sql.unsafe("SELECT pg_stat_statements_reset()");
      const n0 = await Promise.all(nodes.map((n) => nodeStatements(n.url, METRICS_TOKEN)));
      const p0: PgCounters = await pgCounters(sql, db.name);
      const a0 = answered;
      const t0 = performance.now();
      const load0 = load();
      log(`measuring ${seconds} s; load ${load0.join(" ")}`);
      await Bun.sleep(seconds * 1000);
      const p1 = await pgCounters(sql, db.name);
      const n1 = await Promise.all(nodes.map((n) => nodeStatements(n.url, METRICS_TOKEN)));
      const wall = (performance.now() - t0) / 1000;
      const top = await pgTopStatements(sql, db.name);
      const claims = answered - a0;
      stop.abort();
      await Promise.allSettled(loops);
      const d = diffPg(p0, p1);
      const nodeStmts = n1.reduce((s, x, i) => s + x.count - n0[i]!.count - scrapes[i]!, 0);
      out.idle = {
        runners,
        claim_wait_ms: Number(opt["claim-wait-ms"]),
        seconds: round(wall, 1),
        claims_answered_204: claims,
        unexpected_answers: unexpected,
        errors,
        server_statements: d.calls,
        server_statements_per_second_per_runner: round(d.calls / wall / runners, 4),
        server_statements_without_tx_control_per_second_per_runner: round((d.calls - d.txControl) / wall / runners, 4),
        server_transactions: d.xacts,
        node_hook_statements: nodeStmts,
        node_hook_statements_per_second_per_runner: round(nodeStmts / wall / runners, 4),
        statements_per_claim: claims ? round((d.calls - d.txControl) / claims, 3) : null,
        top_statements: top,
        load_before: load0,
        load_after: load(),
        target: "≤ 0.02 statements/s per runner",
      };
      log(`idle: ${JSON.stringify({ ...(out.idle as object), top_statements: undefined })}`);
    }
  } finally {
    for (const n of nodes) await n.stop();
    await sql.close();
    await s3.stop();
  }
  return out;
}

const summary: Record<string, unknown> = {
  machine: machine(),
  command: `bun bench/pg.ts ${process.argv.slice(2).join(" ")}`.trim(),
  commit: (await run(["git", "rev-parse", "--short", "HEAD"])).stdout.trim(),
  started_at: new Date().toISOString(),
  postgres: `${pg.version} (fsync, synchronous_commit, full_page_writes on)`,
  load_before: load(),
};
try {
  Object.assign(summary, NODES > 1 ? await severalNodes() : await oneNode());
} finally {
  summary.load_after = load();
  summary.finished_at = new Date().toISOString();
  await pg.stop();
  if (!opt.keep) rmSync(work, { recursive: true, force: true });
}
const text = JSON.stringify(summary, null, 2);
console.log(text);
if (opt.out) writeFileSync(opt.out, `${text}\n`);
