// The S3 store through throttling, server errors and dropped connections (the fault proxy in
// front of s3rver): every call retries through them, gives up cleanly when they persist, and a
// multipart upload that gives up leaves no parts behind.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "minio";
import { BlockCache } from "../../../src/storage/block-cache.ts";
import { StorageError } from "../../../src/storage/object-store.ts";
import { MIN_PART_SIZE } from "../../../src/storage/s3-multipart.ts";
import { createS3Store, type S3Store } from "../../../src/storage/s3-store.ts";
import { startFaultProxy, type FaultProxyHandle } from "../../helpers/fault-proxy.ts";
import { startS3rver, type S3rverHandle } from "../../helpers/s3rver.ts";
import { bytes, same } from "../../unit/storage/object-store-contract.ts";

let s3: S3rverHandle;
let proxy: FaultProxyHandle;
let scratch: string;
const BUCKET = "faulty";
const FAST_RETRY = { attempts: 30, baseDelayMs: 1, maxDelayMs: 4, deadlineMs: 60_000, attemptTimeoutMs: 30_000 };

/** A client straight to s3rver, to see what is really stored. */
function direct(): Client {
  const u = new URL(s3.endpoint);
  return new Client({
    endPoint: u.hostname,
    port: Number(u.port),
    useSSL: false,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    region: "us-east-1",
    pathStyle: true,
  });
}

async function openUploads(): Promise<string[]> {
  return (await direct().listIncompleteUploadsQuery(BUCKET, "", "", "", "")).uploads.map((u) => u.key);
}

function store(opts: Partial<Parameters<typeof createS3Store>[0]> = {}): Promise<S3Store> {
  return createS3Store({ ...s3, endpoint: proxy.endpoint, bucket: BUCKET, retry: FAST_RETRY, ...opts });
}

beforeAll(async () => {
  s3 = await startS3rver();
  proxy = await startFaultProxy(s3.endpoint);
  scratch = await mkdtemp(join(tmpdir(), "svc-s3-faults-"));
}, 30_000);
afterAll(async () => {
  await proxy?.stop();
  await s3?.stop();
  await rm(scratch, { recursive: true, force: true });
}, 30_000);

// A test that fails half-way must not leave its faults on for the next one.
afterEach(() => proxy.configure({ delayMs: 0, slowDown: 0, reset: 0, match: null, firstTry: null }));

/** Every request the store made, retries included. */
function attempts(s: S3Store): number {
  return Object.values(s.stats.requests).reduce((n, k) => n + k, 0);
}

