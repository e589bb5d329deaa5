import { expect, test } from "bun:test";
import { ByteLru } from "../../../src/storage/lru.ts";

const sized = (evicted: string[] = []) =>
  new ByteLru<string, string>(
    10,
    (v) => v.length,
    (k) => evicted.push(k),
  );

test("evicts least recently used entries once over the byte budget", () => {
  const evicted: string[] = [];
  const lru = sized(evicted);
  lru.set("a", "xxxx");
  lru.set("b", "xxxx");
  lru.get("a");
  lru.set("c", "xxxx");
  expect({ a: lru.has("a"), b: lru.has("b"), c: lru.has("c"), bytes: lru.bytes, size: lru.size, evicted }).toEqual({
    a: true,
    b: false,
    c: true,
    bytes: 8,
    size: 2,
    evicted: ["b"],
  });
});

test("replacing a key re-counts its bytes", () => {
  const lru = sized();
  lru.set("a", "xxxxxxxx");
  lru.set("a", "x");
  lru.set("b", "xxxxxxxxx");
  expect({ a: lru.get("a"), b: lru.get("b"), bytes: lru.bytes }).toEqual({ a: "x", b: "xxxxxxxxx", bytes: 10 });
});

test("a value larger than the budget is not kept and evicts nothing", () => {
  const evicted: string[] = [];
  const lru = sized(evicted);
  lru.set("a", "xx");
  lru.set("big", "x".repeat(11));
  expect({ big: lru.has("big"), a: lru.has("a"), bytes: lru.bytes, evicted }).toEqual({ big: false, a: true, bytes: 2, evicted: ["big"] });
});

test("delete, deleteWhere and clear release bytes and report evictions", () => {
  const evicted: string[] = [];
  const lru = sized(evicted);
  for (const k of ["p1", "p2", "q1"]) lru.set(k, "x");
  expect(lru.delete("q1")).toBe(true);
  expect(lru.delete("q1")).toBe(false);
  lru.deleteWhere((k) => k.startsWith("p1"));
  expect({ bytes: lru.bytes, evicted }).toEqual({ bytes: 1, evicted: ["q1", "p1"] });
  lru.clear();
  expect({ bytes: lru.bytes, size: lru.size }).toEqual({ bytes: 0, size: 0 });
});

test("a read measures the value again: growth since it was stored evicts older entries", () => {
  const evicted: string[] = [];
  const lru = new ByteLru<string, { n: number }>(
    10,
    (v) => v.n,
    (k) => evicted.push(k),
  );
  const a = { n: 2 };
  lru.set("a", a);
  lru.set("b", { n: 4 });
  lru.set("c", { n: 2 });
  a.n = 6; // "a" built a table after it was cached
  expect(lru.get("a")).toBe(a);
  expect({ bytes: lru.bytes, a: lru.has("a"), b: lru.has("b"), c: lru.has("c"), evicted }).toEqual({ bytes: 8, a: true, b: false, c: true, evicted: ["b"] });
  a.n = 11; // now larger than the whole budget: handed out once more, then no longer kept
  expect(lru.get("a")).toBe(a);
  expect({ bytes: lru.bytes, a: lru.has("a"), evicted }).toEqual({ bytes: 2, a: false, evicted: ["b", "a"] });
});
