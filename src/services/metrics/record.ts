// Operation metrics (git.clone, git.fetch, git.push, api.commit, api.read, …) kept as per-org
// buckets of a minute, an hour and a day, each with a fixed duration histogram, so a summary over a
// year reads a few hundred rows per kind however many operations there were (DECISIONS §3).
//
// Why operations are counted in memory and written in batches: `api.read` is counted on every API
// read, whose path is benchmarked against bare Bun.serve, and every write empties the fact cache
// (services/access/fact-cache.ts); a write per operation would cost both. The counts of the last
// few seconds are written by the next operation after METRIC_FLUSH_MS, before every summary, and at
// shutdown; a crash loses at most those seconds of metrics, never anything else.
import type { Tx } from "../../db/database.ts";
import { now, type Ctx } from "../context.ts";
import { decodeInto, encode, mergeInto, observe, type Histogram } from "./histogram.ts";
import { bucketAt, putBucket } from "./store.ts";
import { findOrg } from "../access/lookup.ts";

/** The metric kinds DECISIONS §3 names. */
export type MetricKind = "git.clone" | "git.fetch" | "git.push" | "api.commit" | "api.read" | "mirror.sync" | "mirror.freshness" | "webhook.delivery";

/** Every kind, in the order summaries list them. */
export const METRIC_KINDS: readonly MetricKind[] = [
  "git.clone",
  "git.fetch",
  "git.push",
  "api.commit",
  "api.read",
  "mirror.sync",
  "mirror.freshness",
  "webhook.delivery",
];

/** One measured operation. */
export interface MetricSample {
  orgId: string;
  repoId: string | null;
  kind: MetricKind;
  bytes: number;
  durationMs: number;
}

const MINUTE = 60_000;
/** Bucket lengths in minutes: every operation lands in one bucket of each. */
export const GRAINS = [1, 60, 1440] as const;
/** Counted operations wait at most this long (while operations arrive) before they are written. */
export const METRIC_FLUSH_MS = 5_000;

/** Operations of one kind in one org during one minute, not yet written. */
interface Pending {
  orgId: string;
  kind: string;
  start: number;
  count: number;
  bytes: number;
  msSum: number;
  hist: Histogram;
}

/** The counts of operations not yet written, by org, kind and minute (`ctx.buffers.usage`). */
export interface UsageBuffer {
  pending: Map<string, Pending>;
  flushedAt: number;
  flushing: Promise<void> | null;
  /** The flush scheduled for counts that arrived with no later operation to write them. */
  timer: ReturnType<typeof setTimeout> | null;
}

/** An empty usage buffer (one per context, made by src/runtime.ts). */
export function usageBuffer(): UsageBuffer {
  return { pending: new Map(), flushedAt: now(), flushing: null, timer: null };
}

function stateOf(ctx: Ctx): UsageBuffer {
  return ctx.buffers.usage;
}

/** Adds one operation to the in-memory counts of its minute. */
function add(into: Map<string, Pending>, orgId: string, kind: string, start: number, count: number, bytes: number, msSum: number, hist: Histogram): void {
  const key = `${orgId}\u0000${kind}\u0000${start}`;
  const p = into.get(key);
  if (p) {
    p.count += count;
    p.bytes += bytes;
    p.msSum += msSum;
    mergeInto(p.hist, hist);
  } else {
    into.set(key, { orgId, kind, start, count, bytes, msSum, hist: new Map(hist) });
  }
}

/** Counts one operation in memory; written within METRIC_FLUSH_MS (see the header). */
export function noteMetric(ctx: Ctx, m: MetricSample): void {
  // Prometheus (/metrics) sees every operation at once; the buckets below are the stored history.
  ctx.telemetry.observeOperation(m.kind, m.bytes, m.durationMs);
  const s = stateOf(ctx);
  const t = now();
  const ms = Math.max(0, Math.round(m.durationMs));
  const key = `${m.orgId}\u0000${m.kind}\u0000${t - (t % MINUTE)}`;
  const p = s.pending.get(key);
  if (p) {
    p.count++;
    p.bytes += Math.max(0, Math.round(m.bytes));
    p.msSum += ms;
    observe(p.hist, ms);
  } else {
    const hist: Histogram = new Map();
    observe(hist, ms);
    s.pending.set(key, { orgId: m.orgId, kind: m.kind, start: t - (t % MINUTE), count: 1, bytes: Math.max(0, Math.round(m.bytes)), msSum: ms, hist });
  }
  // Why not awaited: metrics are bookkeeping, not part of the operation; a failure is only logged.
  if (t - s.flushedAt >= METRIC_FLUSH_MS && !s.flushing)
    void flushMetrics(ctx).catch((error) => ctx.log.warn("metrics not recorded", { error: String(error) }));
  // Why a timer as well: without later operations nothing else would write these counts (a quiet
  // server would hold them until shutdown, and a crash would lose them). Real time, not the
  // service clock: this is the process's own bookkeeping.
  else if (!s.timer) {
    s.timer = setTimeout(() => {
      s.timer = null;
      void flushMetrics(ctx).catch((error) => ctx.log.warn("metrics not recorded", { error: String(error) }));
    }, METRIC_FLUSH_MS);
    s.timer.unref?.();
  }
}

