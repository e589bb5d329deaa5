// Code review costs (issue 28, plan §5):
//   comment  — POST …/changes/{n}/comments against the real server (`bun src/main.ts serve`, port
//              0): line comments on a change, `--reps` sequentially after 20 warm-up ones, then
//              `--reps` more from 4 concurrent clients; client-side p50/p99 per request and the
//              server's CPU per comment (from /proc). Target: p50 ≤ 15 ms.
//   fanout   — in process (openContext, as the service tests do): a repository with `--watchers`
//              people watching at `all` (org viewers with confirmed addresses); one comment's
//              `notify.fanout` job timed alone through `ctx.work.runDue({ kinds: [NOTIFY_FANOUT] })`
//              (wall and CPU), the first time (inbox rows inserted) and again (rows updated);
//              and the comment service call (`postComment`, the request's own work without HTTP)
//              timed with 0 and with `--watchers` watchers, to show the fan-out stays off the
//              request path. Target: ≤ 200 ms of work for 500 watchers.
// --pg runs both on PostgreSQL (test/helpers/postgres.ts, fsync on) instead of SQLite.
//
//   bun bench/review.ts [--only comment,fanout] [--reps 500] [--watchers 500] [--pg] [--out FILE] [--cpu-prof DIR]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startPostgres, type PostgresServer } from "../test/helpers/postgres.ts";
import { loadConfig } from "../src/config.ts";
import { tables } from "../src/db/tables.ts";
import { openContext } from "../src/runtime.ts";
import type { Principal } from "../src/services/access/principal.ts";
import { createChange } from "../src/services/changes/changes.ts";
import { postComment } from "../src/services/changes/comments.ts";
import type { Ctx } from "../src/services/context.ts";
import { NOTIFY_FANOUT } from "../src/services/notify/fanout.ts";
import { createUserWithOrg } from "../src/services/people/accounts.ts";
import { createCommit } from "../src/services/repos/commits.ts";
import { putRef } from "../src/services/repos/refs.ts";
import { createRepo, openRepo } from "../src/services/repos/repos.ts";
import { newId } from "../src/util/ids.ts";
import { cpuSeconds } from "./lib/content-util.ts";
import { machine } from "./lib/machine.ts";
import { ROOT } from "./lib/proc.ts";
import { bootstrap, startSvc } from "./lib/svc.ts";
import { eq } from "drizzle-orm";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    only: { type: "string", default: "comment,fanout" },
    reps: { type: "string", default: "500" },
    watchers: { type: "string", default: "500" },
    pg: { type: "boolean", default: false },
    out: { type: "string", default: "" },
    "cpu-prof": { type: "string", default: "" },
  },
});
const ONLY = new Set(opt.only!.split(","));
const REPS = Number(opt.reps);
const WATCHERS = Number(opt.watchers);
const work = mkdtempSync(join(tmpdir(), "svc-bench-review-"));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

const state: { pg: PostgresServer | null } = { pg: null };
/** SVC_DATABASE_URL for a fresh database under --pg; nothing on SQLite. */
async function database(): Promise<Record<string, string>> {
  if (!opt.pg) return {};
  state.pg ??= await startPostgres({ durable: true });
  return { SVC_DATABASE_URL: (await state.pg.createDatabase()).url };
}

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: +at(50).toFixed(2), p99_ms: +at(99).toFixed(2), max_ms: +s[s.length - 1]!.toFixed(2) };
}

/** A 400-line file on main and a branch where every fourth line changed: every changed line takes a line comment. */
const FILE_LINES = 400;
const baseText = Array.from({ length: FILE_LINES }, (_, i) => `line ${i} of the file\n`).join("");
const headText = Array.from({ length: FILE_LINES }, (_, i) => (i % 4 === 1 ? `line ${i} changed on the branch\n` : `line ${i} of the file\n`)).join("");
/** The changed new-side lines (1-based). */
const commentable = Array.from({ length: FILE_LINES / 4 }, (_, k) => 4 * k + 2);

