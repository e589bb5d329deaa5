// The people domain's queries: accounts and their personal namespaces, sessions, addresses,
// mailed links and rate-limit counters (credentials are in store-credentials.ts). Async, so
// another database changes this file, not the services.
import { and, count, eq, gte, isNull, lt, sql } from "drizzle-orm";
import type { emailTokens, emails, sessions, Org, Role, Token, User } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { statementCache } from "../../db/statements.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type Session = typeof sessions.$inferSelect;
export type EmailRow = typeof emails.$inferSelect;
export type LinkRow = typeof emailTokens.$inferSelect;
export type LinkPurpose = LinkRow["purpose"];

// Statements of the per-request credential lookups, prepared once per connection: building the
// query is most of what they cost, and every request whose token is not cached runs one.
const { query } = statementCache("people");

// — Accounts

/** The account with id `id`, or null. */
export async function userById(q: Queryable, id: string): Promise<User | null> {
  const { users } = tables(q);
  return (
    (await query(q, "userById", (q) =>
      q
        .select()
        .from(users)
        .where(eq(users.id, sql.placeholder("id"))),
    ).get({ id })) ?? null
  );
}

/** The account whose sign-in address is `address` (case-insensitive), or null. */
export async function userByEmail(q: Queryable, address: string): Promise<User | null> {
  const { users } = tables(q);
  return one(await q.select().from(users).where(sql`lower(${users.email}) = lower(${address})`).limit(1)) ?? null;
}

/** The account with handle `handle` (case-insensitive), or null. */
export async function userByHandle(q: Queryable, handle: string): Promise<User | null> {
  const { users } = tables(q);
  return one(await q.select().from(users).where(sql`lower(${users.handle}) = lower(${handle})`).limit(1)) ?? null;
}

/** Whether an org or personal namespace is called `name` (case-insensitive). */
export async function namespaceTaken(q: Queryable, name: string): Promise<boolean> {
  const { orgs } = tables(q);
  return !!one(await q.select({ id: orgs.id }).from(orgs).where(sql`lower(${orgs.name}) = lower(${name})`).limit(1));
}

/** The org or personal namespace called `name` (case-insensitive), or null. */
export async function namespaceByName(q: Queryable, name: string): Promise<Org | null> {
  const { orgs } = tables(q);
  return one(await q.select().from(orgs).where(sql`lower(${orgs.name}) = lower(${name})`).limit(1)) ?? null;
}

/** Records a new account: the user, their sign-in address, their personal namespace and its ownership. */
export async function insertAccount(tx: Tx, user: User, address: EmailRow, personal: Org): Promise<void> {
  const { users, emails, orgs, memberships } = tables(tx);
  await tx.insert(users).values(user);
  await tx.insert(emails).values(address);
  await tx.insert(orgs).values(personal);
  await tx.insert(memberships).values({ orgId: personal.id, userId: user.id, role: "owner", createdAt: personal.createdAt });
}

/** Creates an organization row. */
export async function insertOrg(tx: Tx, org: Org): Promise<void> {
  const { orgs } = tables(tx);
  await tx.insert(orgs).values(org);
}

/** Adds a membership unless the person already has one in the org. */
export async function addMembership(tx: Tx, orgId: string, userId: string, role: Role, createdAt: number): Promise<void> {
  const { memberships } = tables(tx);
  await tx.insert(memberships).values({ orgId, userId, role, createdAt }).onConflictDoNothing();
}

/** The orgs a person belongs to, with their role, by name. */
export async function orgsOfUser(q: Queryable, userId: string): Promise<{ id: string; name: string; role: Role }[]> {
  const { orgs, memberships } = tables(q);
  return await q
    .select({ id: orgs.id, name: orgs.name, role: memberships.role })
    .from(memberships)
    .innerJoin(orgs, eq(orgs.id, memberships.orgId))
    .where(eq(memberships.userId, userId))
    .orderBy(sql`lower(${orgs.name})`);
}

