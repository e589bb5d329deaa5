// The contribution graph's pure pieces (services/discovery/graph.ts): the per-day count blobs,
// the JSON writer checked against a plain object-building reference and the response schema,
// and the cache of written answers.
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { addCount, countsOf, GraphCache, graphJson, type GraphRepo } from "../../../src/services/discovery/graph.ts";
import { ContributionGraph } from "../../../src/services/discovery/schemas.ts";
import { parseDay } from "../../../src/services/discovery/contributions.ts";

const DAY_MS = 86_400_000;
const decode = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

/** The answer built the plain way: objects per entry, sorted with a comparator. */
function reference(range: { from: number; to: number }, repos: GraphRepo[], days: [number, Uint8Array][], withPrivate: boolean): ContributionGraph {
  const bySlot = new Map(repos.map((r) => [r.slot, r]));
  const out: ContributionGraph["days"] = [];
  let total = 0;
  let priv = false;
  for (const [day, counts] of days) {
    let live = 0;
    let open = 0;
    const named: { org: string; name: string; count: number }[] = [];
    for (const [slot, c] of countsOf(counts)) {
      const r = bySlot.get(slot);
      if (!r) continue;
      live += c;
      if (!r.isPublic) continue;
      open += c;
      named.push({ org: r.org, name: r.name, count: c });
    }
    const count = withPrivate ? live : open;
    if (count === 0) continue;
    if (withPrivate && live > open) priv = true;
    total += count;
    named.sort((a, b) => b.count - a.count || (a.org < b.org ? -1 : a.org > b.org ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const date = new Date(day * DAY_MS);
    out.push({ day: date.getUTCDay(), date: date.toISOString().slice(0, 10), count, repos: named });
  }
  const iso = (d: number) => new Date(d * DAY_MS).toISOString().slice(0, 10);
  return { from: iso(range.from), to: iso(range.to), total, private_included: priv, days: out };
}

let seed = 11;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const int = (n: number) => Math.floor(rnd() * n);

describe("day count blobs", () => {
  test("addCount appends a slot once, then adds to it; the input is left as it was", () => {
    const a = addCount(null, 7, 2);
    const b = addCount(a, 3, 1);
    const c = addCount(b, 7, 5);
    expect(countsOf(a)).toEqual([[7, 2]]);
    expect(countsOf(b)).toEqual([
      [7, 2],
      [3, 1],
    ]);
    expect(countsOf(c)).toEqual([
      [7, 7],
      [3, 1],
    ]);
    expect(b.byteLength).toBe(16);
    expect(countsOf(addCount(addCount(null, 2 ** 32 - 1, 2 ** 32 - 2), 2 ** 32 - 1, 9))).toEqual([[2 ** 32 - 1, 2 ** 32 - 1]]);
  });
});

describe("graphJson", () => {
  const d = parseDay("2025-03-05")!;
  const repos: GraphRepo[] = [
    { slot: 0, isPublic: true, org: "beta", name: "app" },
    { slot: 1, isPublic: true, org: "acme", name: "lib" },
    { slot: 2, isPublic: false, org: "acme", name: "vault" },
    { slot: 4, isPublic: true, org: "acme", name: "app" },
  ];
  // Slot 3 was a repository since deleted; slot 9 was never handed out to anything current.
  const days: [number, Uint8Array][] = [
    [
      d,
      [
        [0, 1],
        [1, 3],
        [4, 1],
        [3, 9],
        [2, 2],
      ].reduce<Uint8Array | null>((b, [s, n]) => addCount(b, s!, n!), null)!,
    ],
    [d + 2, addCount(addCount(null, 4, 70_000), 9, 1)],
    [d + 3, addCount(addCount(null, 2, 4), 3, 1)],
    [d + 9, addCount(null, 3, 6)],
  ];

  test("public repositories by most commits, then org and name; deleted ones count for nothing", () => {
    const g = decode(graphJson({ from: d, to: d + 9 }, repos, days, false));
    expect(g).toEqual({
      from: "2025-03-05",
      to: "2025-03-14",
      total: 70_005,
      private_included: false,
      days: [
        {
          day: 3,
          date: "2025-03-05",
          count: 5,
          repos: [
            { org: "acme", name: "lib", count: 3 },
            { org: "acme", name: "app", count: 1 },
            { org: "beta", name: "app", count: 1 },
          ],
        },
        { day: 5, date: "2025-03-07", count: 70_000, repos: [{ org: "acme", name: "app", count: 70_000 }] },
      ],
    });
    expect(Value.Check(ContributionGraph, g)).toBe(true);
  });

  test("with private work: counted, never named; private_included only when some was counted", () => {
    const g = decode(graphJson({ from: d, to: d + 9 }, repos, days, true));
    expect(g.days.map((x: any) => [x.date, x.count, x.repos.length])).toEqual([
      ["2025-03-05", 7, 3],
      ["2025-03-07", 70_000, 1],
      ["2025-03-08", 4, 0],
    ]);
    expect(g).toMatchObject({ total: 70_011, private_included: true });
    expect(new TextDecoder().decode(graphJson({ from: d, to: d + 9 }, repos, days, true))).not.toContain("vault");
    expect(decode(graphJson({ from: d, to: d + 2 }, repos, days.slice(1, 2), true))).toMatchObject({ total: 70_000, private_included: false });
  });

  test("nothing credited: an empty answer", () => {
    expect(decode(graphJson({ from: d, to: d }, [], [], true))).toEqual({ from: "2025-03-05", to: "2025-03-05", total: 0, private_included: false, days: [] });
  });

  test("random people agree with the plain reference, both sort paths, names needing escapes, days before 1970", () => {
    const names = ["app", 'a"b', "back\\slash", "é", "日本", "emoji-😀", "Zed", "zed", "a", "a-b", "a.b"];
    for (let round = 0; round < 60; round++) {
      const repos: GraphRepo[] = [];
      const slots = 1 + int(40);
      for (let s = 0; s < slots; s++) {
        if (rnd() < 0.15) continue; // deleted
        repos.push({ slot: s, isPublic: rnd() < 0.7, org: names[int(names.length)]!, name: `${names[int(names.length)]}-${s}` });
      }
      const base = int(40_000) - 20_000;
      const days: [number, Uint8Array][] = [];
      for (let day = base; day < base + 30; day++) {
        if (rnd() < 0.4) continue;
        let blob: Uint8Array | null = null;
        for (let e = 0, n = 1 + int(30); e < n; e++) blob = addCount(blob, int(slots + 3), 1 + (rnd() < 0.1 ? int(100_000) : int(4)));
        days.push([day, blob!]);
      }
      const range = { from: base, to: base + 29 };
      for (const withPrivate of [false, true]) {
        const want = reference(range, repos, days, withPrivate);
        const got = decode(graphJson(range, repos, days, withPrivate));
        expect(got).toEqual(want);
        expect(Value.Check(ContributionGraph, got)).toBe(true);
        expect(decode(graphJson(range, repos, days, withPrivate, 2))).toEqual(want);
      }
    }
  });

  test("an answer larger than the writer's buffer grows it; later answers are whole", () => {
    const many: GraphRepo[] = Array.from({ length: 300 }, (_, i) => ({ slot: i, isPublic: true, org: "o".repeat(39), name: `${"n".repeat(90)}${i}` }));
    const days: [number, Uint8Array][] = Array.from({ length: 400 }, (_, i) => [
      i,
      many.reduce<Uint8Array | null>((b, r) => addCount(b, r.slot, 1 + (i % 3)), null)!,
    ]);
    const big = graphJson({ from: 0, to: 399 }, many, days, false);
    expect(big.byteLength).toBeGreaterThan(10 << 20);
    expect(decode(big)).toEqual(reference({ from: 0, to: 399 }, many, days, false));
    const small = decode(graphJson({ from: d, to: d + 9 }, repos, days.slice(0, 0), false));
    expect(small).toEqual({ from: "2025-03-05", to: "2025-03-14", total: 0, private_included: false, days: [] });
  });
});

describe("GraphCache", () => {
  const bytes = (n: number) => new Uint8Array(n);

  test("an answer is served only under the stamp it was written under", () => {
    const c = new GraphCache(1 << 20);
    const a = bytes(10);
    c.set("k", "v1|0:1:4:3:acmeapp", a);
    expect(c.get("k", "v1|0:1:4:3:acmeapp")).toBe(a);
    expect(c.get("k", "v2|0:1:4:3:acmeapp")).toBeNull();
    expect(c.get("k", "v1|0:0:4:3:acmeapp")).toBeNull();
    expect(c.get("other", "v1|0:1:4:3:acmeapp")).toBeNull();
    const b = bytes(12);
    c.set("k", "v2", b);
    expect(c.get("k", "v1|0:1:4:3:acmeapp")).toBeNull();
    expect(c.get("k", "v2")).toBe(b);
  });

  test("least recently used answers go past the bound; one larger than the bound is not kept", () => {
    const c = new GraphCache(3000);
    c.set("a", "s", bytes(1000));
    c.set("b", "s", bytes(1000));
    expect(c.get("a", "s")).not.toBeNull();
    c.set("c", "s", bytes(1000));
    expect(c.get("b", "s")).toBeNull();
    expect(c.get("a", "s")).not.toBeNull();
    expect(c.get("c", "s")).not.toBeNull();
    expect(c.size).toBeLessThanOrEqual(3000);
    c.set("huge", "s", bytes(5000));
    expect(c.get("huge", "s")).toBeNull();
    expect(c.get("a", "s")).not.toBeNull();
  });
});