/** Records one operation (counted in memory, written within METRIC_FLUSH_MS). */
export function recordMetric(ctx: Ctx, m: MetricSample): Promise<void> {
  noteMetric(ctx, m);
  return Promise.resolve();
}

/** Records one operation inside an open transaction (written with it). */
export async function recordMetricIn(ctx: Ctx, tx: Tx, m: MetricSample): Promise<void> {
  ctx.telemetry.observeOperation(m.kind, m.bytes, m.durationMs);
  const t = now();
  const hist: Histogram = new Map();
  const ms = Math.max(0, Math.round(m.durationMs));
  observe(hist, ms);
  const one = new Map<string, Pending>();
  add(one, m.orgId, m.kind, t - (t % MINUTE), 1, Math.max(0, Math.round(m.bytes)), ms, hist);
  await writeBuckets(tx, one.values());
}

/** Adds minute counts into their minute, hour and day buckets. */
async function writeBuckets(tx: Tx, minutes: Iterable<Pending>): Promise<void> {
  // Fold the minutes into every grain first, so each stored bucket is read and written once.
  const byBucket = new Map<string, Pending & { grain: number }>();
  for (const p of minutes) {
    for (const grain of GRAINS) {
      const size = grain * MINUTE;
      const start = p.start - (p.start % size);
      const key = `${p.orgId}\u0000${p.kind}\u0000${grain}\u0000${start}`;
      const b = byBucket.get(key);
      if (b) {
        b.count += p.count;
        b.bytes += p.bytes;
        b.msSum += p.msSum;
        mergeInto(b.hist, p.hist);
      } else {
        byBucket.set(key, { orgId: p.orgId, kind: p.kind, grain, start, count: p.count, bytes: p.bytes, msSum: p.msSum, hist: new Map(p.hist) });
      }
    }
  }
  for (const b of byBucket.values()) {
    const stored = await bucketAt(tx, b);
    if (stored) {
      decodeInto(b.hist, stored.hist);
      b.count += stored.count;
      b.bytes += stored.bytes;
      b.msSum += stored.msSum;
    }
    await putBucket(tx, { orgId: b.orgId, kind: b.kind, grain: b.grain, start: b.start, count: b.count, bytes: b.bytes, msSum: b.msSum, hist: encode(b.hist) });
  }
}

/** Writes every counted operation in one transaction (before summaries, and at shutdown). */
export async function flushMetrics(ctx: Ctx): Promise<void> {
  const s = stateOf(ctx);
  if (s.timer) {
    clearTimeout(s.timer);
    s.timer = null;
  }
  // One flush at a time: a second caller waits for the running one, then writes what came since.
  while (s.flushing) await s.flushing;
  s.flushedAt = now();
  if (s.pending.size === 0) return;
  const batch = s.pending;
  s.pending = new Map();
  s.flushing = ctx.db
    .transaction((tx) => writeBuckets(tx, batch.values()))
    .catch((error) => {
      // Nothing was written: the counts go back for the next flush.
      for (const p of batch.values()) add(s.pending, p.orgId, p.kind, p.start, p.count, p.bytes, p.msSum, p.hist);
      throw error;
    })
    .finally(() => {
      s.flushing = null;
    });
  await s.flushing;
}

/**
 * Counts a successful API read of an org's resources (`GET /v1/orgs/{org}/…`) as `api.read`;
 * reads outside an org (profiles, search) belong to no org's metrics. Never throws, never waits.
 */
export function noteApiRead(ctx: Ctx, method: string, path: string, status: number, durationMs: number, bytes: number): void {
  if ((method !== "GET" && method !== "HEAD") || status >= 400 || !path.startsWith("/v1/orgs/")) return;
  const end = path.indexOf("/", 9);
  const name = path.slice(9, end < 0 ? undefined : end);
  if (!name) return;
  const note = (org: { id: string } | null) => {
    if (org) noteMetric(ctx, { orgId: org.id, repoId: null, kind: "api.read", bytes, durationMs });
  };
  try {
    const org = findOrg(ctx, name);
    if (org instanceof Promise) org.then(note, () => undefined);
    else note(org);
  } catch {
    // Bookkeeping only: a failed lookup loses one count.
  }
}
