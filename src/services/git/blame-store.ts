// Finished blames kept in the object store, so a node that never computed one serves it from
// storage, and a blame of a new commit reuses the stored blame of an ancestor (the engine's
// `KnownBlames`, src/git/blame.ts): after a push of one commit, its blame costs one diff.
//
// Key: `repos/<repo>/blame/v1/<sha-256 of the path, 40 hex>/<commit>`. Like packs, an entry is
// immutable (a function of the commit and the path; "v1" is the engine's rules: change them,
// change the version); the repository id keeps one repository's entries out of another's
// answers, and the repository's purge deletes them with everything else under `repos/<repo>/`.
// The path itself is inside the entry and checked on reading (a hash collision answers nothing).
//
// Contents: gzipped JSON { path, lines, ranges: [start, count, commit index][], commits: info[] };
// only untruncated "ok" outcomes are stored. Reading is hostile-input safe: an entry over
// BLAME_STORED_MAX_BYTES, inflating past BLAME_STORED_MAX_INFLATED, or of any other shape is
// ignored (then recomputed, and the new entry replaces it). Failures of the store are never
// errors of the blame: they read as "not stored" and a failed write is dropped.
//
// Bound on growth: at most BLAME_STORED_PER_PATH entries per path of a repository; past that,
// blames of the path are still computed and cached on the node, but no longer stored. Declared as
// the "blame" kind in services/ops/object-kinds.ts (derived data: fsck does not call it an
// orphan while its repository lives; backup does not copy it).
import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import type { BlameCommitInfo, BlameOutcome, BlameRange, KnownBlame } from "../../git/blame.ts";
import type { Oid } from "../../git/types.ts";
import type { ObjectStore } from "../../storage/object-store.ts";

/** The engine rules a stored entry was computed by (part of the key). */
export const BLAME_STORE_VERSION = "v1";
/** A stored entry's bytes at most (compressed); a larger one is not written, and ignored on reading. */
export const BLAME_STORED_MAX_BYTES = 2 * 1024 * 1024;
/** A stored entry's JSON at most, inflated. */
export const BLAME_STORED_MAX_INFLATED = 16 * 1024 * 1024;
/** Stored entries per path of a repository at most (listing stops there; no more are written). */
export const BLAME_STORED_PER_PATH = 5000;

const SHA = /^[0-9a-f]{40}$/;

/** The key prefix of `path`'s stored blames in repository `repoId`. */
export function blameDir(repoId: string, path: readonly string[]): string {
  const h = createHash("sha256").update(path.join("/")).digest("hex").slice(0, 40);
  return `repos/${repoId}/blame/${BLAME_STORE_VERSION}/${h}/`;
}

/** The key of the stored blame of `path` at `commit` in repository `repoId`. */
export const blameKey = (repoId: string, commit: Oid, path: readonly string[]) => `${blameDir(repoId, path)}${commit}`;

/** The bytes stored for an outcome (gzipped JSON), or null when it is not stored (not ok, truncated, too large). */
export function encodeBlame(path: readonly string[], o: BlameOutcome): Uint8Array | null {
  if (o.kind !== "ok" || o.truncated || o.lines === 0) return null;
  const index = new Map<Oid, number>();
  const commits: BlameCommitInfo[] = [];
  const ranges = o.ranges.map((r) => {
    let i = index.get(r.commit);
    if (i === undefined) {
      i = commits.length;
      index.set(r.commit, i);
      const c = o.commits[r.commit]!;
      commits.push({ sha: c.sha, author: { name: c.author.name, email: c.author.email }, summary: c.summary, authored_at: c.authored_at });
    }
    return [r.start, r.count, i];
  });
  const bytes = gzipSync(JSON.stringify({ path: path.join("/"), lines: o.lines, ranges, commits }));
  return bytes.length > BLAME_STORED_MAX_BYTES ? null : bytes;
}

const isInt = (x: unknown, min: number): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= min;

/** The blame stored in `bytes` for `path`, or null when they are not one (corrupt, oversized, another path). */
export function decodeBlame(bytes: Uint8Array, path: readonly string[]): KnownBlame | null {
  if (bytes.length > BLAME_STORED_MAX_BYTES) return null;
  let v: unknown;
  try {
    v = JSON.parse(gunzipSync(bytes, { maxOutputLength: BLAME_STORED_MAX_INFLATED }).toString("utf8"));
  } catch {
    return null;
  }
  if (!v || typeof v !== "object") return null;
  const { path: p, lines, ranges, commits } = v as Record<string, unknown>;
  if (p !== path.join("/") || !isInt(lines, 1) || !Array.isArray(ranges) || !Array.isArray(commits)) return null;
  const infos: BlameCommitInfo[] = [];
  for (const c of commits) {
    if (!c || typeof c !== "object") return null;
    const { sha, author, summary, authored_at } = c as Record<string, unknown>;
    const a = author as Record<string, unknown> | null;
    if (typeof sha !== "string" || !SHA.test(sha) || typeof summary !== "string" || typeof authored_at !== "number") return null;
    if (!a || typeof a !== "object" || typeof a.name !== "string" || typeof a.email !== "string") return null;
    infos.push({ sha, author: { name: a.name, email: a.email }, summary, authored_at });
  }
  const out: BlameRange[] = [];
  const used: Record<Oid, BlameCommitInfo> = {};
  let next = 1;
  for (const r of ranges) {
    if (!Array.isArray(r) || r.length !== 3) return null;
    const [start, count, i] = r as unknown[];
    if (start !== next || !isInt(count, 1) || !isInt(i, 0) || i >= infos.length) return null;
    const info = infos[i]!;
    out.push({ start, count, commit: info.sha });
    used[info.sha] = info;
    next += count;
  }
  if (next !== lines + 1) return null;
  return { lines, ranges: out, commits: used };
}

/** The commits whose blame of `path` is stored (at most BLAME_STORED_PER_PATH; `full` when that many were found). Nothing on a store failure. */
export async function storedBlames(store: ObjectStore, repoId: string, path: readonly string[]): Promise<{ commits: Set<Oid>; full: boolean }> {
  const dir = blameDir(repoId, path);
  const commits = new Set<Oid>();
  try {
    for await (const o of store.list(dir)) {
      const name = o.key.slice(dir.length);
      if (SHA.test(name)) commits.add(name);
      if (commits.size >= BLAME_STORED_PER_PATH) return { commits, full: true };
    }
  } catch {
    return { commits: new Set(), full: true };
  }
  return { commits, full: false };
}

/** The stored blame of `path` at `commit`, or null (absent, unreadable, corrupt). */
export async function loadBlame(store: ObjectStore, repoId: string, commit: Oid, path: readonly string[]): Promise<KnownBlame | null> {
  try {
    const key = blameKey(repoId, commit, path);
    const size = await store.stat(key);
    if (!size || size.size > BLAME_STORED_MAX_BYTES) return null;
    const bytes = await store.get(key);
    return bytes ? decodeBlame(bytes, path) : null;
  } catch {
    return null;
  }
}

/** Stores the outcome of `path` at `commit` when it is storable; a failed write is dropped (the blame is answered all the same). */
export async function saveBlame(store: ObjectStore, repoId: string, commit: Oid, path: readonly string[], o: BlameOutcome): Promise<boolean> {
  const bytes = encodeBlame(path, o);
  if (!bytes) return false;
  try {
    await store.put(blameKey(repoId, commit, path), bytes);
    return true;
  } catch {
    return false;
  }
}
