// After bench/s3.ts's fault run: GC every repository and sweep it past the grace period (the
// service clock moved forward, so nothing waits an hour), through the same faulty store svc
// used; then list the bucket directly (S3_DIRECT_ENDPOINT, no proxy) and compare it with the
// live pack rows. Prints one JSON line: what GC and sweep did, objects no live row names,
// live rows whose files are missing, and multipart uploads still open.
//
//   SVC_DATA_DIR=… SVC_STORAGE=s3 SVC_S3_*=… S3_DIRECT_ENDPOINT=http://127.0.0.1:PORT bun bench/lib/s3-audit.ts
import { Client } from "minio";
import { loadConfig } from "../../src/config.ts";
import { openContext } from "../../src/runtime.ts";
import { allRepos, gcRepo, GRACE_MS, sweepRepo } from "../../src/services/git/maintenance.ts";
import { livePacks } from "../../src/services/git/store.ts";
import { setClock } from "../../src/util/clock.ts";

const direct = process.env.S3_DIRECT_ENDPOINT;
if (!direct) throw new Error("S3_DIRECT_ENDPOINT is required");
const env: Record<string, string | undefined> = {};
for (const [k, v] of Object.entries(process.env)) if (k.startsWith("SVC_")) env[k] = v;
const config = loadConfig(env);
if (config.storage.kind !== "s3") throw new Error("the audit is for SVC_STORAGE=s3");
const ctx = await openContext(config);

const real = Date.now();
const gc: Record<string, unknown> = {};
setClock(() => real + 60_000);
for (const repo of await allRepos(ctx)) gc[repo.name] = await gcRepo(ctx, { repoId: repo.id });
// Past the grace period of everything the GC replaced and of every orphan file.
setClock(() => real + 60_000 + GRACE_MS + 60_000);
const swept: Record<string, number> = {};
for (const repo of await allRepos(ctx)) swept[repo.name] = await sweepRepo(ctx, { repoId: repo.id });

const u = new URL(direct);
const client = new Client({
  endPoint: u.hostname,
  port: Number(u.port),
  useSSL: false,
  accessKey: config.storage.accessKey,
  secretKey: config.storage.secretKey,
  region: "us-east-1",
  pathStyle: true,
});
const bucket = config.storage.bucket;
const keys: string[] = [];
for await (const item of client.listObjectsV2(bucket, "repos/", true)) if (item.name) keys.push(item.name);
const live = new Set<string>();
for (const repo of await allRepos(ctx)) {
  for (const row of await livePacks(ctx.db.read, repo.id)) {
    live.add(`repos/${repo.id}/packs/pack-${row.name}.pack`);
    live.add(`repos/${repo.id}/packs/pack-${row.name}.idx`);
  }
}
const unreferenced = keys.filter((k) => !live.has(k));
const missing = [...live].filter((k) => !keys.includes(k));
const uploads = (await client.listIncompleteUploadsQuery(bucket, "", "", "", "")).uploads.map((x) => ({ key: x.key, uploadId: x.uploadId }));
const stats = ctx.store.stats;
ctx.close();
process.stdout.write(
  `${JSON.stringify({ gc, swept, objects: keys.length, livePackFiles: live.size, unreferenced, missing, openUploads: uploads, storeStats: stats })}\n`,
);
