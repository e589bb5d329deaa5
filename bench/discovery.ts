// Discovery performance targets (issue 16), measured in-process against the real context (SQLite
// on a temp data dir, fs object store) and the real services, so the figures are the query work
// a request does, without HTTP noise on a shared machine:
//   1. search over 100,000 repositories in 1,000 orgs, as an outsider and as a member of 50 orgs;
//   2. a year's contribution graph of a person with 50,000 commits across 200 repositories: the
//      service (the JSON text), cold (a range never asked before, so the written-answer cache
//      misses) and warm (the same range again), and the whole request through the application
//      in-process (routing, caller, Response, body read) cold and warm;
//   3. metrics for a year of 10 million recorded operations;
//   4. an API commit with and without the contribution recorder subscribed (ABAB blocks).
// Usage: bun bench/discovery.ts [--reps 300] [--commits 400] [--only search,graph,metrics,commit] [--store]
// Each measure reports wall p50/p99 and the process's CPU time per call (user + system, from
// process.cpuUsage), which the other work on a shared machine inflates far less than wall time.
import { mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { loadConfig } from "../src/config.ts";
import { openContext } from "../src/runtime.ts";
import type { Principal } from "../src/services/access/principal.ts";
import { buildApp } from "../src/http/app.ts";
import { contributionGraphJson, enqueueContributions } from "../src/services/discovery/contributions.ts";
import { contributionGraphRows, creditCommits } from "../src/services/discovery/store.ts";
import { searchRepos } from "../src/services/discovery/search.ts";
import { encode, observe, type Histogram } from "../src/services/metrics/histogram.ts";
import { getMetrics } from "../src/services/metrics/summary.ts";
import { createUserWithOrg } from "../src/services/people/accounts.ts";
import { createCommit } from "../src/services/repos/commits.ts";
import { createRepo, openRepo } from "../src/services/repos/repos.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const REPS = arg("reps", 300);
const COMMITS = arg("commits", 400);
const onlyAt = process.argv.indexOf("--only");
const ONLY = new Set(onlyAt > 0 ? process.argv[onlyAt + 1]!.split(",") : ["search", "graph", "metrics", "commit"]);

const root = mkdtempSync(join(tmpdir(), "svc-bench-discovery-"));
const ctx = await openContext(
  loadConfig({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" }),
);
const raw = (ctx.db as unknown as { writer: { run(q: unknown): void } }).writer;
const run = (q: ReturnType<typeof sql>) => raw.run(q);

const cpuOf = new WeakMap<number[], number[]>();
function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
  const cpu = cpuOf.get(samples);
  const c = cpu ? [...cpu].sort((a, b) => a - b) : null;
  const cat = (p: number) => c![Math.min(c!.length - 1, Math.max(0, Math.ceil((p / 100) * c!.length) - 1))]!;
  return {
    n: s.length,
    p50_ms: +at(50).toFixed(2),
    p99_ms: +at(99).toFixed(2),
    max_ms: +s[s.length - 1]!.toFixed(2),
    ...(c ? { cpu_p50_ms: +cat(50).toFixed(2), cpu_p99_ms: +cat(99).toFixed(2) } : {}),
  };
}
/** Times `fn` n times; `before` runs untimed ahead of each call. */
async function time(n: number, fn: (i: number) => Promise<unknown>, before?: (i: number) => Promise<unknown>) {
  const out: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < n; i++) {
    await before?.(i);
    ctx.facts.fresh();
    const c = process.cpuUsage();
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1000);
  }
  cpuOf.set(out, cpu);
  return out;
}

const WORDS = [
  "widget",
  "gear",
  "sprocket",
  "api",
  "core",
  "tools",
  "web",
  "data",
  "engine",
  "auth",
  "sync",
  "cache",
  "queue",
  "mail",
  "search",
  "graph",
  "build",
  "test",
  "docs",
  "infra",
];
let seed = 42;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(a: T[]) => a[Math.floor(rnd() * a.length)]!;

const t0 = performance.now();
const person = await createUserWithOrg(ctx, {
  org: "bench-home",
  email: "member@example.com",
  name: "Member",
  password: "a long enough password",
  role: "owner",
});
const member: Principal = { kind: "session", user: person, sessionId: "bench" };
const outsider: Principal = { kind: "anonymous" };

// 1. 1,000 orgs × 100 repositories, half public; the member belongs to 50 orgs.
if (ONLY.has("search"))
  await ctx.db.transaction(async () => {
    for (let o = 0; o < 1000; o++) {
      const orgId = `org${o}`;
      run(sql`INSERT INTO orgs (id, name, kind, created_at) VALUES (${orgId}, ${`org-${o}`}, 'org', 1)`);
      if (o % 20 === 0) run(sql`INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (${orgId}, ${person.id}, 'member', 1)`);
      for (let r = 0; r < 100; r++) {
        const name = `${pick(WORDS)}-${pick(WORDS)}-${o}-${r}`;
        const description = `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} for ${pick(WORDS)}`;
        run(
          sql`INSERT INTO repos (id, org_id, name, public, description, created_at) VALUES (${`r${o}-${r}`}, ${orgId}, ${name}, ${r % 2}, ${description}, 1)`,
        );
      }
    }
    // Exact-name targets in a few orgs.
    for (let o = 0; o < 1000; o += 97)
      run(sql`INSERT INTO repos (id, org_id, name, public, description, created_at) VALUES (${`x${o}`}, ${`org${o}`}, 'widget', 1, 'the widget', 1)`);
  });

