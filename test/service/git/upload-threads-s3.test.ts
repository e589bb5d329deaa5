// A clone made on a worker thread against object storage (s3rver): the thread builds its own S3
// store from the serializable config and answers as the engine does in process.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { User } from "../../../src/db/schema/index.ts";
import { concatBytes, FLUSH_PKT, pktLine } from "../../../src/git/pkt-line.ts";
import { serveUploadPack } from "../../../src/git/upload-pack.ts";
import { openTestContext } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { serveGit } from "../../../src/services/git/serve.ts";
import { openSnapshot } from "../../../src/services/git/snapshot.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import { repoById } from "../../../src/services/repos/store.ts";
import { type S3rverHandle, startS3rver } from "../../helpers/s3rver.ts";

const root = mkdtempSync(join(tmpdir(), "svc-upload-threads-s3-"));
let s3: S3rverHandle;
let ctx: Ctx & { close(): void };
let owner: Principal;
let repoId: string;
let tip = "";

beforeAll(async () => {
  s3 = await startS3rver();
  ctx = await openTestContext({
    SVC_DATA_DIR: root,
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_LOG: "error",
    SVC_STORAGE: "s3",
    SVC_S3_ENDPOINT: s3.endpoint,
    SVC_S3_BUCKET: s3.bucket,
    SVC_S3_ACCESS_KEY: s3.accessKey,
    SVC_S3_SECRET_KEY: s3.secretKey,
  });
  const user: User = await createUserWithOrg(ctx, { org: "acme", email: "o@example.com", name: "o", password: "a long enough password", role: "owner" });
  owner = { kind: "session", user, sessionId: "test" };
  repoId = (await createRepo(ctx, owner, "acme", { name: "big" })).id;
  const hex = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n / 2))).toString("hex");
  for (let i = 0; i < 3; i++) {
    const ops = Array.from({ length: 4 }, (_, k) => ({ op: "put" as const, path: `blobs/f${i}-${k}.txt`, content: hex(1024 * 1024) }));
    tip = (await createCommit(ctx, await openRepo(ctx, owner, "acme", "big"), { message: `c${i}`, operations: ops })).commit;
  }
}, 120_000);
afterAll(async () => {
  ctx?.close();
  await s3?.stop();
  rmSync(root, { recursive: true, force: true });
});

test("a clone on a thread over S3 is byte for byte the in-process answer", async () => {
  const body = concatBytes([pktLine(`want ${tip} ofs-delta side-band-64k no-progress`), FLUSH_PKT, pktLine("done")]);
  const written: Uint8Array[] = [];
  const before = ctx.threads.stats().completed;
  const io = {
    input: (async function* () {
      yield body;
    })(),
    write: (c: Uint8Array) => void written.push(c),
  };
  expect(await serveGit(ctx, owner, { service: "git-upload-pack", org: "acme", repo: "big", protocol: 0, io, stateless: true, via: "http" })).toEqual({
    kind: "served",
  });
  expect(ctx.threads.stats().completed).toBe(before + 1);
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, (await repoById(ctx.db.read, repoId))!);
  const local: Uint8Array[] = [];
  await serveUploadPack(
    snapshot,
    {
      input: (async function* () {
        yield body;
      })(),
      write: (c) => void local.push(c),
    },
    { protocol: 0, statelessRpc: true },
  );
  // A slow machine may get keep-alives (empty band-1 packets, "0005\x01") before the first pack
  // bytes; they carry nothing, so they are left out of the comparison.
  expect(Buffer.from(withoutKeepalives(concatBytes(written))).equals(Buffer.from(concatBytes(local)))).toBe(true);
}, 120_000);

/** `stream` (pkt-lines) without its empty side-band data packets. */
function withoutKeepalives(stream: Uint8Array): Uint8Array {
  const kept: Uint8Array[] = [];
  for (let at = 0; at < stream.length; ) {
    const len = Number.parseInt(new TextDecoder().decode(stream.subarray(at, at + 4)), 16);
    const size = len === 0 ? 4 : len;
    if (!(len === 5 && stream[at + 4] === 1)) kept.push(stream.subarray(at, at + size));
    at += size;
  }
  return concatBytes(kept);
}
