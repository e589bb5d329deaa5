import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDelta } from "../../../src/git/delta.ts";
import { openFileSource } from "../../../src/git/file-source.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { BufferPool } from "../../../src/git/buffer-pool.ts";
import { indexPack, type IndexTaskRunner } from "../../../src/git/pack-indexer.ts";
import { encodeTypeSize } from "../../../src/git/pack-entry.ts";
import { FsckError, FsckSession } from "../../../src/git/fsck.ts";
import { createThreads } from "../../../src/threads.ts";
import { PackIndex } from "../../../src/git/pack-index.ts";
import { Pack } from "../../../src/git/pack-reader.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { GitError } from "../../../src/git/types.ts";
import { craftPack, type CraftEntry } from "./pack-craft.ts";
import { git, gitBytes, gitStatus, makeFixtureRepo, prng, tempDir, type FixtureRepo } from "./fixture.ts";

let repo: FixtureRepo;
let out: { path: string; cleanup(): Promise<void> };
beforeAll(async () => {
  repo = await makeFixtureRepo(40);
  out = await tempDir();
});
afterAll(async () => {
  await repo.cleanup();
  await out.cleanup();
});

async function* chunks(bytes: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let p = 0; p < bytes.length; p += size) yield bytes.subarray(p, p + size);
}

/** The idx git writes for `pack` (index-pack in a scratch dir). */
function gitIdx(pack: Uint8Array, dir: string): Uint8Array {
  const p = join(dir, `check-${Math.random().toString(36).slice(2)}.pack`);
  writeFileSync(p, pack);
  git(dir, ["index-pack", p]);
  return readFileSync(p.replace(/\.pack$/, ".idx"));
}

async function expectRejected(bytes: Uint8Array, message: RegExp, opts: { maxBytes?: number } = {}): Promise<void> {
  const tmp = await tempDir();
  try {
    const err = await indexPack(chunks(bytes, 4096), { tmpDir: tmp.path, ...opts }).catch((e) => e);
    expect(err).toBeInstanceOf(GitError);
    expect(String(err.message)).toMatch(message);
    expect(readdirSync(tmp.path)).toEqual([]);
  } finally {
    await tmp.cleanup();
  }
}

async function packSetOf(r: FixtureRepo): Promise<PackSet> {
  const idx = PackIndex.parse(readFileSync(r.idxPath));
  return new PackSet([new Pack(idx.packChecksum, idx, await openFileSource(r.packPath))]);
}

