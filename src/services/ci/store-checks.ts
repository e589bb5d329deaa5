// Check results read in batches (issue 28): a page of changes or commits asks once.
import { and, asc, eq, inArray } from "drizzle-orm";
import type { checkResults } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import { tables } from "../../db/tables.ts";

export type CheckRow = typeof checkResults.$inferSelect;

/** The check results of several commits of one repository (≤ 100 ids per call), by commit then key. */
export async function checksOfCommits(q: Queryable, repoId: string, commits: string[]): Promise<CheckRow[]> {
  const { checkResults } = tables(q);
  const ids = [...new Set(commits)];
  if (!ids.length) return [];
  return await q
    .select()
    .from(checkResults)
    .where(and(eq(checkResults.repoId, repoId), inArray(checkResults.commit, ids)))
    .orderBy(asc(checkResults.commit), asc(checkResults.key));
}
