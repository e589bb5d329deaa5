// PostgreSQL migrations (migrations/pg, embedded by src/db/migrations.ts): every pending tag in
// one transaction under a transaction-scoped advisory lock, so nodes starting at once queue on
// the lock and the later ones find nothing to do; DDL is transactional, so a failed migration
// leaves nothing half-applied. `svc_migrations (tag, applied_at)` has the shape it has on SQLite.
import type { SQL } from "bun";
import { type Migration, pgMigrations, statementsOf } from "../migrations.ts";

/** Applies the pending migrations; answers the tags applied now (empty when none were pending). */
export async function migratePg(sql: SQL, migrations: readonly Migration[] = pgMigrations): Promise<string[]> {
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('svc.migrate'))`;
    await tx.unsafe("CREATE TABLE IF NOT EXISTS svc_migrations (tag text PRIMARY KEY, applied_at bigint NOT NULL)");
    const rows: { tag: string }[] = await tx`SELECT tag FROM svc_migrations`;
    const done = new Set(rows.map((r) => r.tag));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.tag)) continue;
      for (const stmt of statementsOf(m)) await tx.unsafe(stmt);
      await tx`INSERT INTO svc_migrations (tag, applied_at) VALUES (${m.tag}, ${Date.now()})`;
      applied.push(m.tag);
    }
    return applied;
  });
}

/** The tags applied to the database (readiness: applied ⊇ known). */
export async function appliedPg(sql: SQL): Promise<string[]> {
  const rows: { tag: string }[] = await sql`SELECT tag FROM svc_migrations ORDER BY tag`;
  return rows.map((r) => r.tag);
}
