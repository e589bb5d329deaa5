// The orgs domain's queries about invitations.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { invites } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type InviteRow = typeof invites.$inferSelect;

/** The invitation whose secret hashes to `secretHash`, in any state, or null. */
export async function inviteBySecretHash(q: Queryable, secretHash: string): Promise<InviteRow | null> {
  const { invites } = tables(q);
  return one(await q.select().from(invites).where(eq(invites.secretHash, secretHash)).limit(1)) ?? null;
}

/** Records an invitation. */
export async function insertInvite(tx: Tx, invite: InviteRow): Promise<void> {
  const { invites } = tables(tx);
  await tx.insert(invites).values(invite);
}

/** Drops the org's pending (not accepted) invitations for an address, compared case-insensitively. */
export async function deletePendingInvitesTo(tx: Tx, orgId: string, address: string): Promise<void> {
  const { invites } = tables(tx);
  await tx.delete(invites).where(and(eq(invites.orgId, orgId), sql`lower(${invites.email}) = lower(${address})`, isNull(invites.acceptedAt)));
}

/**
 * A page of the org's invitations not yet accepted, newest first (creation time, then id, both
 * descending), after the position `after` = [created_at, id].
 */
export async function listPendingInvites(q: Queryable, orgId: string, page: { after: [number, string] | null; limit: number }): Promise<InviteRow[]> {
  const { invites } = tables(q);
  const pending = and(eq(invites.orgId, orgId), isNull(invites.acceptedAt));
  const where =
    page.after === null
      ? pending
      : and(pending, sql`(${invites.createdAt} < ${page.after[0]} OR (${invites.createdAt} = ${page.after[0]} AND ${invites.id} < ${page.after[1]}))`);
  return await q.select().from(invites).where(where).orderBy(sql`${invites.createdAt} DESC`, sql`${invites.id} DESC`).limit(page.limit);
}

/** Deletes a pending invitation of the org; false when there is none with that id. */
export async function deletePendingInvite(tx: Tx, orgId: string, id: string): Promise<boolean> {
  const { invites } = tables(tx);
  return (
    (
      await tx
        .delete(invites)
        .where(and(eq(invites.id, id), eq(invites.orgId, orgId), isNull(invites.acceptedAt)))
        .returning({ id: invites.id })
    ).length > 0
  );
}

/** Marks an invitation accepted; false when another request spent it first. */
export async function spendInvite(tx: Tx, id: string, at: number): Promise<boolean> {
  const { invites } = tables(tx);
  return (
    (
      await tx
        .update(invites)
        .set({ acceptedAt: at })
        .where(and(eq(invites.id, id), isNull(invites.acceptedAt)))
        .returning({ id: invites.id })
    ).length > 0
  );
}

/** The name of an org by id, or null. */
export async function orgNameById(q: Queryable, orgId: string): Promise<string | null> {
  const { orgs } = tables(q);
  return one(await q.select({ name: orgs.name }).from(orgs).where(eq(orgs.id, orgId)).limit(1))?.name ?? null;
}

/** Confirms a person's primary address (an accepted invitation proves it arrived). */
export async function confirmPrimaryAddress(tx: Tx, userId: string, at: number): Promise<void> {
  const { users, emails } = tables(tx);
  await tx.update(users).set({ emailVerifiedAt: at }).where(eq(users.id, userId));
  await tx
    .update(emails)
    .set({ verifiedAt: at })
    .where(and(eq(emails.userId, userId), eq(emails.primary, true)));
}