describe("indexPack", () => {
  test("the same pack indexed twice at once gets separate files (two repositories pushed the same objects)", async () => {
    const pack = readFileSync(repo.packPath);
    const [a, b] = await Promise.all([indexPack(chunks(pack, 4096), { tmpDir: out.path }), indexPack(chunks(pack, 4096), { tmpDir: out.path })]);
    expect(a.name).toBe(b.name);
    expect(new Set([a.packPath, b.packPath, a.idxPath, b.idxPath]).size).toBe(4);
    writeFileSync(a.packPath, "");
    expect(readFileSync(b.packPath).equals(pack)).toBe(true);
  });

  test("a real pack gets git's name and a byte-identical idx, even fed in odd-sized chunks", async () => {
    const pack = readFileSync(repo.packPath);
    const gitIdxBytes = readFileSync(repo.idxPath);
    const types = new Map(
      git(repo.dir, ["cat-file", "--batch-all-objects", "--batch-check"])
        .split("\n")
        .map((l) => l.split(" ") as [string, string]),
    );
    for (const size of [1 << 20, 7]) {
      const r = await indexPack(chunks(pack, size), { tmpDir: out.path });
      expect(r.name).toBe(repo.packPath.match(/pack-([0-9a-f]{40})\.pack$/)![1]!);
      expect(r.packPath.startsWith(join(out.path, `pack-${r.name}-`)) && r.packPath.endsWith(".pack")).toBe(true);
      expect(readFileSync(r.idxPath).equals(gitIdxBytes)).toBe(true);
      expect(readFileSync(r.packPath).equals(pack)).toBe(true);
      expect([r.objectCount, r.size, r.idxSize, r.appendedBases]).toEqual([types.size, pack.length, gitIdxBytes.length, []]);
      expect(new Map<string, string>(r.objects.map((o) => [o.oid, o.type]))).toEqual(types);
    }
  });

  test("resolves with a tiny memory budget (bases dropped and rebuilt) to the same idx", async () => {
    const r = await indexPack(chunks(readFileSync(repo.packPath), 65536), { tmpDir: out.path, memoryBudget: 1 });
    expect(readFileSync(r.idxPath).equals(readFileSync(repo.idxPath))).toBe(true);
    // A base with two dependants, the first of which has its own: the base's data is dropped
    // while the first branch resolves and must be rebuilt for the second.
    const rnd = prng(8);
    const root = Uint8Array.from({ length: 3000 }, () => Math.floor(rnd() * 256));
    const a = Uint8Array.from([...root.subarray(0, 2000), 1]);
    const a1 = Uint8Array.from([...a, 2]);
    const b = Uint8Array.from([...root.subarray(500), 3]);
    const { pack } = craftPack([
      { typeCode: 3, data: root },
      { typeCode: 6, data: createDelta(root, a), base: 0 },
      { typeCode: 6, data: createDelta(root, b), base: 0 },
      { typeCode: 6, data: createDelta(a, a1), base: 1 },
    ]);
    const tree = await indexPack([pack], { tmpDir: out.path, memoryBudget: 1 });
    expect(tree.objects.map((o) => o.oid)).toEqual([root, a, b, a1].map((d) => hashObject("blob", d)));
    expect(Buffer.from(readFileSync(tree.idxPath)).equals(Buffer.from(gitIdx(pack, out.path)))).toBe(true);
  });

  test("an empty pack is valid", async () => {
    const empty = gitBytes(repo.dir, ["pack-objects", "--stdout", "-q"], "");
    const r = await indexPack(chunks(empty, 100), { tmpDir: out.path });
    expect(r.objectCount).toBe(0);
    expect(Buffer.from(readFileSync(r.idxPath)).equals(Buffer.from(gitIdx(empty, out.path)))).toBe(true);
  });

  test("ref-deltas whose base comes later in the pack, and deltas on deltas", async () => {
    const r = prng(3);
    const v0 = Uint8Array.from({ length: 5000 }, () => Math.floor(r() * 256));
    const v1 = Uint8Array.from([...v0.subarray(0, 4000), 1, 2, 3]);
    const v2 = Uint8Array.from([...v1, ...v0.subarray(100, 900)]);
    const entries: CraftEntry[] = [
      { typeCode: 7, data: createDelta(v1, v2), baseOid: hashObject("blob", v1) },
      { typeCode: 7, data: createDelta(v0, v1), baseOid: hashObject("blob", v0) },
      { typeCode: 3, data: v0 },
      { typeCode: 6, data: createDelta(v0, v2), base: 2 },
    ];
    const { pack } = craftPack(entries.slice(0, 3));
    const res = await indexPack(chunks(pack, 1000), { tmpDir: out.path });
    expect(res.objects.map((o) => o.oid)).toEqual([v2, v1, v0].map((d) => hashObject("blob", d)));
    expect(Buffer.from(readFileSync(res.idxPath)).equals(Buffer.from(gitIdx(pack, out.path)))).toBe(true);
    // v2 twice (ref and ofs): like git index-pack, both entries are indexed.
    const { pack: dup } = craftPack(entries);
    const twice = await indexPack(chunks(dup, 1000), { tmpDir: out.path });
    expect(twice.objectCount).toBe(4);
    expect(Buffer.from(readFileSync(twice.idxPath)).equals(Buffer.from(gitIdx(dup, out.path)))).toBe(true);
  });

  test("thin fix takes ref-deltas in pack order and skips bases that the pack itself provides", async () => {
    const r = prng(4);
    const x = Uint8Array.from({ length: 3000 }, () => Math.floor(r() * 256));
    const y = Uint8Array.from([...x.subarray(0, 2500), 7]);
    const z = Uint8Array.from([...y, 8]);
    const [ox, oy] = [hashObject("blob", x), hashObject("blob", y)];
    // z (a delta on y) comes first; y is a delta on x, which only the repository has.
    const { pack } = craftPack([
      { typeCode: 7, data: createDelta(y, z), baseOid: oy },
      { typeCode: 7, data: createDelta(x, y), baseOid: ox },
    ]);
    const reader = {
      has: async (oid: string) => oid === ox,
      read: async (oid: string) => (oid === ox ? { type: "blob" as const, data: x } : null),
      readHeader: async () => null,
    };
    const res = await indexPack([pack], { tmpDir: out.path, thinBaseReader: reader });
    expect(res.appendedBases).toEqual([ox]);
    expect(res.objects.map((o) => o.oid)).toEqual([hashObject("blob", z), oy, ox]);
    expect(Buffer.from(readFileSync(res.idxPath)).equals(Buffer.from(gitIdx(readFileSync(res.packPath), out.path)))).toBe(true);
  });

  test("ref-delta bases are hinted to the repository while the pack still arrives, before any is read", async () => {
    const r = prng(9);
    const bases = Array.from({ length: 40 }, () => Uint8Array.from({ length: 600 }, () => Math.floor(r() * 256)));
    const byOid = new Map(bases.map((b) => [hashObject("blob", b), b]));
    const oids = [...byOid.keys()];
    const { pack } = craftPack(bases.map((b, i) => ({ typeCode: 7, data: createDelta(b, Uint8Array.from([...b.subarray(0, 500), i])), baseOid: oids[i]! })));
    const events: string[] = [];
    let consumed = 0;
    let inputDone = false;
    async function* input(): AsyncIterable<Uint8Array> {
      for (let p = 0; p < pack.length; p += 256) {
        consumed = p + 256;
        yield pack.subarray(p, p + 256);
      }
      inputDone = true;
    }
    const hinted: string[] = [];
    const reader = {
      has: async (oid: string) => byOid.has(oid),
      read: async (oid: string) => {
        events.push("read");
        const data = byOid.get(oid);
        return data ? { type: "blob" as const, data } : null;
      },
      readHeader: async () => null,
      prefetch: (list: readonly string[]) => {
        events.push(inputDone ? "hint after input" : `hint at ${consumed}`);
        hinted.push(...list);
      },
    };
    const res = await indexPack(input(), { tmpDir: out.path, thinBaseReader: reader });
    expect(res.appendedBases.length).toBe(40);
    // The first 32 bases went out while the pack was still arriving; the rest at the end of pass 1.
    expect(events[0]).toMatch(/^hint at \d+$/);
    expect(Number(events[0]!.slice(8))).toBeLessThan(pack.length);
    const firstRead = events.indexOf("read");
    expect(new Set(hinted.slice(0, 40))).toEqual(new Set(oids));
    expect(events.slice(0, firstRead).filter((e) => e.startsWith("hint")).length).toBeGreaterThanOrEqual(2);
  });

  test("fixes a thin pack with bases from the repository; git accepts the result", async () => {
    const thin = gitBytes(repo.dir, ["pack-objects", "--thin", "--no-reuse-delta", "--stdout", "-q", "--revs"], `main\n^main~6\n`);
    const all = gitBytes(repo.dir, ["pack-objects", "--stdout", "-q", "--revs"], `main\n^main~6\n`);
    const allCount = new DataView(all.buffer, all.byteOffset).getUint32(8);
    const thinCount = new DataView(thin.buffer, thin.byteOffset).getUint32(8);
    expect(thinCount).toBe(allCount);

    await expectRejected(thin, /neither in the pack nor in the repository/);
    const set = await packSetOf(repo);
    const r = await indexPack(chunks(thin, 3000), { tmpDir: out.path, thinBaseReader: set });
    expect(r.appendedBases.length).toBeGreaterThan(0);
    expect(r.objectCount).toBe(thinCount + r.appendedBases.length);
    for (const oid of r.appendedBases) expect(await set.has(oid)).toBe(true);
    const fixed = readFileSync(r.packPath);
    expect(new DataView(fixed.buffer, fixed.byteOffset).getUint32(8)).toBe(r.objectCount);
    expect(readFileSync(r.idxPath).equals(Buffer.from(gitIdx(fixed, out.path)))).toBe(true);
    expect(gitStatus(out.path, ["verify-pack", r.idxPath]).code).toBe(0);
  });

  test("rejects corrupt, truncated, oversized and invalid packs with GitError and leaves no file", async () => {
    const pack = new Uint8Array(readFileSync(repo.packPath));
    const flipped = pack.slice();
    flipped[Math.floor(pack.length / 2)]! ^= 0x40;
    await expectRejected(flipped, /corrupt|checksum|invalid/);
    const badSum = pack.slice();
    badSum[pack.length - 1]! ^= 1;
    await expectRejected(badSum, /checksum mismatch/);
    for (const cut of [5, 12, 100, Math.floor(pack.length / 3), pack.length - 10]) {
      await expectRejected(pack.subarray(0, cut), /truncated/);
    }
    await expectRejected(Buffer.concat([pack, Buffer.from("junk")]), /garbage/);
    await expectRejected(Buffer.concat([Buffer.from("PACX"), pack.subarray(4)]), /signature/);
    await expectRejected(pack, /maximum size/, { maxBytes: 1000 });

    const badTree = new TextEncoder().encode(`100644 a/b\0${"x".repeat(20)}`);
    // Refused by the object checks with git's fsck message ids (fsck.ts).
    await expectRejected(craftPack([{ typeCode: 2, data: badTree }]).pack, /fullPathname/);
    const badCommit = new TextEncoder().encode("tree nope\n\n");
    await expectRejected(craftPack([{ typeCode: 1, data: badCommit }]).pack, /badTreeSha1/);
    const blob = new TextEncoder().encode("some blob content\n");
    await expectRejected(craftPack([{ typeCode: 3, data: blob }], 2).pack, /truncated|corrupt/);
    await expectRejected(craftPack([{ typeCode: 5, data: blob }]).pack, /invalid object type/);
    await expectRejected(
      craftPack([
        { typeCode: 6, data: createDelta(blob, blob), base: 0 },
        { typeCode: 3, data: blob },
      ]).pack,
      /base/,
    );
  });
});

