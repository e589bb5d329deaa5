import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDelta } from "../../../src/git/delta.ts";
import { openFileSource } from "../../../src/git/file-source.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { decodeEntryHeader } from "../../../src/git/pack-entry.ts";
import { indexPack } from "../../../src/git/pack-indexer.ts";
import { PackIndex, writePackIndex } from "../../../src/git/pack-index.ts";
import { Pack } from "../../../src/git/pack-reader.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { buildPack, mergePacks, packObjects } from "../../../src/git/pack-writer.ts";
import type { ByteSource } from "../../../src/git/types.ts";
import { craftPack } from "./pack-craft.ts";
import { git, gitBytes, makeFixtureRepo, prng, tempDir, type FixtureRepo } from "./fixture.ts";

let repo: FixtureRepo;
let set: PackSet;
let out: { path: string; cleanup(): Promise<void> };
beforeAll(async () => {
  repo = await makeFixtureRepo(40);
  const idx = PackIndex.parse(readFileSync(repo.idxPath));
  set = new PackSet([new Pack(idx.packChecksum, idx, await openFileSource(repo.packPath))]);
  out = await tempDir();
  git(out.path, ["init", "-q", "--bare"]);
});
afterAll(async () => {
  await repo.cleanup();
  await out.cleanup();
});

async function collect(it: AsyncIterable<Uint8Array>): Promise<{ bytes: Uint8Array; maxChunk: number }> {
  const parts: Uint8Array[] = [];
  let maxChunk = 0;
  for await (const c of it) {
    parts.push(c);
    maxChunk = Math.max(maxChunk, c.length);
  }
  return { bytes: Buffer.concat(parts), maxChunk };
}

/** Feed a pack to `git index-pack` and list (oid, type, is-delta) of what it holds. */
function gitIndex(pack: Uint8Array, strict = true): { oid: string; type: string; delta: boolean }[] {
  const p = join(out.path, `check-${Math.random().toString(36).slice(2)}.pack`);
  writeFileSync(p, pack);
  git(out.path, ["index-pack", ...(strict ? ["--strict"] : []), p]);
  return git(out.path, ["verify-pack", "-v", p.replace(/\.pack$/, ".idx")])
    .split("\n")
    .map((l) => l.split(/\s+/))
    .filter((f) => f.length >= 5 && f[0]!.length === 40)
    .map((f) => ({ oid: f[0]!, type: f[1]!, delta: f.length === 7 }));
}

/** Type codes of the entries of a pack, in order (via our idx reader on git's idx). */
function entryCodes(pack: Uint8Array): number[] {
  const p = join(out.path, `codes-${Math.random().toString(36).slice(2)}.pack`);
  writeFileSync(p, pack);
  git(out.path, ["index-pack", p]);
  const idx = PackIndex.parse(readFileSync(p.replace(/\.pack$/, ".idx")));
  const offsets = Array.from({ length: idx.count }, (_, i) => idx.offsetAt(i)).sort((a, b) => a - b);
  return offsets.map((o) => decodeEntryHeader(pack, o)!.typeCode);
}

function objectsOf(range: string[]): string[] {
  return git(repo.dir, ["rev-list", "--objects", ...range])
    .split("\n")
    .map((l) => l.slice(0, 40));
}

