// Request counters of an object store: what a bucket charges for (requests by kind, bytes) and
// how it behaved (retries, throttling, give-ups, concurrency). Plain numbers on the store object,
// read by whoever exports metrics; nothing here resets them.

/** Kinds of request, as a bucket bills them. */
export type StorageRequestKind = "GET" | "PUT" | "HEAD" | "DELETE" | "LIST" | "POST";

/** Counters of one object store since it was opened (monotonic except inFlight). */
export interface StorageStats {
  /** Requests sent, by kind, retries included (fs: calls, counted the same way). */
  requests: Record<StorageRequestKind, number>;
  /** Object bytes received (GET bodies). */
  bytesRead: number;
  /** Object bytes sent (PUT and part bodies). */
  bytesWritten: number;
  /** Attempts repeated after a transient failure. */
  retries: number;
  /** Of those, answers that said to slow down (503 SlowDown, 429). */
  throttled: number;
  /** Of those, dropped or reset connections and timeouts. */
  networkErrors: number;
  /** Operations given up after their retries (each threw StorageError "unavailable"). */
  failures: number;
  /** Multipart uploads aborted (on give-up, or stale ones swept). */
  uploadsAborted: number;
  /** Requests in flight now. */
  inFlight: number;
  /** Most requests in flight at once. */
  peakInFlight: number;
}

/** Fresh zeroed counters. */
export function newStorageStats(): StorageStats {
  return {
    requests: { GET: 0, PUT: 0, HEAD: 0, DELETE: 0, LIST: 0, POST: 0 },
    bytesRead: 0,
    bytesWritten: 0,
    retries: 0,
    throttled: 0,
    networkErrors: 0,
    failures: 0,
    uploadsAborted: 0,
    inFlight: 0,
    peakInFlight: 0,
  };
}

/** Total requests of every kind. */
export function totalRequests(stats: StorageStats): number {
  let n = 0;
  for (const v of Object.values(stats.requests)) n += v;
  return n;
}
