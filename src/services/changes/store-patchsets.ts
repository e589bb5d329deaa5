// Queries of a change's patchsets: one row each time its head moved (the change row holds the latest).
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { changePatchsets, changes } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { statementCache } from "../../db/statements.ts";
import { LIVE_STATES } from "./store.ts";

export type PatchsetRow = typeof changePatchsets.$inferSelect;

/** Records patchset `patchset` of a change (inside the transaction that moved its head); a repeat is ignored. */
export async function recordPatchset(tx: Tx, row: PatchsetRow): Promise<void> {
  tx.insert(changePatchsets).values(row).onConflictDoNothing().run();
}

/** A change's patchsets, oldest first (a change has at most one per push: bounded by its history). */
export async function patchsetsOf(q: Queryable, changeId: string): Promise<PatchsetRow[]> {
  return q.select().from(changePatchsets).where(eq(changePatchsets.changeId, changeId)).orderBy(asc(changePatchsets.patchset)).all();
}

/** One patchset of a change, or null. */
export async function patchsetOf(q: Queryable, changeId: string, patchset: number): Promise<PatchsetRow | null> {
  return q.select().from(changePatchsets).where(and(eq(changePatchsets.changeId, changeId), eq(changePatchsets.patchset, patchset))).get() ?? null;
}

/**
 * The heads of every patchset of `repoId`'s open changes whose commits live in `repoId` (not a
 * fork's): a reader of the repository reads its changes, so these are tips of what it may read
 * (docs/architecture.md, "Reachability is the boundary").
 */
export async function openChangeHeads(q: Queryable, repoId: string): Promise<string[]> {
  // Prepared once per connection: reads by id ask on every request, and building the query cost
  // more than running it (bench/README.md, "Reads by id").
  return prepared(q, "openHeads", prepareOpenHeads).all({ repoId }).map((r) => r.head);
}

function prepareOpenHeads(q: Queryable) {
  return q
    .selectDistinct({ head: changePatchsets.head })
    .from(changePatchsets)
    .innerJoin(changes, eq(changes.id, changePatchsets.changeId))
    .where(and(eq(changes.repoId, sql.placeholder("repoId")), isNull(changes.sourceRepoId), inArray(changes.state, [...LIVE_STATES])))
    .orderBy(asc(changePatchsets.head))
    .prepare();
}
const { prepared } = statementCache("changes.patchsets");
