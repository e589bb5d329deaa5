// Where a fetch's pack is made (services/git/upload.ts): a clone of a repository larger than
// SMALL_REPO_BYTES on a worker thread, a small incremental fetch on the event loop; the bytes
// are the same either way. In-process with the real context and its thread pool.
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
import { SMALL_REPO_BYTES, uploadPacker } from "../../../src/services/git/upload.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import { repoById } from "../../../src/services/repos/store.ts";

const root = mkdtempSync(join(tmpdir(), "svc-upload-threads-"));
let ctx: Ctx & { close(): void };
let owner: Principal;
let repoId: string;
const tips: string[] = [];

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: root, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  const user: User = await createUserWithOrg(ctx, { org: "acme", email: "o@example.com", name: "o", password: "a long enough password", role: "owner" });
  owner = { kind: "session", user, sessionId: "test" };
  repoId = (await createRepo(ctx, owner, "acme", { name: "big" })).id;
  // Random hex deflates to about half: 12 files of 1 MiB make a repository past SMALL_REPO_BYTES.
  const hex = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n / 2))).toString("hex");
  for (let i = 0; i < 3; i++) {
    const ops = Array.from({ length: 4 }, (_, k) => ({ op: "put" as const, path: `blobs/f${i}-${k}.txt`, content: hex(1024 * 1024) }));
    tips.push((await createCommit(ctx, await openRepo(ctx, owner, "acme", "big"), { message: `c${i}`, operations: ops })).commit);
  }
  tips.push(
    (
      await createCommit(ctx, await openRepo(ctx, owner, "acme", "big"), {
        message: "small",
        operations: [{ op: "put", path: "small.txt", content: "hello\n" }],
      })
    ).commit,
  );
});
afterAll(() => {
  ctx.close();
  rmSync(root, { recursive: true, force: true });
});

/** One stateless v0 request; the response bytes. */
async function request(lines: string[], done = true): Promise<Buffer> {
  const written: Uint8Array[] = [];
  const io = {
    input: (async function* () {
      yield concatBytes([...lines.map((l, i) => (l === "" ? FLUSH_PKT : pktLine(i === 0 ? l : l))), ...(done ? [pktLine("done")] : [])]);
    })(),
    write: (chunk: Uint8Array) => void written.push(chunk),
  };
  expect(await serveGit(ctx, owner, { service: "git-upload-pack", org: "acme", repo: "big", protocol: 0, io, stateless: true, via: "http" })).toEqual({
    kind: "served",
  });
  return Buffer.from(concatBytes(written));
}

/** The same request answered by the engine alone, in this thread (the default packer). */
async function requestLocally(lines: string[]): Promise<Buffer> {
  const repo = (await repoById(ctx.db.read, repoId))!;
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  const written: Uint8Array[] = [];
  await serveUploadPack(
    snapshot,
    {
      input: (async function* () {
        yield concatBytes([...lines.map((l) => (l === "" ? FLUSH_PKT : pktLine(l))), pktLine("done")]);
      })(),
      write: (chunk: Uint8Array) => void written.push(chunk),
    },
    { protocol: 0, statelessRpc: true },
  );
  return Buffer.from(concatBytes(written));
}

test("a clone of a repository past SMALL_REPO_BYTES is made on a thread, byte for byte what the engine makes here", async () => {
  const repo = (await repoById(ctx.db.read, repoId))!;
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  expect(snapshot.objects.packs.reduce((s, p) => s + p.source.size, 0)).toBeGreaterThan(SMALL_REPO_BYTES);
  const lines = [`want ${tips[3]} ofs-delta side-band-64k no-progress`, ""];
  const before = ctx.threads.stats().completed;
  const out = await request(lines);
  expect(ctx.threads.stats().completed).toBe(before + 1);
  expect(out.subarray(0, 8).toString()).toBe("0008NAK\n");
  expect(out.equals(await requestLocally(lines))).toBe(true);
  expect(out.length).toBeGreaterThan(SMALL_REPO_BYTES);
});

