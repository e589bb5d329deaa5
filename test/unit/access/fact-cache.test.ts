// The fact cache must never serve a fact the database no longer holds: any write of our own
// connection, and any commit of another connection, drops everything (see fact-cache.ts).
import { describe, expect, test } from "bun:test";
import { FactCache } from "../../../src/services/access/fact-cache.ts";

function counters() {
  const c = { own: 0, external: 0, now: 1000 };
  return { c, probes: { own: () => c.own, external: () => c.external }, clock: () => c.now };
}

describe("FactCache", async () => {
  test("serves a cached value while nothing changed", async () => {
    const { probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get("s", "k", load)).toBe(1);
    cache.fresh();
    expect(await cache.get("s", "k", load)).toBe(1);
    expect(loads).toBe(1);
  });

  test("a write through our own connection invalidates at the next request", async () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    await cache.get("token", "t1", async () => ++loads);
    c.own++;
    cache.fresh();
    expect(await cache.get("token", "t1", async () => ++loads)).toBe(2);
  });

  test("a commit by another process invalidates every request starting 1 ms later", async () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    await cache.get("member", "m1", async () => ++loads);
    c.external++;
    c.now += 1;
    cache.fresh();
    expect(await cache.get("member", "m1", async () => ++loads)).toBe(2);
  });

  test("null results are cached and invalidated like any other", async () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    expect(await cache.get<string | null>("org", "x", async () => null)).toBeNull();
    expect(await cache.get<string | null>("org", "x", async () => "created")).toBeNull();
    c.own++;
    cache.fresh();
    expect(await cache.get<string | null>("org", "x", async () => "created")).toBe("created");
  });

  test("without a new request, validation still expires after its window", async () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    await cache.get("s", "k", async () => ++loads);
    c.own++;
    expect(await cache.get("s", "k", async () => ++loads)).toBe(1); // same request, same millisecond
    c.now += 1;
    expect(await cache.get("s", "k", async () => ++loads)).toBe(2);
  });

  test("a failed probe (the database unreachable) validates nothing: the next lookup, even in the same millisecond, probes again", async () => {
    const { c, clock } = counters();
    let down = false;
    const probes = {
      own: () => c.own,
      external: () => {
        if (down) throw new Error("Cannot use a closed database");
        return c.external;
      },
    };
    const cache = new FactCache(probes, clock);
    expect(await cache.get("org", "acme", async () => "private org")).toBe("private org");
    down = true;
    c.now += 1;
    cache.fresh();
    expect(() => cache.get("org", "acme", async () => "reloaded")).toThrow("closed database");
    // The next request in the same millisecond: never the fact cached before the failure.
    cache.fresh();
    expect(() => cache.get("org", "acme", async () => "reloaded")).toThrow("closed database");
    down = false;
    cache.fresh();
    expect(await cache.get("org", "acme", async () => "reloaded")).toBe("private org");
  });

  test("a failed load (the database unreachable) leaves nothing validated: the next lookup in the same millisecond probes again", async () => {
    const { c, clock } = counters();
    let probes = 0;
    const cache = new FactCache({ own: () => c.own, external: () => (probes++, c.external) }, clock);
    expect(await cache.get("org", "acme", async () => "private org")).toBe("private org");
    const before = probes;
    // A credential lookup that misses the cache while the database is down: its error, never a cached answer.
    await expect(cache.get("token", "t1", async () => Promise.reject(new Error("connection refused")))).rejects.toThrow("connection refused");
    cache.get("org", "acme", async () => "reloaded");
    expect(probes).toBe(before + 1);
  });

  test("spaces and pairs keep their keys apart, and a change drops them all", async () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    expect(await cache.get("org", "a", async () => "org a")).toBe("org a");
    expect(await cache.get("token", "a", async () => "token a")).toBe("token a");
    expect(await cache.getPair("person", "u1", "o1", async () => "u1 in o1")).toBe("u1 in o1");
    expect(await cache.getPair("person", "u1", "o2", async () => "u1 in o2")).toBe("u1 in o2");
    expect(await cache.getPair("person", "u1", "o1", async () => "reloaded")).toBe("u1 in o1");
    c.own++;
    cache.fresh();
    expect(await cache.getPair("person", "u1", "o1", async () => "reloaded")).toBe("reloaded");
    expect(await cache.get("org", "a", async () => "reloaded")).toBe("reloaded");
  });

  test("a value loaded while a change cleared the cache is returned but not kept", async () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = cache.get("org", "a", async () => {
      await gate;
      return "read before the write";
    });
    // Another request starts after a write: validation clears the cache while the load is open.
    c.own++;
    cache.fresh();
    expect(await cache.get("org", "b", async () => "other")).toBe("other");
    release();
    expect(await slow).toBe("read before the write");
    expect(await cache.get("org", "a", async () => "fresh")).toBe("fresh");
  });

  test("an asynchronous external probe (a shared database) is awaited once per window; hits in the window stay synchronous", async () => {
    const c = { own: 0, external: 0, now: 1000, probes: 0 };
    let fail: Error | null = null;
    const probes = {
      own: () => c.own,
      external: async () => {
        c.probes++;
        await Promise.resolve();
        if (fail) throw fail;
        return c.external;
      },
    };
    const cache = new FactCache(probes, () => c.now, 5);
    let loads = 0;
    const load = async () => ++loads;
    // Concurrent first lookups share one probe.
    const [x, y] = await Promise.all([cache.get("s", "k", load), cache.get("s", "k", load)]);
    expect([x, y, c.probes, loads]).toEqual([1, 1, 1, 1]);
    // A new request within the external window: no probe, and the hit is not a promise.
    cache.fresh();
    c.now += 1;
    expect(cache.get("s", "k", load)).toBe(1);
    expect(c.probes).toBe(1);
    // Past the window: probed again; another node's commit moved the epoch, so the fact is reloaded.
    c.external++;
    c.now += 5;
    cache.fresh();
    const next = cache.get("s", "k", load);
    expect(next).toBeInstanceOf(Promise);
    expect(await next).toBe(2);
    expect(c.probes).toBe(2);
    // A failed probe fails the lookup (the database is down) and the next lookup probes again.
    c.now += 5;
    cache.fresh();
    fail = new Error("database unreachable");
    await expect(Promise.resolve(cache.get("s", "k", load))).rejects.toThrow("database unreachable");
    fail = null;
    expect(await cache.get("s", "k", load)).toBe(2);
    expect(c.probes).toBe(4);
  });

  test("getWithin on a shared database: the epoch is read at most once per staleMs for these facts, and only its move drops them", async () => {
    const c = { own: 0, external: 0, now: 1000, probes: 0 };
    const probes = {
      own: () => c.own,
      external: () => {
        c.probes++;
        return Promise.resolve(c.external);
      },
    };
    const cache = new FactCache(probes, () => c.now);
    let loads = 0;
    const load = async () => ++loads;
    // The first lookup (any) learns that the probe is asynchronous.
    expect(await cache.get("s", "k", async () => "strict")).toBe("strict");
    expect(await cache.getWithin("m", "k", load, 1000)).toBe(1);
    expect(c.probes).toBe(1);
    // Later requests within 1 s of that probe: no probe, a synchronous hit, although another node
    // committed and this process wrote (its own writes are not these facts' concern).
    c.external++;
    for (const dt of [10, 300, 600]) {
      c.now += dt;
      c.own++;
      cache.fresh();
      expect(cache.getWithin("m", "k", load, 1000)).toBe(1);
    }
    expect(c.probes).toBe(1);
    // A strict lookup in the same request still probes; the epoch moved, so both kinds reload.
    expect(await cache.get("s", "k", async () => "strict 2")).toBe("strict 2");
    expect(c.probes).toBe(2);
    expect(await cache.getWithin("m", "k", load, 1000)).toBe(2);
    // Past staleMs since the last probe: the next getWithin reads the epoch again.
    c.now += 1000;
    cache.fresh();
    expect(await cache.getWithin("m", "k", load, 1000)).toBe(2);
    expect(c.probes).toBe(3);
    c.external++;
    c.now += 1000;
    cache.fresh();
    expect(await cache.getWithin("m", "k", load, 1000)).toBe(3);
    expect(c.probes).toBe(4);
    // This process changed such a fact (and committed): dropWithin, and the next use reloads.
    cache.dropWithin();
    expect(await cache.getWithin("m", "k", load, 1000)).toBe(4);
    expect(c.probes).toBe(4);
  });

  test("getWithin with a synchronous probe (SQLite) is get: another process's commit and our own write are seen at once", async () => {
    const { c, probes, clock } = counters();
    const cache = new FactCache(probes, clock);
    let loads = 0;
    await cache.getWithin("m", "k", async () => ++loads, 1000);
    c.external++;
    c.now += 1;
    cache.fresh();
    expect(await cache.getWithin("m", "k", async () => ++loads, 1000)).toBe(2);
    c.own++;
    cache.fresh();
    expect(await cache.getWithin("m", "k", async () => ++loads, 1000)).toBe(3);
  });
  test("a local fact (its table outside the shared epoch) is cached on SQLite's probes and loaded every time on a shared database", async () => {
    const { c, probes, clock } = counters();
    const sqlite = new FactCache(probes, clock);
    let loads = 0;
    const load = async () => ++loads;
    expect(await sqlite.getLocal("open-issues", "r1", load)).toBe(1);
    sqlite.fresh();
    expect(await sqlite.getLocal("open-issues", "r1", load)).toBe(1);
    expect(await sqlite.getPairLocal("watch-level", "r1", "u1", load)).toBe(2);
    expect(await sqlite.getPairLocal("watch-level", "r1", "u1", load)).toBe(2);
    c.own++;
    sqlite.fresh();
    expect(await sqlite.getLocal("open-issues", "r1", load)).toBe(3);
    // A shared database: the probe answers a promise, and another node's write to these tables moves no epoch.
    const shared = new FactCache({ own: () => c.own, external: () => Promise.resolve(0) }, clock);
    loads = 0;
    expect(await shared.getLocal("open-issues", "r1", load)).toBe(1);
    expect(await shared.getLocal("open-issues", "r1", load)).toBe(2);
    expect(await shared.getPairLocal("watch-level", "r1", "u1", load)).toBe(3);
    expect(await shared.getPairLocal("watch-level", "r1", "u1", load)).toBe(4);
  });
});
