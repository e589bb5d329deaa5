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
  for (const [offset, length] of [[0, 1], [SIZE - 1, 1], [999, 2], [999, 1002], [SIZE - 3, 3], [0, 0], [SIZE, 0]] as const) {
    expect(await source.read(offset, length)).toEqual(DATA.slice(offset, offset + length));
  }
  for (const [offset, length] of [[SIZE, 1], [SIZE - 1, 2], [-1, 1]] as const) {
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
