// An HTTP proxy in front of an S3-compatible server (s3rver) that makes it behave like a real
// bucket: a fixed delay before every request, a share of requests answered `503 SlowDown`, and
// a share of connections reset mid-body (mid-response for reads, mid-upload for writes). Used by
// tests and benchmarks; deterministic when seeded: whether a request is faulted depends only on
// the seed, the request (method, path, query, Range) and how many times that request was seen
// before, not on the interleaving of concurrent requests.
//
// Control (JSON) on the proxy's own port, under a path no bucket can have:
//   GET  /__proxy/config      the current FaultConfig
//   POST /__proxy/config      merge a partial FaultConfig (and restart the occurrence counts)
//   GET  /__proxy/stats       ProxyStats since start or the last reset
//   POST /__proxy/stats/reset zero the stats
//   GET  /__proxy/trace       with `trace` on: the requests since the last call (TraceEntry), drained
//   GET  /__proxy/held        answers (once at least one request is held, see `hold`) the held requests
//
// This file is also a child entry point (`bun test/helpers/fault-proxy.ts <upstream> [config]`):
// a test that blocks its own event loop (spawnSync) must not stall the proxy svc talks to.
import { stopChild } from "./child.ts";
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** Which requests a fault applies to (all when absent). */
export interface FaultMatch {
  /** HTTP method, e.g. "GET". */
  method?: string;
  /** A substring of the path and query, e.g. ".pack" or "uploadId=". */
  pathIncludes?: string;
  /** Only ranged reads starting at or after this byte (so the start of a stream goes through). */
  fromByte?: number;
}

/** What the proxy does to the requests passing through it. */
export interface FaultConfig {
  /** PRNG seed for the fault decisions. */
  seed: number;
  /** Milliseconds added before each request is forwarded (S3's first-byte latency). */
  delayMs: number;
  /** Share (0..1) of requests answered 503 SlowDown without reaching the server. */
  slowDown: number;
  /** Share (0..1) of connections reset mid-body. */
  reset: number;
  /** Faults (not the delay) apply only to matching requests. */
  match?: FaultMatch | null;
  /** Print one line per request on stderr (method, path, Range, what was done). */
  log?: boolean;
  /** The first time each distinct matching request is seen, answer it with this fault (a sure retry). */
  firstTry?: "slowDown" | "reset" | null;
  /** Keep a timeline of every request (read with trace()), for benchmarks. */
  trace?: boolean;
  /**
   * Hold matching requests: never forwarded nor answered, their bodies left unread (an upload
   * that hangs), until a config without `hold` drops their connections. For crash tests: kill
   * the client when `held()` answers.
   */
  hold?: FaultMatch | null;
}

/** One request as the proxy saw it (times in ms on the proxy's clock, performance.now()). */
export interface TraceEntry {
  method: string;
  /** Path and query, upload ids left out. */
  path: string;
  range: string;
  status: number;
  /** Arrived. */
  start: number;
  /** The upstream's answer began (after the added delay). */
  firstByte: number;
  /** The answer was sent (or the connection closed). */
  end: number;
  bytesDown: number;
  bytesUp: number;
}

/** What went through the proxy. */
export interface ProxyStats {
  requests: number;
  /** Requests per kind: GET, PUT, HEAD, DELETE, POST, and LIST for bucket listings. */
  byKind: Record<string, number>;
  slowDowns: number;
  resets: number;
  /** Response body bytes sent to the client. */
  bytesDown: number;
  /** Request body bytes received from the client. */
  bytesUp: number;
  /** Most requests in flight at once. */
  peakInFlight: number;
}

