// Key validation shared by every backend. Keys become file paths in the fs backend, so this
// is the check that keeps a key from escaping the storage root.

import { StorageError } from "./object-store.ts";

// Why a narrow charset: keys are built by svc itself (repo ids, hex shas, fixed words), so
// anything else is a bug or an attack; it also rules out NUL, backslashes and Unicode tricks,
// and leaves "~" free to mark the fs backend's temp files.
const SEGMENT = /^[A-Za-z0-9._-]+$/;
const MAX_KEY_BYTES = 1024;

/** Throw StorageError("invalid_key") unless `key` is a safe relative key like `repos/r1/packs/pack-x.pack`. */
export function assertValidKey(key: string): void {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_BYTES) {
    throw new StorageError(`invalid storage key: ${JSON.stringify(key)}`, "invalid_key");
  }
  for (const segment of key.split("/")) {
    if (!SEGMENT.test(segment) || segment === "." || segment === "..") {
      throw new StorageError(`invalid storage key: ${JSON.stringify(key)}`, "invalid_key");
    }
  }
}

/** Throw StorageError("invalid_key") unless `prefix` is "" or a valid key, optionally ending in "/". */
export function assertValidPrefix(prefix: string): void {
  if (prefix === "") return;
  assertValidKey(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix);
}
