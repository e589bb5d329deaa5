// The floor under svc on S3 in bench/s3.ts: how fast s3rver behind the fault proxy (and s3rver
// alone) moves a pack-sized object with no svc in between, through svc's own S3 store (the minio
// client with retries and limits). Writes it as a multipart upload, reads it back in ranged reads
// with N in flight, and times one small GET and PUT (the per-request cost with --delay).
//
//   bun bench/lib/s3-floor.ts [--mib 125] [--delay 20] [--chunk-mib 4] [--conc 1,4,8,16]
//                             [--reps 2]
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createS3Store, type S3Store } from "../../src/storage/index.ts";
import { spawnFaultProxy } from "../../test/helpers/fault-proxy.ts";
import { startS3rver } from "../../test/helpers/s3rver.ts";
import { processTree, procCpu, round } from "./git-util.ts";

const argv = process.argv.slice(2);
const get = (n: string, d: string) => {
  const i = argv.indexOf(`--${n}`);
  return i >= 0 ? argv[i + 1]! : d;
};
const MiB = 1024 * 1024;
const size = Number(get("mib", "125")) * MiB;
const delay = Number(get("delay", "20"));
const chunk = Number(get("chunk-mib", "4")) * MiB;
const concs = get("conc", "1,4,8,16").split(",").map(Number);
const reps = Number(get("reps", "2"));

const s3 = await startS3rver();
const proxy = await spawnFaultProxy(s3.endpoint, { delayMs: delay });
const dir = mkdtempSync(join(tmpdir(), "s3-floor-"));
const file = join(dir, "blob");
writeFileSync(file, randomBytes(size));
const out: Record<string, unknown>[] = [];
// The helpers' child pids, for CPU accounting (s3rver and proxy are separate processes).
const pids = processTree(process.pid).filter((p) => p !== process.pid);
const cpu = () => pids.reduce((n, p) => n + procCpu(p).self, 0);

async function measure(name: string, store: S3Store, via: string): Promise<void> {
  for (let rep = 0; rep < reps; rep++) {
    const key = `floor/${via}-${rep}`;
    let c0 = cpu();
    let t0 = performance.now();
    await store.putFile(key, file);
    out.push({ via, op: "multipart put", mib: size / MiB, wall: round((performance.now() - t0) / 1000), helperCpu: round(cpu() - c0), load1: loadavg()[0] });
    for (const conc of concs) {
      c0 = cpu();
      t0 = performance.now();
      let next = 0;
      let bytes = 0;
      await Promise.all(
        Array.from({ length: conc }, async () => {
          while (next < size) {
            const at = next;
            next += chunk;
            const got = await store.getRange(key, at, Math.min(chunk, size - at));
            bytes += got.length;
          }
        }),
      );
      const wall = (performance.now() - t0) / 1000;
      out.push({
        via,
        op: `ranged get x${conc}`,
        chunkMiB: chunk / MiB,
        mib: bytes / MiB,
        wall: round(wall),
        mibPerS: round(bytes / MiB / wall, 1),
        helperCpu: round(cpu() - c0),
        load1: loadavg()[0],
      });
    }
    const small = new Uint8Array(1024);
    t0 = performance.now();
    for (let i = 0; i < 10; i++) await store.put(`floor/small-${i}`, small);
    const putMs = (performance.now() - t0) / 10;
    t0 = performance.now();
    for (let i = 0; i < 10; i++) await store.get(`floor/small-${i}`);
    out.push({ via, op: "small PUT / GET, ms each", put: round(putMs, 1), get: round((performance.now() - t0) / 10, 1) });
    await store.delete(key);
  }
  process.stderr.write(`${name} done\n`);
}

try {
  const cfg = { bucket: s3.bucket, accessKey: s3.accessKey, secretKey: s3.secretKey };
  await measure("direct", await createS3Store({ ...cfg, endpoint: s3.endpoint }), "s3rver");
  await measure("proxy", await createS3Store({ ...cfg, endpoint: proxy.endpoint }), `proxy-${delay}ms`);
} finally {
  await proxy.stop();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ date: new Date().toISOString(), load: loadavg(), results: out }, null, 1));