/** Sets an account's password hash. */
export async function setPasswordHash(tx: Tx, userId: string, passwordHash: string): Promise<void> {
  const { users } = tables(tx);
  await tx.update(users).set({ passwordHash }).where(eq(users.id, userId));
}

/** Marks an account's sign-in address confirmed at `t`. */
export async function confirmAccount(tx: Tx, userId: string, t: number): Promise<void> {
  const { users } = tables(tx);
  await tx.update(users).set({ emailVerifiedAt: t }).where(eq(users.id, userId));
}

// — Credentials as resolution sees them (management is in store-credentials.ts)

/** The API token with id `id`, or null. */
export async function tokenById(q: Queryable, id: string): Promise<Token | null> {
  const { tokens } = tables(q);
  return (
    (await query(q, "tokenById", (q) =>
      q
        .select()
        .from(tokens)
        .where(eq(tokens.id, sql.placeholder("id"))),
    ).get({ id })) ?? null
  );
}

// — Sessions

/** The session whose secret hashes to `hash`, or null. */
export async function sessionByHash(q: Queryable, hash: string): Promise<Session | null> {
  const { sessions } = tables(q);
  return one(await q.select().from(sessions).where(eq(sessions.secretHash, hash)).limit(1)) ?? null;
}

/** Records a new session. */
export async function insertSession(tx: Tx, row: Session): Promise<void> {
  const { sessions } = tables(tx);
  await tx.insert(sessions).values(row);
}

/** Moves a session's expiry forward. */
export async function slideSession(tx: Tx, id: string, expiresAt: number): Promise<void> {
  const { sessions } = tables(tx);
  await tx.update(sessions).set({ expiresAt }).where(eq(sessions.id, id));
}

/** Ends the session whose secret hashes to `hash` (if any). */
export async function deleteSessionByHash(tx: Tx, hash: string): Promise<void> {
  const { sessions } = tables(tx);
  await tx.delete(sessions).where(eq(sessions.secretHash, hash));
}

/** Ends every session of an account. */
export async function deleteSessionsOf(tx: Tx, userId: string): Promise<void> {
  const { sessions } = tables(tx);
  await tx.delete(sessions).where(eq(sessions.userId, userId));
}

// — Addresses

/** An account's addresses: the sign-in address first, then by age. */
export async function emailsOf(q: Queryable, userId: string): Promise<EmailRow[]> {
  const { emails } = tables(q);
  return await q.select().from(emails).where(eq(emails.userId, userId)).orderBy(sql`${emails.primary} DESC`, emails.createdAt);
}

/** The address row `address` (case-insensitive) of one account, or null. */
export async function emailOf(q: Queryable, userId: string, address: string): Promise<EmailRow | null> {
  const { emails } = tables(q);
  return (
    one(
      await q
        .select()
        .from(emails)
        .where(and(eq(emails.userId, userId), sql`lower(${emails.address}) = lower(${address})`))
        .limit(1),
    ) ?? null
  );
}

/** The address row `address` (case-insensitive) of whichever account holds it, or null. */
export async function emailByAddress(q: Queryable, address: string): Promise<EmailRow | null> {
  const { emails } = tables(q);
  return one(await q.select().from(emails).where(sql`lower(${emails.address}) = lower(${address})`).limit(1)) ?? null;
}

/** How many addresses an account has. */
export async function emailCount(q: Queryable, userId: string): Promise<number> {
  const { emails } = tables(q);
  return one(await q.select({ n: count() }).from(emails).where(eq(emails.userId, userId)).limit(1))!.n;
}

/** Records an address. */
export async function insertEmail(tx: Tx, row: EmailRow): Promise<void> {
  const { emails } = tables(tx);
  await tx.insert(emails).values(row);
}

/** Removes an address row. */
export async function deleteEmail(tx: Tx, id: string): Promise<void> {
  const { emails } = tables(tx);
  await tx.delete(emails).where(eq(emails.id, id));
}

