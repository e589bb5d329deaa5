import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlockCache } from "../../../src/storage/block-cache.ts";
import { createFsStore } from "../../../src/storage/fs-store.ts";
import type { ObjectStore } from "../../../src/storage/object-store.ts";
import { bytes, same } from "./object-store-contract.ts";

const KEY = "repos/r/packs/pack-1.pack";
const SIZE = 1_000_003;
const DATA = bytes(SIZE, 3);
let root: string;
let backing: ObjectStore;

// The real fs store, with every ranged read recorded.
function counted(): { store: ObjectStore; ranges: [string, number, number][] } {
  const ranges: [string, number, number][] = [];
  const store: ObjectStore = {
    ...backing,
    getRange: (key, offset, length) => {
      ranges.push([key, offset, length]);
      return backing.getRange(key, offset, length);
    },
  };
  return { store, ranges };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "svc-block-cache-"));
  backing = createFsStore(root);
  await backing.put(KEY, DATA);
});
afterAll(() => rm(root, { recursive: true, force: true }));

test("random reads match the file, and cached bytes stay within the budget", async () => {
  const { store } = counted();
  const cache = new BlockCache(store, { blockSize: 4096, maxBytes: 32 * 1024 });
  const source = cache.source(KEY, SIZE);
  let x = 99;
  const rand = (n: number) => ((x = (x * 1103515245 + 12345) % 2147483648), x % n);
  for (let i = 0; i < 2000; i++) {
    const offset = rand(SIZE);
    const length = Math.min(SIZE - offset, rand(10) === 0 ? rand(20_000) : rand(200));
    if (!same(await source.read(offset, length), DATA.subarray(offset, offset + length))) {
      throw new Error(`mismatch at ${offset}+${length}`);
    }
    if (cache.cachedBytes > 32 * 1024) throw new Error(`cache holds ${cache.cachedBytes} bytes`);
  }
  expect(source.size).toBe(SIZE);
});

test("reads at the edges: first byte, last byte, across block boundaries, the short last block", async () => {
  const cache = new BlockCache(counted().store, { blockSize: 1000 });
  const source = cache.source(KEY, SIZE);
  for (const [offset, length] of [
    [0, 1],
    [SIZE - 1, 1],
    [999, 2],
    [999, 1002],
    [SIZE - 3, 3],
    [0, 0],
    [SIZE, 0],
  ] as const) {
    expect(await source.read(offset, length)).toEqual(DATA.slice(offset, offset + length));
  }
  for (const [offset, length] of [
    [SIZE, 1],
    [SIZE - 1, 2],
    [-1, 1],
  ] as const) {
    await expect(source.read(offset, length)).rejects.toMatchObject({ code: "out_of_range" });
  }
});

test("concurrent reads of one block fetch it once, and later reads hit the cache", async () => {
  const { store, ranges } = counted();
  const source = new BlockCache(store, { blockSize: 65_536 }).source(KEY, SIZE);
  const reads = await Promise.all(Array.from({ length: 50 }, (_, i) => source.read(i * 100, 50)));
  expect(reads.every((got, i) => same(got, DATA.subarray(i * 100, i * 100 + 50)))).toBe(true);
  await source.read(60_000, 10);
  expect(ranges).toEqual([[KEY, 0, 65_536]]);
});

test("returned bytes are copies: mutating them does not corrupt the cache", async () => {
  const source = new BlockCache(counted().store).source(KEY, SIZE);
  (await source.read(10, 5)).fill(0);
  expect(await source.read(10, 5)).toEqual(DATA.slice(10, 15));
});

test("large reads bypass the cache", async () => {
  const { store, ranges } = counted();
  const cache = new BlockCache(store, { blockSize: 4096, bypassBytes: 100_000 });
  const got = await cache.source(KEY, SIZE).read(5, 200_000);
  expect({ same: same(got, DATA.subarray(5, 200_005)), ranges, cached: cache.cachedBytes }).toEqual({
    same: true,
    ranges: [[KEY, 5, 200_000]],
    cached: 0,
  });
});