/** A running proxy. */
export interface FaultProxyHandle {
  /** http://127.0.0.1:PORT: point the S3 client here. */
  endpoint: string;
  /** The process serving it (this one for startFaultProxy, the child for spawnFaultProxy). */
  pid: number;
  /** Change the faults (merged into the current config). */
  configure(patch: Partial<FaultConfig>): Promise<void>;
  stats(): Promise<ProxyStats>;
  resetStats(): Promise<void>;
  /** Resolves once at least one request is held (`hold`), with the held requests' method and path. */
  held(): Promise<{ method: string; path: string }[]>;
  /** The traced requests since the last call (needs `trace: true`), and the proxy's clock now. */
  trace(): Promise<{ now: number; entries: TraceEntry[] }>;
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export const DEFAULT_FAULTS: FaultConfig = { seed: 1, delayMs: 0, slowDown: 0, reset: 0, match: null, firstTry: null };

const SLOW_DOWN_XML = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';

/** 32-bit FNV-1a of a string, then mixed with the seed: the per-request PRNG state. */
function hash32(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** mulberry32: three uniform draws in [0, 1) from one 32-bit state. */
function draws(state: number, n: number): number[] {
  const out: number[] = [];
  let a = state >>> 0;
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out.push(((t ^ (t >>> 14)) >>> 0) / 4294967296);
  }
  return out;
}

/** The request's identity for fault decisions: upload ids are random per run, so they are left out. */
function requestKey(req: IncomingMessage): string {
  const url = (req.url ?? "/").replace(/uploadId=[^&]*/g, "uploadId=");
  return `${req.method} ${url} ${req.headers.range ?? ""}`;
}

function kindOf(req: IncomingMessage): string {
  const url = new URL(req.url ?? "/", "http://x");
  const segments = url.pathname.split("/").filter(Boolean);
  if (req.method === "GET" && segments.length <= 1 && !url.searchParams.has("location")) return "LIST";
  return req.method ?? "?";
}

function matches(match: FaultMatch | null | undefined, req: IncomingMessage): boolean {
  if (!match) return true;
  if (match.method && match.method !== req.method) return false;
  if (match.pathIncludes && !(req.url ?? "").includes(match.pathIncludes)) return false;
  if (match.fromByte !== undefined) {
    const start = /^bytes=(\d+)-/.exec(req.headers.range ?? "");
    if (!start || Number(start[1]) < match.fromByte) return false;
  }
  return true;
}

function emptyStats(): ProxyStats {
  return { requests: 0, byKind: {}, slowDowns: 0, resets: 0, bytesDown: 0, bytesUp: 0, peakInFlight: 0 };
}

/** Starts the proxy in this process on 127.0.0.1 and a free port. */
export async function startFaultProxy(upstream: string, initial: Partial<FaultConfig> = {}): Promise<FaultProxyHandle> {
  const target = new URL(upstream);
  let config: FaultConfig = { ...DEFAULT_FAULTS, ...initial };
  let seen = new Map<string, number>();
  let stats = emptyStats();
  let inFlight = 0;
  let traced: TraceEntry[] = [];
  const holding = new Map<IncomingMessage, { method: string; path: string }>();
  let heldWaiters: (() => void)[] = [];
  const dropHeld = () => {
    for (const req of holding.keys()) req.socket.destroy();
    holding.clear();
  };

  const control = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readAll(req);
    const json = (value: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (req.url === "/__proxy/config" && req.method === "POST") {
      config = { ...config, ...(JSON.parse(body.toString() || "{}") as Partial<FaultConfig>) };
      seen = new Map();
      if (!config.hold) dropHeld();
      return json(config);
    }
    if (req.url === "/__proxy/config") return json(config);
    if (req.url === "/__proxy/held") {
      if (holding.size === 0) await new Promise<void>((resolve) => heldWaiters.push(resolve));
      return json([...holding.values()]);
    }
    if (req.url === "/__proxy/stats/reset" && req.method === "POST") {
      stats = emptyStats();
      return json(stats);
    }
    if (req.url === "/__proxy/stats") return json(stats);
    if (req.url === "/__proxy/trace") {
      const entries = traced;
      traced = [];
      return json({ now: performance.now(), entries });
    }
    res.writeHead(404).end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if ((req.url ?? "").startsWith("/__proxy/")) return control(req, res);
    stats.requests++;
    const kind = kindOf(req);
    stats.byKind[kind] = (stats.byKind[kind] ?? 0) + 1;
    inFlight++;
    stats.peakInFlight = Math.max(stats.peakInFlight, inFlight);
    res.on("close", () => inFlight--);
    if (config.trace && traced.length < 1_000_000) {
      const entry: TraceEntry = {
        method: req.method ?? "?",
        path: (req.url ?? "/").replace(/uploadId=[^&]*/g, "uploadId="),
        range: String(req.headers.range ?? ""),
        status: 0,
        start: performance.now(),
        firstByte: 0,
        end: 0,
        bytesDown: 0,
        bytesUp: 0,
      };
      traced.push(entry);
      // The declared length: a "data" listener here would start the body flowing before it is piped.
      entry.bytesUp = Number(req.headers["content-length"] ?? "0");
      const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
      res.write = ((chunk: unknown, ...rest: unknown[]) => {
        if (!entry.firstByte) entry.firstByte = performance.now();
        if (chunk && typeof (chunk as Buffer).length === "number") entry.bytesDown += (chunk as Buffer).length;
        return write(chunk, ...rest);
      }) as typeof res.write;
      res.on("close", () => {
        entry.end = performance.now();
        entry.status = res.statusCode;
        entry.firstByte ||= entry.end;
      });
    }

    const key = requestKey(req);
    const occurrence = seen.get(key) ?? 0;
    seen.set(key, occurrence + 1);
    const [u1, u2, u3] = draws(hash32(`${key}#${occurrence}`, config.seed), 3) as [number, number, number];
    const faulty = matches(config.match, req);
    const first = faulty && occurrence === 0 ? config.firstTry : null;
    const slowDown = faulty && (first === "slowDown" || u1 < config.slowDown);
    const reset = faulty && !slowDown && (first === "reset" || u2 < config.reset);
    // Where the body is cut: somewhere in its middle half.
    const cutShare = 0.25 + u3 * 0.5;

    if (config.hold && matches(config.hold, req)) {
      holding.set(req, { method: req.method ?? "?", path: (req.url ?? "/").replace(/uploadId=[^&]*/g, "uploadId=") });
      req.socket.on("close", () => holding.delete(req));
      const waiters = heldWaiters;
      heldWaiters = [];
      for (const w of waiters) w();
      return;
    }
    if (config.log) process.stderr.write(`[fault-proxy] ${key}${slowDown ? " -> SlowDown" : reset ? " -> reset" : ""}\n`);
    if (config.delayMs > 0) await new Promise((r) => setTimeout(r, config.delayMs));

    if (slowDown) {
      stats.slowDowns++;
      stats.bytesUp += (await readAll(req).catch(() => Buffer.alloc(0))).length;
      res.writeHead(503, { "content-type": "application/xml", "content-length": Buffer.byteLength(SLOW_DOWN_XML) });
      res.end(SLOW_DOWN_XML);
      return;
    }

    const declared = Number(req.headers["content-length"] ?? "0");
    if (reset && declared > 0) {
      // Mid-upload: take part of the body, then drop the connection; the server never sees it.
      stats.resets++;
      const cut = Math.max(1, Math.floor(declared * cutShare));
      let got = 0;
      req.on("data", (chunk: Buffer) => {
        got += chunk.length;
        stats.bytesUp += chunk.length;
        if (got >= cut) req.socket.destroy();
      });
      req.on("end", () => req.socket.destroy());
      return;
    }

    const up = httpRequest({ host: target.hostname, port: Number(target.port), method: req.method, path: req.url, headers: req.headers }, (ur) => {
      const headers = { ...ur.headers };
      res.writeHead(ur.statusCode ?? 502, headers);
      const length = Number(ur.headers["content-length"] ?? "0");
      if (!reset) {
        ur.on("data", (chunk: Buffer) => (stats.bytesDown += chunk.length));
        ur.pipe(res);
        return;
      }
      stats.resets++;
      // A body of one byte has no middle: cut before it (cutting "after" it would deliver the
      // whole answer and count a fault the client never saw).
      if (length <= 1 || req.method === "HEAD") {
        ur.resume();
        res.socket?.destroy();
        return;
      }
      // Mid-response: send part of the body, then drop the connection.
      const cut = Math.min(length - 1, Math.max(1, Math.floor(length * cutShare)));
      let sent = 0;
      ur.on("data", (chunk: Buffer) => {
        if (sent >= cut) return;
        const take = chunk.subarray(0, Math.min(chunk.length, cut - sent));
        sent += take.length;
        stats.bytesDown += take.length;
        res.write(take, () => {
          if (sent >= cut) {
            ur.destroy();
            res.socket?.destroy();
          }
        });
      });
    });
    up.on("error", () => res.socket?.destroy());
    req.on("data", (chunk: Buffer) => (stats.bytesUp += chunk.length));
    req.pipe(up);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.socket?.destroy());
  });
  server.keepAliveTimeout = 30_000;
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return controlHandle(`http://127.0.0.1:${port}`, process.pid, async () => {
    dropHeld();
    for (const w of heldWaiters.splice(0)) w();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Idle keep-alive connections and requests cut mid-body would hold close() open.
    for (const socket of sockets) socket.destroy();
    await closed;
  });
}

