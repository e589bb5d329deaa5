import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFsStore } from "../../../src/storage/fs-store.ts";
import type { ObjectStore } from "../../../src/storage/object-store.ts";
import { bytes, objectStoreContract, same } from "./object-store-contract.ts";

const roots: string[] = [];
async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "svc-fs-store-"));
  roots.push(root);
  return root;
}
afterAll(() => Promise.all(roots.map((root) => rm(root, { recursive: true, force: true }))));

objectStoreContract("fs", async () => createFsStore(await tempRoot()));

describe("fs store", () => {
  let root: string;
  let store: ObjectStore;
  beforeAll(async () => {
    root = await tempRoot();
    store = createFsStore(root);
  });

  test("keeps each object at <root>/<key>", async () => {
    await store.put("repos/a/packs/pack-1.pack", new Uint8Array([1, 2]));
    expect(await Bun.file(join(root, "repos/a/packs/pack-1.pack")).bytes()).toEqual(new Uint8Array([1, 2]));
  });

  test("a concurrent reader never sees a partial object, and the temp file is never under the final key", async () => {
    const source = join(await tempRoot(), "source");
    const size = 20 * 1024 * 1024;
    const data = bytes(size, 9);
    await writeFile(source, data);
    const dir = join(root, "repos/atomic/packs");
    let sawTemp = false;
    for (let attempt = 0; attempt < 5 && !sawTemp; attempt++) {
      const key = `repos/atomic/packs/pack-${attempt}.pack`;
      let done = false;
      const writing = store.putFile(key, source).finally(() => (done = true));
      const seen = new Set<number | null>();
      while (!done) {
        const names = await readdir(dir).catch(() => [] as string[]);
        const temp = names.some((name) => name.startsWith(`pack-${attempt}.pack~`));
        const stat = await store.stat(key);
        if (temp && stat === null) sawTemp = true;
        seen.add(stat?.size ?? null);
        const listed = [];
        for await (const item of store.list("repos/atomic/")) listed.push(item.key);
        expect(listed.some((k) => k.includes("~"))).toBe(false);
      }
      await writing;
      seen.delete(null);
      expect([...seen].every((s) => s === size)).toBe(true);
      expect(same(await store.get(key), data)).toBe(true);
    }
    expect(sawTemp).toBe(true);
    expect((await readdir(dir)).filter((name) => name.includes("~"))).toEqual([]);
  }, 60_000);

  test("a failed write leaves neither a temp file nor an object", async () => {
    await expect(store.putFile("repos/fail/packs/pack-x.pack", join(root, "no-such-file"))).rejects.toThrow();
    expect(await readdir(join(root, "repos/fail/packs"))).toEqual([]);
  });

  test("lists in ascending key order", async () => {
    const keys = ["repos/order/a/b", "repos/order/a-c", "repos/order/a.d", "repos/order/a/a", "repos/order/ab"];
    for (const key of keys) await store.put(key, new Uint8Array(1));
    const listed = [];
    for await (const item of store.list("repos/order/")) listed.push(item.key);
    expect(listed).toEqual([...keys].sort());
  });

  test("stray temp files are not listed", async () => {
    await store.put("repos/stray/a", new Uint8Array(1));
    await writeFile(join(root, "repos/stray/a~leftover"), "partial");
    const keys = [];
    for await (const item of store.list("repos/stray/")) keys.push(item.key);
    expect(keys).toEqual(["repos/stray/a"]);
  });

  test("a replaced or deleted file is not read through a stale cached handle", async () => {
    const key = "repos/handles/x";
    await store.put(key, new Uint8Array([1, 1, 1]));
    expect(await store.getRange(key, 0, 3)).toEqual(new Uint8Array([1, 1, 1]));
    await store.put(key, new Uint8Array([2, 2, 2]));
    expect(await store.getRange(key, 0, 3)).toEqual(new Uint8Array([2, 2, 2]));
    await store.delete(key);
    await expect(store.getRange(key, 0, 3)).rejects.toMatchObject({ code: "not_found" });
  });

  test("many files read concurrently through the bounded handle pool", async () => {
    const keys = Array.from({ length: 150 }, (_, i) => `repos/many/f${i}`);
    await Promise.all(keys.map((key, i) => store.put(key, bytes(100, i + 1))));
    const reads = await Promise.all(
      [...keys, ...keys].map((key, i) => store.getRange(key, i % 50, 10).then((got) => same(got, bytes(100, (i % 150) + 1).subarray(i % 50, (i % 50) + 10)))),
    );
    expect(reads.every(Boolean)).toBe(true);
  });
});