// 2. 50,000 commits across 200 repositories of the member's namespace over the last year, credited
// through the recorder's store function (commit rows, slots, day blobs, version).
const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY);
if (ONLY.has("graph"))
  await ctx.db.transaction(async (tx) => {
    const home = "bench-home";
    const homeOrg = (raw as unknown as { all(q: unknown): { id: string }[] }).all(sql`SELECT id FROM orgs WHERE name = ${home}`)[0]!.id;
    for (let r = 0; r < 200; r++)
      run(sql`INSERT INTO repos (id, org_id, name, public, created_at) VALUES (${`c${r}`}, ${homeOrg}, ${`contrib-${r}`}, ${r % 4 === 0 ? 0 : 1}, 1)`);
    // mulberry32: the LCG above pairs successive draws, which left only ~5,000 distinct (day, repo)
    // cells; these draws spread 50,000 commits over ~36,000 of the 73,000 cells, the worst case.
    let m32 = 7;
    const r32 = () => {
      m32 = (m32 + 0x6d2b79f5) | 0;
      let t = Math.imul(m32 ^ (m32 >>> 15), 1 | m32);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    const byRepo = new Map<string, { userId: string; sha: string; day: number }[]>();
    for (let i = 0; i < 50_000; i++) {
      const repo = `c${Math.floor(r32() * 200)}`;
      const day = today - Math.floor(r32() * 365);
      if (!byRepo.has(repo)) byRepo.set(repo, []);
      byRepo.get(repo)!.push({ userId: person.id, sha: i.toString(16).padStart(40, "0"), day });
    }
    for (const [repo, credits] of byRepo) await creditCommits(tx, repo, credits);
  });
await ctx.db.transaction(async () => {
  run(sql`UPDATE users SET contrib_private_optin = 1 WHERE id = ${person.id}`);
});

// 3. A year of 10,000,000 operations of one org in two kinds: minute, hour and day buckets.
const MIN = 60_000;
const yearStart = Math.floor((Date.now() - 365 * DAY) / DAY) * DAY;
let ops = 0;
if (ONLY.has("metrics"))
  await ctx.db.transaction(async () => {
    const perMinute = 10_000_000 / (365 * 1440) / 2;
    for (const kind of ["api.read", "git.fetch"]) {
      let hour: Histogram = new Map();
      let day: Histogram = new Map();
      let hourCount = 0;
      let dayCount = 0;
      for (let m = 0; m < 365 * 1440; m++) {
        const start = yearStart + m * MIN;
        const n = Math.round(perMinute * (0.5 + rnd()));
        const h: Histogram = new Map();
        for (let j = 0; j < 4; j++) observe(h, Math.floor(rnd() * 200), Math.ceil(n / 4));
        const count = [...h.values()].reduce((a, b) => a + b, 0);
        ops += count;
        run(
          sql`INSERT INTO metric_buckets (org_id, kind, grain, start, count, bytes, ms_sum, hist) VALUES ('org0', ${kind}, 1, ${start}, ${count}, ${count * 1000}, ${count * 50}, ${encode(h)})`,
        );
        for (const [s, c] of h) {
          hour.set(s, (hour.get(s) ?? 0) + c);
          day.set(s, (day.get(s) ?? 0) + c);
        }
        hourCount += count;
        dayCount += count;
        if ((m + 1) % 60 === 0) {
          run(
            sql`INSERT INTO metric_buckets (org_id, kind, grain, start, count, bytes, ms_sum, hist) VALUES ('org0', ${kind}, 60, ${start - 59 * MIN}, ${hourCount}, ${hourCount * 1000}, ${hourCount * 50}, ${encode(hour)})`,
          );
          hour = new Map();
          hourCount = 0;
        }
        if ((m + 1) % 1440 === 0) {
          run(
            sql`INSERT INTO metric_buckets (org_id, kind, grain, start, count, bytes, ms_sum, hist) VALUES ('org0', ${kind}, 1440, ${start - 1439 * MIN}, ${dayCount}, ${dayCount * 1000}, ${dayCount * 50}, ${encode(day)})`,
          );
          day = new Map();
          dayCount = 0;
        }
      }
    }
  });
run(sql`ANALYZE`);
const seedSeconds = (performance.now() - t0) / 1000;

const queries = ["widget", "widget-api", "gear", "sync cache", "engine-", "docs", "queue mail", "infra-test-5", "auth", "search graph"];
const results: Record<string, unknown> = {
  seed_seconds: +seedSeconds.toFixed(1),
  operations_seeded: ops,
  load_average_before: os.loadavg().map((x) => +x.toFixed(2)),
};
if (ONLY.has("search")) {
  // Warm both paths once.
  await searchRepos(ctx, outsider, { q: "widget" });
  await searchRepos(ctx, member, { q: "widget" });
  results["search outsider"] = stats(await time(REPS, (i) => searchRepos(ctx, outsider, { q: queries[i % queries.length] })));
  results["search member of 50 orgs"] = stats(await time(REPS, (i) => searchRepos(ctx, member, { q: queries[i % queries.length] })));
}
if (ONLY.has("graph")) {
  const g = JSON.parse(new TextDecoder().decode(await contributionGraphJson(ctx, person.handle, {})));
  const entries = g.days.reduce((n: number, d: { repos: unknown[] }) => n + d.repos.length, 0);
  results["contribution graph (year): answer"] = {
    total: g.total,
    days: g.days.length,
    repo_entries: entries,
    json_bytes: JSON.stringify(g).length,
    private_included: g.private_included,
  };
  // Cold: one more commit is credited (untimed) before each call, as after a push, so the cached
  // answer is stale and the call pays the statement, the writing and the cache insertion.
  let credited = 0;
  const credit = () =>
    ctx.db.transaction((tx) => creditCommits(tx, `c${1 + (credited % 3)}`, [{ userId: person.id, sha: `bench-${credited++}`, day: today - (credited % 365) }]));
  results["contribution graph (year), service, cold"] = stats(await time(REPS, () => contributionGraphJson(ctx, person.handle, {}), credit));
  results["contribution graph (year), service, warm"] = stats(await time(REPS, () => contributionGraphJson(ctx, person.handle, {})));
  const app = buildApp(ctx);
  const get = async (query: string) => {
    const res = await app.handle(new Request(`http://svc.test/v1/users/${person.handle}/contributions${query}`));
    if (res.status !== 200) throw new Error(`graph answered ${res.status}`);
    return res.arrayBuffer();
  };
  results["contribution graph (year), HTTP in-process, cold"] = stats(await time(REPS, () => get(""), credit));
  results["contribution graph (year), HTTP in-process, warm"] = stats(await time(REPS, () => get("")));
  if (process.argv.includes("--store")) {
    const from = today - 364;
    results["contribution graph (year), store statement only"] = stats(
      await time(Math.min(REPS, 100), () => contributionGraphRows(ctx.db.read, person.id, from, today)),
    );
  }
  // The recorder's transaction for one pushed commit (the worker's part, after the push).
  results["credit one commit (worker transaction)"] = stats(await time(Math.min(REPS, 100), credit));
}
if (ONLY.has("metrics")) {
  const admin: Principal = { kind: "session", user: person, sessionId: "bench" };
  await ctx.db.transaction(async () =>
    run(sql`INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ('org0', ${person.id}, 'admin', 1) ON CONFLICT DO UPDATE SET role = 'admin'`),
  );
  const m = await getMetrics(ctx, admin, "org-0", { from: String(yearStart), to: String(yearStart + 365 * DAY) });
  results["metrics (year, 10M ops)"] = {
    ...stats(await time(Math.min(REPS, 100), () => getMetrics(ctx, admin, "org-0", { from: String(yearStart), to: String(Date.now()) }))),
    counted: m.kinds["api.read"]!.count + m.kinds["git.fetch"]!.count,
    p99_reported: m.kinds["api.read"]!.p99_ms,
  };
}

// 4. API commit p50 with and without the recorder, ABAB blocks of 25.
if (ONLY.has("commit")) {
  await createRepo(ctx, member, "bench-home", { name: "commit-bench" });
  const noop = async () => undefined;
  const on: number[] = [];
  const off: number[] = [];
  const onCpu: number[] = [];
  const offCpu: number[] = [];
  let k = 0;
  for (let block = 0; block < COMMITS / 25; block++) {
    const withRecorder = block % 2 === 0;
    ctx.events.subscribe("contributions", ["push"], withRecorder ? enqueueContributions : noop);
    const samples = await time(25, async () =>
      createCommit(ctx, await openRepo(ctx, member, "bench-home", "commit-bench"), {
        branch: "main",
        message: `c${k}`,
        operations: [{ op: "put", path: `f${k++}.txt`, content: "x" }],
      }),
    );
    (withRecorder ? on : off).push(...samples);
    (withRecorder ? onCpu : offCpu).push(...cpuOf.get(samples)!);
  }
  cpuOf.set(on, onCpu);
  cpuOf.set(off, offCpu);
  const a = stats(on);
  const b = stats(off);
  results["api commit with recorder"] = a;
  results["api commit without recorder"] = b;
  results["api commit p50 ratio (with/without)"] = +(a.p50_ms / b.p50_ms).toFixed(3);
  results["api commit CPU p50 ratio (with/without)"] = +(a.cpu_p50_ms! / b.cpu_p50_ms!).toFixed(3);
}
results.load_average_after = os.loadavg().map((x) => +x.toFixed(2));
console.log(JSON.stringify(results, null, 2));
ctx.close();
rmSync(root, { recursive: true, force: true });