describe("s3 store under faults", () => {
  test("every call succeeds through SlowDown and resets, with the same bytes, and counts what happened", async () => {
    await proxy.configure({ seed: 3, slowDown: 0, reset: 0 });
    const s = await store();
    await proxy.resetStats();
    const attemptsBefore = attempts(s);
    await proxy.configure({ seed: 3, slowDown: 0.25, reset: 0.15 });
    const small = bytes(200_000, 1);
    const big = bytes(2 * MIN_PART_SIZE + 12_345, 2);
    await writeFile(join(scratch, "big"), big);
    await s.put("repos/a/packs/pack-1.idx", small);
    await s.putFile("repos/a/packs/pack-1.pack", join(scratch, "big"));
    expect(same(await s.get("repos/a/packs/pack-1.idx"), small)).toBe(true);
    for (const [offset, length] of [
      [0, 1],
      [MIN_PART_SIZE - 10, 20],
      [big.length - 5000, 5000],
      [1000, 3 * 1024 * 1024],
    ] as const) {
      expect(same(await s.getRange("repos/a/packs/pack-1.pack", offset, length), big.subarray(offset, offset + length))).toBe(true);
    }
    expect(await s.stat("repos/a/packs/pack-1.pack")).toEqual({ size: big.length });
    const listed = [];
    for await (const o of s.list("repos/a/")) listed.push(o.key);
    expect(listed.sort()).toEqual(["repos/a/packs/pack-1.idx", "repos/a/packs/pack-1.pack"]);
    await s.delete("repos/a/packs/pack-1.idx");
    expect(await s.get("repos/a/packs/pack-1.idx")).toBeNull();

    const faults = await proxy.stats();
    expect(faults.slowDowns).toBeGreaterThan(0);
    expect(faults.resets).toBeGreaterThan(0);
    // Every SlowDown is seen and retried by the store. A reset is retried by the store, or by
    // Bun's fetch itself (a reused keep-alive connection dropped before any byte of the answer is
    // sent once more without telling: a request the proxy saw beyond the store's own), or not at
    // all when it cut the body after the bytes the store wanted (a range answered as the whole
    // object, read up to the range and cancelled). The idx's second GET is always reset (the
    // faults are drawn per request and occurrence), so the store retried at least one of them.
    const retriedByFetch = faults.requests - (attempts(s) - attemptsBefore);
    expect(retriedByFetch).toBeGreaterThanOrEqual(0);
    expect(s.stats.throttled).toBe(faults.slowDowns);
    expect(s.stats.networkErrors).toBeGreaterThanOrEqual(1);
    expect(s.stats.retries).toBe(s.stats.throttled + s.stats.networkErrors);
    expect(s.stats.networkErrors + retriedByFetch).toBeLessThanOrEqual(faults.resets);
    expect(s.stats.failures).toBe(0);
    expect(s.stats.requests.PUT).toBeGreaterThanOrEqual(4);
    expect(s.stats.requests.LIST).toBeGreaterThanOrEqual(1);
    expect(s.stats.bytesRead).toBeGreaterThanOrEqual(small.length + 3 * 1024 * 1024);
    expect(await openUploads()).toEqual([]);
    await proxy.configure({ slowDown: 0, reset: 0 });
  }, 60_000);

  test("a read that keeps failing gives up with StorageError unavailable", async () => {
    const s = await store({ retry: { ...FAST_RETRY, attempts: 4 } });
    await s.put("repos/b/x", bytes(100, 1));
    await proxy.configure({ slowDown: 1, reset: 0 });
    const err = await s.getRange("repos/b/x", 0, 10).catch((e: unknown) => e);
    await proxy.configure({ slowDown: 0 });
    expect(err).toBeInstanceOf(StorageError);
    expect({ code: (err as StorageError).code, retries: s.stats.retries, failures: s.stats.failures }).toEqual({
      code: "unavailable",
      retries: 3,
      failures: 1,
    });
    expect((err as Error).message).toContain("GET repos/b/x bytes 0+10 failed after 4 attempts");
  });

  test("a multipart upload retries only the parts that failed", async () => {
    const s = await store();
    const data = bytes(2 * MIN_PART_SIZE + 1, 4);
    await writeFile(join(scratch, "three-parts"), data);
    await proxy.configure({ seed: 5, slowDown: 0.5, reset: 0, match: { method: "PUT", pathIncludes: "partNumber=" } });
    await proxy.resetStats();
    await s.putFile("repos/c/packs/pack-3.pack", join(scratch, "three-parts"));
    const st = await proxy.stats();
    await proxy.configure({ slowDown: 0, match: null });
    expect(st.slowDowns).toBeGreaterThan(0);
    // Three parts, each sent once plus once per SlowDown it got; nothing else re-sent.
    expect(st.byKind.PUT).toBe(3 + st.slowDowns);
    expect(same(await s.get("repos/c/packs/pack-3.pack"), data)).toBe(true);
    expect(await openUploads()).toEqual([]);
  }, 60_000);

  test("a multipart upload that gives up is aborted: no parts and no object left behind", async () => {
    const s = await store({ retry: { ...FAST_RETRY, attempts: 3 } });
    const data = bytes(2 * MIN_PART_SIZE + 1, 6);
    await writeFile(join(scratch, "doomed"), data);
    await proxy.configure({ seed: 1, slowDown: 0, reset: 1, match: { method: "PUT", pathIncludes: "partNumber=2" } });
    const err = await s.putFile("repos/d/packs/pack-4.pack", join(scratch, "doomed")).catch((e: unknown) => e);
    await proxy.configure({ reset: 0, match: null });
    expect(err).toMatchObject({ code: "unavailable" });
    expect(await openUploads()).toEqual([]);
    expect(s.stats.uploadsAborted).toBe(1);
    expect(
      await direct()
        .statObject(BUCKET, "repos/d/packs/pack-4.pack")
        .catch((e: { code: string }) => e.code),
    ).toBe("NotFound");
  }, 60_000);

  test("abortIncompleteUploads sweeps uploads older than the cutoff under a prefix, and only those", async () => {
    const s = await store();
    const c = direct();
    await c.initiateNewMultipartUpload(BUCKET, "repos/e/packs/pack-5.pack", {});
    await c.initiateNewMultipartUpload(BUCKET, "repos/f/packs/pack-6.pack", {});
    expect(await s.abortIncompleteUploads("repos/e/", Date.now() - 3_600_000)).toBe(0);
    expect(await s.abortIncompleteUploads("repos/e/", Date.now() + 60_000)).toBe(1);
    expect(await openUploads()).toEqual(["repos/f/packs/pack-6.pack"]);
    expect(await s.abortIncompleteUploads("repos/", Date.now() + 60_000)).toBe(1);
    expect(await openUploads()).toEqual([]);
  });

  test("requests in flight stay within the per-server and per-repository bounds", async () => {
    const s = await store({ maxInFlight: 3, maxInFlightPerRepo: 2 });
    for (const r of ["g", "h"]) await s.put(`repos/${r}/packs/pack-7.pack`, bytes(10_000, 7));
    await proxy.configure({ delayMs: 20 });
    await proxy.resetStats();
    await Promise.all(Array.from({ length: 12 }, (_, i) => s.getRange(`repos/${i % 2 ? "g" : "h"}/packs/pack-7.pack`, i * 10, 10)));
    const onlyG = await store({ maxInFlight: 8, maxInFlightPerRepo: 2 });
    await Promise.all(Array.from({ length: 8 }, (_, i) => onlyG.getRange("repos/g/packs/pack-7.pack", i * 10, 10)));
    await proxy.configure({ delayMs: 0 });
    expect(s.stats.peakInFlight).toBe(3);
    expect(onlyG.stats.peakInFlight).toBe(2);
    expect((await proxy.stats()).peakInFlight).toBeLessThanOrEqual(3);
  });

  test("read-ahead through a slow, faulty bucket returns the same bytes as sequential reads", async () => {
    const s = await store();
    const data = bytes(5 * 1024 * 1024 + 77, 8);
    await s.put("repos/i/packs/pack-8.pack", data);
    await proxy.configure({ seed: 9, delayMs: 5, slowDown: 0.2, reset: 0.1 });
    const cache = new BlockCache(s, { readAhead: { chunkBytes: 512 * 1024, firstChunkBytes: 100_000, window: 4 } });
    const source = cache.source("repos/i/packs/pack-8.pack", data.length);
    const parts: Uint8Array[] = [];
    for await (const chunk of source.stream!(33, data.length - 33)) parts.push(chunk);
    const sequential: Uint8Array[] = [];
    for (let at = 33; at < data.length; at += 700_000) sequential.push(await s.getRange("repos/i/packs/pack-8.pack", at, Math.min(700_000, data.length - at)));
    await proxy.configure({ delayMs: 0, slowDown: 0, reset: 0 });
    expect(Buffer.concat(parts).equals(Buffer.concat(sequential))).toBe(true);
    expect(same(Buffer.concat(parts), data.subarray(33))).toBe(true);
  }, 60_000);
});
