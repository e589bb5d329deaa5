// One operation's S3 requests from the fault proxy's trace, split by phase: requests, bytes, and
// the serial time (≤ 1 request in flight) within the operation's window. Used by bench/s3.ts
// (per timed operation) and by the same reading of bench/lib/s3-trace.ts timelines.
import type { TraceEntry } from "../../test/helpers/fault-proxy.ts";

export interface PhaseCount {
  requests: number;
  mib: number;
  /** Sum of request durations (ms). */
  requestMs: number;
}

export interface Timeline {
  /** The operation's window (ms, proxy clock). */
  wallMs: number;
  /** Time with no request in flight (ms). */
  idleMs: number;
  /** Time with exactly one request in flight (ms). */
  singleMs: number;
  /** idle + single: the serial gaps, where the next read waited for the previous one or for CPU. */
  serialMs: number;
  peakInFlight: number;
  /** idx GETs, ranged pack GETs, whole pack GETs, other (PUT, LIST, HEAD, ...). */
  phases: Record<string, PhaseCount>;
  /** Until the first pack read (ms after the window opened): listing and idx loading. */
  firstPackReadMs: number | null;
  /** Serial time before the first pack read (ms). */
  serialBeforePackMs: number;
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

function phaseOf(e: TraceEntry): string {
  const path = e.path.split("?")[0]!;
  if (e.method === "GET" && path.endsWith(".idx")) return "idx";
  if (e.method === "GET" && path.endsWith(".pack")) return e.range ? "pack range" : "pack whole";
  return e.method === "GET" ? "get other" : e.method.toLowerCase();
}

/** The timeline of `entries` within [from, to] (the proxy's clock). */
export function timeline(entries: TraceEntry[], from: number, to: number): Timeline {
  const phases: Record<string, PhaseCount> = {};
  for (const e of entries) {
    const p = (phases[phaseOf(e)] ??= { requests: 0, mib: 0, requestMs: 0 });
    p.requests++;
    p.mib += e.bytesDown / 2 ** 20;
    p.requestMs += e.end - e.start;
  }
  for (const p of Object.values(phases)) {
    p.mib = round(p.mib, 2);
    p.requestMs = Math.round(p.requestMs);
  }
  const start = Math.min(from, ...entries.map((e) => e.start));
  const end = Math.max(to, ...entries.map((e) => e.end));
  // Sweep over start/end events: time at each in-flight level.
  const events: [number, number][] = [];
  for (const e of entries) events.push([e.start, 1], [Math.max(e.end, e.start), -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const firstPack = entries.filter((e) => phaseOf(e).startsWith("pack")).reduce((m, e) => Math.min(m, e.start), Infinity);
  let level = 0;
  let peak = 0;
  let at = start;
  let idle = 0;
  let single = 0;
  let serialBefore = 0;
  const add = (t0: number, t1: number) => {
    if (t1 <= t0) return;
    if (level === 0) idle += t1 - t0;
    else if (level === 1) single += t1 - t0;
    if (level <= 1 && t0 < firstPack) serialBefore += Math.min(t1, firstPack) - t0;
  };
  for (const [t, d] of events) {
    add(at, t);
    at = Math.max(at, t);
    level += d;
    peak = Math.max(peak, level);
  }
  add(at, end);
  return {
    wallMs: Math.round(end - start),
    idleMs: Math.round(idle),
    singleMs: Math.round(single),
    serialMs: Math.round(idle + single),
    peakInFlight: peak,
    phases,
    firstPackReadMs: Number.isFinite(firstPack) ? Math.round(firstPack - start) : null,
    serialBeforePackMs: Math.round(serialBefore),
  };
}
