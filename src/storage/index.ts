// Entry point of the storage layer: pick a backend from configuration.

import { createFsStore } from "./fs-store.ts";
import type { ObjectStore } from "./object-store.ts";
import { createS3Store, type S3Store, type S3StoreConfig } from "./s3-store.ts";

export { BlockCache, type BlockCacheOptions, type RangeReader } from "./block-cache.ts";
export { newStorageStats, totalRequests, type StorageRequestKind, type StorageStats } from "./stats.ts";
export { DEFAULT_RETRY, type RetryPolicy } from "./retry.ts";
export { ByteLru } from "./lru.ts";
export { assertValidKey } from "./keys.ts";
export { StorageError, type ObjectInfo, type ObjectStore, type StorageErrorCode } from "./object-store.ts";
export { createFsStore, createS3Store, type S3Store, type S3StoreConfig };

/** Which backend to use and its settings. */
export type ObjectStoreConfig = { kind: "fs"; root: string } | ({ kind: "s3" } & S3StoreConfig);

/** The ObjectStore described by `cfg`. */
export async function createObjectStore(cfg: ObjectStoreConfig): Promise<ObjectStore> {
  if (cfg.kind === "fs") return createFsStore(cfg.root);
  const { kind: _kind, ...s3 } = cfg;
  return createS3Store(s3);
}