/** The comment case: POSTs against a real server. */
async function commentCase() {
  const dir = join(work, "comment");
  const prof = opt["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${opt["cpu-prof"]}`] : [];
  const svc = await startSvc(dir, { SVC_LOG: "error", ...(await database()) }, prof);
  try {
    const f = await bootstrap(svc, { org: "bench", repo: "review" });
    const base = `${svc.url}/v1/orgs/bench/repos/review`;
    const headers = { "content-type": "application/json", authorization: `Bearer ${f.token}` };
    const call = async (method: string, path: string, body?: unknown, expect = 201) => {
      const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await r.text();
      if (r.status !== expect) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
      return text ? JSON.parse(text) : null;
    };
    const c1 = await call("POST", "/commits", { branch: "main", message: "base", operations: [{ op: "put", path: "src/a.ts", content: baseText }] });
    await call("PUT", "/refs/refs/heads/feature", { target: c1.commit, expected: null }, 200);
    await call("POST", "/commits", { branch: "feature", message: "change", operations: [{ op: "put", path: "src/a.ts", content: headText }] });
    const change = await call("POST", "/changes", { title: "Review me", branch: "feature" });
    let k = 0;
    const one = async () => {
      const line = commentable[k++ % commentable.length]!;
      const t0 = performance.now();
      await call("POST", `/changes/${change.number}/comments`, {
        body: `Comment ${k}: is this change to line ${line} right? cc @bencher`,
        path: "src/a.ts",
        line,
        side: "new",
      });
      return performance.now() - t0;
    };
    for (let i = 0; i < 20; i++) await one();
    const cpu0 = cpuSeconds(svc.pid);
    const w0 = performance.now();
    const seq: number[] = [];
    for (let i = 0; i < REPS; i++) seq.push(await one());
    const seqWall = performance.now() - w0;
    const cpu1 = cpuSeconds(svc.pid);
    const conc: number[] = [];
    const c0 = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = 0; i < REPS / 4; i++) conc.push(await one());
      }),
    );
    const concWall = performance.now() - c0;
    const cpu2 = cpuSeconds(svc.pid);
    return {
      sequential: { ...stats(seq), per_second: +(REPS / (seqWall / 1000)).toFixed(1), server_cpu_ms_per_comment: +(((cpu1 - cpu0) * 1000) / REPS).toFixed(2) },
      concurrent_4: {
        ...stats(conc),
        per_second: +(conc.length / (concWall / 1000)).toFixed(1),
        server_cpu_ms_per_comment: +(((cpu2 - cpu1) * 1000) / conc.length).toFixed(2),
      },
      comments_on_the_change: 20 + REPS + conc.length,
    };
  } finally {
    await svc.stop();
  }
}

