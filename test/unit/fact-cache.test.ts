// The fact cache must never serve a fact the database no longer holds: any write of our own
// connection, and any commit of another connection, drops everything (see fact-cache.ts).
import { describe, expect, test } from "bun:test";
import { FactCache } from "../../src/services/fact-cache.ts";

function counters() {
  const c = { own: 0, external: 0 };
  return { c, probes: { own: () => c.own, external: () => c.external } };
}

describe("FactCache", () => {
  test("serves a cached value while nothing changed", () => {
    const { probes } = counters();
    const cache = new FactCache(probes);
    let loads = 0;
    const load = () => ++loads;
    expect(cache.get("k", load)).toBe(1);
    cache.fresh();
    expect(cache.get("k", load)).toBe(1);
    expect(loads).toBe(1);
  });

  test("a write through our own connection invalidates at the next request", () => {
    const { c, probes } = counters();
    const cache = new FactCache(probes);
    let loads = 0;
    cache.get("token", () => ++loads);
    c.own++;
    cache.fresh();
    expect(cache.get("token", () => ++loads)).toBe(2);
  });

  test("a commit by another process invalidates at the next request", () => {
    const { c, probes } = counters();
    const cache = new FactCache(probes);
    let loads = 0;
    cache.get("member", () => ++loads);
    c.external++;
    cache.fresh();
    expect(cache.get("member", () => ++loads)).toBe(2);
  });

  test("null results are cached and invalidated like any other", () => {
    const { c, probes } = counters();
    const cache = new FactCache(probes);
    expect(cache.get<string | null>("org:x", () => null)).toBeNull();
    expect(cache.get<string | null>("org:x", () => "created")).toBeNull();
    c.own++;
    cache.fresh();
    expect(cache.get<string | null>("org:x", () => "created")).toBe("created");
  });

  test("without a new request, validation still expires after its window", async () => {
    const { c, probes } = counters();
    const cache = new FactCache(probes);
    let loads = 0;
    cache.get("k", () => ++loads);
    c.own++;
    await Bun.sleep(3); // the 1 ms validity window passes (this waits on time itself, not on an event)
    expect(cache.get("k", () => ++loads)).toBe(2);
  });
});
