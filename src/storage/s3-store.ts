// ObjectStore over any S3-compatible service, through the minio client (path-style requests,
// so it works against MinIO, s3rver, Ceph, R2 and AWS alike).

import { readFile, stat } from "node:fs/promises";
import { Client } from "minio";
import type { Readable } from "node:stream";
import { assertValidKey, assertValidPrefix } from "./keys.ts";
import { StorageError, type ObjectStore } from "./object-store.ts";
import { assertRange } from "./range.ts";
import { MIN_PART_SIZE, uploadFileInParts } from "./s3-multipart.ts";

/** Where and how to reach the bucket. */
export interface S3StoreConfig {
  /** http(s)://host:port */
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  region?: string | undefined;
}

/** An ObjectStore keeping each object under its key in `cfg.bucket`, creating the bucket if missing. */
export async function createS3Store(cfg: S3StoreConfig): Promise<ObjectStore> {
  const region = cfg.region ?? "us-east-1";
  const client = new Client({ ...parseEndpoint(cfg.endpoint), accessKey: cfg.accessKey, secretKey: cfg.secretKey, region, pathStyle: true });
  const bucket = cfg.bucket;
  await ensureBucket(client, bucket, region);

  return {
    kind: "s3",

    async putFile(key, path) {
      assertValidKey(key);
      const { size } = await stat(path);
      if (size <= MIN_PART_SIZE) {
        await client.putObject(bucket, key, await readFile(path));
      } else {
        await uploadFileInParts(client, bucket, key, path, size);
      }
    },

    async put(key, data) {
      assertValidKey(key);
      await client.putObject(bucket, key, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    },

    async get(key) {
      assertValidKey(key);
      try {
        return await collect(await client.getObject(bucket, key));
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },

    async getRange(key, offset, length) {
      assertValidKey(key);
      assertRange(key, offset, length);
      if (length === 0) return new Uint8Array(0);
      let bytes: Uint8Array;
      try {
        bytes = await collectAtMost(await client.getPartialObject(bucket, key, offset, length), length);
      } catch (err) {
        if (isNotFound(err)) throw new StorageError(`no such object: ${key}`, "not_found");
        if (codeOf(err) === "InvalidRange") {
          throw new StorageError(`range ${offset}+${length} past the end of ${key}`, "out_of_range");
        }
        throw err;
      }
      if (bytes.length !== length) {
        throw new StorageError(`range ${offset}+${length} past the end of ${key}`, "out_of_range");
      }
      return bytes;
    },

    async stat(key) {
      assertValidKey(key);
      try {
        return { size: (await client.statObject(bucket, key)).size };
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },

    async delete(key) {
      assertValidKey(key);
      try {
        await client.removeObject(bucket, key);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },

    list(prefix) {
      assertValidPrefix(prefix);
      return (async function* () {
        for await (const item of client.listObjectsV2(bucket, prefix, true)) {
          if (item.name !== undefined) {
            yield { key: item.name, size: item.size, modifiedAt: item.lastModified.getTime() };
          }
        }
      })();
    },
  };
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

// Stops at `limit` bytes: some servers (s3rver, for "bytes=0-0") answer a range starting at 0
// with the whole object, whose prefix is still the right answer.
async function collectAtMost(stream: Readable, limit: number): Promise<Uint8Array> {
  const out = new Uint8Array(limit);
  let at = 0;
  for await (const chunk of stream as AsyncIterable<Uint8Array>) {
    const take = Math.min(chunk.length, limit - at);
    out.set(chunk.subarray(0, take), at);
    at += take;
    if (at === limit) break;
  }
  stream.destroy();
  return at === limit ? out : out.subarray(0, at);
}

function codeOf(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

function isNotFound(err: unknown): boolean {
  const code = codeOf(err);
  return code === "NoSuchKey" || code === "NotFound";
}
