// Repositories, per-repo grants, branch protections, commit contexts and watching.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { orgs, teams } from "./orgs.ts";
import { users } from "./people.ts";

export const repos = sqliteTable(
  "repos",
  {
    id: id(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["native", "mirror"] })
      .notNull()
      .default("native"),
    public: integer("public", { mode: "boolean" }).notNull().default(false),
    defaultBranch: text("default_branch").notNull().default("main"),
    description: text("description"),
    homepage: text("homepage"),
    originUrl: text("origin_url"),
    originProvider: text("origin_provider", { enum: ["app", "generic"] }),
    originInstallation: text("origin_installation"),
    lastSyncAt: integer("last_sync_at"),
    lastSyncedCommit: text("last_synced_commit"),
    syncError: text("sync_error"),
    forkParentId: text("fork_parent_id"),
    forkState: text("fork_state", { enum: ["pending", "ready", "failed"] }),
    /**
     * The repository network whose LFS objects this repository shares (issue 31): its root's id, a
     * fork inheriting its parent's. Null means the repository's own id (set at fork time, kept when
     * the root is deleted).
     */
    lfsNetworkId: text("lfs_network_id"),
    /**
     * When the repository last changed (issue 33: explore sorts by it): a push, a landing or a
     * mirror sync that moved a ref; its creation until then.
     */
    activeAt: integer("active_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("repos_org_name_uq").on(t.orgId, sql`lower(${t.name})`),
    // Explore (issue 33): public repositories, most recently active first.
    index("repos_public_active_idx").on(t.public, t.activeAt),
    index("repos_fork_parent_idx").on(t.forkParentId),
    // Search (services/discovery/search.ts): exact and prefix name matches across every org.
    index("repos_name_idx").on(sql`lower(${t.name})`),
  ],
);

/**
 * Names a repository had before a rename (issue 33): the web pages at an old name redirect to the
 * repository's current address while no repository holds that name again. One row per old name;
 * a repository created or renamed to the name removes the row.
 */
export const repoRedirects = sqliteTable(
  "repo_redirects",
  {
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  // The key is the name as recorded (backup and migrate-db copy tables by primary key); the unique index keeps it one per name in any case.
  (t) => [
    primaryKey({ columns: [t.orgId, t.name] }),
    uniqueIndex("repo_redirects_org_name_uq").on(t.orgId, sql`lower(${t.name})`),
    index("repo_redirects_repo_idx").on(t.repoId),
  ],
);

export const grants = sqliteTable(
  "grants",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    teamId: text("team_id").references(() => teams.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["viewer", "member", "admin"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("grants_repo_user_uq").on(t.repoId, t.userId),
    uniqueIndex("grants_repo_team_uq").on(t.repoId, t.teamId),
    index("grants_user_idx").on(t.userId),
    index("grants_team_idx").on(t.teamId),
  ],
);

export const protections = sqliteTable(
  "protections",
  {
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    pattern: text("pattern").notNull(),
    allowForcePush: integer("allow_force_push", { mode: "boolean" }).notNull().default(false),
    allowDeletion: integer("allow_deletion", { mode: "boolean" }).notNull().default(false),
    requireChange: integer("require_change", { mode: "boolean" }).notNull().default(false),
    requiredChecks: text("required_checks", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** Approvals from people with write access a change needs before it lands (0–10). */
    requiredApprovals: integer("required_approvals").notNull().default(0),
    /** A push to a change dismisses the approvals given on earlier patchsets. */
    dismissStaleApprovals: integer("dismiss_stale_approvals", { mode: "boolean" }).notNull().default(true),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.repoId, t.pattern] })],
);

export const commitContexts = sqliteTable(
  "commit_contexts",
  {
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    sha: text("sha").notNull(),
    context: text("context").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.repoId, t.sha] })],
);

export const subscriptions = sqliteTable(
  "subscriptions",
  {
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    level: text("level", { enum: ["all", "participating", "ignore"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.repoId, t.userId] }), index("subscriptions_repo_level_idx").on(t.repoId, t.level)],
);
