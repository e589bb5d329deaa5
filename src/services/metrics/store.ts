// The metrics domain's queries. Async, so another database changes this file, not the services.
import { metrics } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";

export type MetricRow = Omit<typeof metrics.$inferInsert, "id">;

/** Appends one metric row. */
export async function insertMetric(tx: Tx, row: MetricRow): Promise<void> {
  tx.insert(metrics).values(row).run();
}