describe("packObjects", () => {
  test("a subset with ofs-deltas: git accepts it, exactly the objects asked, deltas kept", async () => {
    const want = objectsOf(["main~10"]);
    const { bytes, maxChunk } = await collect(packObjects(set, [...want, ...want.slice(0, 5)], { ofsDelta: true }));
    const got = gitIndex(bytes);
    expect(got.map((o) => o.oid).sort()).toEqual([...new Set(want)].sort());
    expect(got.filter((o) => o.delta).length).toBeGreaterThan(20);
    expect(entryCodes(bytes).includes(7)).toBe(false);
    expect(maxChunk).toBeLessThan(2 << 20);
  });

  test("without ofs-delta every kept delta is a ref-delta", async () => {
    const want = objectsOf(["main~3"]);
    const { bytes } = await collect(packObjects(set, want, { ofsDelta: false }));
    expect(
      gitIndex(bytes)
        .map((o) => o.oid)
        .sort(),
    ).toEqual(want.sort());
    const codes = entryCodes(bytes);
    expect(codes.includes(6)).toBe(false);
    expect(codes.filter((c) => c === 7).length).toBeGreaterThan(10);
  });

  test("thin: deltas against the receiver's objects become ref-deltas that fix-thin resolves", async () => {
    // Stored deltas point from older to newer versions, so ask for old history and
    // pretend the receiver has the newest commit.
    const want = objectsOf(["main~20", "^main~30"]);
    const have = new Set(objectsOf(["main", "^main~20"]));
    const { bytes: thin } = await collect(packObjects(set, want, { ofsDelta: true, thinBases: have }));
    const { bytes: full } = await collect(packObjects(set, want, { ofsDelta: true }));
    expect(thin.length).toBeLessThan(full.length);
    const tmp = await tempDir();
    try {
      const r = await indexPack([thin], { tmpDir: tmp.path, thinBaseReader: set });
      expect(r.appendedBases.length).toBeGreaterThan(0);
      for (const b of r.appendedBases) expect(have.has(b)).toBe(true);
      expect(new Set(gitIndex(readFileSync(r.packPath), false).map((o) => o.oid))).toEqual(new Set([...want, ...r.appendedBases]));
    } finally {
      await tmp.cleanup();
    }
    expect(
      gitIndex(full, false)
        .map((o) => o.oid)
        .sort(),
    ).toEqual(want.sort());
  });

  test("all objects of one pack stream that pack's bytes as stored", async () => {
    const all = Array.from({ length: set.packs[0]!.idx.count }, (_, i) => set.packs[0]!.idx.oidAt(i)).reverse();
    const { bytes } = await collect(packObjects(set, all, { ofsDelta: true }));
    expect(Buffer.from(bytes).equals(readFileSync(repo.packPath))).toBe(true);
  });

  test("a lone delta whose base is not sent goes whole", async () => {
    const deltas = git(repo.dir, ["verify-pack", "-v", repo.idxPath])
      .split("\n")
      .filter((l) => l.split(/\s+/).length === 7);
    const oid = deltas[deltas.length - 1]!.slice(0, 40);
    const { bytes } = await collect(packObjects(set, [oid], { ofsDelta: true }));
    expect(gitIndex(bytes)).toEqual([{ oid, type: expect.any(String), delta: false }]);
  });

  test("a delta-base cycle across packs is broken by sending one side whole", async () => {
    const r = prng(11);
    const x = Uint8Array.from({ length: 4000 }, () => Math.floor(r() * 256));
    const y = Uint8Array.from([...x.subarray(0, 3000), 9, 9, 9]);
    const [ox, oy] = [hashObject("blob", x), hashObject("blob", y)];
    const memPack = (entries: Parameters<typeof craftPack>[0], oids: string[]) => {
      const { pack, offsets } = craftPack(entries);
      const idx = PackIndex.parse(
        writePackIndex(
          oids.map((oid, i) => ({ oid, offset: offsets[i]!, crc: 0 })),
          "00".repeat(20),
        ),
      );
      const source: ByteSource = { size: pack.length, read: async (o, n) => pack.slice(o, o + n) };
      return new Pack(oids.join("+"), idx, source);
    };
    // p1 holds x as a delta on y (y absent there); p2 holds x whole and y as a delta on x.
    const p1 = memPack([{ typeCode: 7, data: createDelta(y, x), baseOid: oy }], [ox]);
    const p2 = memPack(
      [
        { typeCode: 3, data: x },
        { typeCode: 6, data: createDelta(x, y), base: 0 },
      ],
      [ox, oy],
    );
    const { bytes } = await collect(packObjects(new PackSet([p1, p2]), [ox, oy], { ofsDelta: true }));
    const got = gitIndex(bytes);
    expect(got.map((o) => o.oid).sort()).toEqual([ox, oy].sort());
    expect(got.filter((o) => o.delta).length).toBe(1);
  });

  test("large entries stream in bounded chunks", async () => {
    const big = new Uint8Array(3 << 20);
    for (let p = 0; p < big.length; p += 65536) crypto.getRandomValues(big.subarray(p, p + 65536));
    const { pack, checksum, entries } = buildPack([{ type: "blob", data: big }]);
    const idx = PackIndex.parse(writePackIndex(entries, checksum));
    const source: ByteSource = { size: pack.length, read: async (o, n) => pack.slice(o, o + n) };
    const small = buildPack([{ type: "blob", data: Uint8Array.of(1) }]);
    const idx2 = PackIndex.parse(writePackIndex(small.entries, small.checksum));
    const s2: ByteSource = { size: small.pack.length, read: async (o, n) => small.pack.slice(o, o + n) };
    const both = new PackSet([new Pack("big", idx, source), new Pack("small", idx2, s2)]);
    const { bytes, maxChunk } = await collect(packObjects(both, [entries[0]!.oid, small.entries[0]!.oid], { ofsDelta: true }));
    expect(maxChunk).toBeLessThanOrEqual((1 << 20) + 64 * 1024);
    expect(gitIndex(bytes).length).toBe(2);
  });
});

