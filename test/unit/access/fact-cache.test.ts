// The fact cache must never serve a fact the database no longer holds: any write of our own
// connection, and any commit of another connection, drops everything (see fact-cache.ts).
import { describe, expect, test } from "bun:test";
import { FactCache } from "../../../src/services/access/fact-cache.ts";

function counters() {
  const c = { own: 0, external: 0, now: 1000 };
  return { c, probes: { own: () => c.own, external: () => c.external }, clock: () => c.now };
}

describe("FactCache", () => {
  test("serves a cached value while nothing changed", () => {
    const { probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    const load = () => ++loads;
    expect(cache.get("s", "k", load)).toBe(1);
    cache.fresh();
    expect(cache.get("s", "k", load)).toBe(1);
    expect(loads).toBe(1);
  });

  test("a write through our own connection invalidates at the next request", () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    cache.get("token", "t1", () => ++loads);
    c.own++;
    cache.fresh();
    expect(cache.get("token", "t1", () => ++loads)).toBe(2);
  });

  test("a commit by another process invalidates every request starting 1 ms later", () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    cache.get("member", "m1", () => ++loads);
    c.external++;
    c.now += 1;
    cache.fresh();
    expect(cache.get("member", "m1", () => ++loads)).toBe(2);
  });

  test("null results are cached and invalidated like any other", () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    expect(cache.get<string | null>("org", "x", () => null)).toBeNull();
    expect(cache.get<string | null>("org", "x", () => "created")).toBeNull();
    c.own++;
    cache.fresh();
    expect(cache.get<string | null>("org", "x", () => "created")).toBe("created");
  });

  test("without a new request, validation still expires after its window", () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    cache.get("s", "k", () => ++loads);
    c.own++;
    expect(cache.get("s", "k", () => ++loads)).toBe(1); // same request, same millisecond
    c.now += 1;
    expect(cache.get("s", "k", () => ++loads)).toBe(2);
  });

  test("spaces and pairs keep their keys apart, and a change drops them all", () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    expect(cache.get("org", "a", () => "org a")).toBe("org a");
    expect(cache.get("token", "a", () => "token a")).toBe("token a");
    expect(cache.getPair("person", "u1", "o1", () => "u1 in o1")).toBe("u1 in o1");
    expect(cache.getPair("person", "u1", "o2", () => "u1 in o2")).toBe("u1 in o2");
    expect(cache.getPair("person", "u1", "o1", () => "reloaded")).toBe("u1 in o1");
    c.own++;
    cache.fresh();
    expect(cache.getPair("person", "u1", "o1", () => "reloaded")).toBe("reloaded");
    expect(cache.get("org", "a", () => "reloaded")).toBe("reloaded");
  });
});