describe("tree deltas (the checks skip entries copied whole from the base)", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const entry = (mode: string, name: string, oid: string) => Uint8Array.from([...enc(`${mode} ${name}\0`), ...Buffer.from(oid, "hex")]);
  const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
  const varint = (v: number) => {
    const out: number[] = [];
    do {
      out.push((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      v >>>= 7;
    } while (v > 0);
    return out;
  };
  /** A delta of explicit instructions: ["copy", offset, size] from the base, or literal bytes. */
  const delta = (baseLength: number, ops: (["copy", number, number] | Uint8Array)[]) => {
    const out: number[] = [];
    let size = 0;
    for (const op of ops) {
      if (op instanceof Uint8Array) {
        for (let p = 0; p < op.length; p += 127) {
          const n = Math.min(127, op.length - p);
          out.push(n, ...op.subarray(p, p + n));
        }
        size += op.length;
      } else {
        out.push(0x80 | 0x01 | 0x02 | 0x10 | 0x20, op[1] & 0xff, op[1] >> 8, op[2] & 0xff, op[2] >> 8);
        size += op[2];
      }
    }
    return Uint8Array.from([...varint(baseLength), ...varint(size), ...out]);
  };
  const blobA = enc("a\n");
  const blobB = enc("b\n");
  const [A, B] = [hashObject("blob", blobA), hashObject("blob", blobB)];
  const sub = entry("100644", "f", A);
  const S = hashObject("tree", sub);
  const fooBar = entry("100644", "foo.bar", A);
  const fooDir = entry("40000", "foo", S);
  const base = cat(fooBar, fooDir);
  const index = (target: Uint8Array, ops: (["copy", number, number] | Uint8Array)[]) => {
    const d = delta(base.length, ops);
    const { pack } = craftPack([
      { typeCode: 3, data: blobA },
      { typeCode: 3, data: blobB },
      { typeCode: 2, data: sub },
      { typeCode: 2, data: base },
      { typeCode: 6, data: d, base: 3 },
    ]);
    return { pack, oid: hashObject("tree", target) };
  };

  test("a new entry before copied ones: the order across them is still checked (git's non-adjacent duplicate)", async () => {
    // "foo" (a file), then "foo.bar" and "foo/" copied from the base: "foo" twice.
    const target = cat(entry("100644", "foo", B), base);
    const { pack } = index(target, [entry("100644", "foo", B), ["copy", 0, base.length]]);
    await expect(indexPack([pack], { tmpDir: out.path })).rejects.toThrow(/duplicateEntries/);
    // The same tree as a whole object is refused the same way.
    const { pack: whole } = craftPack([{ typeCode: 2, data: target }]);
    await expect(indexPack([whole], { tmpDir: out.path })).rejects.toThrow(/duplicateEntries/);
  });

  test("a copy that is not a whole entry of the base is checked like a new entry", async () => {
    // The first entry's mode copied, a new name ".git" and id after it.
    const tail = cat(new TextEncoder().encode(".git\0"), fooBar.subarray(fooBar.length - 20));
    const target = cat(fooBar.subarray(0, 7), tail, fooDir);
    const { pack } = index(target, [["copy", 0, 7], tail, ["copy", fooBar.length, fooDir.length]]);
    await expect(indexPack([pack], { tmpDir: out.path })).rejects.toThrow(/hasDotgit/);
  });

  test("an accepted tree delta: copied entries' objects are links of the pack, new ones too", async () => {
    const target = cat(entry("100644", "a", B), base);
    const { pack, oid } = index(target, [entry("100644", "a", B), ["copy", 0, fooBar.length], ["copy", fooBar.length, fooDir.length]]);
    const r = await indexPack([pack], { tmpDir: out.path });
    expect(r.objects.map((o) => o.oid)).toContain(oid);
    expect(r.onlyReachableFrom([oid])).toBe(false);
    // Everything but the two trees is named by another object of the pack.
    const named = (hex: string) => r.links.has(Buffer.from(hex, "hex"), 0);
    expect([A, B, S].map(named)).toEqual([true, true, true]);
    expect(r.onlyReachableFrom([oid, hashObject("tree", base)])).toBe(true);
  });
});

describe("BufferPool", () => {
  test("reuses released buffers by capacity, ignores foreign ones, and bounds what it keeps", () => {
    const pool = new BufferPool(64 * 1024);
    const a = pool.alloc(5000);
    expect(a.length).toBe(5000);
    expect(a.buffer.byteLength).toBe(8192);
    pool.release(a);
    const b = pool.alloc(6000);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(6000);
    expect(pool.alloc(6000).buffer).not.toBe(a.buffer); // b still holds it
    pool.release(new Uint8Array(8192)); // not the pool's: dropped
    expect(pool.alloc(100).buffer.byteLength).toBe(4096);
    // Buffers above a quarter of the idle budget are plain allocations, never kept.
    const big = pool.alloc(20 * 1024);
    pool.release(big);
    expect(pool.alloc(20 * 1024).buffer).not.toBe(big.buffer);
  });
});

// ---------------------------------------------------------------------------------------------
// Issue 24 defect 8 and issue 25 rows 4-5: complete at the checksum, bounded objects and chains,
// and the same indexing on a worker thread.

/** A delta of `base` that is `base` twice: a chain of them doubles the object at every step. */
function doubling(base: Uint8Array): Uint8Array {
  return createDelta(base, cat(base, base));
}

function cat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** The pack's bytes, then an input that never ends (a client waiting for the report). */
async function* thenWait(bytes: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let p = 0; p < bytes.length; p += size) yield bytes.subarray(p, p + size);
  await new Promise(() => {});
}

