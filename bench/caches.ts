// Benchmark (issue 30 performance targets, bench/README.md § 40): what restoring a CI cache costs svc.
//
//   bun bench/caches.ts [--mib 200] [--reps 5]
//
// S3 (s3rver): a --mib archive of random bytes is saved and then restored --reps times with the
// agent's own calls (POST …/caches/lookup with the job token, then GET of the presigned URL it
// answers, streamed to a file, as cli/runner/builtins/cache.ts does). Over each restore: svc's
// process CPU (/proc/<pid>/stat) and its I/O (/proc/<pid>/io rchar + wchar: every byte svc read
// or wrote on any socket or file, an upper bound of its HTTP traffic), and the exact bytes of the
// svc call. Targets: ≤ 5 MiB of svc traffic, ≤ 100 ms of svc CPU per restore.
//
// fs: the same archive is downloaded through svc (GET …/caches/{id}/content, sendfile) and, side
// by side in the same run (alternating), the stored file is copied locally: `cp` (the machine's,
// copy_file_range) and a stream copy in this process (read + write, as a download must write).
// Target: download ≥ 0.8× the local copy's speed.
import { randomFillSync } from "node:crypto";
import { closeSync, createReadStream, createWriteStream, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { Glob } from "bun";
import { startS3rver } from "../test/helpers/s3rver.ts";
import { cpuSeconds } from "./lib/content-util.ts";
import { machine } from "./lib/machine.ts";
import { ROOT } from "./lib/proc.ts";
import { bootstrap, type SvcServer, startSvc } from "./lib/svc.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: { mib: { type: "string", default: "200" }, reps: { type: "string", default: "5" } },
});
const MiB = 1024 * 1024;
const SIZE = Number(opt.mib) * MiB;
const REPS = Number(opt.reps);
const WORK = join(ROOT, "bench/work/caches");
rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });

/** svc's read + written bytes so far (all syscalls: sockets and files), from /proc/<pid>/io. */
function ioBytes(pid: number): number {
  const t = readFileSync(`/proc/${pid}/io`, "utf8");
  const f = (k: string) => Number(new RegExp(`^${k}: (\\d+)`, "m").exec(t)?.[1] ?? 0);
  return f("rchar") + f("wchar");
}

/** The random archive (incompressible, so no layer can shrink it). */
function makeBlob(file: string): void {
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(4 * MiB);
  for (let done = 0; done < SIZE; done += chunk.length) {
    randomFillSync(chunk);
    writeSync(fd, chunk, 0, Math.min(chunk.length, SIZE - done));
  }
  closeSync(fd);
}

