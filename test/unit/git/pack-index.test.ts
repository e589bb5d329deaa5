import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { PackIndex, writePackIndex } from "../../../src/git/pack-index.ts";
import { bytesToHex } from "../../../src/git/oid.ts";
import { GitError } from "../../../src/git/types.ts";
import { git, makeFixtureRepo, type FixtureRepo } from "./fixture.ts";

let repo: FixtureRepo;
beforeAll(async () => {
  repo = await makeFixtureRepo(20);
});
afterAll(() => repo.cleanup());

function verifyPack(): { oid: string; offset: number }[] {
  return git(repo.dir, ["verify-pack", "-v", repo.idxPath])
    .split("\n")
    .map((l) => l.split(/\s+/))
    .filter((f) => f.length >= 5 && f[0]!.length === 40)
    .map((f) => ({ oid: f[0]!, offset: Number(f[4]) }));
}

describe("PackIndex", () => {
  test("parses git's idx: every object found at the offset git reports", () => {
    const idx = PackIndex.parse(readFileSync(repo.idxPath));
    const expected = verifyPack();
    expect(idx.count).toBe(expected.length);
    expect(idx.packChecksum).toBe(bytesToHex(readFileSync(repo.packPath).subarray(-20)));
    for (const { oid, offset } of expected) expect(idx.find(oid)).toBe(offset);
    const sorted = expected.map((e) => e.oid).sort();
    expect(Array.from({ length: idx.count }, (_, i) => idx.oidAt(i))).toEqual(sorted);
    expect(idx.find("0000000000000000000000000000000000000000")).toBe(-1);
    expect(idx.find("ffffffffffffffffffffffffffffffffffffffff")).toBe(-1);
    expect(idx.find("not an oid")).toBe(-1);
  });

  test("its footprint is the idx bytes and the fan-out, plus the pack-order table once built", () => {
    const bytes = readFileSync(repo.idxPath);
    const idx = PackIndex.parse(bytes);
    expect(idx.footprint).toBe(bytes.byteLength + 1024);
    idx.nextOffset(12);
    expect(idx.footprint).toBe(bytes.byteLength + 1024 + 12 * idx.count);
  });

  test("nextOffset and oidAtOffset follow pack order", () => {
    const idx = PackIndex.parse(readFileSync(repo.idxPath));
    const byOffset = verifyPack().sort((a, b) => a.offset - b.offset);
    for (let i = 0; i < byOffset.length; i++) {
      expect(idx.oidAtOffset(byOffset[i]!.offset)).toBe(byOffset[i]!.oid);
      expect(idx.nextOffset(byOffset[i]!.offset)).toBe(i + 1 < byOffset.length ? byOffset[i + 1]!.offset : -1);
    }
    expect(idx.oidAtOffset(byOffset[0]!.offset + 1)).toBeNull();
  });

  test("writePackIndex reproduces git's idx byte for byte", () => {
    const raw = readFileSync(repo.idxPath);
    const idx = PackIndex.parse(raw);
    const entries = Array.from({ length: idx.count }, (_, i) => ({ oid: idx.oidAt(i), offset: idx.offsetAt(i), crc: idx.crcAt(i) }));
    entries.reverse();
    expect(Buffer.from(writePackIndex(entries, idx.packChecksum)).equals(raw)).toBe(true);
  });

  test("offsets of 2^31 and beyond use the 64-bit table and parse back", () => {
    const entries = [
      { oid: "11".repeat(20), offset: 12, crc: 0xdeadbeef },
      { oid: "22".repeat(20), offset: 0x7fffffff, crc: 1 },
      { oid: "33".repeat(20), offset: 2 ** 31, crc: 2 },
      { oid: "44".repeat(20), offset: 5 * 2 ** 32 + 7, crc: 3 },
    ];
    const bytes = writePackIndex(entries, "ab".repeat(20));
    expect(bytes.length).toBe(8 + 1024 + 28 * 4 + 8 * 2 + 40);
    const idx = PackIndex.parse(bytes);
    expect(entries.map((e) => [idx.find(e.oid), idx.crcAt(idx.indexOf(e.oid))])).toEqual(entries.map((e) => [e.offset, e.crc]));
    expect(idx.packChecksum).toBe("ab".repeat(20));
    // Offsets table: MSB set with an index into the large table, in oid order.
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const offBase = 8 + 1024 + 24 * 4;
    expect([0, 1, 2, 3].map((i) => view.getUint32(offBase + 4 * i))).toEqual([12, 0x7fffffff, 0x80000000, 0x80000001]);
    expect(idx.nextOffset(2 ** 31)).toBe(5 * 2 ** 32 + 7);
    expect(idx.oidAtOffset(5 * 2 ** 32 + 7)).toBe("44".repeat(20));

    // Offsets too large for the packed sort keys take the general path.
    const huge = PackIndex.parse(writePackIndex([...entries, { oid: "55".repeat(20), offset: 2 ** 50, crc: 4 }], "ab".repeat(20)));
    expect(huge.nextOffset(5 * 2 ** 32 + 7)).toBe(2 ** 50);
    expect(huge.oidAtOffset(2 ** 50)).toBe("55".repeat(20));
    expect(huge.nextOffset(2 ** 50)).toBe(-1);
  });

  test("rejects garbage", () => {
    expect(() => PackIndex.parse(new Uint8Array(2000))).toThrow(GitError);
    const bytes = writePackIndex([{ oid: "11".repeat(20), offset: 12, crc: 0 }], "ab".repeat(20));
    expect(() => PackIndex.parse(bytes.subarray(0, bytes.length - 3))).toThrow(GitError);
  });
});
