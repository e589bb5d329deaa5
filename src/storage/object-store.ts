// The one interface every git byte in svc goes through: a flat key space of immutable files
// (packs and their indexes), backed by a local folder or any S3-compatible store.

import type { StorageStats } from "./stats.ts";

/** What a listing yields for each stored object. */
export interface ObjectInfo {
  key: string;
  size: number;
  /** Milliseconds since the epoch. */
  modifiedAt: number;
}

/** What a presigned URL binds besides method, key and lifetime. */
export interface PresignOptions {
  headers?: Readonly<Record<string, string>>;
  query?: Readonly<Record<string, string>>;
}

/** A flat store of immutable objects addressed by slash-separated keys. */
export interface ObjectStore {
  readonly kind: "fs" | "s3";
  /** Request counters since the store was opened (both backends keep them; see stats.ts). */
  readonly stats?: StorageStats;
  /** Write a whole object from a local file atomically (readers never see a partial object). */
  putFile(key: string, path: string): Promise<void>;
  /** Write a whole object from memory atomically. */
  put(key: string, data: Uint8Array): Promise<void>;
  /** The whole object, or null when absent. */
  get(key: string): Promise<Uint8Array | null>;
  /** Exactly `length` bytes at `offset` (StorageError "not_found" / "out_of_range" otherwise). */
  getRange(key: string, offset: number, length: number): Promise<Uint8Array>;
  /** The object's size, or null when absent. */
  stat(key: string): Promise<{ size: number } | null>;
  /** Remove the object; removing an absent object is not an error. */
  delete(key: string): Promise<void>;
  /** Every object whose key starts with `prefix`, in no promised order (S3 and fs sort by key; s3rver does not). */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /**
   * Abort unfinished multipart uploads under `prefix` started before `olderThan` (epoch ms), such
   * as a crash leaves; returns how many. Only stores with multipart uploads (S3) have it.
   */
  abortIncompleteUploads?(prefix: string, olderThan: number): Promise<number>;
  /**
   * S3 only: a URL on which a client GETs or PUTs `key` itself for `seconds` (at most 7 days), so
   * the bytes never pass through svc. Signed for `SVC_S3_PUBLIC_ENDPOINT` when set (the address
   * clients reach the bucket by), else for the endpoint svc uses. Only the URL carries authority:
   * the client sends no Authorization header to the bucket. `opts.headers` are signed too: the
   * client must send each with exactly that value (Git LFS: x-amz-checksum-sha256, which the
   * bucket checks the body against); `opts.query` are signed query parameters (a GET's
   * response-content-type, response-content-disposition).
   */
  presign?(method: "GET" | "PUT", key: string, seconds: number, opts?: PresignOptions): Promise<string>;
  /** fs only: the file that holds `key` (to stream it with sendfile), whether or not it exists yet. */
  localPath?(key: string): string;
}

/**
 * Why a storage call failed in a way callers may want to tell apart. "unavailable": the store
 * kept failing (throttling, server errors, dropped connections) until the retries ran out.
 */
export type StorageErrorCode = "invalid_key" | "not_found" | "out_of_range" | "unavailable";

/** The single error type thrown by the storage layer for expected failures. */
export class StorageError extends Error {
  constructor(
    message: string,
    readonly code: StorageErrorCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "StorageError";
  }
}