test("a small incremental fetch is answered as the engine does here (on the event loop when it fits the budget)", async () => {
  const lines = [`want ${tips[3]} ofs-delta side-band-64k no-progress thin-pack`, "", `have ${tips[2]}`];
  const out = await request(lines);
  expect(out.equals(await requestLocally(lines))).toBe(true);
  expect(out.length).toBeLessThan(4096);
});

test("the cut-over: within the work units on the event loop, past them on a thread, a clone of a big repository on a thread at once", async () => {
  const repo = (await repoById(ctx.db.read, repoId))!;
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  const options = { thinPack: true, ofsDelta: true, includeTag: false, noProgress: true, sideband: 65520 };
  const pathOf = async (haves: string[]): Promise<string> => {
    let path = "";
    // No deadline: which side is decided by the work units alone, whatever the machine's load.
    const packer = uploadPacker(ctx, snapshot, { onPath: (p) => (path = p), mainBudgetMs: Number.POSITIVE_INFINITY });
    await packer({ request: { wants: [tips[3]!], haves, shallow: [] }, options }, async () => {});
    return path;
  };
  expect(await pathOf([tips[2]!])).toBe("main");
  expect(await pathOf([tips[0]!])).toBe("thread");
  expect(await pathOf([])).toBe("thread");
});

test("a fetch past the event loop's budget moves to a thread and sends the same bytes", async () => {
  const lines = [`want ${tips[3]} ofs-delta side-band-64k no-progress`, "", `have ${tips[0]}`];
  const before = ctx.threads.stats().completed;
  const out = await request(lines);
  expect(ctx.threads.stats().completed).toBe(before + 1);
  expect(out.equals(await requestLocally(lines))).toBe(true);
});

test("a client that goes away mid-clone stops the thread's work; no spool file is left, and the next clone is served", async () => {
  const { readdirSync } = await import("node:fs");
  let writes = 0;
  const io = {
    input: (async function* () {
      yield concatBytes([pktLine(`want ${tips[3]} ofs-delta side-band-64k no-progress`), FLUSH_PKT, pktLine("done")]);
    })(),
    write: async (_chunk: Uint8Array) => {
      if (++writes > 2) throw new Error("client went away");
    },
  };
  const outcome = await serveGit(ctx, owner, { service: "git-upload-pack", org: "acme", repo: "big", protocol: 0, io, stateless: true, via: "http" });
  expect(outcome.kind).toBe("failed");
  expect(readdirSync(ctx.tmpDir).filter((f) => f.startsWith("upload-"))).toEqual([]);
  const out = await request([`want ${tips[3]} ofs-delta side-band-64k no-progress`, ""]);
  expect(out.subarray(0, 8).toString()).toBe("0008NAK\n");
  expect(readdirSync(ctx.tmpDir).filter((f) => f.startsWith("upload-"))).toEqual([]);
});

test("clients that stop reading do not hold the threads: another clone is served meanwhile", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const stalled = Array.from({ length: ctx.threads.size + 1 }, () =>
    serveGit(ctx, owner, {
      service: "git-upload-pack",
      org: "acme",
      repo: "big",
      protocol: 0,
      stateless: true,
      via: "http",
      io: {
        input: (async function* () {
          yield concatBytes([pktLine(`want ${tips[3]} ofs-delta side-band-64k no-progress`), FLUSH_PKT, pktLine("done")]);
        })(),
        // The client reads nothing until the end of the test.
        write: () => released,
      },
    }),
  );
  const out = await request([`want ${tips[3]} ofs-delta side-band-64k no-progress`, ""]);
  expect(out.subarray(0, 8).toString()).toBe("0008NAK\n");
  release();
  expect(await Promise.all(stalled)).toEqual(stalled.map(() => ({ kind: "served" })));
});

test("a shallow clone on a thread (the plan travels with the job) answers as the engine does here", async () => {
  const lines = [`want ${tips[3]} ofs-delta side-band-64k no-progress shallow`, `shallow ${tips[0]}`, "deepen 2", ""];
  const before = ctx.threads.stats().completed;
  const out = await request(lines);
  expect(ctx.threads.stats().completed).toBe(before + 1);
  expect(out.subarray(0, 12).toString()).toBe("0035shallow ");
  expect(out.equals(await requestLocally(lines))).toBe(true);
});
