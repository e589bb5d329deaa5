// The audit domain's queries.
import { auditEvents } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";

export type AuditRow = typeof auditEvents.$inferSelect;

/** Appends an audit row. */
export async function insertAuditEvent(tx: Tx, row: AuditRow): Promise<void> {
  tx.insert(auditEvents).values(row).run();
}
