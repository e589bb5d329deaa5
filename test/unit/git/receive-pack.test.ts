import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serializeCommit } from "../../../src/git/object.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { buildPack } from "../../../src/git/pack-writer.ts";
import { concatBytes, encodePkt, FLUSH_PKT, PktLineReader, pktLine, pktText } from "../../../src/git/pkt-line.ts";
import type { IndexTaskRunner } from "../../../src/git/pack-indexer.ts";
import { serveReceivePack } from "../../../src/git/receive-pack.ts";
import { ZERO_OID } from "../../../src/git/types.ts";
import { createThreads } from "../../../src/threads.ts";
import { MemoryRepo, serveHttp, serveSsh } from "./harness.ts";
import { git, gitAsync, gitLines, makeFixtureRepo, removeDir, runGit } from "./repo-fixture.ts";

let fixture: string;
let work: string;
let seq = 0;
const repos: MemoryRepo[] = [];

beforeAll(async () => {
  fixture = await makeFixtureRepo(300, 11);
  work = await mkdtemp(join(tmpdir(), "svc-receive-pack-"));
});
afterAll(async () => {
  await Promise.all(repos.map((r) => r.close()));
  await Promise.all([fixture, work].map(removeDir));
});

const newDir = (name: string): string => join(work, `${name}-${++seq}`);
const refsOf = (gitDir: string): string[] => gitLines(gitDir, ["for-each-ref", "--format=%(objectname) %(refname)"]);
const memoryRefs = (repo: MemoryRepo): string[] => repo.snapshot().refs.map((r) => `${r.oid} ${r.name}`);

async function newRepo(): Promise<MemoryRepo> {
  const repo = await MemoryRepo.create();
  repos.push(repo);
  return repo;
}

const transports = [
  { name: "http", start: async (repo: MemoryRepo, tmp: string) => ({ ...serveHttp(repo, tmp), env: {} }) },
  { name: "ssh", start: (repo: MemoryRepo, tmp: string) => serveSsh(repo, tmp) },
];

