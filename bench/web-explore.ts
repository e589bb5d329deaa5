// Explore and search pages with 10,000 repositories (issue 33, bench/README §50), against the real
// server (`bun src/main.ts serve`, port 0) over HTTP:
//   `--repos` repositories (default 10,000) in two orgs (`bench`, whose owner is the signed-in
//   caller, and `other`), 70% public, named `<word>-<word>-<n>` with descriptions of 4-12 words
//   from a 500-word vocabulary with a Zipf-like spread, made and last active at spread times over
//   90 days; written straight into the server's database (a multi-row INSERT; the search index
//   follows through its triggers), then, after 20 warm-ups each, `--reps` sequential requests per
//   shape, anonymous and signed in: client-side p50/p99 and the server's CPU per request.
//   Target: explore and search pages p50 ≤ 20 ms.
// The repository search API (`/v1/search/repos`) is measured beside the pages; `EXPLAIN QUERY
// PLAN` (SQLite) / `EXPLAIN` (PostgreSQL) of explore's query and the search count are printed.
// --pg runs on PostgreSQL (test/helpers/postgres.ts, fsync on) instead of SQLite.
// --baseline DIR (SQLite only) runs a second server from another checkout (main before issue 33:
// no explore or search page) with the same repositories; the shapes it has (the search API, the
// home page) are fetched from both in turn, request by request, so both see the same load.
//
//   bun bench/web-explore.ts [--repos 10000] [--reps 200] [--pg] [--baseline DIR] [--out FILE]
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "drizzle-orm";
import { startPostgres, type PostgresServer } from "../test/helpers/postgres.ts";
import { loadConfig } from "../src/config.ts";
import { x } from "../src/db/dialect.ts";
import { tables } from "../src/db/tables.ts";
import { openContext } from "../src/runtime.ts";
import { newId } from "../src/util/ids.ts";
import { cpuSeconds } from "./lib/content-util.ts";
import { machine } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { bootstrap, startSvc, type SvcServer } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    repos: { type: "string", default: "10000" },
    reps: { type: "string", default: "200" },
    pg: { type: "boolean", default: false },
    baseline: { type: "string", default: "" },
    out: { type: "string", default: "" },
  },
});
const REPOS = Number(opt.repos);
const REPS = Number(opt.reps);
if (opt.pg && opt.baseline) throw new Error("--baseline runs on SQLite only");
const work = mkdtempSync(join(tmpdir(), "svc-bench-explore-"));
const load = () =>
  loadavg()
    .map((v) => v.toFixed(2))
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
const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "do", "fe", "gu", "hi", "jo", "be", "co", "di", "ga", "mu"];
const VOCAB = Array.from({ length: 500 }, (_, i) => {
  let w = "";
  let n = i + 7;
  while (n > 0 || w.length < 4) {
    w += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return w;
});

interface RepoSeed {
  id: string;
  org: "bench" | "other";
  name: string;
  public: boolean;
  description: string;
  createdAt: number;
  activeAt: number;
}

/** The repositories, the same every run (ids aside). */
function seeds(): RepoSeed[] {
  const rand = rng(33);
  const word = () => VOCAB[Math.floor(rand() ** 2 * VOCAB.length)]!;
  const now = Date.now();
  return Array.from({ length: REPOS }, (_, i) => {
    const createdAt = now - Math.floor(rand() * 90 * 86_400_000);
    return {
      id: newId(),
      org: i % 2 ? "other" : "bench",
      name: `${word()}-${word()}-${i}`,
      public: rand() < 0.7,
      description: Array.from({ length: 4 + Math.floor(rand() * 9) }, word).join(" "),
      createdAt,
      activeAt: createdAt + Math.floor(rand() * (now - createdAt)),
    };
  });
}

const state: { pg: PostgresServer | null } = { pg: null };

interface Target {
  label: string;
  svc: SvcServer;
  cookie: string;
  token: string;
  /** Whether it has the explore and search pages (this checkout) or only the API (the baseline). */
  pages: boolean;
}

async function cli(s: SvcServer, args: string[]): Promise<void> {
  const r = await run([BUN, join(s.root ?? ROOT, "src/main.ts"), ...args], { ...cleanEnv(), ...s.env });
  if (r.code !== 0) throw new Error(`${args[0]}: ${r.stderr}`);
}

/** Writes the repositories into a stopped-or-running server's database: SQLite through its file, PostgreSQL through a context of this checkout. */
async function generate(t: Target, rows: RepoSeed[]): Promise<number> {
  const started = performance.now();
  if (!opt.pg) {
    const db = new Database(join(t.svc.dataDir, "svc.db"));
    try {
      db.run("PRAGMA busy_timeout = 30000");
      const orgId = (name: string) => (db.query("SELECT id FROM orgs WHERE name = ?").get(name) as { id: string }).id;
      const ids = { bench: orgId("bench"), other: orgId("other") };
      const hasActive = (db.query("SELECT count(*) AS n FROM pragma_table_info('repos') WHERE name = 'active_at'").get() as { n: number }).n > 0;
      const cols = `id, org_id, name, kind, public, default_branch, description, created_at${hasActive ? ", active_at" : ""}`;
      const one = `(?, ?, ?, 'native', ?, 'main', ?, ?${hasActive ? ", ?" : ""})`;
      db.transaction(() => {
        for (let k = 0; k < rows.length; k += 100) {
          const batch = rows.slice(k, k + 100);
          const values = batch.flatMap((r) => [r.id, ids[r.org], r.name, r.public ? 1 : 0, r.description, r.createdAt, ...(hasActive ? [r.activeAt] : [])]);
          db.run(`INSERT INTO repos (${cols}) VALUES ${batch.map(() => one).join(", ")}`, values);
        }
      })();
    } finally {
      db.close();
    }
  } else {
    const ctx = await openContext(loadConfig({ ...t.svc.env, SVC_HTTP_ADDR: "127.0.0.1:0" }));
    try {
      const orgs = await x(ctx.db.read).rows<{ id: string; name: string }>(sql`SELECT id, name FROM orgs WHERE name IN ('bench', 'other')`);
      const ids = Object.fromEntries(orgs.map((o) => [o.name, o.id]));
      for (let k = 0; k < rows.length; k += 1000) {
        await ctx.db.transaction(async (tx) => {
          const { repos } = tables(tx);
          const batch = rows.slice(k, k + 1000).map((r) => ({
            id: r.id,
            orgId: ids[r.org]!,
            name: r.name,
            public: r.public,
            description: r.description,
            createdAt: r.createdAt,
            activeAt: r.activeAt,
          }));
          for (let j = 0; j < batch.length; j += 100) await tx.insert(repos).values(batch.slice(j, j + 100));
        });
      }
      // Planner statistics, as autovacuum gathers them after a bulk load.
      await x(ctx.db.read).run(sql.raw("ANALYZE"));
    } finally {
      ctx.close();
    }
  }
  return +((performance.now() - started) / 1000).toFixed(1);
}

/** The query plans of explore's first and a later page, and of the search count, as the server's database gives them. */
async function plans(t: Target): Promise<Record<string, string>> {
  const explore =
    "SELECT r.id FROM repos r JOIN orgs o ON o.id = r.org_id WHERE r.public = TRUE AND r.active_at IS NOT NULL ORDER BY r.active_at DESC, r.id DESC LIMIT 31";
  const later =
    "SELECT r.id FROM repos r JOIN orgs o ON o.id = r.org_id WHERE r.public = TRUE AND r.active_at IS NOT NULL AND (r.active_at < 1 OR (r.active_at = 1 AND r.id < 'x')) ORDER BY r.active_at DESC, r.id DESC LIMIT 31";
  // The name tiers' folded name: byte order (PostgreSQL's COLLATE "C"), as services/discovery/store.ts compares it.
  const f = opt.pg ? `lower(r.name) COLLATE "C"` : "lower(r.name)";
  const prefix = `SELECT r.id FROM repos r WHERE ${f} >= '${VOCAB[0]}' AND ${f} < '${VOCAB[0]}\uffff' AND r.public IS TRUE`;
  if (!opt.pg) {
    const db = new Database(join(t.svc.dataDir, "svc.db"), { readonly: true });
    try {
      const plan = (q: string) => (db.query(`EXPLAIN QUERY PLAN ${q}`).all() as { detail: string }[]).map((r) => r.detail).join("; ");
      return { explore: plan(explore), explore_later_page: plan(later), search_count_names: plan(prefix) };
    } finally {
      db.close();
    }
  }
  const ctx = await openContext(loadConfig({ ...t.svc.env, SVC_HTTP_ADDR: "127.0.0.1:0" }));
  try {
    const plan = async (q: string) =>
      (await x(ctx.db.read).rows<Record<string, string>>(sql.raw(`EXPLAIN ${q}`))).map((r) => Object.values(r)[0]!.trim()).join("; ");
    return { explore: await plan(explore), explore_later_page: await plan(later), search_count_names: await plan(prefix) };
  } finally {
    ctx.close();
  }
}

async function setUp(label: string, root: string): Promise<Target> {
  const dir = join(work, label);
  mkdirSync(dir);
  const env = { SVC_LOG: "error", ...(opt.pg ? { SVC_DATABASE_URL: (await (state.pg ??= await startPostgres({ durable: true })).createDatabase()).url } : {}) };
  const svc = await startSvc(dir, env, [], root);
  const f = await bootstrap(svc, { org: "bench", repo: "seed" });
  await cli(svc, ["user-create", "--org", "other", "--email", "other@example.com", "--name", "Other", "--password", "correct horse battery staple"]);
  const login = await fetch(`${svc.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  return { label, svc, cookie: login.headers.get("set-cookie")!.split(";")[0]!, token: f.token, pages: root === ROOT };
}

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: +at(50).toFixed(2), p99_ms: +at(99).toFixed(2), max_ms: +s[s.length - 1]!.toFixed(2) };
}

async function main() {
  const results: Record<string, unknown> = { machine: machine(), database: opt.pg ? "pg" : "sqlite", repos: REPOS, reps: REPS, load_before: load() };
  const targets: Target[] = [];
  try {
    targets.push(await setUp("svc", ROOT));
    if (opt.baseline) targets.push(await setUp("baseline", resolve(opt.baseline)));
    const rows = seeds();
    for (const t of targets) results[`generate_s_${t.label}`] = await generate(t, rows);
    results.plans = await plans(targets[0]!);
    console.error(`generated ${REPOS} repositories (load ${load()})`, JSON.stringify(results.plans, null, 1));

    // A deep explore page: after the 3,000th public repository by activity (or past half of them, when fewer).
    const pub = rows.filter((r) => r.public).sort((a, b) => b.activeAt - a.activeAt || (a.id < b.id ? 1 : -1));
    const deep = pub[Math.min(3000, Math.floor(pub.length / 2))]!;
    const deepCursor = Buffer.from(JSON.stringify([deep.activeAt, deep.id])).toString("base64url");
    const common = VOCAB[0]!;
    const middling = VOCAB[120]!;
    const exact = rows.find((r) => r.public)!.name;
    const tierStart = (tier: number) => Buffer.from(JSON.stringify([tier, "0", ""])).toString("base64url");
    // A mix of words, frequent to rare, each opening its name-word or description tier in turn:
    // what a server sees from many people, where a statement's plan is shared by every word.
    const mixed = [common, middling, VOCAB[1]!, VOCAB[2]!, VOCAB[5]!, VOCAB[300]!, exact, "k", "ka"];
    const mixedPath = (i: number) => `/v1/search/repos?q=${mixed[Math.floor(i / 2) % mixed.length]}&limit=20&cursor=${tierStart(2 + (i % 2))}`;
    // Each shape: a path (or the i-th request's path), whether the baseline has it, and who asks.
    type Who = "anonymous" | "signed in";
    const shapes: [string, string | ((i: number) => string), boolean, Who][] = [
      ["explore, first page", "/explore", false, "anonymous"],
      ["explore, first page", "/explore", false, "signed in"],
      ["explore, page after 3,000", `/explore?cursor=${deepCursor}`, false, "anonymous"],
      ["search page: an exact name", `/search?q=${exact}`, false, "signed in"],
      ["search page: a frequent word", `/search?q=${common}`, false, "anonymous"],
      ["search page: a frequent word", `/search?q=${common}`, false, "signed in"],
      ["search page: a middling word", `/search?q=${middling}`, false, "signed in"],
      ["search page: no match", "/search?q=zzzzqqq", false, "signed in"],
      // The first page of a common word's name-word tier and of its description tier (the cursor a page before them would give).
      ["search page: a frequent word, name-word tier", `/search?q=${common}&cursor=${tierStart(2)}`, false, "signed in"],
      ["search page: a frequent word, description tier", `/search?q=${common}&cursor=${tierStart(3)}`, false, "signed in"],
      ["search API: a frequent word", `/v1/search/repos?q=${common}&limit=20`, true, "signed in"],
      ["search API: a middling word", `/v1/search/repos?q=${middling}&limit=20`, true, "signed in"],
      ["search API: an exact name", `/v1/search/repos?q=${exact}&limit=20`, true, "signed in"],
      ["search API: 9 words' name-word and description tiers in turn", mixedPath, true, "signed in"],
      ["home page", "/", true, "signed in"],
    ];
    const get = async (t: Target, path: string, who: Who) => {
      const headers: Record<string, string> =
        who === "anonymous" ? {} : path.startsWith("/v1/") ? { authorization: `Bearer ${t.token}` } : { cookie: t.cookie };
      const a = performance.now();
      const r = await fetch(t.svc.url + path, { headers });
      const text = await r.text();
      const ms = performance.now() - a;
      if (r.status !== 200) throw new Error(`${t.label} GET ${path}: ${r.status} ${text.slice(0, 300)}`);
      return { ms, text };
    };
    const out: Record<string, unknown> = {};
    for (const [name, shape, both, who] of shapes) {
      const ts = targets.filter((t) => t.pages || both);
      const pathOf = (i: number) => (typeof shape === "string" ? shape : shape(i));
      const path = pathOf(0);
      let sample = "";
      for (let i = 0; i < 20; i++) for (const t of ts) sample = (await get(t, pathOf(i), who)).text;
      const ms: number[][] = ts.map(() => []);
      const cpu0 = ts.map((t) => cpuSeconds(t.svc.pid));
      for (let i = 0; i < REPS; i++) for (const [k, t] of ts.entries()) ms[k]!.push((await get(t, pathOf(20 + i), who)).ms);
      const key = `${name} (${who})`;
      const count =
        /<p class="result-count" role="status">([^<]+)<\/p>/.exec(sample)?.[1] ??
        (path.startsWith("/v1/") ? `${JSON.parse(sample).hits.length} hits` : undefined);
      out[key] = Object.fromEntries(
        ts.map((t, k) => [
          t.label,
          { ...stats(ms[k]!), server_cpu_ms: +(((cpuSeconds(t.svc.pid) - cpu0[k]!) * 1000) / REPS).toFixed(2), ...(count ? { count } : {}) },
        ]),
      );
      console.error(key, JSON.stringify(out[key]), `load ${load()}`);
    }
    results.requests = out;
    results.load_after = load();
  } finally {
    for (const t of targets) await t.svc.stop();
    await state.pg?.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const text = JSON.stringify(results, null, 2);
  if (opt.out) writeFileSync(opt.out, text);
  console.log(text);
}

await main();
