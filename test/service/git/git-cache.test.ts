// The git read caches (GitStore) hold at most SVC_GIT_CACHE bytes together, split between pack
// blocks, delta bases, idx files and multi-pack indexes, each entry weighed by what it holds
// once used (tables built after it was cached included). In-process: the real context.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { User } from "../../../src/db/schema/index.ts";
import { heldBytes } from "../../../src/git/buffer-pool.ts";
import { concatBytes, FLUSH_PKT, pktLine } from "../../../src/git/pkt-line.ts";
import { openTestContext } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { serveGit } from "../../../src/services/git/serve.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";

const root = mkdtempSync(join(tmpdir(), "svc-git-cache-"));
const contexts: (Ctx & { close(): void })[] = [];
afterAll(() => {
  for (const c of contexts) c.close();
  rmSync(root, { recursive: true, force: true });
});

/** A context over its own data dir with SVC_GIT_CACHE = `cache`, and a repository of `commits` commits (one pack each). */
async function setUp(name: string, cache: string, commits: number): Promise<{ ctx: Ctx; owner: Principal; tip: string }> {
  const ctx = await openTestContext({ SVC_DATA_DIR: join(root, name), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error", SVC_GIT_CACHE: cache });
  contexts.push(ctx);
  const user: User = await createUserWithOrg(ctx, { org: "acme", email: "o@example.com", name: "o", password: "a long enough password", role: "owner" });
  const owner: Principal = { kind: "session", user, sessionId: "test" };
  await createRepo(ctx, owner, "acme", { name: "many" });
  let tip = "";
  for (let i = 0; i < commits; i++) {
    const ops = Array.from({ length: 20 }, (_, k) => ({ op: "put" as const, path: `d${k % 4}/f${k}.txt`, content: `commit ${i} file ${k}\n`.repeat(50 + k) }));
    tip = (await createCommit(ctx, await openRepo(ctx, owner, "acme", "many"), { message: `c${i}`, operations: ops })).commit;
  }
  return { ctx, owner, tip };
}

/** A full clone of acme/many (v0, stateless): the pack's object count from its header. */
async function clone(ctx: Ctx, owner: Principal, tip: string): Promise<number> {
  const written: Uint8Array[] = [];
  const io = {
    input: (async function* () {
      yield concatBytes([pktLine(`want ${tip} ofs-delta`), FLUSH_PKT, pktLine("done")]);
    })(),
    write: (chunk: Uint8Array) => void written.push(chunk),
  };
  expect(await serveGit(ctx, owner, { service: "git-upload-pack", org: "acme", repo: "many", protocol: 0, io, stateless: true, via: "http" })).toEqual({
    kind: "served",
  });
  const out = Buffer.from(concatBytes(written));
  expect(out.subarray(0, 12).toString()).toBe("0008NAK\nPACK");
  return out.readUInt32BE(16);
}

let small: Awaited<ReturnType<typeof setUp>>;
let large: Awaited<ReturnType<typeof setUp>>;
beforeAll(async () => {
  small = await setUp("small", "96k", 12);
  large = await setUp("large", "128m", 12);
});

test("a budget too small for the working set: every cache stays within its share, and clones still work", async () => {
  const objects = await clone(small.ctx, small.owner, small.tip);
  // 12 commits, each with a new root tree, 4 subtrees and 20 blobs.
  expect(objects).toBe(12 * 26);
  expect(await clone(small.ctx, small.owner, small.tip)).toBe(objects);
  const eighth = (96 * 1024) / 8;
  const held = small.ctx.git.cacheBytes();
  expect(held.pack_indexes).toBeLessThanOrEqual(2 * eighth);
  expect(held.multi_pack_indexes).toBeLessThanOrEqual(2 * eighth);
  expect(held.delta_bases).toBeLessThanOrEqual(eighth);
  // Pack blocks: 5/16 of the budget, but at least one 64 KiB block.
  expect(held.pack_blocks).toBeLessThanOrEqual(64 * 1024);
});

test("a budget that fits: the same clone leaves every idx and the multi-pack index cached, weighed with their tables", async () => {
  const objects = await clone(large.ctx, large.owner, large.tip);
  expect(objects).toBe(12 * 26);
  // A value is weighed when stored and each time it is read: the next request's snapshot reads
  // every idx again, with the tables the first clone built.
  await clone(large.ctx, large.owner, large.tip);
  const held = large.ctx.git.cacheBytes();
  // Twelve packs (one per commit): each idx weighs its file, its fan-out and, once the pack
  // writer asked for pack order, 12 bytes per object more.
  const idxFiles = 12 * (8 + 1024 + 28 * 26 + 40);
  expect(held.pack_indexes).toBe(idxFiles + 12 * 1024 + 12 * 12 * 26);
  expect(held.multi_pack_indexes).toBeGreaterThan(objects * (20 + 6));
  // What the caches hold together is what memory pacing sets aside as live (not garbage).
  const total = held.pack_blocks + held.delta_bases + held.pack_indexes + held.multi_pack_indexes + held.reach_indexes;
  expect(large.ctx.git.heldBytes()).toBe(total);
  expect(heldBytes()).toBeGreaterThanOrEqual(total);
});
