// Every kind of file the service writes to the object store, declared once (issue 24). Backup
// copies the files of each kind that the database snapshot names, restore accepts only keys of a
// declared kind, and fsck tells the kinds apart: it checks each kind for what can be checked and
// reports as orphans only files no row accounts for (with the reason for their kind), and as
// unknown any key no kind describes.
//
// A feature that stores a new kind of file (build artifacts, caches, LFS objects) joins by adding
// an entry here: test/unit/ops/object-kinds.test.ts fails for any module that writes to the
// object store without being a declared writer of some kind.
import type { Queryable } from "../../db/database.ts";
import { packKey } from "../git/snapshot.ts";
import * as store from "./store.ts";

/** A stored file named by a database row. */
export interface StoredFile {
  key: string;
  size: number;
  /** The stored size may differ from `size` (a CI log chunk the server's masking pass changed: `size` is the runner's bytes). */
  sizeVaries?: boolean;
}

/** One kind of file in the object store. */
export interface ObjectKind {
  /** The kind's name in manifests and messages. */
  readonly name: string;
  /** What the kind is, for people (README's list of what a backup holds is checked against it). */
  readonly description: string;
  /** The key prefix under which the kind's files live (listed by fsck; restore needs it empty). */
  readonly root: string;
  /** Every key of the kind matches, and nothing else; group 1 is the repository id the file belongs to. */
  readonly key: RegExp;
  /** The modules (paths from the repository root) that write files of this kind. */
  readonly writers: readonly string[];
  /** The files a database (a backup's snapshot) names that a server on it reads: what backup copies. */
  backup(q: Queryable): Promise<StoredFile[]>;
  /** Every key the database accounts for (backup's, plus any kept for a grace period); the kind's other files are orphans. */
  known(q: Queryable): Promise<Set<string>>;
  /** Why a stored file of the kind that the database does not account for is there, given whether its repository exists. */
  orphanReason(repositoryExists: boolean): string;
  /** Derived data (recomputed when absent): no row names it, so fsck calls it an orphan only when its repository is gone. */
  readonly derived?: boolean;
}

/** A repository id in a key: what newId() makes (no dots, so never `.` or `..`). */
const REPO = "([A-Za-z0-9_-]{1,64})";

/** Git objects: immutable packs and their indexes (DESIGN.md "Git storage on object storage"). */
export const PACKS: Readonly<ObjectKind> = {
  name: "pack",
  description: "git packs and their indexes (every live pack of every repository)",
  root: "repos/",
  key: new RegExp(`^repos/${REPO}/packs/pack-[0-9a-f]{40}\\.(?:pack|idx)$`),
  writers: ["src/services/git/git-store.ts"],
  async backup(q) {
    // A pack shared by several repositories (a parent and its forks) is one set of files: copied once.
    const unique = new Map((await store.packRows(q)).map((p) => [`${p.storageRepoId}/${p.name}`, p]));
    return [...unique.values()].flatMap((p) => [
      { key: packKey(p.storageRepoId, p.name, "pack"), size: p.size },
      { key: packKey(p.storageRepoId, p.name, "idx"), size: p.idxSize },
    ]);
  },
  async known(q) {
    // Replaced packs stay named (kept an hour for readers); a fork's rows keep its parent's files known.
    const rows = await store.packRows(q, { withReplaced: true });
    return new Set(rows.flatMap((p) => [packKey(p.storageRepoId, p.name, "pack"), packKey(p.storageRepoId, p.name, "idx")]));
  },
  orphanReason: (exists) =>
    exists ? "no pack row (an upload that never committed; swept after the grace period)" : "its repository was deleted (the purge job removes it)",
};

/** CI job logs: one object per acknowledged append (services/ci/job-calls.ts appendLog). */
export const CI_LOGS: Readonly<ObjectKind> = {
  name: "ci-log",
  description: "CI job logs (every acknowledged chunk of every job's log)",
  root: "repos/",
  key: new RegExp(`^repos/${REPO}/ci-logs/[A-Za-z0-9_-]{1,64}/[0-9]{12}-[A-Za-z0-9_-]{1,64}$`),
  writers: ["src/services/ci/job-calls.ts"],
  async backup(q) {
    return (await store.logChunkRows(q)).map((c) => (c.masked ? { key: c.key, size: c.size, sizeVaries: true } : { key: c.key, size: c.size }));
  },
  async known(q) {
    return new Set((await store.logChunkRows(q)).map((c) => c.key));
  },
  orphanReason: (exists) =>
    exists ? "no log chunk row (an append interrupted before it was recorded; nothing reads it)" : "its repository was deleted (the purge job removes it)",
};

/** CI dependency caches: one archive per entry (services/ci/caches.ts; evicted by services/ci/caches-evict.ts). */
export const CI_CACHES: Readonly<ObjectKind> = {
  name: "ci-cache",
  description: "CI dependency caches (the archive of every committed cache entry)",
  root: "repos/",
  key: new RegExp(`^repos/${REPO}/ci-caches/[a-z2-7]{16}$`),
  writers: ["src/services/ci/caches.ts"],
  async backup(q) {
    // Why only ready entries: a reservation's upload may be partial or absent; restores never read one.
    return store.cacheEntryFiles(q, { readyOnly: true });
  },
  async known(q) {
    return new Set((await store.cacheEntryFiles(q, { readyOnly: false })).map((f) => f.key));
  },
  orphanReason: (exists) =>
    exists
      ? "no cache row (an upload that finished after its reservation expired; the daily eviction pass deletes it)"
      : "its repository was deleted (the purge job removes it)",
};

