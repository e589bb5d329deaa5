// Memory discipline of the engine's long loops: collections paced by resident memory, and the
// walk's private cache of resolved trees keeping its byte budget when trees are read again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { countHeldBytes, heldBytes, MemoryPacer } from "../../../src/git/buffer-pool.ts";
import { ChainReader } from "../../../src/git/chain-reader.ts";
import { OBJ_TREE } from "../../../src/git/pack-entry.ts";
import { PackIndex } from "../../../src/git/pack-index.ts";
import { DeltaBaseCache, Pack } from "../../../src/git/pack-reader.ts";
import type { ByteSource } from "../../../src/git/types.ts";
import { git, makeFixtureRepo, type FixtureRepo } from "./fixture.ts";

describe("MemoryPacer", () => {
  test("collects once resident memory grew past the slack, measuring every `every` items", () => {
    let rss = 100;
    const collected: number[] = [];
    const pacer = new MemoryPacer(4, 50, { rss: () => rss, collect: () => void collected.push(rss) });
    const run = (items: number, grow: number) => {
      for (let i = 0; i < items; i++) {
        rss += grow;
        pacer.tick();
      }
    };
    run(3, 30); // 190: not measured yet (every 4 items)
    expect(collected).toEqual([]);
    run(1, 0); // measured at 190, 90 over the base of 100
    expect(collected).toEqual([190]);
    rss = 170; // the collection gave some memory back: the new base is 170
    run(4, 10); // 210: 40 over the base
    expect(collected).toEqual([190]);
    run(4, 10); // 250: 80 over
    expect(collected).toEqual([190, 250]);
  });

  test("memory given back lowers the base, so growth is counted from there", () => {
    let rss = 500;
    const collected: number[] = [];
    const pacer = new MemoryPacer(1, 50, { rss: () => rss, collect: () => void collected.push(rss) });
    rss = 300;
    pacer.tick();
    rss = 360;
    pacer.tick();
    expect(collected).toEqual([360]);
  });

  test("growth held by a registered cache is not garbage: only the rest counts toward the slack", () => {
    let rss = 1000;
    const cache = { held: 0, heldBytes: () => cache.held };
    countHeldBytes(cache);
    const collected: number[] = [];
    const pacer = new MemoryPacer(1, 50, { rss: () => rss, collect: () => void collected.push(rss) });
    // A cache filling with 200 bytes of blocks: resident memory grows by as much, nothing to collect.
    rss += 200;
    cache.held += 200;
    pacer.tick();
    expect(collected).toEqual([]);
    // Garbage beside it still counts: 60 over the base once the cache's 20 new bytes are set aside.
    rss += 80;
    cache.held += 20;
    pacer.tick();
    expect(collected).toEqual([1280]);
    // Blocks evicted and left as garbage: the cache holds less, so the same RSS is more garbage.
    cache.held -= 60;
    pacer.tick();
    expect(collected).toEqual([1280, 1280]);
  });

  test("heldBytes sums the live owners", () => {
    const before = heldBytes();
    const a = { heldBytes: () => 7 };
    const b = { heldBytes: () => 11 };
    countHeldBytes(a);
    countHeldBytes(b);
    expect(heldBytes() - before).toBe(18);
  });
});

describe("ChainReader", () => {
  let repo: FixtureRepo;
  beforeAll(async () => {
    repo = await makeFixtureRepo(30);
  });
  afterAll(() => repo.cleanup());

  test("a tree read again from the cache keeps its starts and the budget: other trees stay cached", async () => {
    const bytes = readFileSync(repo.packPath);
    const idx = PackIndex.parse(readFileSync(repo.idxPath));
    const source: ByteSource = { size: bytes.length, read: async (offset, length) => bytes.slice(offset, offset + length) };
    const pack = new Pack(idx.packChecksum, idx, source, new DeltaBaseCache(0));
    const trees = git(repo.dir, ["cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname)"])
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("tree "))
      .map((l) => idx.find(l.slice(5)));
    expect(trees.length).toBeGreaterThan(20);
    // Room for every tree of the fixture (a few hundred bytes each) with its starts.
    const reader = new ChainReader([pack], 1024 * 1024);
    const first = new Map<number, Awaited<ReturnType<ChainReader["read"]>>>();
    for (const offset of trees.slice(0, 5)) {
      const obj = await reader.read(0, offset);
      expect(obj.code).toBe(OBJ_TREE);
      reader.setStarts(obj, new Uint32Array(3), 3);
      first.set(offset, obj);
    }
    // The same tree again and again (a walk meets it under many commits), starts set each time.
    for (let i = 0; i < 5000; i++) {
      const obj = await reader.read(0, trees[0]!);
      reader.setStarts(obj, new Uint32Array(64), 64);
    }
    // The other trees enter the cache; the first ones are still the cached objects (a miss would
    // resolve a new one): the repeated starts did not count against the budget.
    for (const offset of trees.slice(5)) await reader.read(0, offset);
    for (const [offset, obj] of first) expect(await reader.read(0, offset)).toBe(obj);
  });
});