/** Marks an account's address `address` proved at `t`, unless it already was. */
export async function proveEmail(tx: Tx, userId: string, address: string, t: number): Promise<void> {
  const { emails } = tables(tx);
  await tx
    .update(emails)
    .set({ verifiedAt: t })
    .where(and(eq(emails.userId, userId), sql`lower(${emails.address}) = lower(${address})`, isNull(emails.verifiedAt)));
}

/** Makes the proved row `emailId` the account's sign-in address: the flag moves and the account's address follows. */
export async function setPrimaryEmail(tx: Tx, userId: string, emailId: string, address: string, verifiedAt: number): Promise<void> {
  const { emails, users } = tables(tx);
  await tx
    .update(emails)
    .set({ primary: false })
    .where(and(eq(emails.userId, userId), eq(emails.primary, true)));
  await tx.update(emails).set({ primary: true }).where(eq(emails.id, emailId));
  await tx
    .update(users)
    .set({ email: address, emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, ${verifiedAt})` })
    .where(eq(users.id, userId));
}

// — Mailed links

/** Spends every live link of `purpose` for one account and address. */
export async function spendLinksFor(tx: Tx, userId: string, purpose: LinkPurpose, address: string, t: number): Promise<void> {
  const { emailTokens } = tables(tx);
  await tx
    .update(emailTokens)
    .set({ spentAt: t })
    .where(
      and(
        eq(emailTokens.userId, userId),
        eq(emailTokens.purpose, purpose),
        sql`lower(${emailTokens.address}) = lower(${address})`,
        isNull(emailTokens.spentAt),
      ),
    );
}

/** Records a link (only its digest). */
export async function insertLink(tx: Tx, row: LinkRow): Promise<void> {
  const { emailTokens } = tables(tx);
  await tx.insert(emailTokens).values(row);
}

/** The link of `purpose` whose token hashes to `hash`, spent or not, or null. */
export async function linkByHash(q: Queryable, purpose: LinkPurpose, hash: string): Promise<LinkRow | null> {
  const { emailTokens } = tables(q);
  return (
    one(
      await q
        .select()
        .from(emailTokens)
        .where(and(eq(emailTokens.secretHash, hash), eq(emailTokens.purpose, purpose)))
        .limit(1),
    ) ?? null
  );
}

/** Spends one link; false when it was already spent. */
export async function spendLink(tx: Tx, id: string, t: number): Promise<boolean> {
  const { emailTokens } = tables(tx);
  return (
    (
      await tx
        .update(emailTokens)
        .set({ spentAt: t })
        .where(and(eq(emailTokens.id, id), isNull(emailTokens.spentAt)))
        .returning({ id: emailTokens.id })
    ).length === 1
  );
}

// — Rate limits

/** Forgets the events of `bucket` older than `before`. */
export async function pruneRateEvents(tx: Tx, bucket: string, before: number): Promise<void> {
  const { rateEvents } = tables(tx);
  await tx.delete(rateEvents).where(and(eq(rateEvents.bucket, bucket), lt(rateEvents.createdAt, before)));
}

/** Events of `bucket` since `since`: for one (folded) address, and in all. */
export async function rateEventCounts(q: Queryable, bucket: string, address: string, since: number): Promise<{ address: number; total: number }> {
  const { rateEvents } = tables(q);
  const row = one(
    await q
      .select({
        address: sql<number>`coalesce(sum(CASE WHEN ${rateEvents.address} = ${address} THEN 1 ELSE 0 END), 0)`,
        total: count(),
      })
      .from(rateEvents)
      .where(and(eq(rateEvents.bucket, bucket), gte(rateEvents.createdAt, since)))
      .limit(1),
  );
  return { address: row?.address ?? 0, total: row?.total ?? 0 };
}

/** Counts one event. */
export async function insertRateEvent(tx: Tx, bucket: string, address: string, t: number): Promise<void> {
  const { rateEvents } = tables(tx);
  await tx.insert(rateEvents).values({ bucket, address, createdAt: t });
}