/** Starts the proxy in a child process (see the file comment); resolves once it listens. */
export async function spawnFaultProxy(upstream: string, initial: Partial<FaultConfig> = {}): Promise<FaultProxyHandle> {
  const child = Bun.spawn([process.execPath, import.meta.path, upstream, JSON.stringify(initial)], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let endpoint: string | null = null;
  while (endpoint === null) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`fault proxy exited before it was ready (exit code ${await child.exited})`);
    text += decoder.decode(value, { stream: true });
    const newline = text.indexOf("\n");
    if (newline >= 0) endpoint = (JSON.parse(text.slice(0, newline)) as { endpoint: string }).endpoint;
  }
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return controlHandle(endpoint, child.pid, async () => {
    await stopChild(child);
  });
}

function controlHandle(endpoint: string, pid: number, close: () => Promise<void>): FaultProxyHandle {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${endpoint}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`fault proxy ${method} ${path}: ${res.status}`);
    return res.json();
  };
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= close());
  return {
    endpoint,
    pid,
    configure: async (patch) => void (await call("POST", "/__proxy/config", patch)),
    stats: () => call("GET", "/__proxy/stats") as Promise<ProxyStats>,
    resetStats: async () => void (await call("POST", "/__proxy/stats/reset")),
    trace: () => call("GET", "/__proxy/trace") as Promise<{ now: number; entries: TraceEntry[] }>,
    held: () => call("GET", "/__proxy/held") as Promise<{ method: string; path: string }[]>,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

if (import.meta.main) {
  const [upstream, json] = process.argv.slice(2);
  if (!upstream) throw new Error("usage: bun test/helpers/fault-proxy.ts <upstream-url> [config-json]");
  const proxy = await startFaultProxy(upstream, json ? (JSON.parse(json) as Partial<FaultConfig>) : {});
  process.stdout.write(`${JSON.stringify({ endpoint: proxy.endpoint })}\n`);
  const shutdown = () => proxy.stop().finally(() => process.exit(0));
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  // The parent holds our stdin open; when it goes away (even by crashing), so do we.
  process.stdin.on("end", shutdown).on("close", shutdown).resume();
}
