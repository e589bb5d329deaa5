// What exists today, wired into the metrics registry: HTTP requests per route template, operations
// (git clone/fetch/push, API commits, mirror syncs, webhook deliveries) with bytes, database
// statement and transaction latencies (svc_sqlite_* on SQLite, svc_db_* on PostgreSQL with the
// pool, retries and LISTEN state), object-store calls, the job queue and its leases, the mail
// outbox and the process. The names are listed in README.md (Operations) and docs/architecture.md. Every
// metric goes into the registry it is given (a context's: `ctx.telemetry.registry`); registering
// a name again answers the same metric, so these functions may run once per context.
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Database } from "../../db/database.ts";
import type { PgDatabase } from "../../db/pg/database.ts";
import { PgSignals } from "../events/pg-signals.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { now, type Ctx } from "../context.ts";
import type { Collector, Registry } from "../telemetry/metrics.ts";
import * as store from "./store.ts";

/**
 * Sends the database's statement and transaction timings to the registry: svc_sqlite_* on SQLite,
 * their twins svc_db_* on PostgreSQL (where "wait" is the time before a transaction's attempt
 * began: earlier attempts and their backoff after serialization failures).
 */
export function instrumentDatabase(metrics: Registry, db: Database): void {
  const pg = db.dialect === "pg";
  const statementDuration = pg
    ? metrics.histogram(
        "svc_db_statement_duration_seconds",
        "PostgreSQL statement latency by connection (read: autocommit on the pool; write: inside a transaction)",
        ["connection"],
      )
    : metrics.histogram("svc_sqlite_statement_duration_seconds", "SQLite statement latency by connection (read or write)", ["connection"]);
  const txWait = pg
    ? metrics.histogram(
        "svc_db_transaction_wait_seconds",
        "Time before each attempt of a write transaction began (earlier attempts and their backoff after serialization failures)",
      )
    : metrics.histogram("svc_sqlite_transaction_wait_seconds", "Time a write transaction waited for the process's write lock");
  const txHeld = pg
    ? metrics.histogram("svc_db_transaction_duration_seconds", "Write transaction attempts from BEGIN to COMMIT or ROLLBACK, by outcome", ["outcome"])
    : metrics.histogram("svc_sqlite_transaction_duration_seconds", "Write transactions from BEGIN to COMMIT or ROLLBACK, by outcome", ["outcome"]);
  const read = statementDuration.series({ connection: "read" });
  const write = statementDuration.series({ connection: "write" });
  const wait = txWait.series();
  const commit = txHeld.series({ outcome: "commit" });
  const rollback = txHeld.series({ outcome: "rollback" });
  db.timings = {
    statement: (connection, seconds) => statementDuration.record(connection === "read" ? read : write, seconds),
    transaction(waited, held, committed) {
      txWait.record(wait, waited);
      txHeld.record(committed ? commit : rollback, held);
    },
  };
}

/** ObjectStore methods timed by instrumentStore. */
const TIMED = ["putFile", "put", "get", "getRange", "stat", "delete"] as const;

/**
 * The store with every call timed (and listings counted). Whatever else the store offers (request
 * counters, multipart clean-up, …) passes through unchanged, bound to the store itself.
 */
