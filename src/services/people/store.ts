// The people domain's queries: accounts, sessions and credentials. Async, so another database
// changes this file, not the services.
import { eq, sql } from "drizzle-orm";
import { memberships, orgs, sessions, tokens, users, type Role, type Token, type User } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";

type Session = typeof sessions.$inferSelect;

/** The account with id `id`, or null. */
export async function userById(q: Queryable, id: string): Promise<User | null> {
  return q.select().from(users).where(eq(users.id, id)).get() ?? null;
}

/** The account whose sign-in address is `address` (case-insensitive), or null. */
export async function userByEmail(q: Queryable, address: string): Promise<User | null> {
  return q.select().from(users).where(sql`lower(${users.email}) = lower(${address})`).get() ?? null;
}

/** The API token with id `id`, or null. */
export async function tokenById(q: Queryable, id: string): Promise<Token | null> {
  return q.select().from(tokens).where(eq(tokens.id, id)).get() ?? null;
}

/** The session whose secret hashes to `hash`, or null. */
export async function sessionByHash(q: Queryable, hash: string): Promise<Session | null> {
  return q.select().from(sessions).where(eq(sessions.secretHash, hash)).get() ?? null;
}

/** Records a new session. */
export async function insertSession(tx: Tx, row: Session): Promise<void> {
  tx.insert(sessions).values(row).run();
}

/** Moves a session's expiry forward. */
export async function slideSession(tx: Tx, id: string, expiresAt: number): Promise<void> {
  tx.update(sessions).set({ expiresAt }).where(eq(sessions.id, id)).run();
}

/** Ends the session whose secret hashes to `hash` (if any). */
export async function deleteSessionByHash(tx: Tx, hash: string): Promise<void> {
  tx.delete(sessions).where(eq(sessions.secretHash, hash)).run();
}

/** The orgs a person belongs to, with their role, by name. */
export async function orgsOfUser(q: Queryable, userId: string): Promise<{ id: string; name: string; role: Role }[]> {
  return q
    .select({ id: orgs.id, name: orgs.name, role: memberships.role })
    .from(memberships)
    .innerJoin(orgs, eq(orgs.id, memberships.orgId))
    .where(eq(memberships.userId, userId))
    .orderBy(sql`lower(${orgs.name})`)
    .all();
}
