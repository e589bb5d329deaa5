// ObjectStore over any S3-compatible service, through the minio client (path-style requests,
// so it works against MinIO, s3rver, Ceph, R2 and AWS alike; ranged reads, which carry the bytes
// of every clone, go through Bun's fetch on URLs minio presigns), built for how a real bucket
// behaves: every request is retried through throttling, server errors and dropped connections
// (retry.ts), requests in flight are bounded per server and per repository, and every request
// is counted (stats.ts).

import * as http from "node:http";
import * as https from "node:https";
import type { IncomingMessage, RequestOptions } from "node:http";
import { createHash, createHmac } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { Client } from "minio";
import type { Readable } from "node:stream";
import { assertValidKey, assertValidPrefix } from "./keys.ts";
import { GroupLimiter, Limiter } from "./limiter.ts";
import { StorageError, type ObjectInfo, type ObjectStore, type PresignOptions } from "./object-store.ts";
import { assertRange } from "./range.ts";
import { DEFAULT_RETRY, TransientError, withRetry, type RetryObserver, type RetryPolicy } from "./retry.ts";
import { MIN_PART_SIZE, uploadFileInParts } from "./s3-multipart.ts";
import { newStorageStats, type StorageRequestKind, type StorageStats } from "./stats.ts";

/** Where and how to reach the bucket. */
export interface S3StoreConfig {
  /** http(s)://host:port */
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  region?: string | undefined;
  /** Retry tuning (defaults: DEFAULT_RETRY). */
  retry?: Partial<RetryPolicy> | undefined;
  /** Requests in flight at once to this server (default 64). */
  maxInFlight?: number | undefined;
  /** Requests in flight at once for one repository's keys, `repos/<id>/…` (default 16). */
  maxInFlightPerRepo?: number | undefined;
  /** http(s)://host:port clients reach the bucket by, when not `endpoint` (SVC_S3_PUBLIC_ENDPOINT): presigned URLs name it. */
  publicEndpoint?: string | undefined;
}

/** The S3 store: an ObjectStore plus the bucket housekeeping only S3 has. */
export interface S3Store extends ObjectStore {
  readonly kind: "s3";
  readonly stats: StorageStats;
  /** Abort multipart uploads under `prefix` started before `olderThan` (epoch ms); returns how many. */
  abortIncompleteUploads(prefix: string, olderThan: number): Promise<number>;
  presign(method: "GET" | "PUT", key: string, seconds: number, opts?: PresignOptions): Promise<string>;
}

/** Runs one request (with its retries) inside the concurrency bounds; shared with s3-multipart.ts. */
export type S3Call = <T>(key: string, what: string, attempt: (n: number) => Promise<T>) => Promise<T>;

/** Lifetime of the presigned URL of one ranged read (used at once). */
const PRESIGN_SECONDS = 300;

// Statuses minio-js rejects as "retryable" without reading the body: drained here so the
// connection goes back to the pool.
const DRAIN_STATUSES: ReadonlySet<number> = new Set([408, 429, 499, 500, 502, 503, 504, 520]);

