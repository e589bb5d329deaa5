// Queries of a change's patchsets: one row each time its head moved (the change row holds the latest).
import { and, asc, eq } from "drizzle-orm";
import type { changePatchsets } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type PatchsetRow = typeof changePatchsets.$inferSelect;

/** Records patchset `patchset` of a change (inside the transaction that moved its head); a repeat is ignored. */
export async function recordPatchset(tx: Tx, row: PatchsetRow): Promise<void> {
  const { changePatchsets } = tables(tx);
  await tx.insert(changePatchsets).values(row).onConflictDoNothing();
}

/** A change's patchsets, oldest first (a change has at most one per push: bounded by its history). */
export async function patchsetsOf(q: Queryable, changeId: string): Promise<PatchsetRow[]> {
  const { changePatchsets } = tables(q);
  return await q.select().from(changePatchsets).where(eq(changePatchsets.changeId, changeId)).orderBy(asc(changePatchsets.patchset));
}

/** One patchset of a change, or null. */
export async function patchsetOf(q: Queryable, changeId: string, patchset: number): Promise<PatchsetRow | null> {
  const { changePatchsets } = tables(q);
  return (
    one(
      await q
        .select()
        .from(changePatchsets)
        .where(and(eq(changePatchsets.changeId, changeId), eq(changePatchsets.patchset, patchset)))
        .limit(1),
    ) ?? null
  );
}
