import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkConnectivity, linksClosed } from "../../../src/git/connectivity.ts";
import { serializeCommit, serializeTag, serializeTree } from "../../../src/git/object.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { indexPack } from "../../../src/git/pack-indexer.ts";
import { openIndexedPack } from "../../../src/git/pack-overlay.ts";
import type { Pack } from "../../../src/git/pack-reader.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { buildPack } from "../../../src/git/pack-writer.ts";
import { GitError, type ObjectReader, type Oid, type RawObject } from "../../../src/git/types.ts";
import { tempDir } from "./fixture.ts";

// The walk has two implementations: over pack sets (by idx position, the server's case) and
// over any readers (by oid). Every case runs through both and must give the same outcome.

const enc = new TextEncoder();
const sig = { name: "A", email: "a@x", timestamp: 1_700_000_000, timezone: "+0000" };
const obj = (type: RawObject["type"], data: Uint8Array) => ({ oid: hashObject(type, data), raw: { type, data } as RawObject });
const blob = (s: string) => obj("blob", enc.encode(s));
const tree = (entries: { mode: string; name: string; oid: Oid }[]) => obj("tree", serializeTree(entries));
const commit = (t: Oid, parents: Oid[], message: string) =>
  obj("commit", serializeCommit({ tree: t, parents, author: sig, committer: sig, message, extraHeaders: [] }));

let tmp: { path: string; cleanup(): Promise<void> };
const opened: { close(): Promise<void> }[] = [];
beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(async () => {
  for (const o of opened) await o.close();
  await tmp.cleanup();
});

async function packOf(objects: RawObject[]): Promise<Pack> {
  return (await indexedOf(objects)).pack;
}

/** The pack as receive-pack sees it: the indexer's result (links included) and the opened pack. */
async function indexedOf(objects: RawObject[]) {
  const { pack } = buildPack(objects);
  const indexed = await indexPack([pack], { tmpDir: tmp.path });
  const o = await openIndexedPack(indexed);
  opened.push(o);
  return { indexed, pack: o.pack };
}

/** A reader over the same packs that is not a PackSet (takes the by-oid walk). */
function plain(set: PackSet): ObjectReader {
  return { has: (oid) => set.has(oid), read: (oid) => set.read(oid), readHeader: (oid) => set.readHeader(oid) };
}

/** The outcome through both walks: "ok" or the error code; both must agree. */
async function check(front: Pack[], existing: Pack[], tips: Oid[]): Promise<string> {
  const outcome = async (reader: ObjectReader, base: ObjectReader) =>
    checkConnectivity(reader, tips, { existing: base }).then(
      () => "ok",
      (e: unknown) => (e instanceof GitError ? `${e.code}` : `throw ${String(e)}`),
    );
  const base = new PackSet(existing);
  const all = new PackSet([...front, ...existing]);
  const fast = await outcome(all, base);
  const slow = await outcome(plain(all), plain(base));
  expect(fast).toBe(slow);
  return fast;
}

