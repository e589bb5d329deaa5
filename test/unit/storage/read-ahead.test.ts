import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlockCache } from "../../../src/storage/block-cache.ts";
import { createFsStore } from "../../../src/storage/fs-store.ts";
import { ByteBudget, readAhead } from "../../../src/storage/read-ahead.ts";
import { bytes, same } from "./object-store-contract.ts";

const DATA = bytes(3_000_017, 11);

/** A reader over DATA that records concurrency and resolves reads out of order (later ones first). */
function reader(onRead: () => void = () => {}) {
  let active = 0;
  const pending: Promise<unknown>[] = [];
  const stats = { reads: [] as [number, number][], maxActive: 0 };
  const read = (offset: number, length: number): Promise<Uint8Array> => {
    stats.reads.push([offset, length]);
    onRead();
    active++;
    stats.maxActive = Math.max(stats.maxActive, active);
    // Reads issued later finish sooner: delivery order must not depend on completion order.
    const p = new Promise<Uint8Array>((resolve) =>
      setTimeout(
        () => {
          active--;
          resolve(DATA.slice(offset, offset + length));
        },
        Math.max(0, 8 - stats.reads.length),
      ),
    );
    pending.push(p);
    return p;
  };
  /** Resolves once every read issued so far has settled. */
  const idle = () => Promise.allSettled(pending);
  return { read, stats, idle };
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return new Uint8Array(Buffer.concat(parts));
}

describe("readAhead", () => {
  test("delivers exactly the bytes of sequential reads, for any chunking and window", async () => {
    const cases = [
      { offset: 0, length: DATA.length, chunkBytes: 1 << 20, firstChunkBytes: 1 << 18, window: 4 },
      { offset: 12_345, length: 2_000_000, chunkBytes: 300_001, firstChunkBytes: 7, window: 3 },
      { offset: DATA.length - 10, length: 10, chunkBytes: 4, firstChunkBytes: 4, window: 2 },
      { offset: 5, length: 0, chunkBytes: 100, firstChunkBytes: 100, window: 4 },
      { offset: 0, length: 999_999, chunkBytes: 50_000, firstChunkBytes: 5000, window: 1 },
    ];
    for (const c of cases) {
      const { read } = reader();
      const got = await collect(readAhead(read, c.offset, c.length, c));
      expect(same(got, DATA.subarray(c.offset, c.offset + c.length))).toBe(true);
    }
  });

  test("keeps at most `window` reads in flight, and the budget bounds bytes held across streams", async () => {
    const budget = new ByteBudget(3 * 100_000);
    let peakHeld = 0;
    const { read, stats } = reader(() => (peakHeld = Math.max(peakHeld, budget.capacity - budget.free)));
    const opts = { chunkBytes: 100_000, firstChunkBytes: 100_000, window: 8 };
    const [a, b] = await Promise.all([collect(readAhead(read, 0, 1_000_000, opts, budget)), collect(readAhead(read, 1_000_000, 1_000_000, opts, budget))]);
    expect(same(a, DATA.subarray(0, 1_000_000)) && same(b, DATA.subarray(1_000_000, 2_000_000))).toBe(true);
    expect(stats.maxActive).toBeLessThanOrEqual(3);
    expect(peakHeld).toBeLessThanOrEqual(300_000);
    expect(budget.free).toBe(300_000);

    const single = reader();
    await collect(readAhead(single.read, 0, 2_000_000, { chunkBytes: 100_000, window: 5 }));
    expect(single.stats.maxActive).toBe(5);
  });

  test("stopping early gives every byte of budget back once the reads in flight settle", async () => {
    const { read, stats, idle } = reader();
    const budget = new ByteBudget(1_000_000);
    for await (const chunk of readAhead(read, 0, DATA.length, { chunkBytes: 100_000, firstChunkBytes: 100_000, window: 6 }, budget)) {
      expect(chunk.length).toBe(100_000);
      break;
    }
    expect(stats.reads.length).toBe(6);
    await idle();
    expect(budget.free).toBe(1_000_000);
  });

  test("a failed read is thrown in its turn, after the chunks before it", async () => {
    const budget = new ByteBudget(1_000_000);
    const pending: Promise<unknown>[] = [];
    const read = (offset: number, length: number) => {
      const p = offset === 200 ? Promise.reject(new Error("storage gave up")) : Promise.resolve(DATA.slice(offset, offset + length));
      pending.push(p);
      return p;
    };
    const delivered: number[] = [];
    const err = await (async () => {
      for await (const chunk of readAhead(read, 0, 1000, { chunkBytes: 100, firstChunkBytes: 100, window: 4 }, budget)) delivered.push(chunk.length);
    })().catch((e: Error) => e.message);
    expect({ delivered, err }).toEqual({ delivered: [100, 100], err: "storage gave up" });
    await Promise.allSettled(pending);
    await Promise.resolve();
    expect(budget.free).toBe(1_000_000);
  });
});

describe("BlockCache.stream", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "svc-read-ahead-"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  test("returns the same bytes as sequential reads, and leaves the cache alone", async () => {
    const store = createFsStore(root);
    await store.put("repos/r/packs/pack-a.pack", DATA);
    const cache = new BlockCache(store, { readAhead: { chunkBytes: 256 * 1024, firstChunkBytes: 64 * 1024, window: 3 } });
    const source = cache.source("repos/r/packs/pack-a.pack", DATA.length);
    const sequential: Uint8Array[] = [];
    for (let at = 100; at < DATA.length; at += 65_536)
      sequential.push(await new BlockCache(store).source("repos/r/packs/pack-a.pack", DATA.length).read(at, Math.min(65_536, DATA.length - at)));
    const streamed = await collect(source.stream!(100, DATA.length - 100));
    expect(Buffer.from(streamed).equals(Buffer.concat(sequential))).toBe(true);
    expect(cache.cachedBytes).toBe(0);
    expect(() => source.stream!(0, DATA.length + 1)).toThrow("past the end");
  });
});
