// Lander and diff benchmark (issue 15).
//
//   bun bench/lander.ts [--changes 100] [--latency 30] [--files 1000] [--diff-reps 10] [--out FILE]
//
// Targets: 100 queued non-conflicting changes on one branch (each touching its own file) land in
// ≤ 30 s; p50 from queued to landed with an empty queue ≤ 200 ms (no required checks); the diff
// of a change touching 1,000 files ≤ 300 ms. The server is the real one (`bun src/main.ts serve`,
// fs storage, temp data dir); commits and branches are made through the commit and ref APIs.
// Latency is timed client-side from the land request's send to the first poll (every 2 ms) that
// sees `landed`. The diff is compared side by side with `git diff -p --stat` of the same two
// commits in a local clone (C git, same machine, same run).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { client, createUser, login, mintToken, startServer } from "../test/helpers/server.ts";

const { values: opt } = parseArgs({
  options: {
    changes: { type: "string", default: "100" },
    latency: { type: "string", default: "30" },
    files: { type: "string", default: "1000" },
    "diff-reps": { type: "string", default: "10" },
    out: { type: "string" },
  },
});
const N = Number(opt.changes);
const LAT = Number(opt.latency);
const FILES = Number(opt.files);
const REPS = Number(opt["diff-reps"]);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const r1 = (x: number) => Math.round(x * 10) / 10;
const log = (s: string) => process.stderr.write(`${s}\n`);

const load0 = loadavg();
const server = await startServer();
try {
  const u = await createUser(server, { org: "bench", email: "b@bench.example", role: "owner" });
  const cookie = await login(server, u.email, u.password);
  const token = await mintToken(server, cookie, "bench", { scopes: ["repo:write"], label: "bench" });
  const c = client(server, { token });
  const ok = async (p: Promise<{ status: number; body: any }>, want = [200, 201, 202]) => {
    const r = await p;
    if (!want.includes(r.status)) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await ok(c.post("/v1/orgs/bench/repos", { name: "r" }));
  const base = "/v1/orgs/bench/repos/r";
  const seed = await ok(c.post(`${base}/commits`, { branch: "main", message: "seed", operations: [{ op: "put", path: "README", content: "seed\n" }] }));
  let number = 0;
  const changeOn = async (name: string, from: string, ops: unknown[]) => {
    await ok(c.put(`${base}/refs/refs/heads/${name}`, { target: from, expected: null }));
    const head = await ok(c.post(`${base}/commits`, { branch: name, message: name, operations: ops }));
    const ch = await ok(c.post(`${base}/changes`, { title: name, branch: name }));
    number = ch.number;
    return { n: ch.number as number, head: head.commit as string };
  };

  // (a) N queued changes, each touching its own file, all made from the same main.
  log(`making ${N} changes`);
  const made: number[] = [];
  for (let i = 0; i < N; i++) made.push((await changeOn(`q${i}`, seed.commit, [{ op: "put", path: `q/${i}.txt`, content: `${i}\n` }])).n);
  const t0 = performance.now();
  for (const n of made) await ok(c.post(`${base}/changes/${n}/land`));
  const queuedAllMs = performance.now() - t0;
  for (;;) {
    const landed = (await ok(c.get(`${base}/changes?state=landed&limit=100`))).changes.length;
    const ejected = (await ok(c.get(`${base}/changes?state=ejected&limit=100`))).changes.length;
    if (ejected) throw new Error(`${ejected} changes were ejected`);
    if (landed >= Math.min(N, 100)) break;
    await Bun.sleep(20);
  }
  const drainMs = performance.now() - t0;
  log(`${N} landed in ${r1(drainMs)} ms`);

  // (b) queued → landed with an empty queue.
  const latencies: number[] = [];
  for (let i = 0; i < LAT; i++) {
    const tip = (await ok(c.get(`${base}/refs`))).refs.find((r: any) => r.name === "refs/heads/main").target;
    const { n } = await changeOn(`l${i}`, tip, [{ op: "put", path: `l/${i}.txt`, content: `${i}\n` }]);
    const s = performance.now();
    await ok(c.post(`${base}/changes/${n}/land`));
    for (;;) {
      if ((await ok(c.get(`${base}/changes/${n}`))).state === "landed") break;
      await Bun.sleep(2);
    }
    latencies.push(performance.now() - s);
  }
  log(`latency p50 ${r1(median(latencies))} ms`);

  // (c) diff of a change touching FILES files (each a 40-line file with two lines changed).
  const body = (i: number, v: string) =>
    Array.from({ length: 40 }, (_, k) => (k === 10 || k === 30 ? `line ${k} of ${i} ${v}\n` : `line ${k} of ${i}\n`)).join("");
  const tip = (await ok(c.get(`${base}/refs`))).refs.find((r: any) => r.name === "refs/heads/main").target;
  const before = await ok(
    c.post(`${base}/commits`, {
      branch: "main",
      message: "files",
      operations: Array.from({ length: FILES }, (_, i) => ({ op: "put", path: `d/${i % 10}/f${i}.txt`, content: body(i, "old") })),
    }),
  );
  void tip;
  const wide = await changeOn(
    "wide",
    before.commit,
    Array.from({ length: FILES }, (_, i) => ({ op: "put", path: `d/${i % 10}/f${i}.txt`, content: body(i, "new") })),
  );
  const diffMs: number[] = [];
  let files = 0;
  for (let i = 0; i < REPS + 1; i++) {
    const s = performance.now();
    const d = await ok(c.get(`${base}/changes/${wide.n}/diff`));
    if (i > 0) diffMs.push(performance.now() - s);
    files = d.files.length;
  }
  // Side by side: C git on the same two commits.
  const work = mkdtempSync(join(tmpdir(), "svc-bench-lander-"));
  const gitMs: number[] = [];
  try {
    const env = { ...process.env, GIT_TERMINAL_PROMPT: "0" };
    const url = `${server.url.replace("://", `://x:${token}@`)}/bench/r.git`;
    Bun.spawnSync(["git", "clone", "-q", "--bare", url, join(work, "r.git")], { env });
    Bun.spawnSync(["git", "-C", join(work, "r.git"), "fetch", "-q", url, "wide"], { env });
    for (let i = 0; i < REPS + 1; i++) {
      const s = performance.now();
      const r = Bun.spawnSync(["git", "-C", join(work, "r.git"), "diff", "--no-renames", "-p", "--stat", before.commit, wide.head], { env });
      if (i > 0) gitMs.push(performance.now() - s);
      if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  const out = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, load_before: load0.map(r1), load_after: loadavg().map(r1), bun: Bun.version },
    queue: { changes: N, requests_ms: r1(queuedAllMs), all_landed_ms: r1(drainMs), per_change_ms: r1(drainMs / N) },
    latency: { runs: LAT, p50_ms: r1(median(latencies)), max_ms: r1(Math.max(...latencies)) },
    diff: { files, reps: REPS, svc_p50_ms: r1(median(diffMs)), git_p50_ms: r1(median(gitMs)), ratio: r1(median(diffMs) / median(gitMs)) },
    last_change: number,
  };
  const text = JSON.stringify(out, null, 2);
  console.log(text);
  if (opt.out) writeFileSync(opt.out, text);
} finally {
  await server.stop();
  rmSync(server.dataDir, { recursive: true, force: true });
}