/** CPU seconds of this process (user + system). */
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** The fan-out case: in process, on the same kind of database. */
async function fanoutCase() {
  const dir = join(work, "fanout");
  const ctx: Ctx & { close(): void } = await openContext(
    loadConfig({
      ...process.env,
      SVC_DATA_DIR: dir,
      SVC_HTTP_ADDR: "127.0.0.1:0",
      SVC_LOG: "error",
      SVC_MAIL_TRANSPORT: "capture",
      SVC_MAIL_DIR: join(dir, "mail"),
      ...(await database()),
    }),
  );
  try {
    const owner = await createUserWithOrg(ctx, { org: "acme", email: "owner@acme.test", name: "Owner", password: "a long enough password", role: "owner" });
    const { users, orgs } = tables(ctx.db.read);
    const ownerRow = (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!;
    const actor: Principal = { kind: "session", user: ownerRow, sessionId: "bench" };
    const repo = await createRepo(ctx, actor, "acme", { name: "widgets" });
    const t = await openRepo(ctx, actor, "acme", "widgets");
    const c1 = await createCommit(ctx, t, { branch: "main", message: "base", operations: [{ op: "put", path: "src/a.ts", content: baseText }] });
    await putRef(ctx, await openRepo(ctx, actor, "acme", "widgets"), "refs/heads/feature", { target: c1.commit, expected: null });
    await createCommit(ctx, await openRepo(ctx, actor, "acme", "widgets"), {
      branch: "feature",
      message: "change",
      operations: [{ op: "put", path: "src/a.ts", content: headText }],
    });
    const change = await createChange(ctx, await openRepo(ctx, actor, "acme", "widgets"), { title: "Make it faster", branch: "feature" });
    let k = 0;
    const comment = async () => {
      const line = commentable[k++ % commentable.length]!;
      const target = await openRepo(ctx, actor, "acme", "widgets");
      const t0 = performance.now();
      await postComment(ctx, target, change.number, { body: `Comment ${k} on line ${line}`, path: "src/a.ts", line, side: "new" });
      return performance.now() - t0;
    };
    const drain = async () => {
      while ((await ctx.work.runDue({ kinds: [NOTIFY_FANOUT] })) > 0);
    };
    const postTimes = async (n: number) => {
      const ms: number[] = [];
      for (let i = 0; i < n; i++) ms.push(await comment());
      await drain();
      return stats(ms);
    };
    for (let i = 0; i < 10; i++) await comment();
    await drain();
    const post0 = await postTimes(100);

    // The watchers: org viewers with confirmed addresses, watching at `all`.
    const org = (await ctx.db.read.select().from(orgs).where(eq(orgs.name, "acme")))[0]!;
    const now = Date.now();
    const people = Array.from({ length: WATCHERS }, (_, i) => ({ id: newId(), i }));
    await ctx.db.transaction(async (tx) => {
      const tb = tables(tx);
      for (let i = 0; i < people.length; i += 200) {
        const part = people.slice(i, i + 200);
        await tx.insert(tb.users).values(
          part.map((p) => ({
            id: p.id,
            handle: `w${p.i}`,
            email: `w${p.i}@acme.test`,
            name: `W ${p.i}`,
            passwordHash: "x",
            emailVerifiedAt: now,
            createdAt: now,
          })),
        );
        await tx.insert(tb.memberships).values(part.map((p) => ({ orgId: org.id, userId: p.id, role: "viewer" as const, createdAt: now })));
        await tx.insert(tb.subscriptions).values(part.map((p) => ({ repoId: repo.id, userId: p.id, level: "all" as const, createdAt: now })));
      }
    });
    const postN = await postTimes(100);

    // One comment, then its fan-out job alone: the first one after the watchers came inserted their
    // inbox rows (postTimes above); measure a fresh thread too by opening a second change.
    const runs: { wall_ms: number; cpu_ms: number }[] = [];
    for (let r = 0; r < 10; r++) {
      await comment();
      const c0 = cpuNow();
      const w0 = performance.now();
      const n = await ctx.work.runDue({ kinds: [NOTIFY_FANOUT] });
      runs.push({ wall_ms: performance.now() - w0, cpu_ms: (cpuNow() - c0) * 1000 });
      if (n !== 1) throw new Error(`expected one fan-out job, ran ${n}`);
    }
    // A thread nobody has an inbox row for yet: every row inserted.
    await createCommit(ctx, await openRepo(ctx, actor, "acme", "widgets"), {
      branch: "feature",
      message: "more",
      operations: [{ op: "put", path: "src/b.ts", content: "b\n" }],
    });
    await putRef(ctx, await openRepo(ctx, actor, "acme", "widgets"), "refs/heads/other", { target: c1.commit, expected: null });
    await createCommit(ctx, await openRepo(ctx, actor, "acme", "widgets"), {
      branch: "other",
      message: "other change",
      operations: [{ op: "put", path: "src/a.ts", content: headText }],
    });
    const second = await createChange(ctx, await openRepo(ctx, actor, "acme", "widgets"), { title: "Another", branch: "other" });
    await drain();
    await postComment(ctx, await openRepo(ctx, actor, "acme", "widgets"), second.number, { body: "first comment", path: "src/a.ts", line: 2, side: "new" });
    const f0 = cpuNow();
    const fw = performance.now();
    await ctx.work.runDue({ kinds: [NOTIFY_FANOUT] });
    const fresh = { wall_ms: +(performance.now() - fw).toFixed(1), cpu_ms: +((cpuNow() - f0) * 1000).toFixed(1) };
    const { notifications, jobs } = tables(ctx.db.read);
    const inbox = (await ctx.db.read.select({ id: notifications.id }).from(notifications)).length;
    const mailJobs = (await ctx.db.read.select({ id: jobs.id }).from(jobs).where(eq(jobs.kind, "notify.mail"))).length;
    const walls = runs.map((r) => r.wall_ms).sort((a, b) => a - b);
    const cpus = runs.map((r) => r.cpu_ms).sort((a, b) => a - b);
    return {
      watchers: WATCHERS,
      fanout_first_on_a_thread: fresh,
      fanout_again_rows_updated: {
        n: runs.length,
        wall_p50_ms: +walls[Math.floor(walls.length / 2)]!.toFixed(1),
        wall_max_ms: +walls.at(-1)!.toFixed(1),
        cpu_p50_ms: +cpus[Math.floor(cpus.length / 2)]!.toFixed(1),
      },
      post_comment_service_0_watchers: post0,
      post_comment_service_with_watchers: postN,
      inbox_rows: inbox,
      mail_jobs_pending: mailJobs,
    };
  } finally {
    ctx.close();
  }
}

const results: Record<string, unknown> = {
  machine: machine(),
  command: `bun ${process.argv.slice(1).join(" ").replace(`${ROOT}/`, "")}`,
  database: opt.pg ? "postgresql (fsync on)" : "sqlite",
  load_before: load(),
};
try {
  if (ONLY.has("comment")) results.comment = await commentCase();
  if (ONLY.has("fanout")) results.fanout = await fanoutCase();
} finally {
  results.load_after = load();
  console.log(JSON.stringify(results, null, 2));
  if (opt.out) writeFileSync(opt.out, JSON.stringify(results, null, 2));
  await state.pg?.stop();
  rmSync(work, { recursive: true, force: true });
}
