// The observe half of instrumentation (the services floor, DESIGN.md "Domain order"): what a
// request or an operation records as it happens, into the process's registry. The scrape-time
// collectors (database, object store, queues, process) stay in services/ops/instrument.ts.
import { metrics, type Cell, type HistogramSeries } from "./metrics.ts";

const httpRequests = metrics.counter("svc_http_requests_total", "HTTP requests by method, route template and status", ["method", "route", "status"]);
const httpDuration = metrics.histogram("svc_http_request_duration_seconds", "Time to response headers, by method, route template and status", ["method", "route", "status"]);

/** Bound series per method, route and status: the front door does no label work per request. */
const httpSeries = new Map<string, { count: Cell; duration: HistogramSeries }>();

/** Records one HTTP request (the route is a template such as /v1/orgs/:org/repos, never a raw path). */
export function observeHttp(method: string, route: string, status: number, seconds: number): void {
  const key = `${method} ${status} ${route}`;
  let s = httpSeries.get(key);
  if (!s) {
    const labels = { method, route, status: String(status) };
    s = { count: httpRequests.cell(labels), duration: httpDuration.series(labels) };
    httpSeries.set(key, s);
  }
  s.count.v++;
  httpDuration.record(s.duration, seconds);
}

const operations = metrics.counter("svc_operations_total", "Operations by kind (git.clone, git.fetch, git.push, api.commit, mirror.sync, webhook.delivery, …)", ["kind"]);
const operationBytes = metrics.counter("svc_operation_bytes_total", "Bytes moved by operations, by kind (pack bytes for git operations)", ["kind"]);
const operationDuration = metrics.histogram("svc_operation_duration_seconds", "Duration of operations by kind", ["kind"], [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]);

/** Records one measured operation (called wherever an operation is recorded: services/metrics/record.ts). */
export function observeOperation(kind: string, bytes: number, durationMs: number): void {
  operations.inc({ kind });
  operationBytes.inc({ kind }, bytes);
  operationDuration.observe({ kind }, durationMs / 1000);
}