/** An ObjectStore keeping each object under its key in `cfg.bucket`, creating the bucket if missing. */
export async function createS3Store(cfg: S3StoreConfig): Promise<S3Store> {
  const region = cfg.region ?? "us-east-1";
  const endpoint = parseEndpoint(cfg.endpoint);
  const stats = newStorageStats();
  const client = new Client({
    ...endpoint,
    accessKey: cfg.accessKey,
    secretKey: cfg.secretKey,
    region,
    pathStyle: true,
    // Retries are ours (retry.ts): minio's would log to the console and leave throttled answers unread.
    retryOptions: { disableRetry: true },
    transport: countingTransport(endpoint.useSSL ? https : http, stats),
  });
  const bucket = cfg.bucket;
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...cfg.retry };
  const server = new Limiter(cfg.maxInFlight ?? 64);
  const perRepo = new GroupLimiter(cfg.maxInFlightPerRepo ?? 16);
  const observer: RetryObserver = {
    onRetry(cls) {
      stats.retries++;
      if (cls === "throttled") stats.throttled++;
      else if (cls === "network") stats.networkErrors++;
    },
    onGiveUp() {
      stats.failures++;
    },
  };

  const call: S3Call = (key, what, attempt) =>
    withRetry(
      what,
      policy,
      async (n) => {
        // Repository slot first: a busy repository waits without holding one of the server's slots.
        const releaseRepo = await perRepo.acquire(groupOf(key));
        const releaseServer = await server.acquire();
        stats.inFlight++;
        stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
        try {
          return await attempt(n);
        } finally {
          stats.inFlight--;
          releaseServer();
          releaseRepo();
        }
      },
      observer,
    );

  await call("", `bucket ${bucket}`, () => ensureBucket(client, bucket, region));

  // Ranged reads carry every byte a clone streams, so they skip minio's request path (node:http
  // through Bun's compatibility layer) for Bun's own HTTP client, on a URL minio presigns (no
  // network: the region is configured): about half the CPU per byte, and the first byte sooner.
  const rangedGet = async (key: string, offset: number, length: number): Promise<{ bytes: Uint8Array; total: number | null }> => {
    const url = await client.presignedUrl("GET", bucket, key, PRESIGN_SECONDS, {}, undefined);
    stats.requests.GET++;
    let res: Response;
    try {
      // A hung connection is closed when the attempt times out (retry.ts gives up on it then).
      res = await fetch(url, {
        headers: { range: `bytes=${offset}-${offset + length - 1}` },
        redirect: "manual",
        signal: AbortSignal.timeout(policy.attemptTimeoutMs),
      });
    } catch (err) {
      throw new TransientError(`GET ${key}: ${(err as Error).message}`);
    }
    if (res.status !== 200 && res.status !== 206) {
      const text = await res.text().catch(() => "");
      const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
      if (res.status === 404 || code === "NoSuchKey") throw new StorageError(`no such object: ${key}`, "not_found");
      if (res.status === 416 || code === "InvalidRange") throw new StorageError(`range ${offset}+${length} past the end of ${key}`, "out_of_range");
      throw Object.assign(new Error(`GET ${key}: ${res.status} ${code ?? ""}`.trim()), { code, statusCode: res.status });
    }
    const total = totalSize(res.status, res.headers);
    try {
      return { bytes: await collectBodyAtMost(res, length), total };
    } catch (err) {
      throw new TransientError(`GET ${key}: ${(err as Error).message}`);
    }
  };

  // Presigning is local (the region is configured): no request. Signed for the address clients
  // reach the bucket by (SVC_S3_PUBLIC_ENDPOINT), since the signature covers the host.
  if (cfg.publicEndpoint) parseEndpoint(cfg.publicEndpoint);
  const publicOrigin = new URL(cfg.publicEndpoint ?? cfg.endpoint);
  // The SigV4 signing key of the day (four HMACs), derived once a day rather than once a URL.
  let dayKey: { day: string; key: Buffer } | null = null;
  const signingKey = (day: string): Buffer => {
    if (dayKey?.day !== day) dayKey = { day, key: sigV4Key(cfg.secretKey, day, region) };
    return dayKey.key;
  };

  const putBytes = (key: string, body: Buffer) =>
    call(key, `PUT ${key}`, async () => {
      await client.putObject(bucket, key, body, body.length);
      stats.bytesWritten += body.length;
    });

  return {
    kind: "s3",
    stats,

    async presign(method, key, seconds, opts) {
      assertValidKey(key);
      const expiry = Math.max(1, Math.min(Math.floor(seconds), 7 * 24 * 3600));
      // Our own SigV4 presigner (pinned against minio's in test/unit/storage/presign-headers.test.ts):
      // it signs headers and query parameters, and reuses the day's signing key (a batch of 100
      // LFS objects presigns 100 URLs).
      return presignWithHeaders({
        origin: publicOrigin,
        bucket,
        key,
        method,
        expiry,
        headers: opts?.headers ?? {},
        query: opts?.query ?? {},
        region,
        accessKey: cfg.accessKey,
        secretKey: cfg.secretKey,
        date: new Date(),
        signingKey,
      });
    },

    async putFile(key, path) {
      assertValidKey(key);
      const { size } = await stat(path);
      if (size <= MIN_PART_SIZE) await putBytes(key, await readFile(path));
      else await uploadFileInParts({ client, bucket, call, stats }, key, path, size);
    },

    async put(key, data) {
      assertValidKey(key);
      await putBytes(key, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    },

    async get(key) {
      assertValidKey(key);
      try {
        return await call(key, `GET ${key}`, async () => {
          const res = (await client.getObject(bucket, key)) as unknown as IncomingMessage;
          const declared = Number(res.headers?.["content-length"] ?? NaN);
          const bytes = await collect(res);
          stats.bytesRead += bytes.length;
          if (Number.isFinite(declared) && bytes.length !== declared)
            throw new TransientError(`GET ${key}: body ended after ${bytes.length} of ${declared} bytes`);
          return bytes;
        });
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },

    async getRange(key, offset, length) {
      assertValidKey(key);
      assertRange(key, offset, length);
      if (length === 0) return new Uint8Array(0);
      try {
        return await call(key, `GET ${key} bytes ${offset}+${length}`, async () => {
          const { bytes, total } = await rangedGet(key, offset, length);
          stats.bytesRead += bytes.length;
          if (bytes.length === length) return bytes;
          // Short: past the end of the object, or a body cut off on the way.
          if (total === null || offset + length > total) {
            throw new StorageError(`range ${offset}+${length} past the end of ${key}`, "out_of_range");
          }
          throw new TransientError(`GET ${key}: body ended after ${bytes.length} of ${length} bytes`);
        });
      } catch (err) {
        if (isNotFound(err)) throw new StorageError(`no such object: ${key}`, "not_found");
        if (codeOf(err) === "InvalidRange") throw new StorageError(`range ${offset}+${length} past the end of ${key}`, "out_of_range");
        throw err;
      }
    },

    async stat(key) {
      assertValidKey(key);
      try {
        return await call(key, `HEAD ${key}`, async () => ({ size: (await client.statObject(bucket, key)).size }));
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },

    async delete(key) {
      assertValidKey(key);
      try {
        await call(key, `DELETE ${key}`, () => client.removeObject(bucket, key));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },

    list(prefix) {
      assertValidPrefix(prefix);
      return (async function* (): AsyncGenerator<ObjectInfo> {
        let token = "";
        for (;;) {
          const page = await call(prefix, `LIST ${prefix}`, () => client.listObjectsV2Query(bucket, prefix, token, "", 1000, ""));
          for (const item of page.objects) {
            if (item.name !== undefined) yield { key: item.name, size: item.size, modifiedAt: new Date(item.lastModified).getTime() };
          }
          if (!page.isTruncated || !page.nextContinuationToken) return;
          token = page.nextContinuationToken;
        }
      })();
    },

    async abortIncompleteUploads(prefix, olderThan) {
      assertValidPrefix(prefix);
      let keyMarker = "";
      let uploadIdMarker = "";
      let aborted = 0;
      for (;;) {
        const page = await call(prefix, `LIST uploads ${prefix}`, () => client.listIncompleteUploadsQuery(bucket, prefix, keyMarker, uploadIdMarker, ""));
        for (const upload of page.uploads) {
          if (!upload.key.startsWith(prefix) || new Date(upload.initiated).getTime() >= olderThan) continue;
          try {
            await call(upload.key, `abort upload of ${upload.key}`, () => client.abortMultipartUpload(bucket, upload.key, upload.uploadId));
          } catch (err) {
            if (codeOf(err) !== "NoSuchUpload") throw err;
          }
          stats.uploadsAborted++;
          aborted++;
        }
        if (!page.isTruncated) return aborted;
        keyMarker = page.nextKeyMarker;
        uploadIdMarker = page.nextUploadIdMarker;
      }
    },
  };
}

/** The concurrency group of a key: one per repository (`repos/<id>`), else the first segment. */
function groupOf(key: string): string {
  const parts = key.split("/", 2);
  return parts[0] === "repos" && parts[1] ? `repos/${parts[1]}` : (parts[0] ?? "");
}

// Counts every HTTP request minio makes (retries and list pages included) by the kind a bucket bills.
function countingTransport(base: typeof http | typeof https, stats: StorageStats) {
  return {
    request(options: RequestOptions, callback?: (res: IncomingMessage) => void) {
      stats.requests[requestKind(options.method ?? "GET", options.path ?? "/")]++;
      return base.request(options, (res) => {
        if (DRAIN_STATUSES.has(res.statusCode ?? 0)) res.resume();
        callback?.(res);
      });
    },
  } as unknown as typeof http;
}

function requestKind(method: string, path: string): StorageRequestKind {
  const m = method.toUpperCase();
  if (m === "GET") {
    const [pathname = "", query = ""] = path.split("?", 2);
    const objectPath = pathname.split("/").filter(Boolean).length > 1;
    if (!objectPath && /(^|&)(list-type=2|uploads)(=|&|$)/.test(query)) return "LIST";
    return "GET";
  }
  return m === "PUT" || m === "HEAD" || m === "DELETE" || m === "POST" ? m : "GET";
}

function parseEndpoint(endpoint: string): { endPoint: string; port: number; useSSL: boolean } {
  const url = new URL(endpoint);
  if ((url.protocol !== "http:" && url.protocol !== "https:") || (url.pathname !== "/" && url.pathname !== "")) {
    throw new Error(`S3 endpoint must look like http(s)://host:port, got ${endpoint}`);
  }
  const useSSL = url.protocol === "https:";
  return {
    endPoint: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
  };
}

async function ensureBucket(client: Client, bucket: string, region: string): Promise<void> {
  if (await client.bucketExists(bucket)) return;
  try {
    await client.makeBucket(bucket, region);
  } catch (err) {
    const code = codeOf(err);
    if (code !== "BucketAlreadyOwnedByYou" && code !== "BucketAlreadyExists") throw err;
  }
}

/** Size of the whole object from a fetch answer (Content-Range "bytes a-b/total", or a 200's length). */
function totalSize(status: number, headers: Headers): number | null {
  const m = /\/(\d+)\s*$/.exec(headers.get("content-range") ?? "");
  if (m) return Number(m[1]);
  if (status === 200) {
    const length = Number(headers.get("content-length") ?? NaN);
    return Number.isFinite(length) ? length : null;
  }
  return null;
}

// Stops at `limit` bytes: some servers (s3rver, for "bytes=0-0") answer a range starting at 0
// with the whole object, whose prefix is still the right answer. A body read to its end leaves
// the connection to the pool; one cut short (or failed) is cancelled.
async function collectBodyAtMost(res: Response, limit: number): Promise<Uint8Array> {
  // The usual answer declares exactly the bytes asked for: Bun collects it natively into one
  // buffer, where the loop below leaves a chunk per read behind as garbage (a second copy of
  // every byte a push's base reads fetch). A body cut off rejects or comes back short; either
  // way the caller retries.
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared === limit) return await res.bytes();
  const out = new Uint8Array(limit);
  let at = 0;
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.length, limit - at);
      out.set(value.subarray(0, take), at);
      at += take;
      if (take < value.length) {
        void reader.cancel().catch(() => {});
        break;
      }
    }
  } catch (err) {
    void reader.cancel().catch(() => {});
    throw err;
  }
  return at === limit ? out : out.subarray(0, at);
}

