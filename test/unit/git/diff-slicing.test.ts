// The tree diff off the event loop's back (plan 28 §5): slicing (a yield every few ms), big
// files on a worker thread, and the node's LRU of computed diffs must all give exactly the
// answer of the direct computation (Myers per file in the loop, no cache); the slices do let
// the loop turn; the cache is keyed by repository and hands out copies. Also the event-loop
// delay gauge (reset on scrape).
import { afterAll, describe, expect, test } from "bun:test";
import { countEdits, diffLines, splitLines, unifiedHunks } from "../../../src/git/line-diff.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { serializeTree, type TreeEntry } from "../../../src/git/object.ts";
import type { ObjectReader, ObjectType, Oid, RawObject } from "../../../src/git/types.ts";
import { DiffCache, diffKey } from "../../../src/services/git/diff-cache.ts";
import { THREAD_MIN_BYTES, diffTreePair, type FileDiffs } from "../../../src/services/git/diff.ts";
import { collectEventLoop } from "../../../src/services/ops/instrument.ts";
import { Registry } from "../../../src/services/telemetry/metrics.ts";
import { createThreads, type Threads } from "../../../src/threads.ts";
import { prng } from "./fixture.ts";

const pool = createThreads({ size: 2 });
afterAll(() => pool.close());

/** An object store in memory. */
class Objects implements ObjectReader {
  readonly map = new Map<Oid, RawObject>();
  put(type: ObjectType, data: Uint8Array): Oid {
    const oid = hashObject(type, data);
    this.map.set(oid, { type, data });
    return oid;
  }
  blob(text: string): Oid {
    return this.put("blob", new TextEncoder().encode(text));
  }
  /** A flat tree of `files` (path → text). */
  tree(files: Map<string, string>): Oid {
    const entries: TreeEntry[] = [...files].map(([name, text]) => ({ mode: "100644", name, oid: this.blob(text) }));
    return this.put("tree", serializeTree(entries));
  }
  has = async (oid: Oid) => this.map.has(oid);
  read = async (oid: Oid) => this.map.get(oid) ?? null;
  readHeader = async (oid: Oid) => {
    const o = this.map.get(oid);
    return o ? { type: o.type, size: o.data.length } : null;
  };
}

/** Random lines of words. */
function lines(rand: () => number, n: number): string[] {
  const words = ["alpha", "beta", "gamma", "delta", "return x;", "}", "if (y) {", "const z = 1;", ""];
  return Array.from({ length: n }, () => `${words[Math.floor(rand() * words.length)]} ${Math.floor(rand() * 50)}\n`);
}

/** `text` with about `edits` random lines replaced, inserted or removed. */
function edit(rand: () => number, text: string[], edits: number): string[] {
  const out = [...text];
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(rand() * (out.length + 1));
    const r = rand();
    if (r < 0.4) out.splice(at, 1, `changed ${i} ${Math.floor(rand() * 1e6)}\n`);
    else if (r < 0.7) out.splice(at, 0, `inserted ${i}\n`);
    else out.splice(at, 1);
  }
  return out;
}

/** Two trees: `files` small files with ~17 changed lines each, plus `big` files over THREAD_MIN_BYTES per pair. */
function fixture(seed: number, files: number, big: number): { objects: Objects; from: Oid; to: Oid } {
  const rand = prng(seed);
  const objects = new Objects();
  const a = new Map<string, string>();
  const b = new Map<string, string>();
  for (let i = 0; i < files; i++) {
    const base = lines(rand, 80 + Math.floor(rand() * 200));
    a.set(`f${String(i).padStart(3, "0")}.ts`, base.join(""));
    b.set(`f${String(i).padStart(3, "0")}.ts`, edit(rand, base, 17).join(""));
  }
  for (let i = 0; i < big; i++) {
    const base = lines(rand, 4000);
    a.set(`big${i}.txt`, base.join(""));
    b.set(`big${i}.txt`, edit(rand, base, 300).join(""));
  }
  // One added, one deleted, one unchanged.
  b.set("added.md", "new\nfile\n");
  a.set("gone.md", "old\n");
  a.set("same.md", "same\n");
  b.set("same.md", "same\n");
  return { objects, from: objects.tree(a), to: objects.tree(b) };
}

/** What the diff was before slicing, threads and the cache: Myers per file in the loop. */
async function direct(objects: Objects, d: FileDiffs): Promise<void> {
  const text = async (oid: Oid | null) => (oid ? new TextDecoder().decode((await objects.read(oid))!.data) : "");
  for (const f of d.files) {
    const a = splitLines(await text(f.old_oid));
    const b = splitLines(await text(f.new_oid));
    const edits = diffLines(a, b)!;
    expect(edits).not.toBeNull();
    expect({ path: f.path, ...countEdits(edits), patch: unifiedHunks(a, b, edits) }).toEqual({
      path: f.path,
      additions: f.additions,
      deletions: f.deletions,
      patch: f.patch!,
    });
  }
}

