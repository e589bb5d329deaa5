import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDelta } from "../../../src/git/delta.ts";
import { openFileSource } from "../../../src/git/file-source.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { PackIndex, writePackIndex } from "../../../src/git/pack-index.ts";
import { DeltaBaseCache, Pack } from "../../../src/git/pack-reader.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { GitError, type ByteSource } from "../../../src/git/types.ts";
import { craftPack } from "./pack-craft.ts";
import { catAllObjects, git, makeFixtureRepo, prng, tempDir, type FixtureRepo } from "./fixture.ts";

let repo: FixtureRepo;
let objects: Map<string, { type: string; data: Uint8Array }>;
beforeAll(async () => {
  repo = await makeFixtureRepo(30);
  objects = catAllObjects(repo.dir);
});
afterAll(() => repo.cleanup());

/** A ByteSource over memory that counts reads and refuses reads of the whole pack. */
function memorySource(bytes: Uint8Array): ByteSource & { reads: number; maxRead: number } {
  const s = {
    size: bytes.length,
    reads: 0,
    maxRead: 0,
    async read(offset: number, length: number) {
      if (offset + length > bytes.length) throw new GitError("past end");
      s.reads++;
      s.maxRead = Math.max(s.maxRead, length);
      return bytes.slice(offset, offset + length);
    },
  };
  return s;
}

function openPack(packPath: string, idxPath: string, cache?: DeltaBaseCache) {
  const bytes = readFileSync(packPath);
  const source = memorySource(bytes);
  const idx = PackIndex.parse(readFileSync(idxPath));
  return { pack: new Pack(idx.packChecksum, idx, source, cache), source, idx };
}

describe("Pack", () => {
  test("reads every object of a git pack exactly as git cat-file does, by ranged reads", async () => {
    const { pack, source, idx } = openPack(repo.packPath, repo.idxPath, new DeltaBaseCache(64 * 1024));
    expect(idx.count).toBe(objects.size);
    for (const [oid, want] of objects) {
      const got = await pack.read(oid);
      expect(got?.type).toBe(want.type as never);
      expect(Buffer.from(got!.data).equals(Buffer.from(want.data))).toBe(true);
    }
    expect(source.maxRead).toBeLessThan(source.size / 4);
    expect(await pack.read("0".repeat(40))).toBeNull();
  });

  test("entryAt agrees with git verify-pack on type, size and stored length", async () => {
    const { pack } = openPack(repo.packPath, repo.idxPath);
    const codes: Record<string, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
    let deltas = 0;
    for (const line of git(repo.dir, ["verify-pack", "-v", repo.idxPath]).split("\n")) {
      const f = line.split(/\s+/);
      if (f.length < 5 || f[0]!.length !== 40) continue;
      const e = await pack.entryAt(Number(f[4]));
      expect(e.end - e.offset).toBe(Number(f[3]));
      if (f.length === 7) {
        deltas++;
        expect(e.typeCode).toBe(6);
        expect(pack.idx.oidAtOffset(e.baseOffset!)).toBe(f[6]!);
      } else {
        expect([e.typeCode, e.size]).toEqual([codes[f[1]!]!, Number(f[2])]);
      }
    }
    expect(deltas).toBeGreaterThan(50);
  });

  test("resolves REF_DELTA packs (pack-objects without --delta-base-offset)", async () => {
    const tmp = await tempDir();
    try {
      const all = [...objects.keys()].join("\n") + "\n";
      const name = git(repo.dir, ["pack-objects", "-q", "--window=50", join(tmp.path, "ref")], all);
      const packPath = join(tmp.path, `ref-${name}.pack`);
      const idxPath = join(tmp.path, `ref-${name}.idx`);
      const { pack } = openPack(packPath, idxPath, new DeltaBaseCache(0));
      let refDeltas = 0;
      for (const [oid, want] of objects) {
        if ((await pack.entryAt(pack.idx.find(oid))).typeCode === 7) refDeltas++;
        expect(hashObject(want.type as never, (await pack.read(oid))!.data)).toBe(oid);
      }
      expect(refDeltas).toBeGreaterThan(50);
    } finally {
      await tmp.cleanup();
    }
  });

  test("follows a 3000-deep delta chain without recursion", async () => {
    const tmp = await tempDir();
    try {
      const r = prng(9);
      let cur = Uint8Array.from({ length: 2000 }, () => Math.floor(r() * 256));
      const versions = [cur];
      const entries = [{ typeCode: 3, data: cur } as { typeCode: number; data: Uint8Array; base?: number }];
      for (let i = 1; i < 3000; i++) {
        const next = new Uint8Array(cur);
        next[Math.floor(r() * next.length)] = i & 255;
        entries.push({ typeCode: 6, data: createDelta(cur, next), base: i - 1 });
        versions.push(next);
        cur = next;
      }
      const { pack: bytes } = craftPack(entries);
      const packPath = join(tmp.path, "deep.pack");
      writeFileSync(packPath, bytes);
      git(tmp.path, ["index-pack", packPath]);
      const idx = PackIndex.parse(readFileSync(join(tmp.path, "deep.idx")));
      const source = await openFileSource(packPath);
      const pack = new Pack("deep", idx, source, new DeltaBaseCache(0));
      const top = hashObject("blob", versions[2999]!);
      expect(Buffer.from((await pack.read(top))!.data).equals(Buffer.from(versions[2999]!))).toBe(true);
      expect(await new PackSet([pack]).readHeader(top)).toEqual({ type: "blob", size: 2000 });
      await source.close();
    } finally {
      await tmp.cleanup();
    }
  });

  test("a ref-delta whose base is missing from the pack fails with GitError", async () => {
    const base = new TextEncoder().encode("base content that is long enough\n".repeat(4));
    const target = new TextEncoder().encode("base content that is long enough\n".repeat(5));
    const { pack: bytes, offsets } = craftPack([{ typeCode: 7, data: createDelta(base, target), baseOid: hashObject("blob", base) }]);
    const idx = PackIndex.parse(writePackIndex([{ oid: hashObject("blob", target), offset: offsets[0]!, crc: 0 }], "00".repeat(20)));
    const pack = new Pack("thin", idx, memorySource(bytes));
    await expect(pack.read(hashObject("blob", target))).rejects.toThrow(GitError);
  });
});