async function collect(stream: Readable): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    total += chunk.length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

function codeOf(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

function isNotFound(err: unknown): boolean {
  const code = codeOf(err);
  return code === "NoSuchKey" || code === "NotFound";
}

/** RFC 3986 percent-encoding as SigV4 wants it (everything but unreserved characters; `/` kept in paths). */
function awsEncode(value: string, keepSlash: boolean): string {
  const encoded = encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, "/") : encoded;
}

/**
 * A SigV4 query-string presigned URL (path-style) that also signs `headers`: the request must carry
 * each with that value or the bucket refuses it (AWS "Authenticating Requests: Using Query
 * Parameters"). The payload stays UNSIGNED-PAYLOAD: a signed x-amz-checksum-sha256 is what binds the body.
 */
export function presignWithHeaders(o: {
  origin: URL;
  bucket: string;
  key: string;
  method: string;
  expiry: number;
  headers: Readonly<Record<string, string>>;
  query?: Readonly<Record<string, string>>;
  region: string;
  accessKey: string;
  secretKey: string;
  date: Date;
  /** The day's signing key, when the caller keeps it (else derived here). */
  signingKey?: (day: string) => Buffer;
}): string {
  const amzDate = o.date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${o.region}/s3/aws4_request`;
  const host = o.origin.host;
  const signed = new Map<string, string>([["host", host]]);
  for (const [k, v] of Object.entries(o.headers)) signed.set(k.toLowerCase(), v.trim());
  const names = [...signed.keys()].sort();
  const signedHeaders = names.join(";");
  const path = `/${awsEncode(o.bucket, false)}/${awsEncode(o.key, true)}`;
  const query: [string, string][] = [
    ["X-Amz-Algorithm", "AWS4-HMAC-SHA256"],
    ["X-Amz-Credential", `${o.accessKey}/${scope}`],
    ["X-Amz-Date", amzDate],
    ["X-Amz-Expires", String(o.expiry)],
    ["X-Amz-SignedHeaders", signedHeaders],
    ...Object.entries(o.query ?? {}),
  ];
  const canonicalQuery = query
    .map(([k, v]) => `${awsEncode(k, false)}=${awsEncode(v, false)}`)
    .sort()
    .join("&");
  const canonicalHeaders = names.map((n) => `${n}:${signed.get(n)}\n`).join("");
  const canonical = [o.method, path, canonicalQuery, canonicalHeaders, signedHeaders, "UNSIGNED-PAYLOAD"].join("\n");
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
  const signingKey = o.signingKey ? o.signingKey(day) : sigV4Key(o.secretKey, day, o.region);
  const signature = createHmac("sha256", signingKey).update(toSign).digest("hex");
  return `${o.origin.protocol}//${host}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}

/** The SigV4 signing key of a day (`YYYYMMDD`) for S3 in `region`. */
function sigV4Key(secretKey: string, day: string, region: string): Buffer {
  const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();
  return hmac(hmac(hmac(hmac(`AWS4${secretKey}`, day), region), "s3"), "aws4_request");
}
