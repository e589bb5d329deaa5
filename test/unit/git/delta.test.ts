import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { deflateSync, inflateSync } from "node:zlib";
import { inflateExact, inflateWithLength } from "../../../src/git/inflate.ts";
import { applyDelta, createDelta, readDeltaHeader } from "../../../src/git/delta.ts";
import { decodeEntryHeader, OBJ_OFS_DELTA } from "../../../src/git/pack-entry.ts";
import { GitError } from "../../../src/git/types.ts";
import { catAllObjects, git, makeFixtureRepo, prng, type FixtureRepo } from "./fixture.ts";

let repo: FixtureRepo;
beforeAll(async () => {
  repo = await makeFixtureRepo(30);
});
afterAll(() => repo.cleanup());

function randomBytes(n: number, seed: number): Uint8Array {
  const r = prng(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
}

describe("delta", () => {
  test("applyDelta reproduces every delta git wrote in a pack", () => {
    const pack = readFileSync(repo.packPath);
    const objects = catAllObjects(repo.dir);
    const offsets = new Map<number, string>();
    const deltas: { oid: string; offset: number; base: string }[] = [];
    for (const line of git(repo.dir, ["verify-pack", "-v", repo.idxPath]).split("\n")) {
      const f = line.split(/\s+/);
      if (f.length < 5 || f[0]!.length !== 40) continue;
      offsets.set(Number(f[4]), f[0]!);
      if (f.length === 7) deltas.push({ oid: f[0]!, offset: Number(f[4]), base: f[6]! });
    }
    expect(deltas.length).toBeGreaterThan(50);
    for (const d of deltas) {
      const h = decodeEntryHeader(pack, d.offset)!;
      expect(h.typeCode).toBe(OBJ_OFS_DELTA);
      expect(offsets.get(d.offset - h.baseDistance!)).toBe(d.base);
      const delta = inflateSync(pack.subarray(d.offset + h.headerLength));
      expect(delta.length).toBe(h.size);
      const out = applyDelta(objects.get(d.base)!.data, delta);
      expect(Buffer.from(out).equals(Buffer.from(objects.get(d.oid)!.data))).toBe(true);
    }
  });

  test("createDelta round trips edited, shuffled, empty and unrelated content", () => {
    const base = randomBytes(200_000, 1);
    const edited = new Uint8Array([...base.subarray(0, 5000), ...randomBytes(300, 2), ...base.subarray(9000, 150_000), ...base.subarray(0, 70_000)]);
    const cases: [Uint8Array, Uint8Array][] = [
      [base, edited],
      [base, base],
      [base, new Uint8Array(0)],
      [new Uint8Array(0), base.subarray(0, 1000)],
      [randomBytes(1000, 3), randomBytes(1000, 4)],
      [base.subarray(0, 10), base.subarray(0, 15)],
    ];
    for (const [b, t] of cases) {
      const d = createDelta(b, t);
      expect(readDeltaHeader(d)).toMatchObject({ baseSize: b.length, resultSize: t.length });
      expect(Buffer.from(applyDelta(b, d)).equals(Buffer.from(t))).toBe(true);
    }
    expect(createDelta(base, edited).length).toBeLessThan(1000);
  });

  test("createDelta splits long copies into ops of at most 0x10000 bytes", () => {
    const base = randomBytes(300_000, 5);
    const d = createDelta(base, base);
    // 300000 bytes need five copy ops of at most 0x10000 bytes each.
    expect(d.length).toBeLessThan(40);
    expect(applyDelta(base, d)).toEqual(base);
  });

  test("applyDelta rejects corrupt deltas", () => {
    const base = randomBytes(100, 6);
    const good = createDelta(base, new Uint8Array([...base.subarray(10, 50), 1, 2, 3]));
    expect(() => applyDelta(base.subarray(1), good)).toThrow(GitError);
    const cases = [
      new Uint8Array([100, 10, 0x91, 95, 10]), // copy past the end of the base
      new Uint8Array([100, 3, 5, 1, 2, 3]), // insert past the declared result size
      new Uint8Array([100, 3, 0]), // reserved opcode
      new Uint8Array([100, 5, 2, 1, 2]), // result shorter than declared
      new Uint8Array([100, 5, 4, 1]), // insert past the end of the delta
      new Uint8Array([0xe4]), // truncated header
    ];
    for (const c of cases) expect(() => applyDelta(base, c)).toThrow(GitError);
  });
});

describe("declared sizes are the sender's word (found by the fuzzer)", () => {
  /** A varint as git's delta header writes it. */
  const varint = (v: number): number[] => {
    const out: number[] = [];
    do {
      let b = v % 128;
      v = Math.floor(v / 128);
      if (v > 0) b |= 0x80;
      out.push(b);
    } while (v > 0);
    return out;
  };

  test("a delta whose header claims terabytes is refused before anything is allocated", () => {
    const base = new TextEncoder().encode("hello world");
    const delta = new Uint8Array([...varint(base.length), ...varint(2 ** 42), 0x91, 0x00, 0x05]);
    let asked = 0;
    expect(() => applyDelta(base, delta, (size) => ((asked = size), new Uint8Array(size)))).toThrow(GitError);
    expect(asked).toBe(0);
  });

  test("a delta whose instructions produce a different size than its header says is refused", () => {
    const base = new TextEncoder().encode("hello world");
    const delta = new Uint8Array([...varint(base.length), ...varint(6), 0x91, 0x00, 0x05]);
    expect(() => applyDelta(base, delta)).toThrow(/instructions produce 5 bytes, header says 6/);
  });

  test("a zlib stream cannot claim more than it can inflate to", () => {
    const data = deflateSync(new TextEncoder().encode("small"));
    expect(() => inflateExact(data, 2 ** 40)).toThrow(GitError);
    // With more input still to come, the streaming form waits for it instead of allocating.
    const r = (() => {
      try {
        return inflateWithLength(new Uint8Array([...data, 0]), 2 ** 40);
      } catch (e) {
        return e;
      }
    })();
    expect(r).toBeInstanceOf(GitError);
  });
});