export function instrumentStore(metrics: Registry, inner: ObjectStore): ObjectStore {
  const storeDuration = metrics.histogram("svc_object_store_request_duration_seconds", "Object store calls by operation and outcome (ok, error)", [
    "op",
    "outcome",
  ]);
  const wrapped = new Map<PropertyKey, unknown>();
  for (const op of TIMED) {
    const fn = (inner[op] as (...a: unknown[]) => Promise<unknown>).bind(inner);
    const ok = storeDuration.series({ op, outcome: "ok" });
    const failed = storeDuration.series({ op, outcome: "error" });
    wrapped.set(op, async (...args: unknown[]) => {
      const started = performance.now();
      let series = failed;
      try {
        const out = await fn(...args);
        series = ok;
        return out;
      } finally {
        storeDuration.record(series, (performance.now() - started) / 1000);
      }
    });
  }
  const list = inner.list.bind(inner);
  wrapped.set("list", (prefix: string) => {
    const started = performance.now();
    const source = list(prefix);
    return (async function* () {
      let outcome = "error";
      try {
        yield* source;
        outcome = "ok";
      } finally {
        storeDuration.observe({ op: "list", outcome }, (performance.now() - started) / 1000);
      }
    })();
  });
  return new Proxy(inner, {
    get(target, prop) {
      const own = wrapped.get(prop);
      if (own) return own;
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** Counters a store may keep about its backend (the S3 store's retries, throttling, bytes, …). */
interface BackendStats {
  requests?: Record<string, number>;
  [field: string]: unknown;
}

/**
 * Exposes the store's own counters when it has them (`store.stats`, a plain object of numbers
 * and a `requests` record by kind); stores without them are simply skipped.
 */
export function collectStoreStats(metrics: Registry, s: ObjectStore): Collector {
  const backendRequests = metrics.counter(
    "svc_object_store_backend_requests_total",
    "Requests the object store sent to its backend, by kind, retries included",
    ["kind"],
  );
  const backendEvents = metrics.counter(
    "svc_object_store_backend_events_total",
    "Object store counters (bytesRead, bytesWritten, retries, throttled, networkErrors, failures, …)",
    ["counter"],
  );
  const backendInFlight = metrics.gauge("svc_object_store_backend_in_flight", "Object store requests in flight now, and the most at once", ["which"]);
  let last = new Map<string, number>();
  return () => {
    const stats = (s as { stats?: BackendStats }).stats;
    if (!stats || typeof stats !== "object") return;
    // Counters are rebuilt from the store's totals; the registry keeps monotonic values by adding the difference.
    const next = new Map<string, number>();
    const bump = (key: string, value: number, apply: (by: number) => void) => {
      next.set(key, value);
      const by = value - (last.get(key) ?? 0);
      if (by > 0) apply(by);
    };
    for (const [kind, n] of Object.entries(stats.requests ?? {})) if (typeof n === "number") bump(`req:${kind}`, n, (by) => backendRequests.inc({ kind }, by));
    for (const [field, v] of Object.entries(stats)) {
      if (typeof v !== "number") continue;
      if (field === "inFlight" || field === "peakInFlight") backendInFlight.set({ which: field === "inFlight" ? "now" : "peak" }, v);
      else bump(`ev:${field}`, v, (by) => backendEvents.inc({ counter: field }, by));
    }
    last = next;
  };
}

/** The job queue and the mail outbox, read at scrape time. */
export function collectQueues(ctx: Ctx): Collector {
  const metrics = ctx.telemetry.registry;
  const jobsPending = metrics.gauge("svc_jobs_pending", "Unfinished durable jobs by kind (scheduled and due)", ["kind"]);
  const jobsDue = metrics.gauge("svc_jobs_due", "Jobs whose time has come and that no worker finished yet, by kind", ["kind"]);
  const jobsOldest = metrics.gauge("svc_jobs_oldest_due_age_seconds", "How long the oldest due job of each kind has waited", ["kind"]);
  const jobsLeases = metrics.gauge("svc_jobs_leases", "Jobs leased by a worker now (of any node), by kind", ["kind"]);
  const mailPending = metrics.gauge("svc_mail_outbox_pending", "Mail messages waiting to be sent");
  const mailFailed = metrics.gauge("svc_mail_outbox_failed", "Mail messages given up on after their retries");
  const mailOldest = metrics.gauge("svc_mail_outbox_oldest_pending_age_seconds", "Age of the oldest message waiting to be sent");
  const seen = new Set<string>();
  return async () => {
    const t = now();
    const rows = await ctx.work.stats();
    for (const k of seen) {
      jobsPending.set({ kind: k }, 0);
      jobsDue.set({ kind: k }, 0);
      jobsOldest.set({ kind: k }, 0);
      jobsLeases.set({ kind: k }, 0);
    }
    for (const r of rows) {
      seen.add(r.kind);
      jobsPending.set({ kind: r.kind }, r.pending);
      jobsDue.set({ kind: r.kind }, r.due);
      jobsOldest.set({ kind: r.kind }, r.oldestDue === null ? 0 : Math.max(0, (t - r.oldestDue) / 1000));
      jobsLeases.set({ kind: r.kind }, r.leased);
    }
    const mail = await store.mailOutbox(ctx.db.read);
    mailPending.set(mail.pending);
    mailFailed.set(mail.failed);
    mailOldest.set(mail.oldestPending === null ? 0 : Math.max(0, (t - mail.oldestPending) / 1000));
  };
}

/**
 * PostgreSQL's connection-level state, read at scrape time: the pool's use as the client wrapper
 * counts it (Bun.sql does not expose its pool), the transactions retried after serialization
 * failures and deadlocks, the LISTEN connection and the notifications it brought. Nothing on SQLite.
 */
export function collectDatabase(ctx: Ctx): Collector | null {
  if (ctx.db.dialect !== "pg") return null;
  const db = ctx.db as PgDatabase;
  const metrics = ctx.telemetry.registry;
  const pool = metrics.gauge(
    "svc_db_pool_connections",
    "PostgreSQL pool connections by state: busy (running a statement or holding a transaction), idle (free of the SVC_DATABASE_POOL slots), waiting (statements and transactions queued for a connection)",
    ["state"],
  );
  const retries = metrics.counter("svc_db_transaction_retries_total", "Write transactions run again after a serialization failure or deadlock, by SQLSTATE", [
    "sqlstate",
  ]);
  // The two SQLSTATEs retried (serialization failure, deadlock), shown from 0.
  for (const sqlstate of ["40001", "40P01"]) retries.cell({ sqlstate });
  const listen = metrics.gauge("svc_db_listen_connected", "Whether the LISTEN connection (cross-node wake-ups) is up: 1 or 0");
  const notified = metrics.counter("svc_db_notify_received_total", "Notifications received from other nodes over LISTEN, by topic", ["topic"]);
  const signals = ctx.signals instanceof PgSignals ? ctx.signals : null;
  let last = new Map<string, number>();
  // Counters are rebuilt from running totals; the registry keeps them monotonic by adding the difference.
  const bump = (next: Map<string, number>, key: string, value: number, apply: (by: number) => void) => {
    next.set(key, value);
    const by = value - (last.get(key) ?? 0);
    if (by > 0) apply(by);
  };
  return () => {
    const busy = Math.min(db.pool.inUse, db.pool.size);
    pool.set({ state: "busy" }, busy);
    pool.set({ state: "idle" }, db.pool.size - busy);
    pool.set({ state: "waiting" }, Math.max(0, db.pool.inUse - db.pool.size));
    const next = new Map<string, number>();
    for (const [sqlstate, n] of db.retried) bump(next, `r:${sqlstate}`, n, (by) => retries.inc({ sqlstate }, by));
    if (signals) {
      listen.set(signals.listenConnected ? 1 : 0);
      for (const [topic, n] of signals.notifyReceived) bump(next, `n:${topic}`, n, (by) => notified.inc({ topic }, by));
    }
    last = next;
  };
}

const started = Date.now() / 1000 - process.uptime();

/** The process: memory, CPU, start time, version. */
export function collectProcess(metrics: Registry, version: string): Collector {
  const rss = metrics.gauge("process_resident_memory_bytes", "Resident memory size in bytes");
  const heap = metrics.gauge("process_heap_bytes", "JavaScript heap size after the last collection, in bytes");
  // Why these kind names: Bun's process.memoryUsage() is not Node's. Its heapTotal is the bytes of the
  // JavaScriptCore heap's blocks for small objects (large objects live outside them) and its heapUsed
  // the heap's size after the last (eden) collection, large objects included; so "used" is often
  // above "total". Each kind is named after what it measures, so no pair reads as part and whole.
  const memory = metrics.gauge(
    "svc_process_memory_bytes",
    "Process memory by kind (Bun's figures): heap_size_after_gc (JavaScript heap after the last collection, large objects included), heap_blocks_allocated (the heap's small-object blocks), array_buffers, external",
    ["kind"],
  );
  const startTime = metrics.gauge("process_start_time_seconds", "Start time of the process since the epoch, in seconds");
  const cpu = metrics.gauge("process_cpu_seconds_total", "User and system CPU time spent, in seconds");
  const info = metrics.gauge("svc_build_info", "The running version (always 1)", ["version"]);
  return () => {
    const mem = process.memoryUsage();
    rss.set(mem.rss);
    heap.set(mem.heapUsed);
    memory.set({ kind: "heap_size_after_gc" }, mem.heapUsed);
    memory.set({ kind: "heap_blocks_allocated" }, mem.heapTotal);
    memory.set({ kind: "array_buffers" }, mem.arrayBuffers);
    memory.set({ kind: "external" }, mem.external);
    startTime.set(Math.round(started));
    const usage = process.cpuUsage();
    cpu.set((usage.user + usage.system) / 1e6);
    info.set({ version }, 1);
  };
}

/**
 * The longest the event loop was held up since the previous scrape (plan 28 §5: nothing may block
 * it > 50 ms), sampled every 10 ms by node:perf_hooks; each scrape reads the maximum and starts
 * over. Answers the collector and what stops the sampling.
 */
export function collectEventLoop(metrics: Registry): { collector: Collector; stop: () => void } {
  const max = metrics.gauge(
    "svc_event_loop_delay_max_seconds",
    "The longest delay of the event loop since the previous scrape (sampled every 10 ms), in seconds; reset by each scrape",
  );
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    collector: () => {
      max.set(h.max / 1e9);
      h.reset();
    },
    stop: () => h.disable(),
  };
}

/** Wires a context's database, queues and store counters into the registry (the store itself is wrapped by the caller). */
export function instrumentContext(ctx: Ctx, version: string): () => void {
  const metrics = ctx.telemetry.registry;
  instrumentDatabase(metrics, ctx.db);
  const queues = collectQueues(ctx);
  const storeStats = collectStoreStats(metrics, ctx.store);
  const proc = collectProcess(metrics, version);
  const database = collectDatabase(ctx);
  const gitCaches = metrics.gauge("svc_git_cache_bytes", "Bytes held by the git read caches (pack blocks, delta bases, pack indexes, multi-pack indexes)", [
    "cache",
  ]);
  const caches: Collector = () => {
    for (const [cache, bytes] of Object.entries(ctx.git.cacheBytes())) gitCaches.set({ cache }, bytes);
  };
  metrics.collect("queues", queues);
  metrics.collect("git_caches", caches);
  metrics.collect("object_store", storeStats);
  metrics.collect("process", proc);
  const loop = collectEventLoop(metrics);
  metrics.collect("event_loop", loop.collector);
  if (database) metrics.collect("database", database);
  return () => {
    metrics.uncollect("queues", queues);
    metrics.uncollect("object_store", storeStats);
    metrics.uncollect("process", proc);
    metrics.uncollect("git_caches", caches);
    metrics.uncollect("event_loop", loop.collector);
    loop.stop();
    if (database) metrics.uncollect("database", database);
  };
}
