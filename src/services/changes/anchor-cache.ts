// What a line comment's checks compute from git objects alone, remembered across requests
// (bench/README §29: the hunk check's diff was a tenth of a comment's CPU): the commentable lines
// of one side of a file's diff, by its two blobs, and a patchset's merge base, by its two commits.
// Both are functions of immutable object ids, so a hit answers exactly what computing again
// would; keys carry the repository id all the same, so nothing computed for one repository is
// answered in another. Failures (a thread's time limit) are never remembered.
import { ByteLru } from "../../storage/lru.ts";

/** Commentable-line masks (`hunks:…`) and merge bases (`base:…`), by key. */
export type AnchorCache = ByteLru<string, Uint8Array | string | null>;

/** Bytes the cache holds at most (a 400-line file's mask is 400 bytes). */
const ANCHOR_CACHE_BYTES = 8 * 1024 * 1024;

export function anchorCache(): AnchorCache {
  return new ByteLru(ANCHOR_CACHE_BYTES, (v, k) => 64 + 2 * k.length + (v === null ? 0 : typeof v === "string" ? 2 * v.length : v.byteLength));
}
