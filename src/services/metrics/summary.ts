// GET /v1/orgs/{org}/metrics and GET /v1/orgs/{org}/usage (DECISIONS §3; SPEC §2.4, §5.1 org:read).
import { Invalid } from "../../errors.ts";
import { requireOrgFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { hostedMinutesIn } from "../billing/minutes.ts";
import { now, type Ctx } from "../context.ts";
import { addInto, dense, densePercentile, type Dense } from "./histogram.ts";
import { flushMetrics, METRIC_KINDS, type MetricKind } from "./record.ts";
import type { KindSummary, Metrics, Usage } from "./schemas.ts";
import { bucketsIn, liveBytesPerRepo, type BucketRange } from "./store.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The default window of a metrics summary. */
export const DEFAULT_METRICS_WINDOW_MS = DAY;
/** Kinds whose bytes are transfer to and from git clients. */
const TRANSFER_KINDS: readonly MetricKind[] = ["git.clone", "git.fetch", "git.push"];

/** An epoch-milliseconds query value, or `fallback` when absent; 400 for anything else. */
function millisParam(name: string, value: unknown, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = typeof value === "string" && /^-?\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw Invalid(`${name} must be a time in epoch milliseconds`);
  return n;
}

/** `from` and `to` of a summary; 400 when they are not times or the range ends before it starts. */
function windowOf(q: { from?: unknown; to?: unknown }, defaultFrom: (to: number) => number): { from: number; to: number } {
  const to = millisParam("to", q.to, now());
  const from = millisParam("from", q.from, defaultFrom(to));
  if (to < from) throw Invalid("the range ends before it starts: to is earlier than from");
  return { from, to };
}

const ceilTo = (t: number, size: number) => Math.ceil(t / size) * size;
const floorTo = (t: number, size: number) => Math.floor(t / size) * size;

/**
 * The buckets that together hold exactly the minutes overlapping [from, to) (a window is widened
 * to whole minutes, the resolution of the buckets): whole days, then
 * whole hours at the ends, then single minutes at the very ends. A year is about 365 day buckets,
 * 46 hour buckets and 118 minute buckets per kind.
 */
export function coverOf(from: number, to: number): BucketRange[] {
  const a = floorTo(from, MINUTE);
  const b = ceilTo(to, MINUTE);
  if (a >= b) return [];
  const out: BucketRange[] = [];
  const hoursAndMinutes = (x: number, y: number) => {
    if (x >= y) return;
    const h1 = ceilTo(x, HOUR);
    const h2 = floorTo(y, HOUR);
    if (h1 < h2) {
      out.push({ grain: 60, from: h1, to: h2 });
      if (x < h1) out.push({ grain: 1, from: x, to: h1 });
      if (h2 < y) out.push({ grain: 1, from: h2, to: y });
    } else {
      out.push({ grain: 1, from: x, to: y });
    }
  };
  const d1 = ceilTo(a, DAY);
  const d2 = floorTo(b, DAY);
  if (d1 < d2) {
    out.push({ grain: 1440, from: d1, to: d2 });
    hoursAndMinutes(a, d1);
    hoursAndMinutes(d2, b);
  } else {
    hoursAndMinutes(a, b);
  }
  return out;
}

/** Per-kind totals and merged histograms over the buckets of [from, to). */
async function summarize(ctx: Ctx, orgId: string, kinds: readonly MetricKind[], from: number, to: number) {
  const totals = new Map<string, { count: number; bytes: number; msSum: number; hist: Dense }>();
  for (const k of kinds) totals.set(k, { count: 0, bytes: 0, msSum: 0, hist: dense() });
  for (const row of await bucketsIn(ctx.db.read, orgId, kinds, coverOf(from, to))) {
    const t = totals.get(row.kind);
    if (!t) continue;
    t.count += row.count;
    t.bytes += row.bytes;
    t.msSum += row.msSum;
    addInto(t.hist, row.hist);
  }
  return totals;
}

/**
 * GET /v1/orgs/{org}/metrics?from=&to=: for every kind, the operations recorded in the minutes
 * overlapping [from, to) (epoch ms; default the last 24 hours): count, bytes moved, summed duration, and
 * p50/p99 duration in whole milliseconds from the buckets' histograms (null when count is 0).
 */
export async function getMetrics(ctx: Ctx, actor: Principal, orgName: string, q: { from?: unknown; to?: unknown }): Promise<Metrics> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  const { from, to } = windowOf(q, (t) => t - DEFAULT_METRICS_WINDOW_MS);
  await flushMetrics(ctx);
  const totals = await summarize(ctx, org.id, METRIC_KINDS, from, to);
  const kinds: Record<string, KindSummary> = {};
  for (const k of METRIC_KINDS) {
    const t = totals.get(k)!;
    kinds[k] = { count: t.count, bytes: t.bytes, ms_sum: t.msSum, p50_ms: densePercentile(t.hist, 50), p99_ms: densePercentile(t.hist, 99) };
  }
  return { from, to, kinds };
}

/** The start of the UTC calendar month holding `t`. */
function monthStart(t: number): number {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/**
 * GET /v1/orgs/{org}/usage?from=&to=: bytes stored now (live packs and their indexes, per
 * repository), and over [from, to) (default: this UTC calendar month so far) the bytes moved by
 * git clients (clone, fetch, push) and the minutes of hosted CI jobs that started in it.
 */
export async function getUsage(ctx: Ctx, actor: Principal, orgName: string, q: { from?: unknown; to?: unknown }): Promise<Usage> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  const { from, to } = windowOf(q, monthStart);
  await flushMetrics(ctx);
  const [repos, totals, minutes] = await Promise.all([
    liveBytesPerRepo(ctx.db.read, org.id),
    summarize(ctx, org.id, TRANSFER_KINDS, from, to),
    hostedMinutesIn(ctx.db.read, org.id, from, to, now()),
  ]);
  let transfer = 0;
  for (const t of totals.values()) transfer += t.bytes;
  return { from, to, storage_bytes: repos.reduce((n, r) => n + r.bytes, 0), repos, transfer_bytes: transfer, ci_minutes_used: minutes };
}
