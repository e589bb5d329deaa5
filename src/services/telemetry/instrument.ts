// The observe half of instrumentation (the services floor, DESIGN.md "Domain order"): a
// context's registry (`ctx.telemetry`) and what a request or an operation records as it happens.
// The scrape-time collectors (database, object store, queues, process) are services/ops/instrument.ts.
import { Registry, type Cell, type Counter, type Histogram, type HistogramSeries } from "./metrics.ts";

/** A context's metrics: its registry, and the request and operation series every layer records. */
export class Telemetry {
  private readonly httpRequests: Counter;
  private readonly httpDuration: Histogram;
  /** Bound series per method, route and status: the front door does no label work per request. */
  private readonly httpSeries = new Map<string, { count: Cell; duration: HistogramSeries }>();
  private readonly operations: Counter;
  private readonly operationBytes: Counter;
  private readonly operationDuration: Histogram;
  /** Values computed once per context for a subsystem (a token's digest, …), by name. */
  private readonly memo = new Map<string, unknown>();

  constructor(readonly registry: Registry = new Registry()) {
    this.httpRequests = registry.counter("svc_http_requests_total", "HTTP requests by method, route template and status", ["method", "route", "status"]);
    this.httpDuration = registry.histogram("svc_http_request_duration_seconds", "Time to response headers, by method, route template and status", [
      "method",
      "route",
      "status",
    ]);
    this.operations = registry.counter(
      "svc_operations_total",
      "Operations by kind (git.clone, git.fetch, git.push, api.commit, mirror.sync, webhook.delivery, …)",
      ["kind"],
    );
    this.operationBytes = registry.counter("svc_operation_bytes_total", "Bytes moved by operations, by kind (pack bytes for git operations)", ["kind"]);
    this.operationDuration = registry.histogram(
      "svc_operation_duration_seconds",
      "Duration of operations by kind",
      ["kind"],
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    );
  }

  /** Records one HTTP request (the route is a template such as /v1/orgs/:org/repos, never a raw path). */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let s = this.httpSeries.get(key);
    if (!s) {
      const labels = { method, route, status: String(status) };
      s = { count: this.httpRequests.cell(labels), duration: this.httpDuration.series(labels) };
      this.httpSeries.set(key, s);
    }
    s.count.v++;
    this.httpDuration.record(s.duration, seconds);
  }

  /** Records one measured operation (called wherever an operation is recorded: services/metrics/record.ts). */
  observeOperation(kind: string, bytes: number, durationMs: number): void {
    this.operations.inc({ kind });
    this.operationBytes.inc({ kind }, bytes);
    this.operationDuration.observe({ kind }, durationMs / 1000);
  }

  /** `make()` once per context under `name` (a value derived from the configuration). */
  once<T>(name: string, make: () => T): T {
    if (!this.memo.has(name)) this.memo.set(name, make());
    return this.memo.get(name) as T;
  }
}