test("evict drops a key's blocks so the next read fetches again", async () => {
  const { store, ranges } = counted();
  const cache = new BlockCache(store, { blockSize: 4096 });
  const source = cache.source(KEY, SIZE);
  await source.read(0, 10);
  cache.evict("repos/r/packs/pack-1.idx");
  await source.read(0, 10);
  expect(cache.cachedBytes).toBe(4096);
  cache.evict(KEY);
  expect(cache.cachedBytes).toBe(0);
  await source.read(0, 10);
  expect(ranges.length).toBe(2);
});

test("a failed fetch is not cached", async () => {
  let fail = true;
  const store: ObjectStore = {
    ...backing,
    getRange: (key, offset, length) => {
      if (fail) return Promise.reject(new Error("transient"));
      return backing.getRange(key, offset, length);
    },
  };
  const source = new BlockCache(store, { blockSize: 4096 }).source(KEY, SIZE);
  await expect(source.read(0, 10)).rejects.toThrow("transient");
  fail = false;
  expect(await source.read(0, 10)).toEqual(DATA.slice(0, 10));
});

test("a sequential scan fetches a span per request; random reads fetch only their blocks", async () => {
  const { store, ranges } = counted();
  const source = new BlockCache(store, { blockSize: 4096, spanBytes: 8 * 4096, spanReads: true }).source(KEY, SIZE);
  for (let at = 0; at < 20 * 4096; at += 1000) expect(same(await source.read(at, 1000), DATA.subarray(at, at + 1000))).toBe(true);
  // Block 0 alone (nothing before it), then spans of 8 blocks as the scan goes on.
  expect(ranges).toEqual([
    [KEY, 0, 4096],
    [KEY, 4096, 8 * 4096],
    [KEY, 9 * 4096, 8 * 4096],
    [KEY, 17 * 4096, 8 * 4096],
  ]);

  ranges.length = 0;
  for (const block of [100, 50, 150, 52]) await source.read(block * 4096 + 10, 10);
  expect(ranges).toEqual([100, 50, 150, 52].map((b) => [KEY, b * 4096, 4096]));
});

test("one read across several missing blocks is one request", async () => {
  const { store, ranges } = counted();
  const source = new BlockCache(store, { blockSize: 4096, spanReads: true, bypassBytes: 1 << 20 }).source(KEY, SIZE);
  expect(same(await source.read(4096 * 10 + 5, 4096 * 3), DATA.subarray(4096 * 10 + 5, 4096 * 13 + 5))).toBe(true);
  expect(ranges).toEqual([[KEY, 4096 * 10, 4096 * 4]]);
});

test("from the fs store, blocks are read one by one (no span to slice), and reads of 4 blocks or more bypass the cache", async () => {
  const { store, ranges } = counted();
  const cache = new BlockCache(store, { blockSize: 4096 });
  const source = cache.source(KEY, SIZE);
  expect(same(await source.read(4096 * 10 + 5, 4096 * 2), DATA.subarray(4096 * 10 + 5, 4096 * 12 + 5))).toBe(true);
  expect(ranges).toEqual([10, 11, 12].map((b) => [KEY, b * 4096, 4096]));
  ranges.length = 0;
  // A sequential scan still reads ahead, a block per read.
  for (let at = 0; at < 8 * 4096; at += 1000) await source.read(at, 1000);
  expect(ranges.length).toBeGreaterThan(8);
  expect(ranges.every(([, offset, length]) => length === 4096 && offset % 4096 === 0)).toBe(true);
  // A read of 4 blocks goes straight to the file and leaves nothing in the cache.
  const fresh = counted();
  const other = new BlockCache(fresh.store, { blockSize: 4096 });
  expect(same(await other.source(KEY, SIZE).read(4096 * 50, 4 * 4096), DATA.subarray(4096 * 50, 4096 * 54))).toBe(true);
  expect({ ranges: fresh.ranges, cached: other.cachedBytes }).toEqual({ ranges: [[KEY, 4096 * 50, 4 * 4096]], cached: 0 });
});

