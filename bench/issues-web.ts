// The issue pages' costs (issue 32 web part, bench/README §46), against the real server (`bun
// src/main.ts serve`, port 0) over HTTP, signed in as the repository's owner (so the pages draw
// every form and picker): a repository with `--issues` issues (default 50,000) and `--labels`
// labels (200), generated in process through the server's own database (titles of 4-9 words,
// bodies of 20-60 from a 3,000-word vocabulary with a Zipf-like spread, 1-3 labels each, a fifth
// assigned, a third closed), and one issue with a long thread (`--comments` comments, default 100,
// of rendered Markdown, and as many events). After 20 warm-ups each, `--reps` sequential requests
// per shape, each page beside the API request that reads the same data (the real thing the page
// is drawn from): client-side p50/p99, the server's CPU per request, and the ratio page / API.
//
//   bun bench/issues-web.ts [--issues 50000] [--labels 200] [--comments 100] [--reps 200] [--out FILE]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { eq } from "drizzle-orm";
import { loadConfig } from "../src/config.ts";
import { tables } from "../src/db/tables.ts";
import { openContext } from "../src/runtime.ts";
import { newId } from "../src/util/ids.ts";
import { cpuSeconds } from "./lib/content-util.ts";
import { machine } from "./lib/machine.ts";
import { bootstrap, startSvc } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    issues: { type: "string", default: "50000" },
    labels: { type: "string", default: "200" },
    comments: { type: "string", default: "100" },
    reps: { type: "string", default: "200" },
    out: { type: "string", default: "" },
  },
});
const ISSUES = Number(opt.issues);
const LABELS = Number(opt.labels);
const COMMENTS = Number(opt.comments);
const REPS = Number(opt.reps);
const work = mkdtempSync(join(tmpdir(), "svc-bench-issues-web-"));
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
const rand = rng(46);
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
const word = () => VOCAB[Math.floor(rand() ** 2 * VOCAB.length)]!;
const words = (min: number, max: number) => Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, word).join(" ");

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: +at(50).toFixed(2), p99_ms: +at(99).toFixed(2) };
}

