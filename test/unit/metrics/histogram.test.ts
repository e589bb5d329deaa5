// The metric buckets' fixed histogram and the bucket cover of a window.
import { describe, expect, test } from "bun:test";
import {
  addInto,
  decodeInto,
  dense,
  densePercentile,
  encode,
  mergeInto,
  observe,
  percentile,
  slotOf,
  slotValue,
  SLOTS,
  type Histogram,
} from "../../../src/services/metrics/histogram.ts";
import { coverOf } from "../../../src/services/metrics/summary.ts";

describe("histogram", () => {
  test("small durations are exact; larger ones within about 3%", () => {
    for (let ms = 0; ms < 32; ms++) expect(slotValue(slotOf(ms))).toBe(ms);
    for (const ms of [32, 33, 47, 100, 999, 1000, 12_345, 600_000, 2 ** 31]) {
      const v = slotValue(slotOf(ms));
      expect(Math.abs(v - ms) / ms).toBeLessThan(0.035);
    }
    expect(slotOf(-5)).toBe(0);
    expect(slotOf(Number.NaN)).toBe(0);
    expect(slotOf(2 ** 40)).toBe(SLOTS - 1);
    for (let ms = 1; ms < 1e7; ms = Math.ceil(ms * 1.07)) expect(slotOf(ms)).toBeGreaterThanOrEqual(slotOf(ms - 1));
  });

  test("nearest-rank percentiles; null when empty", () => {
    const h: Histogram = new Map();
    expect(percentile(h, 50)).toBeNull();
    for (let i = 1; i <= 100; i++) observe(h, i < 32 ? i : 20);
    observe(h, 5000);
    expect(percentile(h, 50)).toBe(20);
    expect(Math.abs(percentile(h, 100)! - 5000) / 5000).toBeLessThan(0.035);
  });

  test("encode and decode round-trip; merging adds; malformed bytes are ignored", () => {
    const a: Histogram = new Map();
    observe(a, 3, 2);
    observe(a, 900);
    const b: Histogram = new Map();
    decodeInto(b, encode(a));
    expect(b).toEqual(a);
    mergeInto(b, a);
    expect(b.get(slotOf(3))).toBe(4);
    // A slot past the last one stops decoding; so does a varint that never ends.
    const c: Histogram = new Map();
    decodeInto(c, Uint8Array.from([7, 2, 0xff, 0x0f, 3]));
    expect([...c]).toEqual([[7, 2]]);
    const d: Histogram = new Map();
    decodeInto(d, Uint8Array.from([5, 1, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    expect([...d]).toEqual([[5, 1]]);
    // Counts beyond 32 bits survive.
    const big: Histogram = new Map([[SLOTS - 1, 2 ** 40 + 3]]);
    const e: Histogram = new Map();
    decodeInto(e, encode(big));
    expect(e).toEqual(big);
  });

  test("the dense accumulator answers what the map answers", () => {
    const acc = dense();
    const all: Histogram = new Map();
    for (let b = 0; b < 50; b++) {
      const h: Histogram = new Map();
      for (let i = 0; i < 40; i++) observe(h, (b * 37 + i * 11) % 3000, 1 + (i % 3));
      mergeInto(all, h);
      addInto(acc, encode(h));
    }
    for (const p of [1, 50, 90, 99, 100]) expect(densePercentile(acc, p)).toBe(percentile(all, p));
    expect(densePercentile(dense(), 50)).toBeNull();
  });
});

describe("coverOf", () => {
  const MIN = 60_000;
  const HOUR = 60 * MIN;
  const DAY = 24 * HOUR;
  /** Every minute start covered, each once. */
  function minutes(ranges: ReturnType<typeof coverOf>): number[] {
    const out: number[] = [];
    for (const r of ranges) for (let t = r.from; t < r.to; t += r.grain * MIN) for (let m = 0; m < r.grain; m++) out.push(t + m * MIN);
    return out.sort((x, y) => x - y);
  }
  test("covers exactly the minutes overlapping the window, with few buckets", () => {
    const from = Date.UTC(2025, 0, 1, 13, 7, 30);
    const to = Date.UTC(2025, 0, 4, 2, 3, 10);
    const ms = minutes(coverOf(from, to));
    expect(ms[0]).toBe(Date.UTC(2025, 0, 1, 13, 7));
    expect(ms[ms.length - 1]).toBe(Date.UTC(2025, 0, 4, 2, 3));
    expect(new Set(ms).size).toBe(ms.length);
    expect(ms.length).toBe((Date.UTC(2025, 0, 4, 2, 4) - Date.UTC(2025, 0, 1, 13, 7)) / MIN);
    const year = coverOf(Date.UTC(2024, 5, 1, 10, 30, 5), Date.UTC(2025, 5, 1, 10, 30, 5));
    expect(year.length).toBeLessThanOrEqual(5);
    expect(coverOf(5 * DAY, 5 * DAY)).toEqual([]);
  });
});