test("prefetch hints fetch in the background, merged and bounded; later reads hit the cache", async () => {
  const { store, ranges } = counted();
  const cache = new BlockCache(store, { blockSize: 4096, spanBytes: 4 * 4096, prefetch: true, prefetchConcurrency: 2, spanReads: true });
  const source = cache.source(KEY, SIZE);
  expect(source.prefetch!(0, 10 * 4096)).toBe(true);
  expect(source.prefetch!(100 * 4096, 10)).toBe(true);
  // In flight or queued already: nothing new to fetch.
  expect(source.prefetch!(4096, 10)).toBe(false);
  await cache.prefetchIdle();
  const reads = await Promise.all([source.read(5, 10), source.read(9 * 4096, 100), source.read(100 * 4096 + 3, 5)]);
  expect(reads.map((r) => r.length)).toEqual([10, 100, 5]);
  expect(ranges.slice().sort((a, b) => a[1] - b[1])).toEqual([
    [KEY, 0, 4 * 4096],
    [KEY, 4 * 4096, 4 * 4096],
    [KEY, 8 * 4096, 2 * 4096],
    [KEY, 100 * 4096, 4096],
  ]);
  expect(source.prefetch!(0, 10 * 4096)).toBe(false);
});

test("the fs store takes no hints unless asked", () => {
  expect(new BlockCache(backing).source(KEY, SIZE).prefetch).toBeUndefined();
});

test("a file no larger than wholeFileBytes comes whole on its first miss or hint", async () => {
  const { store, ranges } = counted();
  const cache = new BlockCache(store, { blockSize: 4096, spanBytes: 1 << 20, wholeFileBytes: 1 << 20, prefetch: true, spanReads: true });
  const source = cache.source(KEY, SIZE);
  expect(same(await source.read(500_000, 10), DATA.subarray(500_000, 500_010))).toBe(true);
  for (const at of [0, 250_000, SIZE - 10]) expect(same(await source.read(at, 10), DATA.subarray(at, at + 10))).toBe(true);
  expect(ranges).toEqual([[KEY, 0, SIZE]]);

  // A hint does the same; a larger file is still read by blocks.
  const other = counted();
  const hinted = new BlockCache(other.store, { blockSize: 4096, spanBytes: 1 << 20, wholeFileBytes: SIZE, prefetch: true, spanReads: true });
  hinted.source(KEY, SIZE).prefetch!(700_000, 10);
  await hinted.prefetchIdle();
  await new BlockCache(other.store, { blockSize: 4096, wholeFileBytes: SIZE - 1, spanReads: true }).source(KEY, SIZE).read(700_000, 10);
  expect(other.ranges).toEqual([
    [KEY, 0, SIZE],
    [KEY, Math.floor(700_000 / 4096) * 4096, 4096],
  ]);
});

test("a hint for the block after the one read last fetches a span (a commit walk hinting parents)", async () => {
  const { store, ranges } = counted();
  const cache = new BlockCache(store, { blockSize: 4096, spanBytes: 8 * 4096, prefetch: true, spanReads: true });
  const source = cache.source(KEY, SIZE);
  await source.read(40 * 4096 + 5, 10);
  source.prefetch!(41 * 4096 + 100, 50);
  await cache.prefetchIdle();
  // Elsewhere, a hint is only its own blocks.
  source.prefetch!(200 * 4096, 10);
  await cache.prefetchIdle();
  expect(ranges).toEqual([
    [KEY, 40 * 4096, 4096],
    [KEY, 41 * 4096, 8 * 4096],
    [KEY, 200 * 4096, 4096],
  ]);
});
