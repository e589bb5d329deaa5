// The Prometheus registry: counters, gauges and histograms that subsystems register into, and
// collectors that refresh gauges from the database at scrape time. Rendered as the text
// exposition format (version 0.0.4) at GET /metrics (DECISIONS §4). One per context
// (`ctx.telemetry.registry`, services/telemetry/instrument.ts), never a module's.
//
// How a subsystem adds its metrics (webhook deliveries, runner claims, …):
//
//   const waiting = ctx.telemetry.registry.gauge("svc_runner_claims_waiting", "Runner claim long-polls waiting for a job");
//   waiting.inc(); … waiting.dec();
//   const deliveries = ctx.telemetry.registry.counter("svc_webhook_deliveries_total", "Webhook deliveries by outcome", ["outcome"]);
//   deliveries.inc({ outcome: "delivered" });
//   ctx.telemetry.registry.collect("webhooks", async () => pending.set(await countPendingDeliveries(ctx.db.read)));
//
// Registering a name twice answers the first metric (so a subsystem may register where it first
// needs the metric); a second registration with another type or labels throws.

/** Label values of one series, by label name. */
export type Labels = Record<string, string>;

/** Upper bounds (seconds) for request and query latencies: 0.5 ms to 10 s. */
export const LATENCY_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Kind = "counter" | "gauge" | "histogram";

abstract class Metric {
  abstract readonly kind: Kind;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** The series key of a label set (values in label-name order). */
  protected keyOf(labels: Labels | undefined): string {
    if (this.labelNames.length === 0) return "";
    let key = "";
    for (const n of this.labelNames) key += `${labels?.[n] ?? ""}\u0000`;
    return key;
  }

  protected labelText(key: string, extra?: [string, string]): string {
    const parts: string[] = [];
    if (this.labelNames.length) {
      const values = key.split("\u0000");
      this.labelNames.forEach((n, i) => {
        parts.push(`${n}="${escapeLabel(values[i]!)}"`);
      });
    }
    if (extra) parts.push(`${extra[0]}="${extra[1]}"`);
    return parts.length ? `{${parts.join(",")}}` : "";
  }

  abstract render(out: string[]): void;
  /** Forgets every series (tests; a collector that rebuilds a gauge family). */
  abstract reset(): void;
}

/** One series of a counter or gauge, bound once (no label work per update: for hot paths). */
export interface Cell {
  v: number;
}

/** A monotonic count. */
export class Counter extends Metric {
  readonly kind = "counter";
  private readonly values = new Map<string, Cell>();

  /** The series of `labels`, created at 0 (keep it and call `add` on hot paths). */
  cell(labels?: Labels): Cell {
    const key = this.keyOf(labels);
    let c = this.values.get(key);
    if (!c) {
      c = { v: 0 };
      this.values.set(key, c);
    }
    return c;
  }

  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels?: Labels, by = 1): void {
    this.cell(labels).v += by;
  }

  /** The current value of one series (tests). */
  get(labels?: Labels): number {
    return this.values.get(this.keyOf(labels))?.v ?? 0;
  }

  render(out: string[]): void {
    for (const [key, c] of this.values) out.push(`${this.name}${this.labelText(key)} ${formatNumber(c.v)}`);
  }

  reset(): void {
    this.values.clear();
  }
}

/** A value that goes up and down. */
export class Gauge extends Metric {
  readonly kind = "gauge";
  private readonly values = new Map<string, number>();

  /** Sets the series of `labels` to `value`. */
  set(labels: Labels | number, value?: number): void {
    if (typeof labels === "number") this.values.set("", labels);
    else this.values.set(this.keyOf(labels), value ?? 0);
  }

