// Upload of a local file to S3 in parts, reading one part at a time from disk so a pack of
// hundreds of megabytes never sits in memory whole. The object appears only when the upload
// is completed (S3 makes it visible atomically); a failed upload is aborted.

import { open } from "node:fs/promises";
import type { Client } from "minio";

/** Smallest part we send: S3 requires at least 5 MiB for every part but the last. */
export const MIN_PART_SIZE = 8 * 1024 * 1024;
const MAX_PARTS = 10_000;
const MIB = 1024 * 1024;

/** Part size for an object of `size` bytes: MIN_PART_SIZE, grown in whole MiB to stay within 10,000 parts. */
export function partSizeFor(size: number): number {
  return Math.max(MIN_PART_SIZE, Math.ceil(size / MAX_PARTS / MIB) * MIB);
}

/** Upload `size` bytes of the file at `path` as `key`, `concurrency` parts in flight at most. */
export async function uploadFileInParts(
  client: Client,
  bucket: string,
  key: string,
  path: string,
  size: number,
  concurrency = 4,
): Promise<void> {
  const partSize = partSizeFor(size);
  const count = Math.ceil(size / partSize);
  const file = await open(path, "r");
  let uploadId: string | undefined;
  try {
    uploadId = await client.initiateNewMultipartUpload(bucket, key, {});
    const id = uploadId;
    const etags: { part: number; etag: string }[] = new Array(count);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const index = next++;
        const start = index * partSize;
        const body = Buffer.alloc(Math.min(partSize, size - start));
        const { bytesRead } = await file.read(body, 0, body.length, start);
        if (bytesRead !== body.length) throw new Error(`${path} changed size during upload`);
        const part = index + 1;
        const { etag } = await client.uploadPart(
          { bucketName: bucket, objectName: key, uploadID: id, partNumber: part, headers: {} },
          body,
        );
        etags[index] = { part, etag };
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
    await client.completeMultipartUpload(bucket, key, id, etags);
  } catch (err) {
    if (uploadId) await client.abortMultipartUpload(bucket, key, uploadId).catch(() => {});
    throw err;
  } finally {
    await file.close();
  }
}
