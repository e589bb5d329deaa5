// Git LFS (issue 31, bench/README.md § 42): the performance targets of the issue, measured with the
// real `git lfs` client against svc started as a user starts it.
//
//   bun bench/lfs.ts [--files 100] [--size-mb 10] [--batch-reps 200] [--fs-reps 3] [--only s3|fs] [--keep]
//
// s3: svc on S3 (s3rver in a child process). A repository of --files LFS files of --size-mb each
//   (1 GiB by default) is pushed and then cloned; svc's CPU (utime+stime from /proc) and RSS
//   (sampled, and the kernel's high-water mark) over the push and the clone, against its idle RSS
//   before. On S3 the bytes go between the client and the bucket: svc answers batch calls, verify
//   calls and the git protocol only. Then --batch-reps batch calls (download, all --files objects)
//   one after another: client-side wall p50/p99.
// fs: svc on the local disk, the same repository pushed; then the LFS download of the clone,
//   three ways, alternating, --fs-reps times: `git lfs pull` (the real client, 8 transfers at
//   once by default), and curl (8 transfers at once, --parallel) fetching every object from svc's
//   download actions, side by side with the same curl from a plain static file server (Bun.serve
//   handing Bun.file of the same files: sendfile) on this machine. Throughput = object bytes / wall.
//   And the batch p50/p99 on fs.
import { randomBytes } from "node:crypto";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gitEnv, machineInfo, mb, procCpu, round, RssSampler, run } from "./lib/git-util.ts";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc, type SvcAccount, type SvcServer } from "./lib/git-svc.ts";
import { startS3rver } from "../test/helpers/s3rver.ts";

interface Args {
  files: number;
  sizeMb: number;
  batchReps: number;
  fsReps: number;
  only: "s3" | "fs" | null;
  keep: boolean;
}

function parseArgs(argv: string[]): Args {
  const get = (n: string) => {
    const i = argv.indexOf(`--${n}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = get("only");
  return {
    files: Number(get("files") ?? 100),
    sizeMb: Number(get("size-mb") ?? 10),
    batchReps: Number(get("batch-reps") ?? 200),
    fsReps: Number(get("fs-reps") ?? 3),
    only: only === "s3" || only === "fs" ? only : null,
    keep: argv.includes("--keep"),
  };
}

const LFS_TYPE = "application/vnd.git-lfs+json";

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** A source repository with the LFS files committed; answers its directory and the objects. */
async function makeSource(
  work: string,
  env: Record<string, string>,
  a: Args,
): Promise<{ dir: string; objects: { oid: string; size: number; name: string }[] }> {
  const dir = join(work, "source");
  mkdirSync(dir, { recursive: true });
  await run(["git", "init", "-q", "-b", "main", dir], { env });
  await run(["git", "lfs", "track", "*.bin"], { cwd: dir, env });
  const objects: { oid: string; size: number; name: string }[] = [];
  for (let i = 0; i < a.files; i++) {
    const bytes = randomBytes(a.sizeMb * 1024 * 1024);
    const name = `f${String(i).padStart(3, "0")}.bin`;
    writeFileSync(join(dir, name), bytes);
    objects.push({ oid: createHash("sha256").update(bytes).digest("hex"), size: bytes.length, name });
  }
  await run(["git", "add", "."], { cwd: dir, env });
  await run(["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "lfs"], { cwd: dir, env });
  return { dir, objects };
}

async function batch(svc: SvcServer, acct: SvcAccount, objects: { oid: string; size: number }[]): Promise<any> {
  const res = await fetch(`${svc.url}/${acct.org}/big.git/info/lfs/objects/batch`, {
    method: "POST",
    headers: { accept: LFS_TYPE, "content-type": LFS_TYPE, authorization: `Bearer ${acct.token}` },
    body: JSON.stringify({ operation: "download", transfers: ["basic"], objects: objects.map((o) => ({ oid: o.oid, size: o.size })) }),
  });
  if (res.status !== 200) throw new Error(`batch ${res.status}: ${await res.text()}`);
  return res.json();
}

async function batchTimes(svc: SvcServer, acct: SvcAccount, objects: { oid: string; size: number }[], reps: number) {
  for (let i = 0; i < 10; i++) await batch(svc, acct, objects);
  let cpu = 0;
  const ms: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < reps; i++) {
    const c0 = procCpu(svc.pid).self;
    const t0 = performance.now();
    await batch(svc, acct, objects);
    ms.push(performance.now() - t0);
    cpu += procCpu(svc.pid).self - c0;
    // The floor, interleaved: the cheapest request svc answers (/healthz), on the same machine at the same moment.
    const t1 = performance.now();
    await (await fetch(`${svc.url}/healthz`)).arrayBuffer();
    floor.push(performance.now() - t1);
  }
  return {
    objects: objects.length,
    reps,
    p50_ms: round(percentile(ms, 50), 2),
    p99_ms: round(percentile(ms, 99), 2),
    healthz_p50_ms: round(percentile(floor, 50), 2),
    healthz_p99_ms: round(percentile(floor, 99), 2),
    // CPU ticks (10 ms) read around each batch call, summed: the batch calls' share alone.
    svc_cpu_ms_per_call: round((cpu * 1000) / reps, 2),
  };
}

/** The same files on a plain static file server (a child process: Bun.serve handing Bun.file). */
function startStatic(root: string): { url: string; proc: ReturnType<typeof Bun.spawn>; ready: Promise<string> } {
  const code = `const root = ${JSON.stringify(root)};
const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch(req) { const p = new URL(req.url).pathname; if (p.includes("..")) return new Response(null, { status: 400 }); return new Response(Bun.file(root + p)); } });
console.log("port " + s.port);`;
  const proc = Bun.spawn([process.execPath, "-e", code], { stdout: "pipe", stderr: "inherit" });
  const ready = (async () => {
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let out = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error("static server exited");
      out += new TextDecoder().decode(value);
      const m = /port (\d+)/.exec(out);
      if (m) return `http://127.0.0.1:${m[1]}`;
    }
  })();
  return { url: "", proc, ready };
}

