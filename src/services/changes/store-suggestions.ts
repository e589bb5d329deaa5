// Queries of applying suggestions (issue 28): the comments asked for, who wrote them (for the
// Co-authored-by trailers), and the marks written with the commit.
import { and, eq, inArray, isNotNull } from "drizzle-orm";
import type { changeComments } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { tables } from "../../db/tables.ts";

export type SuggestionCommentRow = typeof changeComments.$inferSelect;

/** The comments of one change among `ids` (at most 50: the request's bound). */
export async function commentsOfChange(q: Queryable, changeId: string, ids: string[]): Promise<SuggestionCommentRow[]> {
  const { changeComments } = tables(q);
  if (!ids.length) return [];
  return await q
    .select()
    .from(changeComments)
    .where(and(eq(changeComments.changeId, changeId), inArray(changeComments.id, ids)));
}

/** A suggester as a commit trailer names them: name, handle, sign-in address and whether it is private. */
export interface Suggester {
  id: string;
  handle: string;
  name: string;
  email: string;
  emailPrivate: boolean;
}

/** The people of `ids` with the privacy of their sign-in address (an address without its row counts as private). */
export async function suggesters(q: Queryable, ids: string[]): Promise<Suggester[]> {
  const { users, emails } = tables(q);
  if (!ids.length) return [];
  const people = await q.select({ id: users.id, handle: users.handle, name: users.name, email: users.email }).from(users).where(inArray(users.id, ids));
  const rows = await q
    .select({ userId: emails.userId, address: emails.address, private: emails.private })
    .from(emails)
    .where(and(inArray(emails.userId, ids), eq(emails.primary, true)));
  return people.map((p) => {
    const row = rows.find((r) => r.userId === p.id && r.address.toLowerCase() === p.email.toLowerCase());
    return { ...p, emailPrivate: row ? row.private : true };
  });
}

/** How many of `ids` already carry an applied commit (read inside the publish transaction). */
export async function appliedAmong(tx: Tx, ids: string[]): Promise<number> {
  const { changeComments } = tables(tx);
  const rows = await tx
    .select({ id: changeComments.id })
    .from(changeComments)
    .where(and(inArray(changeComments.id, ids), isNotNull(changeComments.appliedCommit)));
  return rows.length;
}

/** Marks the comments applied by `commit` and resolves their threads (the roots), by `userId`. */
export async function markApplied(tx: Tx, ids: string[], threadIds: string[], commit: string, userId: string | null, at: number): Promise<void> {
  const { changeComments } = tables(tx);
  await tx.update(changeComments).set({ appliedCommit: commit, updatedAt: at }).where(inArray(changeComments.id, ids));
  await tx
    .update(changeComments)
    .set({ resolved: true, resolvedByUserId: userId, resolvedAt: at, updatedAt: at })
    .where(and(inArray(changeComments.id, threadIds), eq(changeComments.resolved, false)));
}
