// A kind of durable work (DESIGN.md "Background work"): its name in `jobs.kind` and the rules the
// engine runs it by. Each domain declares its kinds next to their handlers; `src/wiring.ts`
// hands each kind with its handler to `ctx.work.define`.
import type { Config } from "../../config.ts";

/** How a failed attempt is retried: a fixed list of waits, or doubling waits up to a cap. */
export type RetryRule = { readonly delaysMs: readonly number[] } | { readonly firstMs: number; readonly maxMs: number; readonly attempts: number };

export interface JobKind<P = unknown> {
  /** `jobs.kind`. */
  readonly name: string;
  /** Attempts in flight per node. */
  readonly concurrency: number;
  /** How long a claimed row is ours; renewed every leaseMs/3 while the handler runs. */
  readonly leaseMs: number;
  readonly retry: RetryRule;
  /** The attempt's signal aborts after this long. */
  readonly timeoutMs?: number;
  /** Per-key FIFO: one attempt per key at a time; later rows wait behind a retrying head. */
  readonly key?: (p: P) => string;
  /** At most one pending row per value: an enqueue finds it and folds into it (null: this payload never folds). */
  readonly unique?: (p: P) => string | null;
  /**
   * Periodic: `cluster` runs once per wall-clock slot across nodes (a row per slot); `node` is a
   * local timer with no row. A new schedule's first run is at the next slot, or at once with `immediate`.
   */
  readonly every?: { readonly ms: number | ((config: Config) => number); readonly scope: "cluster" | "node"; readonly immediate?: boolean };
}

/** The default retry: 2 min doubling to an hour, 8 attempts (the job queue's rule before the engine). */
export const DEFAULT_RETRY: RetryRule = Object.freeze({ firstMs: 120_000, maxMs: 3_600_000, attempts: 8 });

/**
 * Test-only switches, read once (the multi-node suite, test/cluster): `SVC_TEST_LEASE_SCALE`
 * multiplies every kind's lease (0.1: a killed node's `change.land` lapses in 1.5 s, not 15 s) and
 * `SVC_TEST_PERIOD_SCALE` every periodic kind's period (0.02: a minute's slot every 1.2 s). Both
 * are ignored by the compiled binary (a production build), and outside (0, 1].
 */
const COMPILED = import.meta.url.includes("/$bunfs/");
function testScale(name: string): number {
  const value = Number(process.env[name]);
  return !COMPILED && value > 0 && value <= 1 ? value : 1;
}
const LEASE_SCALE = testScale("SVC_TEST_LEASE_SCALE");
const PERIOD_SCALE = testScale("SVC_TEST_PERIOD_SCALE");

/** Declares a kind; unset rules take the defaults (1 in flight, a 60 s lease, the default retry). */
export function jobKind<P>(name: string, o: Partial<Omit<JobKind<P>, "name">> = {}): JobKind<P> {
  const kind: JobKind<P> = { name, concurrency: 1, leaseMs: 60_000, retry: DEFAULT_RETRY, ...o };
  if (LEASE_SCALE === 1 && PERIOD_SCALE === 1) return Object.freeze(kind);
  const every = kind.every;
  const ms = every?.ms;
  const scaled = (v: number) => Math.max(50, Math.round(v * PERIOD_SCALE));
  return Object.freeze({
    ...kind,
    leaseMs: Math.max(300, Math.round(kind.leaseMs * LEASE_SCALE)),
    ...(every && ms !== undefined ? { every: { ...every, ms: typeof ms === "function" ? (c: Config) => scaled(ms(c)) : scaled(ms) } } : {}),
  });
}

/** How many attempts a kind gets in all. */
export function attemptsOf(rule: RetryRule): number {
  return "delaysMs" in rule ? rule.delaysMs.length + 1 : rule.attempts;
}

/** The wait before attempt `n + 1` after attempt `n` (1-based) failed. */
export function backoffOf(rule: RetryRule, n: number): number {
  if ("delaysMs" in rule) return rule.delaysMs[Math.min(n, rule.delaysMs.length) - 1] ?? 0;
  return Math.min(rule.firstMs * 2 ** (n - 1), rule.maxMs);
}