const pool = createThreads({ size: 1 });
afterAll(() => pool.close());
const onThread: IndexTaskRunner = (input, transfer) => pool.run("git.indexPack", input, { transfer });

for (const mode of ["inline", "thread"] as const) {
  const run = mode === "thread" ? onThread : undefined;
  describe(`indexPack ${mode === "thread" ? "on a worker thread" : "on the caller's thread"}: bounds and completion`, () => {
    test("a pack is complete at its checksum: indexPack answers while the input stays open", async () => {
      const pack = readFileSync(repo.packPath);
      let completed = 0;
      for (const size of [pack.length, 4096, mode === "thread" ? 97 : 1]) {
        const r = await indexPack(thenWait(pack, size), { tmpDir: out.path, run, onComplete: () => completed++ });
        expect(readFileSync(r.idxPath).equals(readFileSync(repo.idxPath))).toBe(true);
      }
      expect(completed).toBe(3);
    }, 60_000);

    test("a real pack gets git's idx; a thin pack is fixed with bases from the repository", async () => {
      const r = await indexPack(chunks(readFileSync(repo.packPath), 5000), { tmpDir: out.path, run });
      expect(readFileSync(r.idxPath).equals(readFileSync(repo.idxPath))).toBe(true);
      const thin = gitBytes(repo.dir, ["pack-objects", "--thin", "--no-reuse-delta", "--stdout", "-q", "--revs"], `main\n^main~6\n`);
      const fixed = await indexPack(chunks(thin, 3000), { tmpDir: out.path, run, thinBaseReader: await packSetOf(repo) });
      expect(fixed.appendedBases.length).toBeGreaterThan(0);
      expect(gitStatus(out.path, ["verify-pack", fixed.idxPath]).code).toBe(0);
    });

    test("a whole object over the limit is refused from its entry header, before it is inflated", async () => {
      const big = new Uint8Array(3 << 20);
      const { pack } = craftPack([{ typeCode: 3, data: big }]);
      const err = await indexPack(chunks(pack, 65536), { tmpDir: out.path, run, maxObjectBytes: 1 << 20 }).catch((e) => e);
      expect(err).toBeInstanceOf(GitError);
      expect(err.message).toBe("object of 3 MiB exceeds the maximum object size of 1 MiB");
      // The default is 100 MiB: a 3 MiB blob is fine.
      expect((await indexPack(chunks(pack, 65536), { tmpDir: out.path, run })).objectCount).toBe(1);
    });

    test("an entry that inflates past its declared size is refused without inflating the rest (zlib bomb)", async () => {
      const { pack } = craftPack([{ typeCode: 3, data: new Uint8Array(8 << 20) }]);
      // Claim 1000 bytes: the header's size is the sender's word, the stream's is the truth.
      const head = encodeTypeSize(3, 1000);
      const body = cat(pack.subarray(0, 12), head, pack.subarray(12 + encodeTypeSize(3, 8 << 20).length, pack.length - 20));
      const trailer = new Bun.CryptoHasher("sha1").update(body).digest();
      const err = await indexPack([cat(body, trailer)], { tmpDir: out.path, run }).catch((e) => e);
      expect(err).toBeInstanceOf(GitError);
      expect(err.message).toMatch(/inflated more than 1000 bytes/);
    });

    test("a delta whose result is over the limit is refused from its header (delta bomb)", async () => {
      // 1 KiB doubled 11 times: 2 MiB from a pack of a few hundred bytes.
      let data: Uint8Array = Uint8Array.from({ length: 1024 }, (_, i) => i & 0xff);
      const entries: CraftEntry[] = [{ typeCode: 3, data }];
      for (let k = 0; k < 11; k++) {
        entries.push({ typeCode: 6, data: doubling(data), base: k });
        data = cat(data, data);
      }
      const { pack } = craftPack(entries);
      expect(pack.length).toBeLessThan(4096);
      const err = await indexPack([pack], { tmpDir: out.path, run, maxObjectBytes: 1 << 20 }).catch((e) => e);
      expect(err).toBeInstanceOf(GitError);
      expect(err.message).toBe("object of 2 MiB exceeds the maximum object size of 1 MiB");
      expect((await indexPack([pack], { tmpDir: out.path, run, maxObjectBytes: 2 << 20 })).objectCount).toBe(12);
    }, 60_000);

    test("a delta chain of 4,095 is taken, one of 4,096 is refused", async () => {
      const chain = (n: number) => {
        let data: Uint8Array = new TextEncoder().encode("seed\n");
        const entries: CraftEntry[] = [{ typeCode: 3, data }];
        for (let k = 0; k < n; k++) {
          const next = cat(data, Uint8Array.of(0x61 + (k % 26)));
          entries.push({ typeCode: 6, data: createDelta(data, next), base: k });
          data = next;
        }
        return craftPack(entries).pack;
      };
      expect((await indexPack([chain(4095)], { tmpDir: out.path, run })).objectCount).toBe(4096);
      const err = await indexPack([chain(4096)], { tmpDir: out.path, run }).catch((e) => e);
      expect(err).toBeInstanceOf(GitError);
      expect(err.message).toMatch(/^delta chain deeper than 4095/);
    }, 60_000);

    test("corrupt and truncated packs are refused with the same messages, leaving no file", async () => {
      const pack = new Uint8Array(readFileSync(repo.packPath));
      const tmp = await tempDir();
      try {
        const flipped = pack.slice();
        flipped[pack.length - 1]! ^= 1;
        for (const [bytes, message] of [
          [flipped, /checksum mismatch/],
          [pack.subarray(0, pack.length - 30), /truncated pack/],
          [cat(pack, Uint8Array.of(1)), /garbage after the checksum/],
        ] as const) {
          const err = await indexPack(chunks(bytes, 4096), { tmpDir: tmp.path, run }).catch((e) => e);
          expect(err).toBeInstanceOf(GitError);
          expect(String(err.message)).toMatch(message);
          expect(readdirSync(tmp.path)).toEqual([]);
        }
      } finally {
        await tmp.cleanup();
      }
    }, 60_000);

    test("the fsck session's refusals, findings and warnings are the same", async () => {
      const blob = new TextEncoder().encode('[submodule "x"]\n\tpath = x\n\turl = https://example.com/x\n');
      // ".gitmodules" sorts before "d": a tree in git's order, with a zero-padded mode.
      const sorted = Uint8Array.from([
        ...new TextEncoder().encode("100644 .gitmodules\0"),
        ...Buffer.from(hashObject("blob", blob), "hex"),
        ...new TextEncoder().encode("040000 d\0"),
        ...Buffer.from(hashObject("tree", new Uint8Array(0)), "hex"),
      ]);
      const { pack } = craftPack([
        { typeCode: 2, data: new Uint8Array(0) },
        { typeCode: 2, data: sorted },
      ]);
      const fsck = new FsckSession();
      await indexPack([pack], { tmpDir: out.path, run, fsck });
      expect(fsck.warnings.counts).toEqual(new Map([["zeroPaddedFilemode", 1]]));
      // The .gitmodules blob was named but not in the pack: finish looks for it.
      await expect(fsck.finish({ has: async () => false, read: async () => null, readHeader: async () => null })).rejects.toThrow(/gitmodulesMissing/);
      const dotgit = Uint8Array.from([...new TextEncoder().encode("100644 .git\0"), ...Buffer.from(hashObject("blob", blob), "hex")]);
      const bad = await indexPack([craftPack([{ typeCode: 2, data: dotgit }]).pack], { tmpDir: out.path, run, fsck: new FsckSession() }).catch((e) => e);
      expect(bad).toBeInstanceOf(FsckError);
      expect(bad.problem.id).toBe("hasDotgit");
    });
  });
}