/** curl fetching every URL (8 at once) into `dir`; wall seconds. */
async function curlAll(entries: { url: string; header?: Record<string, string>; name: string }[], dir: string, work: string): Promise<number> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cfg = join(work, "curl.cfg");
  writeFileSync(
    cfg,
    entries
      .map((e) =>
        ["fail", `url = "${e.url}"`, `output = "${join(dir, e.name)}"`, ...Object.entries(e.header ?? {}).map(([k, v]) => `header = "${k}: ${v}"`)].join("\n"),
      )
      // Why `next`: headers are otherwise shared by every URL of the file (each object has its own credential).
      .join("\nnext\n"),
  );
  const r = await run(["curl", "-sS", "--fail", "--parallel", "--parallel-max", "8", "-K", cfg]);
  return r.wall;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const work = mkdtempSync(join(ROOT, "bench", "work", "lfs-"));
  const home = join(work, "home");
  mkdirSync(home, { recursive: true });
  const env = gitEnv(home);
  await run(["git", "lfs", "install", "--skip-repo"], { env });
  const out: Record<string, unknown> = { machine: await machineInfo(), args: a };
  console.error(`making ${a.files} files of ${a.sizeMb} MiB …`);
  const source = await makeSource(work, env, a);
  const totalBytes = source.objects.reduce((n, o) => n + o.size, 0);
  out.total_mib = round(totalBytes / 1048576, 1);

  if (a.only !== "fs") {
    const s3 = await startS3rver({ directory: join(work, "s3rver") });
    const svc = await startSvc({
      dataDir: join(work, "svc-s3"),
      log: "warn",
      env: { SVC_STORAGE: "s3", SVC_S3_ENDPOINT: s3.endpoint, SVC_S3_BUCKET: s3.bucket, SVC_S3_ACCESS_KEY: s3.accessKey, SVC_S3_SECRET_KEY: s3.secretKey },
    });
    try {
      const acct = await bootstrap(svc);
      await createRepo(svc, acct, "big");
      // Idle: a few API calls made, the caches as they are before any LFS work.
      await Bun.sleep(2000);
      const idleRss = new RssSampler(svc.pid).start().stop().endBytes;
      const sampler = new RssSampler(svc.pid, 50).start();
      const s3Cpu0 = procCpu(s3.pid).self;
      const cpu0 = procCpu(svc.pid).self;
      const push = await run(["git", "push", "-q", gitUrl(svc, acct, "big"), "main"], { cwd: source.dir, env });
      const cpu1 = procCpu(svc.pid).self;
      const clone = await run(["git", "clone", "-q", gitUrl(svc, acct, "big"), join(work, "clone-s3")], { env });
      const cpu2 = procCpu(svc.pid).self;
      const rss = sampler.stop();
      for (const o of source.objects.slice(0, 5)) {
        if (
          createHash("sha256")
            .update(readFileSync(join(work, "clone-s3", o.name)))
            .digest("hex") !== o.oid
        )
          throw new Error(`${o.name} differs after the clone`);
      }
      out.s3 = {
        push_wall_s: round(push.wall, 2),
        clone_wall_s: round(clone.wall, 2),
        svc_cpu_push_s: round(cpu1 - cpu0, 2),
        svc_cpu_clone_s: round(cpu2 - cpu1, 2),
        svc_cpu_total_s: round(cpu2 - cpu0, 2),
        s3rver_cpu_s: round(procCpu(s3.pid).self - s3Cpu0, 2),
        svc_idle_rss_mb: mb(idleRss),
        svc_peak_rss_mb: mb(Math.max(rss.peakSampledBytes, rss.peakHwmBytes ?? 0)),
        svc_rss_growth_mb: mb(Math.max(rss.peakSampledBytes, rss.peakHwmBytes ?? 0) - idleRss),
        batch: await batchTimes(svc, acct, source.objects, a.batchReps),
      };
      console.error(JSON.stringify(out.s3));
    } finally {
      await svc.stop();
      await s3.stop();
    }
  }

  if (a.only !== "s3") {
    const svc = await startSvc({ dataDir: join(work, "svc-fs"), log: "warn" });
    const stat = startStatic(join(work, "svc-fs", "objects"));
    try {
      const acct = await bootstrap(svc);
      await createRepo(svc, acct, "big");
      const push = await run(["git", "push", "-q", gitUrl(svc, acct, "big"), "main"], { cwd: source.dir, env });
      const staticUrl = await stat.ready;
      const net = (await run(["ls", join(work, "svc-fs", "objects", "lfs")])).stdout.trim().split("\n")[0]!;
      const fromStatic = source.objects.map((o, i) => ({ url: `${staticUrl}/lfs/${net}/${o.oid.slice(0, 2)}/${o.oid}`, name: `o${i}` }));
      const rows: { svc_curl: number[]; static_curl: number[]; git_lfs_pull: number[] } = { svc_curl: [], static_curl: [], git_lfs_pull: [] };
      const cloneDir = join(work, "clone-fs");
      await run(["git", "clone", "-q", gitUrl(svc, acct, "big"), cloneDir], { env: { ...env, GIT_LFS_SKIP_SMUDGE: "1" } });
      for (let r = 0; r < a.fsReps; r++) {
        const order = r % 2 === 0 ? ["svc", "static"] : ["static", "svc"];
        for (const side of order) {
          // svc: the download actions of a fresh batch call, as a client uses them.
          const entries =
            side === "svc"
              ? (await batch(svc, acct, source.objects)).objects.map((o: any, i: number) => ({
                  url: o.actions.download.href,
                  header: o.actions.download.header,
                  name: `o${i}`,
                }))
              : fromStatic;
          const wall = await curlAll(entries, join(work, "dl"), work);
          (side === "svc" ? rows.svc_curl : rows.static_curl).push(wall);
        }
        rmSync(join(cloneDir, ".git", "lfs", "objects"), { recursive: true, force: true });
        const pull = await run(["git", "lfs", "pull"], { cwd: cloneDir, env });
        rows.git_lfs_pull.push(pull.wall);
      }
      const mbps = (s: number) => round(totalBytes / 1048576 / s, 1);
      const best = (xs: number[]) => Math.min(...xs);
      out.fs = {
        push_wall_s: round(push.wall, 2),
        svc_curl_MiBps: rows.svc_curl.map(mbps),
        static_curl_MiBps: rows.static_curl.map(mbps),
        git_lfs_pull_MiBps: rows.git_lfs_pull.map(mbps),
        svc_vs_static_throughput_best: round(best(rows.static_curl) / best(rows.svc_curl), 2),
        svc_vs_static_throughput_median: round(
          [...rows.static_curl].sort()[rows.static_curl.length >> 1]! / [...rows.svc_curl].sort()[rows.svc_curl.length >> 1]!,
          2,
        ),
        batch: await batchTimes(svc, acct, source.objects, a.batchReps),
      };
      console.error(JSON.stringify(out.fs));
    } finally {
      stat.proc.kill();
      await svc.stop();
    }
  }
  mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
  const file = join(ROOT, "bench", "out", `lfs-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(JSON.stringify(out, null, 2));
  if (!a.keep) rmSync(work, { recursive: true, force: true });
}

await main();
