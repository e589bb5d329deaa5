// A whole-repository clone of several packs from object storage (the state a repository is in
// between GC passes after stepped pushes): the worker thread downloads each pack whole in large
// ranged reads first and walks and writes from the local copies, so every stored pack byte
// crosses the network once; the answer is byte for byte the in-process one. Counted through the
// fault proxy's trace (no timing).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { User } from "../../../src/db/schema/index.ts";
import { createPackFile, packSink, type PackJob } from "../../../src/git/create-pack-file.ts";
import { concatBytes } from "../../../src/git/pkt-line.ts";
import { openTestContext } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { openSnapshot } from "../../../src/services/git/snapshot.ts";
import { uploadPacker } from "../../../src/services/git/upload.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import { repoById } from "../../../src/services/repos/store.ts";
import { type FaultProxyHandle, startFaultProxy } from "../../helpers/fault-proxy.ts";
import { type S3rverHandle, startS3rver } from "../../helpers/s3rver.ts";

const root = mkdtempSync(join(tmpdir(), "svc-clone-copies-s3-"));
let s3: S3rverHandle;
let proxy: FaultProxyHandle;
let ctx: Ctx & { close(): void };
let owner: Principal;
let repoId: string;
let tip = "";

beforeAll(async () => {
  s3 = await startS3rver();
  proxy = await startFaultProxy(s3.endpoint, { trace: true });
  ctx = await openTestContext({
    SVC_DATA_DIR: root,
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_LOG: "error",
    SVC_STORAGE: "s3",
    SVC_S3_ENDPOINT: proxy.endpoint,
    SVC_S3_BUCKET: s3.bucket,
    SVC_S3_ACCESS_KEY: s3.accessKey,
    SVC_S3_SECRET_KEY: s3.secretKey,
  });
  const user: User = await createUserWithOrg(ctx, { org: "acme", email: "o@example.com", name: "o", password: "a long enough password", role: "owner" });
  owner = { kind: "session", user, sessionId: "test" };
  repoId = (await createRepo(ctx, owner, "acme", { name: "stepped" })).id;
  // Three commits, one pack each, every pack past the block cache's whole-file size (1 MiB).
  const hex = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n / 2))).toString("hex");
  for (let i = 0; i < 3; i++) {
    const ops = Array.from({ length: 4 }, (_, k) => ({ op: "put" as const, path: `blobs/f${i}-${k}.txt`, content: hex(1024 * 1024) }));
    tip = (await createCommit(ctx, await openRepo(ctx, owner, "acme", "stepped"), { message: `c${i}`, operations: ops })).commit;
  }
}, 120_000);
afterAll(async () => {
  ctx?.close();
  await proxy?.stop();
  await s3?.stop();
  rmSync(root, { recursive: true, force: true });
});

test("a clone of several packs from S3 reads each stored pack byte once and answers as in process", async () => {
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, (await repoById(ctx.db.read, repoId))!);
  const packs = snapshot.objects.packs;
  expect(packs.length).toBeGreaterThanOrEqual(3);
  expect(packs.some((p) => p.reachTips === undefined || p.reachTips === null)).toBe(true);
  const job: PackJob = {
    request: { wants: [tip], haves: [], shallow: [] },
    options: { thinPack: false, ofsDelta: true, includeTag: false, noProgress: true, sideband: 65520 },
  };
  await proxy.trace();
  const before = ctx.threads.stats().completed;
  const written: Uint8Array[] = [];
  let path = "";
  await uploadPacker(ctx, snapshot, { onPath: (p) => (path = p) })(job, async (c) => void written.push(c));
  expect(path).toBe("thread");
  expect(ctx.threads.stats().completed).toBe(before + 1);
  const { entries } = await proxy.trace();
  const packReads = entries.filter((e) => e.method === "GET" && e.path.split("?")[0]!.endsWith(".pack"));
  const stored = packs.reduce((n, p) => n + p.source.size, 0);
  // Each pack streamed whole once: no block of the walk read again by the writer.
  expect(packReads.reduce((n, e) => n + e.bytesDown, 0)).toBe(stored);
  // The copies are gone once the clone is answered.
  expect(readdirSync(ctx.tmpDir).filter((f) => f.startsWith("copy-"))).toEqual([]);

  // A second clone on the same thread: nothing cached by the first may point at its removed copies.
  const again: Uint8Array[] = [];
  await uploadPacker(ctx, snapshot)(job, async (c) => void again.push(c));
  expect(Buffer.from(concatBytes(again)).equals(Buffer.from(concatBytes(written)))).toBe(true);

  expect(ctx.uploads.copiedBytes).toBe(0);
  // With the temp room taken by other clones' copies, the clone reads the store directly: same answer.
  ctx.uploads.copiedBytes = ctx.config.gitMaxPush;
  await proxy.trace();
  const direct: Uint8Array[] = [];
  try {
    await uploadPacker(ctx, snapshot)(job, async (c) => void direct.push(c));
  } finally {
    ctx.uploads.copiedBytes = 0;
  }
  const directReads = (await proxy.trace()).entries.filter((e) => e.method === "GET" && e.path.split("?")[0]!.endsWith(".pack"));
  expect(directReads.reduce((n, e) => n + e.bytesDown, 0)).not.toBe(stored);
  expect(Buffer.from(concatBytes(direct)).equals(Buffer.from(concatBytes(written)))).toBe(true);

  const local: Uint8Array[] = [];
  await createPackFile(
    snapshot,
    job.request,
    job.options,
    packSink((c) => void local.push(c), job.options),
    { keepalive: false },
  );
  expect(Buffer.from(concatBytes(written)).equals(Buffer.from(concatBytes(local)))).toBe(true);
}, 120_000);