/** The key of a Git LFS object: one prefix per repository network (services/lfs/lfs.ts lfsObjectKey). */
export function lfsKey(networkId: string, oid: string): string {
  return `lfs/${networkId}/${oid.slice(0, 2)}/${oid}`;
}

/** Git LFS objects: one file per verified object of a repository network (issue 31), named by its SHA-256. */
export const LFS_OBJECTS: Readonly<ObjectKind> = {
  name: "lfs-object",
  description: "Git LFS objects (every verified object of every repository network)",
  root: "lfs/",
  key: new RegExp(`^lfs/${REPO}/[0-9a-f]{2}/[0-9a-f]{64}$`),
  writers: ["src/services/lfs/lfs.ts"],
  async backup(q) {
    return (await store.lfsObjectRows(q)).map((o) => ({ key: lfsKey(o.networkId, o.oid), size: o.size }));
  },
  async known(q) {
    return new Set((await store.lfsObjectRows(q)).map((o) => lfsKey(o.networkId, o.oid)));
  },
  orphanReason: (exists) =>
    exists
      ? "no LFS object row (an upload never verified, or an object the LFS GC removed; the LFS GC deletes it after the grace period)"
      : "no LFS object row, and its network's root repository is gone",
};

/** CI artifacts: one zip per artifact a job uploaded (services/ci/artifacts.ts; on S3 the agent PUTs it to a presigned URL). */
export const CI_ARTIFACTS: Readonly<ObjectKind> = {
  name: "ci-artifact",
  description: "CI artifacts (the zip of every confirmed upload-artifact)",
  root: "repos/",
  key: new RegExp(`^repos/${REPO}/ci-artifacts/[A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,64}\\.zip$`),
  writers: ["src/services/ci/artifacts.ts"],
  async backup(q) {
    return (await store.artifactRows(q)).filter((a) => a.ready).map((a) => ({ key: a.key, size: a.size }));
  },
  async known(q) {
    // A reservation's object may be arriving (or have arrived unconfirmed): its row accounts for it until the sweep.
    return new Set((await store.artifactRows(q)).map((a) => a.key));
  },
  orphanReason: (exists) =>
    exists
      ? "no artifact row (the sweep deleted the row after a crash left the object; nothing reads it)"
      : "its repository was deleted (the purge job removes it)",
};

/**
 * People's uploaded avatars (issue 33): one image per person who uploaded one, named by
 * `users.avatar` (`avatars/{user id}/{sha256}.{png|jpg|webp}`). Group 1 is the person's id, not a
 * repository's: fsck's "repository exists" does not apply, so the orphan reason ignores it.
 */
export const AVATARS: Readonly<ObjectKind> = {
  name: "avatar",
  description: "people's uploaded avatars (the picture each person's row names)",
  root: "avatars/",
  key: new RegExp(`^avatars/${REPO}/[0-9a-f]{64}\\.(?:png|jpg|webp)$`),
  writers: ["src/services/people/avatar.ts"],
  async backup(q) {
    // The row names the file, not its size (the key's hash fixes the bytes): size is what the store says.
    return (await store.avatarKeys(q)).map((key) => ({ key, size: 0, sizeVaries: true }));
  },
  async known(q) {
    return new Set(await store.avatarKeys(q));
  },
  orphanReason: () => "no person names it (replaced or removed, and the old picture's delete failed; nothing reads it)",
};

/** Stored blames (services/git/blame-store.ts): derived from the packs, immutable, recomputed when absent; never backed up. */
export const BLAMES: Readonly<ObjectKind> = {
  name: "blame",
  description: "stored blames (derived from the git objects and recomputed when absent)",
  root: "repos/",
  key: new RegExp(`^repos/${REPO}/blame/v[0-9]{1,4}/[0-9a-f]{40}/[0-9a-f]{40}$`),
  writers: ["src/services/git/blame-store.ts"],
  derived: true,
  async backup() {
    return [];
  },
  async known() {
    return new Set();
  },
  orphanReason: (exists) => (exists ? "a stored blame (derived data; kept)" : "its repository was deleted (the purge job removes it)"),
};

/** Every kind, in the order backups list them. */
export const OBJECT_KINDS: readonly ObjectKind[] = [PACKS, CI_LOGS, CI_CACHES, CI_ARTIFACTS, LFS_OBJECTS, AVATARS, BLAMES];

/** The kind a key belongs to, or null when svc never writes such a key. */
export function kindOf(key: string): ObjectKind | null {
  return OBJECT_KINDS.find((k) => k.key.test(key)) ?? null;
}

/** The repository id a key of some kind belongs to, or null. */
export function repoIdOf(key: string): string | null {
  return kindOf(key)?.key.exec(key)?.[1] ?? null;
}

/** The distinct roots of the kinds (what fsck lists, and what restore needs empty). */
export function objectRoots(): string[] {
  return [...new Set(OBJECT_KINDS.map((k) => k.root))];
}
