// The behaviour every ObjectStore backend must share; each backend's test file runs it.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlockCache } from "../../../src/storage/block-cache.ts";
import type { ObjectStore } from "../../../src/storage/object-store.ts";

/** Deterministic pseudo-random bytes (xorshift), so failures reproduce. */
export function bytes(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** Whether two byte arrays hold the same bytes (fast for large arrays). */
export function same(a: Uint8Array | null, b: Uint8Array): boolean {
  return a !== null && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

async function keysOf(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of store.list(prefix)) keys.push(item.key);
  return keys.sort();
}

const BAD_KEYS = ["", "/a", "a/", "a//b", "..", "a/../b", "a/./b", ".", "a\\b", "a b", "a~b", "a#b", "é", "x".repeat(1025)];

/** Run the ObjectStore contract against the store returned by `open` (called once). */
export function objectStoreContract(name: string, open: () => Promise<ObjectStore>): void {
  describe(`${name} object store contract`, () => {
    let store: ObjectStore;
    let scratch: string;
    let n = 0;
    const fresh = () => `repos/r${String(++n).padStart(4, "0")}`;

    beforeAll(async () => {
      store = await open();
      scratch = await mkdtemp(join(tmpdir(), "svc-storage-contract-"));
    });
    afterAll(() => rm(scratch, { recursive: true, force: true }));

    test("put, get, stat, delete round trip", async () => {
      const key = `${fresh()}/packs/pack-a.pack`;
      const data = bytes(1000);
      await store.put(key, data);
      expect(await store.get(key)).toEqual(data);
      expect(await store.stat(key)).toEqual({ size: 1000 });
      await store.delete(key);
      expect({ get: await store.get(key), stat: await store.stat(key) }).toEqual({ get: null, stat: null });
    });

    test("put stores exactly the bytes of a view, and replaces an existing object", async () => {
      const key = `${fresh()}/x`;
      const backing = bytes(100);
      await store.put(key, backing.subarray(10, 30));
      expect(await store.get(key)).toEqual(backing.slice(10, 30));
      await store.put(key, new Uint8Array([7]));
      expect(await store.get(key)).toEqual(new Uint8Array([7]));
    });

    test("an empty object is an object", async () => {
      const key = `${fresh()}/empty`;
      await store.put(key, new Uint8Array(0));
      expect({ get: await store.get(key), stat: await store.stat(key) }).toEqual({ get: new Uint8Array(0), stat: { size: 0 } });
    });

    test("a missing key is null for reads, not_found for ranged reads, and a no-op to delete", async () => {
      const key = `${fresh()}/missing`;
      expect({ get: await store.get(key), stat: await store.stat(key) }).toEqual({ get: null, stat: null });
      await store.delete(key);
      await store.delete(key);
      await expect(store.getRange(key, 0, 1)).rejects.toMatchObject({ code: "not_found" });
    });

    test("ranged reads at the edges", async () => {
      const key = `${fresh()}/ranges`;
      const data = bytes(200_000, 7);
      await store.put(key, data);
      const cases: [number, number][] = [
        [0, 1],
        [0, 200_000],
        [199_999, 1],
        [65_535, 2],
        [65_536, 65_536],
        [1, 131_071],
        [123_456, 0],
      ];
      for (const [offset, length] of cases) {
        expect(await store.getRange(key, offset, length)).toEqual(data.slice(offset, offset + length));
      }
    });

    test("ranged reads past the end or with bad arguments are out_of_range", async () => {
      const key = `${fresh()}/short`;
      await store.put(key, bytes(10));
      for (const [offset, length] of [
        [5, 6],
        [10, 1],
        [100, 5],
        [-1, 2],
        [0, -1],
        [0.5, 1],
      ] as const) {
        await expect(store.getRange(key, offset, length)).rejects.toMatchObject({ code: "out_of_range" });
      }
    });

    test("putFile of a small file", async () => {
      const key = `${fresh()}/packs/pack-small.idx`;
      const path = join(scratch, "small");
      const data = bytes(5000, 3);
      await writeFile(path, data);
      await store.putFile(key, path);
      expect(await store.get(key)).toEqual(data);
    });

    test("putFile of a ~20 MB file, read back whole and by ranges", async () => {
      const key = `${fresh()}/packs/pack-big.pack`;
      const path = join(scratch, "big");
      const size = 20 * 1024 * 1024 + 12_345;
      const data = bytes(size, 11);
      await writeFile(path, data);
      await store.putFile(key, path);
      expect(await store.stat(key)).toEqual({ size });
      const mib8 = 8 * 1024 * 1024;
      for (const [offset, length] of [
        [0, 100],
        [mib8 - 3, 6],
        [2 * mib8 - 1, 2],
        [size - 10, 10],
        [size - 1, 1],
      ] as const) {
        expect(await store.getRange(key, offset, length)).toEqual(data.slice(offset, offset + length));
      }
      expect(same(await store.get(key), data)).toBe(true);
    }, 60_000);

    test("putFile of a missing source fails and stores nothing", async () => {
      const key = `${fresh()}/nothing`;
      await expect(store.putFile(key, join(scratch, "does-not-exist"))).rejects.toThrow();
      expect(await store.stat(key)).toBeNull();
    });

    test("list yields exactly the matching keys with sizes and times", async () => {
      const repo = fresh();
      const before = Date.now() - 60_000;
      const keys = [`${repo}/packs/pack-b.pack`, `${repo}/packs/pack-a.idx`, `${repo}/packs/pack-a.pack`, `${repo}/meta`, `${repo}-x/packs/pack-c.pack`];
      for (const [i, key] of keys.entries()) await store.put(key, bytes(i + 1));
      const items = [];
      for await (const item of store.list(`${repo}/`)) items.push(item);
      items.sort((a, b) => (a.key < b.key ? -1 : 1));
      expect(items.map(({ key, size }) => ({ key, size }))).toEqual([
        { key: `${repo}/meta`, size: 4 },
        { key: `${repo}/packs/pack-a.idx`, size: 2 },
        { key: `${repo}/packs/pack-a.pack`, size: 3 },
        { key: `${repo}/packs/pack-b.pack`, size: 1 },
      ]);
      expect(items.every((item) => item.modifiedAt > before && item.modifiedAt < Date.now() + 60_000)).toBe(true);
      expect(await keysOf(store, `${repo}/packs/pack-a`)).toEqual([`${repo}/packs/pack-a.idx`, `${repo}/packs/pack-a.pack`]);
      expect(await keysOf(store, repo)).toEqual([...keys].sort());
      expect(await keysOf(store, `${repo}/nothing/`)).toEqual([]);
      const all = await keysOf(store, "");
      expect(keys.every((key) => all.includes(key))).toBe(true);
    });

    test("invalid keys and prefixes are rejected by every call", async () => {
      const path = join(scratch, "src");
      await writeFile(path, "x");
      for (const key of BAD_KEYS) {
        const calls = [
          () => store.put(key, new Uint8Array(1)),
          () => store.putFile(key, path),
          () => store.get(key),
          () => store.getRange(key, 0, 1),
          () => store.stat(key),
          () => store.delete(key),
        ];
        for (const call of calls) {
          await expect((async () => call())()).rejects.toMatchObject({ code: "invalid_key" });
        }
      }
      for (const prefix of ["/", "/a", "../", "a//", "a/../"]) {
        await expect(keysOf(store, prefix)).rejects.toMatchObject({ code: "invalid_key" });
      }
    });

    test("a BlockCache over this store reads the same bytes as direct reads", async () => {
      const key = `${fresh()}/packs/pack-cached.pack`;
      const size = 300_001;
      const data = bytes(size, 5);
      await store.put(key, data);
      const cache = new BlockCache(store, { blockSize: 16 * 1024, maxBytes: 64 * 1024 });
      const source = cache.source(key, size);
      let x = 12345;
      const rand = (n: number) => ((x = (x * 1103515245 + 12345) % 2147483648), x % n);
      for (let i = 0; i < 200; i++) {
        const offset = rand(size);
        const length = Math.min(size - offset, rand(4) === 0 ? rand(70_000) : rand(300));
        const got = await source.read(offset, length);
        if (!same(got, data.subarray(offset, offset + length))) throw new Error(`mismatch at ${offset}+${length}`);
      }
      expect(cache.cachedBytes).toBeLessThanOrEqual(64 * 1024);
    });
  });
}