describe("checkConnectivity", () => {
  const a = blob("a\n");
  const b = blob("b\n");
  const sub = tree([{ mode: "100644", name: "b", oid: b.oid }]);
  const root = tree([
    { mode: "100644", name: "a", oid: a.oid },
    { mode: "40000", name: "sub", oid: sub.oid },
    { mode: "160000", name: "module", oid: "cd".repeat(20) },
  ]);
  const c1 = commit(root.oid, [], "one");
  const c2 = commit(root.oid, [c1.oid], "two");
  const tag = obj("tag", serializeTag({ object: c2.oid, type: "commit", tag: "v1", tagger: sig, message: "v1\n", extraHeaders: [] }));

  test("a complete history passes (gitlinks are not followed)", async () => {
    const p = await packOf([a.raw, b.raw, sub.raw, root.raw, c1.raw, c2.raw, tag.raw]);
    expect(await check([p], [], [c2.oid, tag.oid])).toBe("ok");
  });

  test("a blob, a subtree or a parent missing is reported", async () => {
    expect(await check([await packOf([b.raw, sub.raw, root.raw, c1.raw])], [], [c1.oid])).toBe("missing");
    expect(await check([await packOf([a.raw, root.raw, c1.raw])], [], [c1.oid])).toBe("missing");
    expect(await check([await packOf([a.raw, b.raw, sub.raw, root.raw, c2.raw])], [], [c2.oid])).toBe("missing");
    expect(await check([await packOf([a.raw])], [], [c2.oid])).toBe("missing");
  });

  test("the walk stops at objects the repository already has", async () => {
    const stored = await packOf([a.raw, b.raw, sub.raw, root.raw, c1.raw]);
    expect(await check([await packOf([c2.raw])], [stored], [c2.oid])).toBe("ok");
    // An object both sent and stored is not walked again: its closure is stored.
    const hollowRoot = await packOf([root.raw, c1.raw]);
    expect(await check([hollowRoot], [stored], [c1.oid])).toBe("ok");
  });

  test("an object named both as a blob and as a tree is followed", async () => {
    const odd = tree([
      { mode: "100644", name: "x", oid: sub.oid },
      { mode: "40000", name: "y", oid: sub.oid },
    ]);
    const c = commit(odd.oid, [], "odd");
    expect(await check([await packOf([odd.raw, sub.raw, c.raw])], [], [c.oid])).toBe("missing");
    expect(await check([await packOf([odd.raw, sub.raw, b.raw, c.raw])], [], [c.oid])).toBe("ok");
  });
});

describe("linksClosed (the push's check from the indexer's links) and onlyReachableFrom", () => {
  const a = blob("la\n");
  const b = blob("lb\n");
  const sub = tree([{ mode: "100644", name: "b", oid: b.oid }]);
  const root = tree([
    { mode: "100644", name: "a", oid: a.oid },
    { mode: "40000", name: "sub", oid: sub.oid },
    { mode: "160000", name: "module", oid: "ef".repeat(20) },
  ]);
  const c1 = commit(root.oid, [], "l1");
  const c2 = commit(root.oid, [c1.oid], "l2");

  test("a complete pack is closed with nothing read; its objects are exactly what the tip reaches", async () => {
    const { indexed, pack } = await indexedOf([a.raw, b.raw, sub.raw, root.raw, c1.raw, c2.raw]);
    expect(linksClosed(indexed.links, pack.idx, new PackSet([]), [c2.oid])).toBe(true);
    expect(indexed.onlyReachableFrom([c2.oid])).toBe(true);
    // c1 alone does not reach c2: c2 is then an object nothing names.
    expect(indexed.onlyReachableFrom([c1.oid])).toBe(false);
    // c2 reaches c1: the record keeps only c2.
    expect(indexed.reachabilityRecord([c2.oid, c1.oid])).toEqual([c2.oid]);
    expect(indexed.reachabilityRecord([c1.oid])).toBeNull();
  });

  test("what is stored counts; a missing link or tip does not", async () => {
    const stored = await packOf([a.raw, b.raw, sub.raw, root.raw, c1.raw]);
    const { indexed, pack } = await indexedOf([c2.raw]);
    expect(linksClosed(indexed.links, pack.idx, new PackSet([stored]), [c2.oid])).toBe(true);
    expect(linksClosed(indexed.links, pack.idx, new PackSet([]), [c2.oid])).toBe(false);
    expect(linksClosed(indexed.links, pack.idx, new PackSet([stored]), ["12".repeat(20)])).toBe(false);
  });

  test("an unreachable object with a hole: not closed, but the walk (what git checks) accepts the push", async () => {
    const hole = tree([{ mode: "100644", name: "gone", oid: "34".repeat(20) }]);
    const { indexed, pack } = await indexedOf([a.raw, b.raw, sub.raw, root.raw, c1.raw, hole.raw]);
    expect(linksClosed(indexed.links, pack.idx, new PackSet([]), [c1.oid])).toBe(false);
    expect(await check([pack], [], [c1.oid])).toBe("ok");
    expect(indexed.onlyReachableFrom([c1.oid])).toBe(false);
  });
});
