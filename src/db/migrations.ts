// drizzle-kit's SQL migrations, embedded into the binary as text so `dist/svc` runs anywhere: one
// journal per database (migrations/ for SQLite, migrations/pg/ for PostgreSQL), both generated
// from the one schema definition by `npm run db:generate`.
import journal from "../../migrations/meta/_journal.json" with { type: "json" };
import pgJournal from "../../migrations/pg/meta/_journal.json" with { type: "json" };
import pg0000 from "../../migrations/pg/0000_baseline.sql" with { type: "text" };
import pg0001 from "../../migrations/pg/0001_fact_epoch.sql" with { type: "text" };
import pg0002 from "../../migrations/pg/0002_node_secrets.sql" with { type: "text" };
import pg0003 from "../../migrations/pg/0003_fact_epoch_log.sql" with { type: "text" };
import pg0004 from "../../migrations/pg/0004_retry_lane.sql" with { type: "text" };
import pg0005 from "../../migrations/pg/0005_reviews.sql" with { type: "text" };
import pg0006 from "../../migrations/pg/0006_ci_workflows.sql" with { type: "text" };
import pg0007 from "../../migrations/pg/0007_ci_artifacts_caches.sql" with { type: "text" };
import pg0008 from "../../migrations/pg/0008_lfs.sql" with { type: "text" };
import pg0009 from "../../migrations/pg/0009_issues.sql" with { type: "text" };
import pg0010 from "../../migrations/pg/0010_lfs_touched.sql" with { type: "text" };
import pg0011 from "../../migrations/pg/0011_issues_state_counts.sql" with { type: "text" };
import pg0012 from "../../migrations/pg/0012_web_second_pass.sql" with { type: "text" };
import pg0013 from "../../migrations/pg/0013_search_gin_direct.sql" with { type: "text" };
import m0000 from "../../migrations/0000_init.sql" with { type: "text" };
import m0001 from "../../migrations/0001_authority_indexes.sql" with { type: "text" };
import m0002 from "../../migrations/0002_people_and_mail.sql" with { type: "text" };
import m0003 from "../../migrations/0003_drop_signup_attempts.sql" with { type: "text" };
import m0004 from "../../migrations/0004_ci.sql" with { type: "text" };
import m0005 from "../../migrations/0005_git_reach_tips.sql" with { type: "text" };
import m0006 from "../../migrations/0006_billing.sql" with { type: "text" };
import m0007 from "../../migrations/0007_hooks_and_mirrors.sql" with { type: "text" };
import m0008 from "../../migrations/0008_changes.sql" with { type: "text" };
import m0009 from "../../migrations/0009_forks.sql" with { type: "text" };
import m0010 from "../../migrations/0010_discovery.sql" with { type: "text" };
import m0011 from "../../migrations/0011_web_activity.sql" with { type: "text" };
import m0012 from "../../migrations/0012_change_patchsets.sql" with { type: "text" };
import m0013 from "../../migrations/0013_contribution_graph.sql" with { type: "text" };
import m0014 from "../../migrations/0014_work_engine.sql" with { type: "text" };
import m0015 from "../../migrations/0015_default_group_index.sql" with { type: "text" };
import m0016 from "../../migrations/0016_node_secrets.sql" with { type: "text" };
import m0017 from "../../migrations/0017_reviews.sql" with { type: "text" };
import m0018 from "../../migrations/0018_ci_workflows.sql" with { type: "text" };
import m0019 from "../../migrations/0019_ci_artifacts_caches.sql" with { type: "text" };
import m0020 from "../../migrations/0020_lfs.sql" with { type: "text" };
import m0021 from "../../migrations/0021_issues.sql" with { type: "text" };
import m0022 from "../../migrations/0022_lfs_touched.sql" with { type: "text" };
import m0023 from "../../migrations/0023_issues_state_counts.sql" with { type: "text" };
import m0024 from "../../migrations/0024_web_second_pass.sql" with { type: "text" };

const SQL: Readonly<Record<string, string>> = Object.freeze({
  "0000_init": m0000,
  "0001_authority_indexes": m0001,
  "0002_people_and_mail": m0002,
  "0003_drop_signup_attempts": m0003,
  "0004_ci": m0004,
  "0005_git_reach_tips": m0005,
  "0006_billing": m0006,
  "0007_hooks_and_mirrors": m0007,
  "0008_changes": m0008,
  "0009_forks": m0009,
  "0010_discovery": m0010,
  "0011_web_activity": m0011,
  "0012_change_patchsets": m0012,
  "0013_contribution_graph": m0013,
  "0014_work_engine": m0014,
  "0015_default_group_index": m0015,
  "0016_node_secrets": m0016,
  "0017_reviews": m0017,
  "0018_ci_workflows": m0018,
  "0019_ci_artifacts_caches": m0019,
  "0020_lfs": m0020,
  "0021_issues": m0021,
  "0022_lfs_touched": m0022,
  "0023_issues_state_counts": m0023,
  "0024_web_second_pass": m0024,
});

const PG_SQL: Readonly<Record<string, string>> = Object.freeze({
  "0000_baseline": pg0000,
  "0001_fact_epoch": pg0001,
  "0002_node_secrets": pg0002,
  "0003_fact_epoch_log": pg0003,
  "0004_retry_lane": pg0004,
  "0005_reviews": pg0005,
  "0006_ci_workflows": pg0006,
  "0007_ci_artifacts_caches": pg0007,
  "0008_lfs": pg0008,
  "0009_issues": pg0009,
  "0010_lfs_touched": pg0010,
  "0011_issues_state_counts": pg0011,
  "0012_web_second_pass": pg0012,
  "0013_search_gin_direct": pg0013,
});

export interface Migration {
  readonly tag: string;
  readonly sql: string;
}

function inOrder(entries: readonly { tag: string }[], texts: Readonly<Record<string, string>>, dir: string): readonly Migration[] {
  return Object.freeze(
    entries.map((e) => {
      const sql = texts[e.tag];
      if (sql === undefined) throw new Error(`migration ${dir}${e.tag} is not embedded in src/db/migrations.ts`);
      return Object.freeze({ tag: e.tag, sql });
    }),
  );
}

/** Every SQLite migration in journal order; a journal entry without embedded SQL is a build error. */
export const migrations: readonly Migration[] = inOrder(journal.entries, SQL, "migrations/");

/** Every PostgreSQL migration in journal order (migrations/pg). */
export const pgMigrations: readonly Migration[] = inOrder(pgJournal.entries, PG_SQL, "migrations/pg/");

/** The statements of one migration (drizzle-kit separates them with `--> statement-breakpoint`). */
export function statementsOf(m: Migration): string[] {
  return m.sql.split("--> statement-breakpoint").filter((s) => s.trim());
}

/** The migrations of a database of `dialect` (readiness compares the applied tags with these). */
export function knownMigrations(dialect: "sqlite" | "pg"): readonly Migration[] {
  return dialect === "pg" ? pgMigrations : migrations;
}