async function main() {
  const svc = await startSvc(work, { SVC_LOG: "error" });
  const results: Record<string, unknown> = { machine: machine(), issues: ISSUES, labels: LABELS, long_thread_comments: COMMENTS, reps: REPS };
  try {
    const f = await bootstrap(svc, { org: "bench", repo: "tracker" });
    const login = await fetch(`${svc.url}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const ctx = await openContext(loadConfig({ ...svc.env, SVC_HTTP_ADDR: "127.0.0.1:0" }));
    const started = performance.now();
    try {
      const t = tables(ctx.db.read);
      const [repo] = await ctx.db.read.select().from(t.repos).where(eq(t.repos.name, "tracker"));
      const [user] = await ctx.db.read.select().from(t.users).where(eq(t.users.handle, "bencher"));
      const repoId = repo!.id;
      const labelIds: string[] = [];
      await ctx.db.transaction(async (tx) => {
        const { labels } = tables(tx);
        const rows = Array.from({ length: LABELS }, (_, i) => {
          const id = newId();
          labelIds.push(id);
          return { id, repoId, name: `label-${i}`, nameKey: `label-${i}`, color: "1d76db", description: `What label ${i} means`, createdAt: Date.now() };
        });
        for (let k = 0; k < rows.length; k += 100) await tx.insert(labels).values(rows.slice(k, k + 100));
      });
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
            const body = words(20, 60);
            rows.push({
              id,
              repoId,
              number: i + 1,
              title: words(4, 9),
              body,
              bodyHtml: `<p>${body}</p>\n`,
              state: closed ? ("closed" as const) : ("open" as const),
              closeReason: closed ? ("completed" as const) : null,
              closedAt: closed ? Math.min(end, created + 3_600_000) : null,
              closedByUserId: closed ? user!.id : null,
              closedBy: null,
              authorUserId: user!.id,
              comments: 0,
              createdAt: created,
              updatedAt: Math.min(end, created + Math.floor(rand() * 30 * 86_400_000)),
            });
            const n = 1 + Math.floor(rand() * 3);
            const picked = new Set<string>();
            for (let k = 0; k < n; k++) picked.add(labelIds[Math.floor(rand() * labelIds.length)]!);
            for (const labelId of picked) links.push({ issueId: id, labelId });
            if (rand() < 0.2) assigned.push({ issueId: id, userId: user!.id });
          }
          for (let k = 0; k < rows.length; k += 100) await tx.insert(issues).values(rows.slice(k, k + 100));
          for (let k = 0; k < links.length; k += 300) await tx.insert(issueLabels).values(links.slice(k, k + 300));
          for (let k = 0; k < assigned.length; k += 300) await tx.insert(issueAssignees).values(assigned.slice(k, k + 300));
        });
      }
      // The long thread: the newest issue, COMMENTS comments and as many label events.
      await ctx.db.transaction(async (tx) => {
        const { issues, issueComments, issueEvents, repoCounters } = tables(tx);
        const [long] = await tx.select().from(issues).where(eq(issues.number, ISSUES));
        const comments = [];
        const events = [];
        for (let i = 0; i < COMMENTS; i++) {
          const at = end + i * 1000;
          const text = words(10, 80);
          comments.push({
            id: newId(),
            issueId: long!.id,
            repoId,
            authorUserId: user!.id,
            body: text,
            bodyHtml: `<p>${text} <strong>${word()}</strong> <a href="/bench/tracker/issues/${1 + i}">#${1 + i}</a></p>\n<pre><code>${words(5, 15)}</code></pre>\n`,
            createdAt: at,
            updatedAt: at,
            editedAt: null,
            deletedAt: null,
          });
          events.push({
            id: newId(),
            issueId: long!.id,
            repoId,
            kind: i % 2 ? "labeled" : "referenced",
            actorUserId: user!.id,
            data: i % 2 ? { label: `label-${i % LABELS}`, color: "1d76db" } : { commit: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", message: words(4, 8) },
            dedupe: null,
            createdAt: at + 500,
          });
        }
        for (let k = 0; k < comments.length; k += 100) await tx.insert(issueComments).values(comments.slice(k, k + 100));
        for (let k = 0; k < events.length; k += 100) await tx.insert(issueEvents).values(events.slice(k, k + 100));
        await tx.update(issues).set({ comments: COMMENTS }).where(eq(issues.id, long!.id));
        await tx.insert(repoCounters).values({ repoId, lastNumber: ISSUES });
      });
    } finally {
      ctx.close();
    }
    results.generate_s = +((performance.now() - started) / 1000).toFixed(1);
    console.error(`generated ${ISSUES} issues in ${results.generate_s} s (load ${load()})`);

    const api = `${svc.url}/v1/orgs/bench/repos/tracker`;
    const web = `${svc.url}/bench/tracker`;
    const fetchOk = async (url: string, headers: Record<string, string>) => {
      const r = await fetch(url, { headers, redirect: "manual" });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${text.slice(0, 300)}`);
      return text.length;
    };
    const page = (path: string) => fetchOk(web + path, { cookie });
    const json = (path: string) => fetchOk(api + path, { authorization: `Bearer ${f.token}` });
    const issueAt = (i: number) => 1 + ((i * 7919) % (ISSUES - 1));
    /** Each shape: the page, and the API requests that read what it shows. */
    const shapes: Record<string, { page: (i: number) => string; api: ((i: number) => string)[] }> = {
      "list: open, newest first": { page: () => "/issues", api: [() => "/issues"] },
      "list: one label": { page: (i) => `/issues?label=label-${i % LABELS}`, api: [(i) => `/issues?label=label-${i % LABELS}`] },
      "list: search a middling word": { page: (i) => `/issues?q=${VOCAB[300 + (i % 50)]}`, api: [(i) => `/issues?q=${VOCAB[300 + (i % 50)]}`] },
      "issue page (1 of 50,000, no comments)": { page: (i) => `/issues/${issueAt(i)}`, api: [(i) => `/issues/${issueAt(i)}`] },
      [`issue page (${COMMENTS} comments + ${COMMENTS} events)`]: {
        page: () => `/issues/${ISSUES}`,
        api: [() => `/issues/${ISSUES}`, () => `/issues/${ISSUES}/comments?limit=100`, () => `/issues/${ISSUES}/events?limit=100`],
      },
      [`labels page (${LABELS} labels)`]: { page: () => "/labels", api: [() => "/labels"] },
    };
    const measure = async (run: (i: number) => Promise<unknown>) => {
      for (let i = 0; i < 20; i++) await run(i);
      const ms: number[] = [];
      const cpu0 = cpuSeconds(svc.pid);
      for (let i = 0; i < REPS; i++) {
        const a = performance.now();
        await run(i);
        ms.push(performance.now() - a);
      }
      return { ...stats(ms), server_cpu_ms: +(((cpuSeconds(svc.pid) - cpu0) * 1000) / REPS).toFixed(2) };
    };
    const out: Record<string, unknown> = {};
    for (const [name, s] of Object.entries(shapes)) {
      const bytes = await page(s.page(0));
      const p = await measure((i) => page(s.page(i)));
      const a = await measure(async (i) => {
        for (const path of s.api) await json(path(i));
      });
      out[name] = { page: { ...p, bytes }, api: a, ratio_p50: +(p.p50_ms / a.p50_ms).toFixed(2), ratio_cpu: +(p.server_cpu_ms / a.server_cpu_ms).toFixed(2) };
      console.error(name, JSON.stringify(out[name]), `load ${load()}`);
    }
    results.requests = out;
    results.load_after = load();
  } finally {
    await svc.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const text = JSON.stringify(results, null, 2);
  if (opt.out) writeFileSync(opt.out, text);
  console.log(text);
}

await main();