  inc(labels?: Labels, by = 1): void {
    const key = this.keyOf(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  dec(labels?: Labels, by = 1): void {
    this.inc(labels, -by);
  }

  get(labels?: Labels): number {
    return this.values.get(this.keyOf(labels)) ?? 0;
  }

  render(out: string[]): void {
    for (const [key, v] of this.values) out.push(`${this.name}${this.labelText(key)} ${formatNumber(v)}`);
  }

  reset(): void {
    this.values.clear();
  }
}

/** One label set of a histogram: per-bucket counts (not cumulative), sum and count. */
export interface HistogramSeries {
  counts: Float64Array;
  sum: number;
  count: number;
}

/** Counts of observations in cumulative buckets, with their sum. */
export class Histogram extends Metric {
  readonly kind = "histogram";
  private readonly series_ = new Map<string, HistogramSeries>();

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  /** The series of `labels` (keep it and pass it to `record` on hot paths). */
  series(labels?: Labels): HistogramSeries {
    const key = this.keyOf(labels);
    let s = this.series_.get(key);
    if (!s) {
      s = { counts: new Float64Array(this.buckets.length), sum: 0, count: 0 };
      this.series_.set(key, s);
    }
    return s;
  }

  /** Records one observation (seconds for latencies). */
  observe(labels: Labels | undefined, value: number): void {
    this.record(this.series(labels), value);
  }

  /** Records one observation into a series from `series()`. */
  record(s: HistogramSeries, value: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    if (i < b.length) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  /** Observation count of one series (tests). */
  count(labels?: Labels): number {
    return this.series_.get(this.keyOf(labels))?.count ?? 0;
  }

  render(out: string[]): void {
    for (const [key, s] of this.series_) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        out.push(`${this.name}_bucket${this.labelText(key, ["le", formatNumber(le)])} ${cumulative}`);
      });
      out.push(`${this.name}_bucket${this.labelText(key, ["le", "+Inf"])} ${s.count}`);
      out.push(`${this.name}_sum${this.labelText(key)} ${formatNumber(s.sum)}`);
      out.push(`${this.name}_count${this.labelText(key)} ${s.count}`);
    }
  }

  reset(): void {
    this.series_.clear();
  }
}

/** Refreshes some gauges right before a scrape; a failing collector is reported, not fatal. */
export type Collector = () => void | Promise<void>;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A set of metrics rendered together. */
export class Registry {
  private readonly metrics = new Map<string, Metric>();
  private readonly collectors = new Map<string, Collector>();

  /** Registers (or finds) a counter. Names of counters end in `_total`. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(name, "counter", labelNames, () => new Counter(name, help, labelNames));
  }

  /** Registers (or finds) a gauge. */
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.register(name, "gauge", labelNames, () => new Gauge(name, help, labelNames));
  }

  /** Registers (or finds) a histogram; `buckets` are upper bounds, ascending. */
  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets: readonly number[] = LATENCY_BUCKETS): Histogram {
    return this.register(name, "histogram", labelNames, () => new Histogram(name, help, labelNames, buckets));
  }

  /**
   * Runs `fn` before each scrape, under `id` (a later registration with the same id replaces the
   * earlier one: the newest context's collector wins).
   */
  collect(id: string, fn: Collector): void {
    this.collectors.set(id, fn);
  }

  /** Removes a collector (a context closing). */
  uncollect(id: string, fn?: Collector): void {
    if (!fn || this.collectors.get(id) === fn) this.collectors.delete(id);
  }

  /** The registered metric of that name, if any (tests, optional wiring). */
  find(name: string): Metric | undefined {
    return this.metrics.get(name);
  }

  /** Runs the collectors, then renders every metric in the text exposition format. */
  async render(onCollectorError?: (id: string, error: unknown) => void): Promise<string> {
    const failed = this.gauge("svc_metrics_collector_errors", "Collectors that failed during this scrape", ["collector"]);
    failed.reset();
    await Promise.all(
      [...this.collectors].map(async ([id, fn]) => {
        try {
          await fn();
        } catch (error) {
          failed.set({ collector: id }, 1);
          onCollectorError?.(id, error);
        }
      }),
    );
    const out: string[] = [];
    for (const m of [...this.metrics.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      out.push(`# HELP ${m.name} ${m.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
      out.push(`# TYPE ${m.name} ${m.kind}`);
      m.render(out);
    }
    return `${out.join("\n")}\n`;
  }

  private register<M extends Metric>(name: string, kind: Kind, labelNames: readonly string[], make: () => M): M {
    const known = this.metrics.get(name);
    if (known) {
      if (known.kind !== kind || known.labelNames.join(",") !== labelNames.join(",")) {
        throw new Error(`metric ${name} is already registered as a ${known.kind} with labels [${known.labelNames.join(", ")}]`);
      }
      return known as M;
    }
    if (!NAME.test(name)) throw new Error(`invalid metric name ${name}`);
    for (const l of labelNames) if (!LABEL.test(l) || l === "le" || l.startsWith("__")) throw new Error(`invalid label name ${l} on ${name}`);
    const m = make();
    this.metrics.set(name, m);
    return m;
  }
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function formatNumber(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}
