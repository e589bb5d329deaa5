// Issue tracker costs (issue 32, bench/README §45), against the real server (`bun src/main.ts
// serve`, port 0) over HTTP with a bearer token:
//   a repository with `--issues` issues (default 50,000) and `--labels` labels (200), generated
//   in process through the issues store on the server's own database (titles of 4-9 words and
//   bodies of 20-60 words from a 3,000-word vocabulary with a Zipf-like spread; 1-3 labels each;
//   a fifth assigned; a third closed; 0-20 comments counted), then, after 20 warm-ups each,
//   `--reps` sequential requests per shape; client-side p50/p99 and the server's CPU per request.
//   Targets: a filtered page p50 ≤ 20 ms, a text search p50 ≤ 50 ms, opening an issue p50 ≤ 15 ms.
// --pg runs on PostgreSQL (test/helpers/postgres.ts, fsync on) instead of SQLite.
//
//   bun bench/issues.ts [--issues 50000] [--labels 200] [--reps 200] [--pg] [--out FILE]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { eq, sql } from "drizzle-orm";
import { startPostgres, type PostgresServer } from "../test/helpers/postgres.ts";
import { loadConfig } from "../src/config.ts";
import { x } from "../src/db/dialect.ts";
import { tables } from "../src/db/tables.ts";
import { openContext } from "../src/runtime.ts";
import * as store from "../src/services/issues/store.ts";
import { newId } from "../src/util/ids.ts";
import { cpuSeconds } from "./lib/content-util.ts";
import { machine } from "./lib/machine.ts";
import { bootstrap, startSvc } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    issues: { type: "string", default: "50000" },
    labels: { type: "string", default: "200" },
    reps: { type: "string", default: "200" },
    pg: { type: "boolean", default: false },
    out: { type: "string", default: "" },
    /** Keep the data directory (its path is printed) to study plans. */
    keep: { type: "boolean", default: false },
    /** Only these shapes (comma-separated prefixes of their names). */
    only: { type: "string", default: "" },
  },
});
const ISSUES = Number(opt.issues);
const LABELS = Number(opt.labels);
const REPS = Number(opt.reps);
const work = mkdtempSync(join(tmpdir(), "svc-bench-issues-"));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

/** A deterministic generator (mulberry32), so every run has the same data. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(32);
const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "do", "fe", "gu", "hi", "jo", "be", "co", "di", "ga", "mu"];
const VOCAB = Array.from({ length: 3000 }, (_, i) => {
  let w = "";
  let n = i + 7;
  while (n > 0 || w.length < 4) {
    w += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return w;
});
/** A word, frequent ones far more often (index ~ rank^2). */
const word = () => VOCAB[Math.floor(rand() ** 2 * VOCAB.length)]!;
const words = (min: number, max: number) => Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, word).join(" ");

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: +at(50).toFixed(2), p99_ms: +at(99).toFixed(2), max_ms: +s[s.length - 1]!.toFixed(2) };
}

const state: { pg: PostgresServer | null } = { pg: null };
async function database(): Promise<Record<string, string>> {
  if (!opt.pg) return {};
  state.pg ??= await startPostgres({ durable: true });
  return { SVC_DATABASE_URL: (await state.pg.createDatabase()).url };
}

