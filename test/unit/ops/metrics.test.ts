// The Prometheus registry (services/ops/metrics.ts): the text exposition format, idempotent
// registration, conflicting registrations refused, collectors run per scrape and isolated.
import { describe, expect, test } from "bun:test";
import { Registry } from "../../../src/services/telemetry/metrics.ts";

/** The sample lines (no comments) of a rendering. */
const samples = (text: string) => text.split("\n").filter((l) => l && !l.startsWith("#"));

describe("text exposition format", () => {
  test("counters, gauges and labels render with HELP and TYPE, label values escaped", async () => {
    const r = new Registry();
    const c = r.counter("t_requests_total", "Requests\nby route", ["route"]);
    c.inc({ route: '/a"b\\c' });
    c.inc({ route: '/a"b\\c' }, 2);
    r.gauge("t_depth", "Depth").set(7);
    const text = await r.render();
    expect(text).toContain("# HELP t_requests_total Requests\\nby route\n# TYPE t_requests_total counter\n");
    expect(text).toContain('t_requests_total{route="/a\\"b\\\\c"} 3\n');
    expect(text).toContain("# TYPE t_depth gauge\nt_depth 7\n");
    expect(text.endsWith("\n")).toBe(true);
  });

  test("histograms are cumulative, with +Inf, _sum and _count", async () => {
    const r = new Registry();
    const h = r.histogram("t_seconds", "Latency", ["op"], [0.1, 1]);
    for (const v of [0.05, 0.1, 0.5, 3]) h.observe({ op: "get" }, v);
    expect(samples(await r.render())).toEqual([
      't_seconds_bucket{op="get",le="0.1"} 2',
      't_seconds_bucket{op="get",le="1"} 3',
      't_seconds_bucket{op="get",le="+Inf"} 4',
      't_seconds_sum{op="get"} 3.65',
      't_seconds_count{op="get"} 4',
    ]);
  });
});

describe("registration", () => {
  test("the same name, type and labels answer the same metric", () => {
    const r = new Registry();
    const a = r.gauge("t_g", "g", ["kind"]);
    const b = r.gauge("t_g", "g again", ["kind"]);
    expect(b).toBe(a);
  });

  test("another type or other labels under a known name are refused", () => {
    const r = new Registry();
    r.gauge("t_g", "g", ["kind"]);
    expect(() => r.counter("t_g", "c", ["kind"])).toThrow(/already registered/);
    expect(() => r.gauge("t_g", "g", ["other"])).toThrow(/already registered/);
  });

  test("malformed names and reserved labels are refused", () => {
    const r = new Registry();
    expect(() => r.counter("9bad", "x")).toThrow(/invalid metric name/);
    expect(() => r.counter("t_x", "x", ["le"])).toThrow(/invalid label/);
    expect(() => r.counter("t_y", "x", ["bad-label"])).toThrow(/invalid label/);
  });
});

describe("collectors", () => {
  test("run before each scrape; the newest registration under an id wins", async () => {
    const r = new Registry();
    const g = r.gauge("t_waiting", "waiting");
    let n = 0;
    r.collect("w", () => g.set(++n));
    expect(samples(await r.render())).toContain("t_waiting 1");
    r.collect("w", () => g.set(100));
    expect(samples(await r.render())).toContain("t_waiting 100");
  });

  test("a failing collector is reported and does not stop the others", async () => {
    const r = new Registry();
    const g = r.gauge("t_ok", "ok");
    const seen: string[] = [];
    r.collect("broken", () => {
      throw new Error("boom");
    });
    r.collect("fine", () => g.set(1));
    const text = await r.render((id) => seen.push(id));
    expect(seen).toEqual(["broken"]);
    expect(samples(text)).toContain("t_ok 1");
    expect(samples(text)).toContain('svc_metrics_collector_errors{collector="broken"} 1');
  });

  test("uncollect with the function removes only that registration", async () => {
    const r = new Registry();
    const g = r.gauge("t_v", "v");
    const first = () => g.set(1);
    const second = () => g.set(2);
    r.collect("v", first);
    r.collect("v", second);
    r.uncollect("v", first);
    expect(samples(await r.render())).toContain("t_v 2");
    r.uncollect("v", second);
    g.set(0);
    expect(samples(await r.render())).toContain("t_v 0");
  });
});
