// The people domain's queries about pictures (issue 33): whose picture a name has, and moving a
// person's `users.avatar` to a new object-store key.
import { eq, sql } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

/** The live account called `handle` (case-insensitive) with its avatar key, or null. */
export async function avatarByHandle(q: Queryable, handle: string): Promise<{ userId: string; avatar: string | null } | null> {
  const { users } = tables(q);
  const row = one(
    await q
      .select({ userId: users.id, avatar: users.avatar, disabledAt: users.disabledAt })
      .from(users)
      .where(sql`lower(${users.handle}) = lower(${handle})`)
      .limit(1),
  );
  return row && row.disabledAt === null ? { userId: row.userId, avatar: row.avatar } : null;
}

/** Sets the person's avatar key (null: none) and answers the one it replaced, inside `tx`. */
export async function swapAvatar(tx: Tx, userId: string, key: string | null): Promise<string | null> {
  const { users } = tables(tx);
  const before = one(await tx.select({ avatar: users.avatar }).from(users).where(eq(users.id, userId)).limit(1));
  await tx.update(users).set({ avatar: key }).where(eq(users.id, userId));
  return before?.avatar ?? null;
}