describe("DeltaBaseCache", () => {
  test("evicts least recently used entries beyond its byte budget", () => {
    const cache = new DeltaBaseCache(1000);
    const obj = (n: number) => ({ type: "blob" as const, data: new Uint8Array(n) });
    cache.set("p", 1, obj(200));
    cache.set("p", 2, obj(200));
    cache.set("q", 1, obj(200));
    expect(cache.get("p", 1)).toBeDefined();
    cache.set("p", 3, obj(200));
    cache.set("p", 4, obj(200));
    cache.set("p", 5, obj(200));
    expect([cache.get("p", 1), cache.get("p", 2), cache.get("q", 1)].map(Boolean)).toEqual([true, false, true]);
    expect(cache.size).toBeLessThanOrEqual(1000);
    cache.set("p", 6, obj(600));
    expect(cache.get("p", 6)).toBeUndefined();
  });
});

describe("PackSet", () => {
  test("has, read and readHeader across packs, newest first, misses cached", async () => {
    const a = openPack(repo.packPath, repo.idxPath);
    const blob = new TextEncoder().encode("only in the second pack\n");
    const { pack: bytes, offsets } = craftPack([{ typeCode: 3, data: blob }]);
    const oid = hashObject("blob", blob);
    const idx2 = PackIndex.parse(writePackIndex([{ oid, offset: offsets[0]!, crc: 0 }], "00".repeat(20)));
    const b = new Pack("second", idx2, memorySource(bytes));
    const set = new PackSet([a.pack, b]);
    expect(set.locate(oid)).toEqual({ pack: b, offset: 12 });
    expect(await set.has(oid)).toBe(true);
    expect(await set.read(oid)).toEqual({ type: "blob", data: blob });
    expect(await set.has("1".repeat(40))).toBe(false);
    expect(await set.read("1".repeat(40))).toBeNull();
    expect(await set.readHeader("1".repeat(40))).toBeNull();

    const check = git(repo.dir, ["cat-file", "--batch-all-objects", "--batch-check"]).split("\n");
    a.source.maxRead = 0;
    for (const line of check) {
      const [o, type, size] = line.split(" ");
      expect(await set.readHeader(o!)).toEqual({ type: type as never, size: Number(size) });
    }
    // Headers only: entry headers and delta prefixes, never whole entries (binary.bin is 3000 bytes).
    expect(a.source.maxRead).toBeLessThanOrEqual(256);
  });
});

test("prefetch with bases follows an entry's delta chain even when the entry itself is cached", async () => {
  const v0 = new TextEncoder().encode("version 0 of a directory listing\n".repeat(20));
  const v1 = new TextEncoder().encode(`${new TextDecoder().decode(v0)}one more line\n`);
  const v2 = new TextEncoder().encode(`${new TextDecoder().decode(v1)}and another\n`);
  const { pack, offsets } = craftPack([
    { typeCode: 3, data: v0 },
    { typeCode: 6, data: createDelta(v0, v1), base: 0 },
    { typeCode: 6, data: createDelta(v1, v2), base: 1 },
  ]);
  const oids = [v0, v1, v2].map((d) => hashObject("blob", d));
  const entries = oids.map((oid, i) => ({ oid, offset: offsets[i]!, crc: 0 }));
  const idx = PackIndex.parse(writePackIndex(entries, "00".repeat(20)));
  const hinted: number[] = [];
  // Every block is "cached already" (prefetch answers false): the chain must still be followed.
  const source: ByteSource = { size: pack.length, read: async (o, n) => pack.slice(o, o + n), prefetch: (o) => (hinted.push(o), false) };
  new Pack("chain", idx, source).prefetch([offsets[2]!]);
  for (let i = 0; i < 10 && hinted.length < 3; i++) await Bun.sleep(1);
  expect(hinted).toEqual([offsets[2]!, offsets[1]!, offsets[0]!]);
});