describe("diffTreePair: sliced, threaded and cached answers equal the direct one", () => {
  const fx = fixture(28, 300, 3);

  test("300 files × ~17 changed lines and 3 big files: plain, sliced every file, on threads, cached (miss and hit) are one answer", async () => {
    const big = [...fx.objects.map.values()].filter((o) => o.type === "blob" && o.data.length * 2 > THREAD_MIN_BYTES);
    expect(big.length).toBeGreaterThanOrEqual(6);
    const plain = await diffTreePair(fx.objects, fx.from, fx.to);
    expect(plain.files.length).toBe(305);
    expect(plain.truncated).toBe(false);
    await direct(fx.objects, plain);

    let ran = 0;
    const counting = {
      run: (...args: Parameters<Threads["run"]>) => {
        ran++;
        return pool.run(...args);
      },
    } as unknown as Threads;
    const threaded = await diffTreePair(fx.objects, fx.from, fx.to, { threads: counting, sliceMs: 0 });
    expect(ran).toBe(3);
    expect(threaded).toEqual(plain);

    const diffs = new DiffCache();
    const miss = await diffTreePair(fx.objects, fx.from, fx.to, { threads: pool, cache: { diffs, repoId: "r1" } });
    const hit = await diffTreePair(fx.objects, fx.from, fx.to, { threads: pool, cache: { diffs, repoId: "r1" } });
    expect({ hits: diffs.hits, misses: diffs.misses }).toEqual({ hits: 1, misses: 1 });
    expect(miss).toEqual(plain);
    expect(hit).toEqual(plain);
  }, 120_000);

  test("with slices of 0 ms the loop turns between files (a macrotask runs while the diff is under way)", async () => {
    let turns = 0;
    let done = false;
    const spin = () => {
      if (done) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const run = diffTreePair(fx.objects, fx.from, fx.to, { sliceMs: 0 }).finally(() => {
      done = true;
    });
    const turnsAtStart = turns;
    await run;
    // Without yields, the whole diff (blob reads resolve at once here) would run in microtasks with no macrotask between.
    expect(turns - turnsAtStart).toBeGreaterThan(10);
  }, 120_000);
});

describe("DiffCache", () => {
  const d = (path: string, patch: string): FileDiffs => ({
    files: [
      {
        path,
        status: "modified",
        old_mode: "100644",
        new_mode: "100644",
        old_oid: null,
        new_oid: null,
        binary: false,
        additions: 1,
        deletions: 0,
        patch,
        patch_truncated: false,
      },
    ],
    additions: 1,
    deletions: 0,
    truncated: false,
    truncation: null,
  });

  test("keyed by repository: the same trees in another repository are computed for it", async () => {
    const c = new DiffCache();
    let made = 0;
    const make = async () => (made++, d("a", "x"));
    await c.get(diffKey("repo1", null, "t"), make);
    await c.get(diffKey("repo1", null, "t"), make);
    await c.get(diffKey("repo2", null, "t"), make);
    expect(made).toBe(2);
    expect(diffKey("repo1", null, "t")).not.toBe(diffKey("repo1", "t", "t"));
  });

  test("answers are copies: changing one leaves the entry alone", async () => {
    const c = new DiffCache();
    const first = await c.get("k", async () => d("a", "x"));
    first.files[0]!.patch = "mutated";
    first.files.push(first.files[0]!);
    const again = await c.get("k", async () => d("b", "y"));
    expect(again.files).toHaveLength(1);
    expect(again.files[0]!.patch).toBe("x");
  });

  test("concurrent requests for one key share one computation; a failure is not remembered", async () => {
    const c = new DiffCache();
    let made = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const make = async () => {
      made++;
      await gate;
      return d("a", "x");
    };
    const both = Promise.all([c.get("k", make), c.get("k", make)]);
    release();
    expect((await both).map((x) => x.files[0]!.patch)).toEqual(["x", "x"]);
    expect(made).toBe(1);
    await expect(c.get("bad", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect((await c.get("bad", async () => d("ok", "y"))).files[0]!.path).toBe("ok");
  });

  test("least recently used goes first when the bytes run out", async () => {
    const c = new DiffCache(64 * 1024);
    const patch = "p".repeat(7000);
    for (const k of ["a", "b", "c", "d"]) await c.get(k, async () => d(k, patch));
    // Touch "a": "b" is now the oldest.
    await c.get("a", async () => d("a2", patch));
    await c.get("e", async () => d("e", patch));
    expect(c.bytes).toBeLessThanOrEqual(64 * 1024);
    let remade = "";
    await c.get("b", async () => ((remade = "b"), d("b", patch)));
    expect(remade).toBe("b");
    const a = await c.get("a", async () => d("a3", patch));
    expect(a.files[0]!.path).toBe("a");
  });
});

describe("svc_event_loop_delay_max_seconds", () => {
  test("shows a block of the loop, and starts over at each scrape", async () => {
    const registry = new Registry();
    const loop = collectEventLoop(registry);
    registry.collect("event_loop", loop.collector);
    try {
      // Let the sampler start, then hold the loop for 120 ms.
      await new Promise((r) => setTimeout(r, 30));
      const end = performance.now() + 120;
      while (performance.now() < end) {}
      await new Promise((r) => setTimeout(r, 30));
      const first = await registry.render();
      const value = (text: string) => Number(/^svc_event_loop_delay_max_seconds (\S+)$/m.exec(text)?.[1]);
      expect(value(first)).toBeGreaterThanOrEqual(0.1);
      const second = await registry.render();
      expect(value(second)).toBeLessThan(value(first));
    } finally {
      loop.stop();
    }
  });
});