for (const t of transports) {
  describe(`git push over ${t.name}`, () => {
    let repo: MemoryRepo;
    let server: { url: string; env: Record<string, string>; stop(): void };
    let tmp: string;
    let client: string;
    const push = (args: string[], version = 0) => runGit(client, ["-c", `protocol.version=${version}`, "push", "--porcelain", ...args], server.env);

    beforeAll(async () => {
      repo = await newRepo();
      tmp = await mkdtemp(join(work, "tmp-"));
      server = await t.start(repo, tmp);
      client = newDir("client");
      git(work, ["clone", "-q", "--bare", fixture, client]);
    });
    afterAll(() => server.stop());

    test("pushing everything to an empty repository, then cloning it back", async () => {
      const r = await push([server.url, "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*"]);
      expect(r.exitCode).toBe(0);
      expect(memoryRefs(repo)).toEqual(refsOf(fixture));
      const back = newDir("back");
      await gitAsync(work, ["clone", "-q", "--mirror", server.url, back], server.env);
      git(back, ["fsck", "--full", "--no-dangling"]);
      expect(refsOf(back)).toEqual(refsOf(fixture));
      expect(await readdir(tmp)).toEqual([]);
    });

    test("fast-forward (thin pack), force push, new branch and delete, with protocol v2 asked", async () => {
      const tree = git(client, ["rev-parse", "main^{tree}"]);
      const next = git(client, ["commit-tree", tree, "-p", "main", "-m", "next"]);
      git(client, ["update-ref", "refs/heads/main", next]);
      expect((await push([server.url, "main"], 2)).exitCode).toBe(0);
      expect(repo.refs.get("refs/heads/main")).toBe(next);

      const rewritten = git(client, ["commit-tree", tree, "-p", "main~3", "-m", "rewritten"]);
      git(client, ["update-ref", "refs/heads/main", rewritten]);
      const refused = await push([server.url, "main"]);
      expect(refused.exitCode).not.toBe(0);
      expect((await push(["--force", server.url, "main"])).exitCode).toBe(0);
      expect(repo.refs.get("refs/heads/main")).toBe(rewritten);

      expect((await push([server.url, "main:refs/heads/topic"])).exitCode).toBe(0);
      expect(repo.refs.get("refs/heads/topic")).toBe(rewritten);
      expect((await push([server.url, ":refs/heads/topic"])).exitCode).toBe(0);
      expect(repo.refs.has("refs/heads/topic")).toBe(false);

      const back = newDir("back");
      await gitAsync(work, ["clone", "-q", "--mirror", server.url, back], server.env);
      git(back, ["fsck", "--full", "--no-dangling"]);
    });

    test("--atomic: one refused ref refuses them all", async () => {
      repo.protectedRefs.add("refs/heads/locked");
      try {
        const r = await push(["--atomic", server.url, "main:refs/heads/a1", "main:refs/heads/locked"]);
        expect(r.exitCode).not.toBe(0);
        expect(r.stdout).toContain("refs/heads/locked\t[remote rejected] (protected branch)");
        expect(r.stdout).toContain("refs/heads/a1\t[remote rejected] (atomic push failure)");
        expect(repo.refs.has("refs/heads/a1")).toBe(false);

        const partial = await push([server.url, "main:refs/heads/a2", "main:refs/heads/locked"]);
        expect(partial.exitCode).not.toBe(0);
        expect(repo.refs.has("refs/heads/a2")).toBe(true);
        expect(repo.refs.has("refs/heads/locked")).toBe(false);
      } finally {
        repo.protectedRefs.clear();
      }
    });

    test("a large push streams in chunks (http.postBuffer) after git's probe request", async () => {
      const big = newDir("big");
      git(work, ["init", "-q", big]);
      await Bun.write(join(big, "random.bin"), crypto.getRandomValues(new Uint8Array(60_000)));
      git(big, ["add", "."]);
      git(big, ["commit", "-q", "-m", "big"]);
      const r = await runGit(big, ["-c", "http.postBuffer=4096", "push", "--porcelain", server.url, "HEAD:refs/heads/big"], server.env);
      expect(r.exitCode).toBe(0);
      expect(repo.refs.get("refs/heads/big")).toBe(git(big, ["rev-parse", "HEAD"]));
    });

    test("push options reach the hook", async () => {
      const r = await push(["-o", "ci.skip", "-o", "reviewer=alice", server.url, "main:refs/heads/opts"]);
      expect(r.exitCode).toBe(0);
      expect(repo.pushes[repo.pushes.length - 1]!.pushOptions).toEqual(["ci.skip", "reviewer=alice"]);
    });

    test("a refusal from authorize reaches the user", async () => {
      repo.refuseAll = "permission denied to push";
      try {
        const r = await push([server.url, "main:refs/heads/denied"]);
        expect(r.exitCode).not.toBe(0);
        expect(r.stderr).toContain("permission denied to push");
        expect(repo.refs.has("refs/heads/denied")).toBe(false);
      } finally {
        repo.refuseAll = null;
      }
    });
  });
}

