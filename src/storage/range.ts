// Argument checks for ranged reads, shared by the backends and the block cache.

import { StorageError } from "./object-store.ts";

/** Throw StorageError("out_of_range") unless offset and length are non-negative safe integers. */
export function assertRange(key: string, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new StorageError(`invalid range ${offset}+${length} for ${key}`, "out_of_range");
  }
}
