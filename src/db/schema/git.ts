// Git data in SQLite: refs and the live pack list (objects live in object storage).
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { repos } from "./repos.ts";

export const refs = sqliteTable(
  "refs",
  {
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    target: text("target").notNull(),
  },
  (t) => [primaryKey({ columns: [t.repoId, t.name] })],
);

export const packs = sqliteTable(
  "packs",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /**
     * The repository under whose key prefix the files live (`repos/<storage>/packs/…`): this row's
     * own repository, or the one a fork (or a landed change) shares the immutable pack with. No
     * foreign key: the files outlive a deleted owner while any row still names them.
     */
    storageRepoId: text("storage_repo_id").notNull().default(""),
    size: integer("size").notNull(),
    idxSize: integer("idx_size").notNull(),
    objectCount: integer("object_count").notNull(),
    tier: integer("tier").notNull().default(0),
    createdAt: createdAt(),
    /** Set when compaction replaced the pack; its files are deleted after a grace period. */
    replacedAt: integer("replaced_at"),
    /**
     * Reachability record: when set, the pack holds exactly the objects reachable from these ids
     * (newline-separated): a GC pack, or the first push into an empty repository. Clones then mark
     * the pack as sent and walk only what lies outside it.
     */
    reachTips: text("reach_tips"),
  },
  (t) => [uniqueIndex("packs_repo_name_uq").on(t.repoId, t.name), index("packs_storage_name_idx").on(t.storageRepoId, t.name)],
);
