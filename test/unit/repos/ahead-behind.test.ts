// aheadBehind (services/repos/branches.ts) against the definition on random histories: ahead is
// |ancestors(tip) \ ancestors(base)|, behind the other way. Histories with every commit in the
// same second (a script, a rebase) and with dates going backwards are the cases a date-ordered
// walk gets wrong when it stops at the first moment everything queued is shared.
import { describe, expect, test } from "bun:test";
import { serializeCommit } from "../../../src/git/object.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { CommitCache } from "../../../src/git/revision.ts";
import type { ObjectReader, Oid, RawObject } from "../../../src/git/types.ts";
import { AHEAD_BEHIND_CAP, aheadBehind } from "../../../src/services/repos/branches.ts";

const TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** A random history of `n` commits (each with 1–2 earlier parents, a few roots), its objects and parents. */
function history(n: number, seed: number, time: (i: number) => number) {
  let s = seed;
  const rand = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const objects = new Map<Oid, RawObject>();
  const parents = new Map<Oid, Oid[]>();
  const ids: Oid[] = [];
  for (let i = 0; i < n; i++) {
    const ps: Oid[] = [];
    if (i > 0 && rand() > 0.05) ps.push(ids[Math.floor(rand() * Math.min(i, 6)) + Math.max(0, i - 6)]!);
    if (i > 1 && rand() < 0.2) {
      const other = ids[Math.floor(rand() * i)]!;
      if (!ps.includes(other)) ps.push(other);
    }
    const sig = { name: "t", email: "t@x", timestamp: time(i), timezone: "+0000" };
    const data = serializeCommit({ tree: TREE, parents: ps, author: sig, committer: sig, message: `c${i}\n`, extraHeaders: [] });
    const oid = hashObject("commit", data);
    objects.set(oid, { type: "commit", data });
    parents.set(oid, ps);
    ids.push(oid);
  }
  const reader: ObjectReader = {
    has: async (oid) => objects.has(oid),
    read: async (oid) => objects.get(oid) ?? null,
    readHeader: async (oid) => (objects.has(oid) ? { type: "commit", size: objects.get(oid)!.data.length } : null),
  };
  return { ids, reader, parents };
}

function ancestors(parents: Map<Oid, Oid[]>, tip: Oid): Set<Oid> {
  const seen = new Set<Oid>([tip]);
  const stack = [tip];
  while (stack.length) for (const p of parents.get(stack.pop()!) ?? []) if (!seen.has(p)) seen.add(p), stack.push(p);
  return seen;
}

const CASES: [string, (i: number) => number][] = [
  ["increasing dates", (i) => 1_700_000_000 + i * 60],
  ["one second for all", () => 1_700_000_000],
  ["a few seconds, repeated", (i) => 1_700_000_000 + Math.floor(i / 7)],
];

describe("aheadBehind", () => {
  for (const [name, time] of CASES) {
    test(`${name}: matches the definition on random pairs`, async () => {
      for (let seed = 1; seed <= 20; seed++) {
        const h = history(120, seed, time);
        const cache = new CommitCache(h.reader);
        for (let k = 0; k < 10; k++) {
          const a = h.ids[(seed * 31 + k * 17) % h.ids.length]!;
          const b = h.ids[(seed * 7 + k * 29 + 5) % h.ids.length]!;
          const A = ancestors(h.parents, a);
          const B = ancestors(h.parents, b);
          const want = { ahead: [...B].filter((x) => !A.has(x)).length, behind: [...A].filter((x) => !B.has(x)).length };
          expect({ seed, k, ...(await aheadBehind(cache, a, b)) }).toEqual({ seed, k, ...want });
        }
      }
    });
  }

  test("past the cap a side is null (shown as many); the other side stays exact", async () => {
    // A straight line: each commit's parent is the one before (history() with 0.05 roots, so build it here).
    const objects = new Map<Oid, RawObject>();
    const ids: Oid[] = [];
    for (let i = 0; i < AHEAD_BEHIND_CAP + 300; i++) {
      const sig = { name: "t", email: "t@x", timestamp: 1_700_000_000 + i, timezone: "+0000" };
      const data = serializeCommit({ tree: TREE, parents: i ? [ids[i - 1]!] : [], author: sig, committer: sig, message: `c${i}\n`, extraHeaders: [] });
      const oid = hashObject("commit", data);
      objects.set(oid, { type: "commit", data });
      ids.push(oid);
    }
    const reader: ObjectReader = {
      has: async (oid) => objects.has(oid),
      read: async (oid) => objects.get(oid) ?? null,
      readHeader: async (oid) => (objects.has(oid) ? { type: "commit", size: 1 } : null),
    };
    const cache = new CommitCache(reader);
    const last = ids.at(-1)!;
    expect(await aheadBehind(cache, last, ids[0]!)).toEqual({ ahead: 0, behind: null });
    expect(await aheadBehind(cache, ids[0]!, last)).toEqual({ ahead: null, behind: 0 });
    expect(await aheadBehind(cache, last, ids[400]!)).toEqual({ ahead: 0, behind: AHEAD_BEHIND_CAP + 300 - 401 });
  });
});
