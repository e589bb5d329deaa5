// Git LFS (issue 31, DECISIONS §5 "Git LFS"): the objects a repository network holds in object
// storage, and the locks of each repository.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { users } from "./people.ts";
import { repos } from "./repos.ts";

/**
 * An LFS object of a repository network (a repository and its forks share one set: `network_id` is
 * `repos.lfs_network_id`, the network's root repository id, kept even after the root is deleted).
 * A row exists once the object's bytes are stored and verified (size and SHA-256); uploads in
 * flight have none. `repo_id` is the repository that uploaded it first: whose usage counts it.
 */
export const lfsObjects = sqliteTable(
  "lfs_objects",
  {
    networkId: text("network_id").notNull(),
    /** SHA-256 of the content, 64 lower-case hex digits (the LFS oid). */
    oid: text("oid").notNull(),
    size: integer("size").notNull(),
    repoId: text("repo_id"),
    orgId: text("org_id"),
    createdAt: createdAt(),
    /**
     * When a batch last told a client the server already has the object (so the client will push
     * a pointer to it without uploading): GC's grace period counts from the later of this and
     * `created_at`, so an object offered just now is never collected before the push that needs it lands.
     */
    touchedAt: integer("touched_at"),
  },
  (t) => [primaryKey({ columns: [t.networkId, t.oid] }), index("lfs_objects_repo_idx").on(t.repoId), index("lfs_objects_org_idx").on(t.orgId)],
);

/** A lock on a path of a repository (the LFS locking API): a push that changes the path is refused unless its pusher owns the lock. */
export const lfsLocks = sqliteTable(
  "lfs_locks",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    /** The locked path, relative to the repository root, as the client sent it (normalized: no leading `/`, no `.`/`..`). */
    path: text("path").notNull(),
    ownerId: text("owner_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The ref the lock was taken for (LFS `ref.name`), or null. */
    refName: text("ref_name"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("lfs_locks_repo_path_uq").on(t.repoId, t.path), index("lfs_locks_repo_created_idx").on(t.repoId, t.createdAt, t.id)],
);