async function json(
  url: string,
  init: { method?: string; token?: string; cookie?: string; body?: unknown },
  expect: number,
): Promise<{ body: any; bytes: number }> {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.cookie) headers.cookie = init.cookie;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const sent = init.body === undefined ? "" : JSON.stringify(init.body);
  const res = await fetch(url, { method: init.method ?? "GET", headers, body: sent || undefined });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${init.method ?? "GET"} ${url}: ${res.status} ${text}`);
  // Request line and headers are small and similar each time; counted roughly as what fetch sends.
  const headerBytes = [...res.headers].reduce((n, [k, v]) => n + k.length + v.length + 4, 0) + 200;
  return { body: text ? JSON.parse(text) : null, bytes: sent.length + text.length + headerBytes };
}

/** An org, a repository, a runner, a pushed workflow, a claimed job: the job's token (alive for the whole bench). */
async function jobOf(s: SvcServer): Promise<{ jobId: string; token: string }> {
  const f = await bootstrap(s, { org: "bench", repo: "app" });
  const login = await fetch(`${s.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const reg = await json(`${s.url}/v1/orgs/bench/runners/registration-token`, { method: "POST", cookie, body: {} }, 201);
  const runner = await json(
    `${s.url}/v1/runners/register`,
    { method: "POST", token: reg.body.token, body: { name: "m", os: "linux", arch: "x64", labels: [] } },
    201,
  );
  const workflow = "on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo\n";
  await json(
    `${s.url}${f.path}/commits`,
    { method: "POST", token: f.token, body: { branch: "main", message: "ci", operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: workflow }] } },
    201,
  );
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${s.url}/v1/runners/claim`, { method: "POST", headers: { authorization: `Bearer ${runner.body.credential}` } });
    if (res.status === 200) {
      const c = (await res.json()) as { job_id: string; token: string };
      return { jobId: c.job_id, token: c.token };
    }
    await res.arrayBuffer();
  }
  throw new Error("no job to claim");
}

const VERSION = "ab".repeat(32);

/** A TCP proxy to `upstream` (http://host:port) counting every byte both ways, headers included. */
async function countingProxy(upstream: string): Promise<{ url: string; bytes(): number; stop(): void }> {
  const u = new URL(upstream);
  let total = 0;
  type Pair = { peer: import("bun").Socket<unknown> | null; queue: Uint8Array[] };
  const server = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async open(client) {
        client.data = { peer: null, queue: [] };
        const up = await Bun.connect<{ client: typeof client }>({
          hostname: u.hostname,
          port: Number(u.port),
          socket: {
            data(_s, chunk) {
              total += chunk.byteLength;
              client.write(chunk);
            },
            close() {
              client.end();
            },
            error() {
              client.end();
            },
          },
          data: { client },
        });
        client.data.peer = up;
        for (const c of client.data.queue) up.write(c);
        client.data.queue = [];
      },
      data(client, chunk) {
        total += chunk.byteLength;
        if (client.data.peer) client.data.peer.write(chunk);
        else client.data.queue.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data.peer?.end();
      },
      error(client) {
        client.data.peer?.end();
      },
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, bytes: () => total, stop: () => server.stop(true) };
}

/** Saves `blob` as cache key `key` with the agent's calls; answers the cache id. */
async function save(s: Pick<SvcServer, "url">, job: { jobId: string; token: string }, blob: string, key: string): Promise<string> {
  const base = `${s.url}/v1/runner/jobs/${job.jobId}/caches`;
  const sha256 = new Bun.CryptoHasher("sha256").update(readFileSync(blob)).digest("hex");
  const r = await json(base, { method: "POST", token: job.token, body: { key, version: VERSION, size: SIZE, sha256 } }, 201);
  const url = new URL(r.body.upload.url, `${s.url}/`);
  const own = url.origin === new URL(s.url).origin;
  const headers: Record<string, string> = { ...r.body.upload.headers, ...(own ? { authorization: `Bearer ${job.token}` } : {}) };
  const put = await fetch(url, { method: "PUT", headers, body: Bun.file(blob) });
  if (put.status >= 300) throw new Error(`upload: ${put.status} ${await put.text()}`);
  await json(`${base}/${r.body.cache_id}/commit`, { method: "POST", token: job.token }, 200);
  return r.body.cache_id;
}

/** One restore as the agent makes it: lookup, then the download streamed to `dest`. */
async function restore(
  s: Pick<SvcServer, "url">,
  job: { jobId: string; token: string },
  key: string,
  dest: string,
): Promise<{ apiBytes: number; downloadMs: number }> {
  const found = await json(
    `${s.url}/v1/runner/jobs/${job.jobId}/caches/lookup`,
    { method: "POST", token: job.token, body: { key, restore_keys: [], version: VERSION } },
    200,
  );
  const url = new URL(found.body.download.url, `${s.url}/`);
  const own = url.origin === new URL(s.url).origin;
  const t0 = performance.now();
  const res = await fetch(url, { headers: own ? { authorization: `Bearer ${job.token}` } : {} });
  if (res.status !== 200 || !res.body) throw new Error(`download: ${res.status}`);
  // As the agent writes it (cli/runner/builtins/cache.ts): Bun's own response-to-file path.
  await Bun.write(dest, res);
  const downloadMs = performance.now() - t0;
  if (statSync(dest).size !== SIZE) throw new Error("short download");
  return { apiBytes: found.bytes, downloadMs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

const blob = join(WORK, "blob.bin");
makeBlob(blob);
const env = { SVC_LOG: "error", SVC_RUNNER_HEARTBEAT_TIMEOUT_MS: "3600000", SVC_RUNNER_CLAIM_WAIT_MS: "200" };
const report: Record<string, unknown> = { machine: machine(), loadavg_before: loadavg().map((x) => round(x, 2)), mib: SIZE / MiB, reps: REPS };

// ---- S3 (s3rver) ----
{
  const s3 = await startS3rver();
  // svc reaches the bucket through a counting proxy; presigned URLs name the bucket itself (the agent's way).
  const bucketProxy = await countingProxy(s3.endpoint);
  const s = await startSvc(join(WORK, "s3"), {
    ...env,
    SVC_STORAGE: "s3",
    SVC_S3_ENDPOINT: bucketProxy.url,
    SVC_S3_PUBLIC_ENDPOINT: s3.endpoint,
    SVC_S3_BUCKET: s3.bucket,
    SVC_S3_ACCESS_KEY: s3.accessKey,
    SVC_S3_SECRET_KEY: s3.secretKey,
  });
  try {
    const job = await jobOf(s);
    // The agent reaches svc through a counting proxy too: svc's traffic = the two proxies' bytes.
    const svcProxy = await countingProxy(s.url);
    const via = { ...s, url: svcProxy.url };
    const traffic = () => svcProxy.bytes() + bucketProxy.bytes();
    const cpu0 = cpuSeconds(s.pid);
    const t0 = traffic();
    await save(via, job, blob, "big");
    const saveCost = { svc_cpu_ms: round((cpuSeconds(s.pid) - cpu0) * 1000, 0), svc_traffic_kib: round((traffic() - t0) / 1024) };
    const rows: { cpu_ms: number; traffic_kib: number; io_kib: number; mib_s: number }[] = [];
    for (let i = 0; i < REPS; i++) {
      const dest = join(WORK, `s3-restore-${i}`);
      const c0 = cpuSeconds(s.pid);
      const o0 = ioBytes(s.pid);
      const b0 = traffic();
      const r = await restore(via, job, "big", dest);
      rows.push({
        cpu_ms: round((cpuSeconds(s.pid) - c0) * 1000, 0),
        traffic_kib: round((traffic() - b0) / 1024, 2),
        io_kib: round((ioBytes(s.pid) - o0) / 1024),
        mib_s: round(SIZE / MiB / (r.downloadMs / 1000)),
      });
      rmSync(dest, { force: true });
    }
    svcProxy.stop();
    report.s3 = {
      save: saveCost,
      restores: rows,
      median: {
        svc_cpu_ms: median(rows.map((r) => r.cpu_ms)),
        svc_traffic_kib: median(rows.map((r) => r.traffic_kib)),
        mib_s: median(rows.map((r) => r.mib_s)),
      },
      max: { svc_cpu_ms: Math.max(...rows.map((r) => r.cpu_ms)), svc_traffic_kib: Math.max(...rows.map((r) => r.traffic_kib)) },
      targets: { svc_traffic_kib: 5 * 1024, svc_cpu_ms: 100 },
    };
  } finally {
    await s.stop();
    bucketProxy.stop();
    await s3.stop();
  }
}

// ---- fs: download through svc vs a local copy, alternating ----
{
  const s = await startSvc(join(WORK, "fs"), env);
  try {
    const job = await jobOf(s);
    const id = await save(s, job, blob, "big");
    const stored = [...new Glob(`**/ci-caches/${id}`).scanSync({ cwd: s.dataDir, absolute: true })][0]!;
    const down: number[] = [];
    const cp: number[] = [];
    const stream: number[] = [];
    const cpu: number[] = [];
    const timeIt = async (fn: () => Promise<unknown>) => {
      const t0 = performance.now();
      await fn();
      return SIZE / MiB / ((performance.now() - t0) / 1000);
    };
    for (let i = 0; i < REPS; i++) {
      const d = join(WORK, `fs-${i}`);
      const c0 = cpuSeconds(s.pid);
      down.push(round((await timeIt(() => restore(s, job, "big", `${d}.down`))) as number));
      cpu.push(round((cpuSeconds(s.pid) - c0) * 1000, 0));
      cp.push(
        round(
          await timeIt(async () => {
            const p = Bun.spawn(["cp", stored, `${d}.cp`]);
            if ((await p.exited) !== 0) throw new Error("cp failed");
          }),
        ),
      );
      stream.push(round(await timeIt(() => pipeline(createReadStream(stored), createWriteStream(`${d}.stream`)))));
      for (const ext of ["down", "cp", "stream"]) rmSync(`${d}.${ext}`, { force: true });
    }
    const m = { download_mib_s: median(down), cp_mib_s: median(cp), stream_copy_mib_s: median(stream) };
    report.fs = {
      download_mib_s: down,
      cp_mib_s: cp,
      stream_copy_mib_s: stream,
      svc_cpu_ms: cpu,
      median: m,
      ratio_vs_cp: round(m.download_mib_s / m.cp_mib_s, 2),
      ratio_vs_stream_copy: round(m.download_mib_s / m.stream_copy_mib_s, 2),
      target_ratio: 0.8,
    };
  } finally {
    await s.stop();
  }
}

report.loadavg_after = loadavg().map((x) => round(x, 2));
console.log(JSON.stringify(report, null, 2));
rmSync(WORK, { recursive: true, force: true });
