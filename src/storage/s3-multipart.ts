// Upload of a local file to S3 in parts, reading one part at a time from disk so a pack of
// hundreds of megabytes never sits in memory whole. Each request (start, every part, complete)
// is retried on its own, so a throttled or dropped part costs one part, not the upload. The
// object appears only when the upload is completed (S3 makes it visible atomically); an upload
// that gives up is aborted, so no parts are left behind (and the sweep aborts any a crash left).

import { open } from "node:fs/promises";
import type { Client } from "minio";
import type { S3Call } from "./s3-store.ts";
import type { StorageStats } from "./stats.ts";

/** Smallest part we send: S3 requires at least 5 MiB for every part but the last. */
export const MIN_PART_SIZE = 8 * 1024 * 1024;
const MAX_PARTS = 10_000;
const MIB = 1024 * 1024;

/** Part size for an object of `size` bytes: MIN_PART_SIZE, grown in whole MiB to stay within 10,000 parts. */
export function partSizeFor(size: number): number {
  return Math.max(MIN_PART_SIZE, Math.ceil(size / MAX_PARTS / MIB) * MIB);
}

/** What an upload needs from its store. */
export interface MultipartTarget {
  client: Client;
  bucket: string;
  call: S3Call;
  stats: StorageStats;
}

/** Upload `size` bytes of the file at `path` as `key`, `concurrency` parts in flight at most. */
export async function uploadFileInParts(target: MultipartTarget, key: string, path: string, size: number, concurrency = 4): Promise<void> {
  const { client, bucket, call, stats } = target;
  const partSize = partSizeFor(size);
  const count = Math.ceil(size / partSize);
  const file = await open(path, "r");
  let uploadId: string | undefined;
  try {
    uploadId = await call(key, `start upload of ${key}`, () => client.initiateNewMultipartUpload(bucket, key, {}));
    const id = uploadId;
    const etags: { part: number; etag: string }[] = new Array(count);
    let next = 0;
    let failed = false;
    const worker = async (): Promise<void> => {
      while (next < count && !failed) {
        const index = next++;
        const start = index * partSize;
        const body = Buffer.alloc(Math.min(partSize, size - start));
        const { bytesRead } = await file.read(body, 0, body.length, start);
        if (bytesRead !== body.length) throw new Error(`${path} changed size during upload`);
        const part = index + 1;
        const { etag } = await call(key, `PUT ${key} part ${part}/${count}`, async () => {
          const result = await client.uploadPart({ bucketName: bucket, objectName: key, uploadID: id, partNumber: part, headers: {} }, body);
          stats.bytesWritten += body.length;
          return result;
        });
        etags[index] = { part, etag };
      }
    };
    // Every worker settles before a failure is thrown: a part still in flight during the abort
    // could otherwise land after it and be left behind.
    const settled = await Promise.allSettled(
      Array.from({ length: Math.min(concurrency, count) }, () =>
        worker().catch((err) => {
          failed = true;
          throw err;
        }),
      ),
    );
    for (const s of settled) if (s.status === "rejected") throw s.reason;
    await call(key, `complete upload of ${key}`, async (attempt) => {
      try {
        await client.completeMultipartUpload(bucket, key, id, etags);
      } catch (err) {
        // A retried completion whose first try went through finds the upload gone and the object there.
        if (attempt > 0 && (err as { code?: string }).code === "NoSuchUpload") {
          const info = await client.statObject(bucket, key).catch(() => null);
          if (info?.size === size) return;
        }
        throw err;
      }
    });
    uploadId = undefined;
  } finally {
    await file.close();
    if (uploadId !== undefined) {
      const id = uploadId;
      // Best effort: if even the abort gives up, the sweep aborts stale uploads later.
      await call(key, `abort upload of ${key}`, () => client.abortMultipartUpload(bucket, key, id)).then(
        () => void stats.uploadsAborted++,
        () => {},
      );
    }
  }
}