describe("buildPack and mergePacks", () => {
  test("buildPack makes a pack git indexes to the same idx as writePackIndex", () => {
    const blob = new TextEncoder().encode("hello\n");
    const tree = gitBytes(repo.dir, ["cat-file", "tree", "main^{tree}"]);
    const { pack, checksum, entries } = buildPack([
      { type: "blob", data: blob },
      { type: "tree", data: tree },
      { type: "blob", data: blob },
    ]);
    expect(entries.length).toBe(2);
    const p = join(out.path, "built.pack");
    writeFileSync(p, pack);
    expect(git(out.path, ["index-pack", p])).toBe(checksum);
    expect(readFileSync(join(out.path, "built.idx")).equals(writePackIndex(entries, checksum))).toBe(true);
  });

  test("mergePacks writes the union once, honouring keep", async () => {
    const extra = buildPack([
      { type: "blob", data: new TextEncoder().encode("extra 1\n") },
      { type: "blob", data: new TextEncoder().encode("extra 2\n") },
    ]);
    const idx = PackIndex.parse(writePackIndex(extra.entries, extra.checksum));
    const src: ByteSource = { size: extra.pack.length, read: async (o, n) => extra.pack.slice(o, o + n) };
    const packs = [new Pack("extra", idx, src), set.packs[0]!];
    const drop = extra.entries[1]!.oid;
    const { bytes } = await collect(mergePacks(packs, (oid) => oid !== drop));
    const got = gitIndex(bytes).map((o) => o.oid);
    expect(got.length).toBe(set.packs[0]!.idx.count + 1);
    expect(got.includes(extra.entries[0]!.oid)).toBe(true);
    expect(got.includes(drop)).toBe(false);
  });

  test("from object storage, the next packs' reads are issued before the first pack's read returns", async () => {
    // Sources that take prefetch hints stand for object storage; every read waits on one gate.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const issued: string[] = [];
    const packs = [0, 1, 2].map((i) => {
      const built = buildPack([{ type: "blob", data: new TextEncoder().encode(`blob in pack ${i}\n`) }]);
      const idx = PackIndex.parse(writePackIndex(built.entries, built.checksum));
      const src: ByteSource = {
        size: built.pack.length,
        read: async (o, n) => {
          issued.push(`p${i}`);
          await gate;
          return built.pack.slice(o, o + n);
        },
        prefetch: () => false,
      };
      return new Pack(`p${i}`, idx, src);
    });
    const it = mergePacks(packs)[Symbol.asyncIterator]();
    const parts: Uint8Array[] = [];
    const first = it.next();
    await Bun.sleep(0);
    // Written oldest pack first (the last of the list), each pack's window already requested.
    expect(issued).toEqual(["p2", "p1", "p0"]);
    release();
    for (let r = await first; !r.done; r = await it.next()) parts.push(r.value);
    expect(gitIndex(Buffer.concat(parts)).length).toBe(3);
  });
});
