// The audit domain's queries: append-only rows, read newest first.
import { sql } from "drizzle-orm";
import type { auditEvents } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { tables } from "../../db/tables.ts";
import { x } from "../../db/dialect.ts";

export type AuditRow = typeof auditEvents.$inferSelect;

/** Appends an audit row. */
export async function insertAuditEvent(tx: Tx, row: AuditRow): Promise<void> {
  const { auditEvents } = tables(tx);
  await tx.insert(auditEvents).values(row);
}

/** Up to `limit` of the org's events in [from, to), optionally of one action, newest first, after the position `after`. */
export async function auditEventsOf(
  q: Queryable,
  orgId: string,
  f: { action: string | null; from: number | null; to: number | null; after: [number, string] | null; limit: number },
): Promise<AuditRow[]> {
  const rows = await x(q).rows<Record<string, unknown>>(sql`
    SELECT id, org_id, action, actor_kind, actor_id, actor_name, target, data, created_at FROM audit_events
    WHERE org_id = ${orgId}
      ${f.action === null ? sql`` : sql`AND action = ${f.action}`}
      ${f.from === null ? sql`` : sql`AND created_at >= ${f.from}`}
      ${f.to === null ? sql`` : sql`AND created_at < ${f.to}`}
      ${f.after === null ? sql`` : sql`AND (created_at < ${f.after[0]} OR (created_at = ${f.after[0]} AND id < ${f.after[1]}))`}
    ORDER BY created_at DESC, id DESC LIMIT ${f.limit}`);
  return rows.map((r) => ({
    id: r.id as string,
    orgId: r.org_id as string,
    action: r.action as string,
    actorKind: r.actor_kind as string,
    actorId: r.actor_id as string | null,
    actorName: r.actor_name as string | null,
    target: r.target as string | null,
    data: typeof r.data === "string" ? JSON.parse(r.data) : (r.data ?? null),
    createdAt: r.created_at as number,
  }));
}