async function main() {
  const env = { SVC_LOG: "error", ...(await database()) };
  const svc = await startSvc(work, env);
  const results: Record<string, unknown> = { machine: machine(), database: opt.pg ? "pg" : "sqlite", issues: ISSUES, labels: LABELS, reps: REPS };
  try {
    const f = await bootstrap(svc, { org: "bench", repo: "tracker" });
    // Generate through a second context on the server's own database.
    const ctx = await openContext(loadConfig({ ...svc.env, SVC_HTTP_ADDR: "127.0.0.1:0" }));
    const started = performance.now();
    try {
      const t = tables(ctx.db.read);
      const [repo] = await ctx.db.read.select().from(t.repos).where(eq(t.repos.name, "tracker"));
      const [user] = await ctx.db.read.select().from(t.users).where(eq(t.users.handle, "bencher"));
      const labelIds: string[] = [];
      await ctx.db.transaction(async (tx) => {
        for (let i = 0; i < LABELS; i++) {
          const id = newId();
          labelIds.push(id);
          await store.insertLabel(tx, {
            id,
            repoId: repo!.id,
            name: `label-${i}`,
            nameKey: `label-${i}`,
            color: "00ff00",
            description: null,
            createdAt: Date.now(),
          });
        }
      });
      // Opened a minute apart up to an hour ago; touched at most 30 days later, never in the future.
      const end = Date.now() - 3_600_000;
      const t0 = end - ISSUES * 60_000;
      const BATCH = 1000;
      for (let from = 0; from < ISSUES; from += BATCH) {
        await ctx.db.transaction(async (tx) => {
          const { issues, issueLabels, issueAssignees } = tables(tx);
          const rows = [];
          const links = [];
          const assigned = [];
          for (let i = from; i < Math.min(ISSUES, from + BATCH); i++) {
            const created = t0 + i * 60_000;
            const closed = rand() < 0.33;
            const id = newId();
            rows.push({
              id,
              repoId: repo!.id,
              number: i + 1,
              title: words(4, 9),
              body: words(20, 60),
              bodyHtml: null,
              state: closed ? ("closed" as const) : ("open" as const),
              closeReason: closed ? ("completed" as const) : null,
              closedAt: closed ? Math.min(end, created + 3_600_000) : null,
              closedByUserId: null,
              closedBy: null,
              authorUserId: user!.id,
              comments: Math.floor(rand() * 21),
              createdAt: created,
              updatedAt: Math.min(end, created + Math.floor(rand() * 30 * 86_400_000)),
            });
            const n = 1 + Math.floor(rand() * 3);
            const picked = new Set<string>();
            for (let k = 0; k < n; k++) picked.add(labelIds[Math.floor(rand() * labelIds.length)]!);
            for (const labelId of picked) links.push({ issueId: id, labelId });
            if (rand() < 0.2) assigned.push({ issueId: id, userId: user!.id });
          }
          // Batches of 100 rows: within the bound parameters of one statement on both databases.
          for (let k = 0; k < rows.length; k += 100) await tx.insert(issues).values(rows.slice(k, k + 100));
          for (let k = 0; k < links.length; k += 300) await tx.insert(issueLabels).values(links.slice(k, k + 300));
          for (let k = 0; k < assigned.length; k += 300) await tx.insert(issueAssignees).values(assigned.slice(k, k + 300));
        });
      }
      await ctx.db.transaction(async (tx) => {
        const { repoCounters } = tables(tx);
        await tx.insert(repoCounters).values({ repoId: repo!.id, lastNumber: ISSUES });
      });
      // PostgreSQL: planner statistics, as autovacuum gathers them after a bulk load. SQLite: none
      // (svc never runs ANALYZE there), so the plans are the ones a real installation gets.
      if (opt.pg) await x(ctx.db.read).run(sql.raw("ANALYZE"));
    } finally {
      ctx.close();
    }
    results.generate_s = +((performance.now() - started) / 1000).toFixed(1);
    console.error(`generated ${ISSUES} issues in ${results.generate_s} s (load ${load()})`);

    const base = `${svc.url}/v1/orgs/bench/repos/tracker`;
    const headers = { authorization: `Bearer ${f.token}` };
    const get = async (path: string) => {
      const r = await fetch(base + path, { headers });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${text.slice(0, 300)}`);
      return JSON.parse(text);
    };
    // A frequent word (rank ~20), a middling one (~300) and a rare one (~2500).
    const shapes: Record<string, (i: number) => string> = {
      "list: open, newest first (no filter)": () => "/issues",
      "filtered: one label, open": (i) => `/issues?label=label-${i % LABELS}`,
      "filtered: two labels, state all": (i) => `/issues?state=all&label=label-${i % LABELS},label-${(i * 7 + 3) % LABELS}`,
      "filtered: assignee, sort updated": () => "/issues?assignee=bencher&sort=updated",
      "filtered: label + sort comments, page 2": (i) => `/issues?label=label-${i % LABELS}&sort=comments&limit=30`,
      "search: a frequent word": (i) => `/issues?state=all&q=${VOCAB[i % 20]}`,
      "search: a middling word": (i) => `/issues?q=${VOCAB[300 + (i % 50)]}`,
      "search: two words": (i) => `/issues?q=${VOCAB[i % 30]}+${VOCAB[200 + (i % 30)]}`,
      "search: a rare word + label": (i) => `/issues?state=all&q=${VOCAB[2500 + (i % 100)]}&label=label-${i % LABELS}`,
      "open an issue (GET …/issues/{n})": (i) => `/issues/${1 + ((i * 7919) % ISSUES)}`,
    };
    const out: Record<string, unknown> = {};
    const only = opt.only ? opt.only.split(",") : [];
    for (const [name, path] of Object.entries(shapes)) {
      if (only.length && !only.some((o) => name.startsWith(o))) continue;
      let sample: { issues?: unknown[]; counts?: unknown } | null = null;
      for (let i = 0; i < 20; i++) sample = await get(path(i));
      const ms: number[] = [];
      const cpu0 = cpuSeconds(svc.pid);
      for (let i = 0; i < REPS; i++) {
        const p = path(i);
        const a = performance.now();
        await get(p);
        ms.push(performance.now() - a);
      }
      // The server's CPU per request (user + system, /proc; 10 ms ticks summed over the run): less
      // sensitive than wall time to other work on the machine.
      const cpuMs = ((cpuSeconds(svc.pid) - cpu0) * 1000) / REPS;
      out[name] = {
        ...stats(ms),
        server_cpu_ms: +cpuMs.toFixed(2),
        sample: sample?.issues ? { page: sample.issues.length, counts: sample.counts } : undefined,
      };
      console.error(name, JSON.stringify(out[name]), `load ${load()}`);
    }
    results.requests = out;
    results.load_after = load();
  } finally {
    await svc.stop();
    await state.pg?.stop();
    if (opt.keep) console.error(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  const text = JSON.stringify(results, null, 2);
  if (opt.out) writeFileSync(opt.out, text);
  console.log(text);
}

await main();