describe("receive-pack requests", () => {
  let repo: MemoryRepo;
  let tmp: string;
  let base: string;

  beforeAll(async () => {
    repo = await newRepo();
    await repo.importFrom(fixture);
    tmp = await mkdtemp(join(work, "tmp-"));
    base = repo.refs.get("refs/heads/main")!;
  });

  const enc = new TextEncoder();
  const caps = "report-status side-band-64k quiet agent=test/1";

  function commitOn(parent: string, tree: string, message: string) {
    const data = serializeCommit({
      tree,
      parents: [parent],
      author: { name: "A", email: "a@x", timestamp: 1_700_000_000, timezone: "+0000" },
      committer: { name: "A", email: "a@x", timestamp: 1_700_000_000, timezone: "+0000" },
      message,
      extraHeaders: [],
    });
    return { oid: hashObject("commit", data), obj: { type: "commit" as const, data } };
  }

  /** Send a raw request; returns the report lines (demultiplexed) and the result. */
  async function request(body: Uint8Array, chunk = 7) {
    const out: Uint8Array[] = [];
    const result = await serveReceivePack(
      repo.snapshot(),
      {
        input: (async function* () {
          for (let i = 0; i < body.length; i += chunk) yield body.slice(i, i + chunk);
        })(),
        write: (c) => {
          out.push(c);
        },
      },
      { statelessRpc: true, tmpDir: tmp, hooks: repo.hooks() },
    );
    const outer = new PktLineReader(
      (async function* () {
        yield concatBytes(out);
      })(),
    );
    const band1: Uint8Array[] = [];
    const lines: string[] = [];
    const sideband = new TextDecoder().decode(body.subarray(0, 200)).includes("side-band-64k");
    const remote: string[] = [];
    for (let p = await outer.read(); p.type !== "eof"; p = await outer.read()) {
      if (p.type !== "data") lines.push(p.type);
      else if (!sideband) lines.push(pktText(p.data));
      else if (p.data[0] === 1) band1.push(p.data.subarray(1));
      else if (p.data[0] === 2) remote.push(new TextDecoder().decode(p.data.subarray(1)));
      else lines.push(`band ${p.data[0]}`);
    }
    const inner = new PktLineReader(
      (async function* () {
        yield concatBytes(band1);
      })(),
    );
    for (let p = await inner.read(); p.type !== "eof"; p = await inner.read()) {
      lines.push(p.type === "data" ? pktText(p.data) : `inner ${p.type}`);
    }
    return { lines, result, tmpFiles: await readdir(tmp), remote, report: concatBytes(band1) };
  }

  test("flush-only and empty requests get no answer", async () => {
    expect((await request(FLUSH_PKT)).lines).toEqual([]);
    expect((await request(new Uint8Array(0))).lines).toEqual([]);
  });

  test("a funny ref name is refused per ref; the others go through", async () => {
    const tree = git(fixture, ["rev-parse", "main^{tree}"]);
    const c = commitOn(base, tree, "funny");
    const { pack } = buildPack([c.obj]);
    const { lines, tmpFiles } = await request(
      concatBytes([
        pktLine(`${ZERO_OID} ${c.oid} refs/heads/ok-one\0${caps}`),
        pktLine(`${ZERO_OID} ${c.oid} refs/heads/bad..name`),
        pktLine(`${ZERO_OID} ${c.oid} refs/heads/x.lock`),
        FLUSH_PKT,
        pack,
      ]),
    );
    expect(lines).toEqual([
      "flush",
      "unpack ok",
      "ok refs/heads/ok-one",
      "ng refs/heads/bad..name funny refname",
      "ng refs/heads/x.lock funny refname",
      "inner flush",
    ]);
    expect(repo.refs.get("refs/heads/ok-one")).toBe(c.oid);
    expect(tmpFiles).toEqual([]);
  });

  test("a ref name that is not UTF-8 is refused, reported in the client's bytes, never decoded into another name (issue 25 row 13)", async () => {
    const name = concatBytes([enc.encode("refs/heads/"), Uint8Array.of(0xff, 0xfe)]);
    const line = concatBytes([enc.encode(`${ZERO_OID} ${base} `), name, enc.encode(`\0${caps}\n`)]);
    const { lines, report } = await request(concatBytes([encodePkt(line), FLUSH_PKT, buildPack([]).pack]));
    expect(lines[1]).toBe("unpack ok");
    const expected = concatBytes([enc.encode("ng "), name, enc.encode(" funny refname\n")]);
    expect(Buffer.from(report).includes(Buffer.from(expected))).toBe(true);
    expect([...repo.refs.keys()].filter((r) => r.includes("\ufffd") || r.includes("ÿ"))).toEqual([]);
  });

  test("objects git's fsck only warns about are accepted, and the pusher is told in remote: lines (issue 24 defect 0)", async () => {
    const blob = { type: "blob" as const, data: enc.encode("x\n") };
    const sub = { type: "tree" as const, data: concatBytes([enc.encode("100644 f\0"), Buffer.from(hashObject("blob", blob.data), "hex")]) };
    // "040000": a zero-padded directory mode, as old tools wrote it (redis, rails, ohmyzsh).
    const top = { type: "tree" as const, data: concatBytes([enc.encode("040000 d\0"), Buffer.from(hashObject("tree", sub.data), "hex")]) };
    const c = commitOn(base, hashObject("tree", top.data), "zero-padded");
    const { pack } = buildPack([blob, sub, top, c.obj]);
    const { lines, remote, result } = await request(concatBytes([pktLine(`${ZERO_OID} ${c.oid} refs/heads/padded\0${caps}`), FLUSH_PKT, pack]));
    expect(lines.slice(1, 3)).toEqual(["unpack ok", "ok refs/heads/padded"]);
    expect(remote[0]).toBe(`warning: object ${hashObject("tree", top.data)}: zeroPaddedFilemode: contains zero-padded file modes\n`);
    expect(remote.some((l) => l.includes("zeroPaddedFilemode ×1"))).toBe(true);
    expect(result.warnings).toEqual(new Map([["zeroPaddedFilemode", 1]]));
    // A .git entry is still refused.
    const evil = { type: "tree" as const, data: concatBytes([enc.encode("040000 .git\0"), Buffer.from(hashObject("tree", sub.data), "hex")]) };
    const e = commitOn(base, hashObject("tree", evil.data), "evil");
    const refused = await request(concatBytes([pktLine(`${ZERO_OID} ${e.oid} refs/heads/evil\0${caps}`), FLUSH_PKT, buildPack([blob, sub, evil, e.obj]).pack]));
    expect(refused.lines[1]).toMatch(/^unpack object [0-9a-f]{40}: hasDotgit: contains '\.git'$/);
    expect(repo.refs.has("refs/heads/evil")).toBe(false);
  });

  test("the keepalive starts at the pack's checksum: the client is not left without a byte while the pack is resolved and checked (issue 24 defect 0)", async () => {
    // git.git over HTTP: 46 s without a byte from svc after the pack, enough for a proxy's read
    // timeout. Here the indexing (on a worker thread, as in svc) ends only once a keepalive
    // has gone out: before the fix the keepalive started after the indexing and this never ended.
    const blob = { type: "blob" as const, data: enc.encode("kept alive\n") };
    const tree = { type: "tree" as const, data: concatBytes([enc.encode("100644 f\0"), Buffer.from(hashObject("blob", blob.data), "hex")]) };
    const c = commitOn(base, hashObject("tree", tree.data), "keepalive");
    const body = concatBytes([pktLine(`${ZERO_OID} ${c.oid} refs/heads/keepalive\0${caps}`), FLUSH_PKT, buildPack([blob, tree, c.obj]).pack]);
    const isKeepalive = (w: Uint8Array) => w.length === 5 && new TextDecoder().decode(w.subarray(0, 4)) === "0005" && w[4] === 1;
    let keptAlive!: () => void;
    const keepalive = new Promise<void>((resolve) => (keptAlive = resolve));
    const pool = createThreads({ size: 1 });
    const run: IndexTaskRunner = async (input, transfer) => {
      const indexed = await pool.run("git.indexPack", input, { transfer });
      await keepalive;
      return indexed;
    };
    const writes: Uint8Array[] = [];
    try {
      const result = await serveReceivePack(
        repo.snapshot(),
        {
          input: (async function* () {
            yield body;
          })(),
          write: (w) => {
            writes.push(w);
            if (isKeepalive(w)) keptAlive();
          },
        },
        { statelessRpc: true, tmpDir: tmp, run, keepaliveMs: 1, hooks: repo.hooks() },
      );
      expect(result.results.get("refs/heads/keepalive")).toBeNull();
      expect(repo.refs.get("refs/heads/keepalive")).toBe(c.oid);
      // The first byte the client gets is a keepalive; after the report's flush, nothing.
      expect(isKeepalive(writes[0]!)).toBe(true);
      expect(new TextDecoder().decode(writes.at(-1)!)).toBe("0000");
      const report = new TextDecoder().decode(concatBytes(writes.filter((w) => !isKeepalive(w))));
      expect(report).toContain("unpack ok");
      expect(report).toContain("ok refs/heads/keepalive");
    } finally {
      await pool.close();
    }
  }, 60_000);

  test("atomic: a funny ref name fails every ref", async () => {
    const { lines } = await request(
      concatBytes([
        pktLine(`${ZERO_OID} ${base} refs/heads/at-1\0${caps} atomic`),
        pktLine(`${ZERO_OID} ${base} refs/heads/at..2`),
        FLUSH_PKT,
        buildPack([]).pack,
      ]),
    );
    expect(lines.slice(1, 4)).toEqual(["unpack ok", "ng refs/heads/at-1 atomic push failure", "ng refs/heads/at..2 funny refname"]);
    expect(repo.refs.has("refs/heads/at-1")).toBe(false);
  });

  test("a stale old value is refused by the compare-and-swap", async () => {
    const { lines } = await request(concatBytes([pktLine(`${"1".repeat(40)} ${base} refs/heads/old\0report-status`), FLUSH_PKT, buildPack([]).pack]));
    expect(lines).toEqual(["unpack ok", "ng refs/heads/old fetch first", "flush"]);
  });

  test("a corrupt or truncated pack is an unpack error and nothing moves", async () => {
    const tree = git(fixture, ["rev-parse", "main^{tree}"]);
    const c = commitOn(base, tree, "corrupt");
    const { pack } = buildPack([c.obj]);
    const bad = pack.slice();
    bad[bad.length - 30]! ^= 0xff;
    for (const body of [bad, pack.subarray(0, pack.length - 10), enc.encode("PACK garbage")]) {
      const { lines, tmpFiles } = await request(concatBytes([pktLine(`${ZERO_OID} ${c.oid} refs/heads/corrupt\0report-status`), FLUSH_PKT, body]));
      expect(lines[0]).toStartWith("unpack ");
      expect(lines[0]).not.toBe("unpack ok");
      expect(lines.slice(1)).toEqual(["ng refs/heads/corrupt unpacker error", "flush"]);
      expect(tmpFiles).toEqual([]);
    }
    expect(repo.refs.has("refs/heads/corrupt")).toBe(false);
  });

  test("a malformed command list is an ERR before capabilities are known", async () => {
    const { lines } = await request(concatBytes([pktLine(`${base} refs/heads/x`), FLUSH_PKT]));
    expect(lines[0]).toStartWith("ERR ");
  });

  test("missing objects and non-commits on branches are refused", async () => {
    const orphanParent = commitOn("ab".repeat(20), git(fixture, ["rev-parse", "main^{tree}"]), "dangling parent");
    const blob = { type: "blob" as const, data: enc.encode("just a blob\n") };
    const blobOid = hashObject("blob", blob.data);
    const { pack } = buildPack([orphanParent.obj, blob]);
    const { lines } = await request(
      concatBytes([
        pktLine(`${ZERO_OID} ${orphanParent.oid} refs/heads/holey\0report-status-v2 side-band-64k`),
        pktLine(`${ZERO_OID} ${blobOid} refs/heads/blob`),
        pktLine(`${ZERO_OID} ${blobOid} refs/tags/blob`),
        FLUSH_PKT,
        pack,
      ]),
    );
    expect(lines.slice(1, 5)).toEqual([
      "unpack ok",
      "ng refs/heads/holey missing necessary objects",
      "ng refs/heads/blob non-commit object to a branch",
      "ok refs/tags/blob",
    ]);
  });

  test("delete-only pushes carry no pack; push-options are read before the pack", async () => {
    repo.refs.set("refs/heads/gone", base);
    const { lines, result } = await request(
      concatBytes([
        pktLine(`${base} ${ZERO_OID} refs/heads/gone\0report-status push-options`),
        FLUSH_PKT,
        pktLine("first option"),
        pktLine("second"),
        FLUSH_PKT,
      ]),
    );
    expect(lines).toEqual(["unpack ok", "ok refs/heads/gone", "flush"]);
    expect(result.pushOptions).toEqual(["first option", "second"]);
    expect(repo.refs.has("refs/heads/gone")).toBe(false);
  });
});
