// A person's email addresses (SPEC §2.10, §4.2, §8): at most ten, claimed by a mailed `svce_`
// link that is never returned, the holder of a taken address never disclosed.
import { and, eq, sql } from "drizzle-orm";
import { Conflict, Forbidden, Invalid, NotFound, Unauthorized } from "../../errors.ts";
import { emailTokens, emails, users, type User } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { LINK_TTL_MS, findLiveLink, issueLink, spendLink } from "./links.ts";
import { claimMail } from "../mail/messages.ts";
import { enqueueMail, notifyMail } from "../mail/outbox.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { addressTaken, checkAddress } from "./signup.ts";

export const MAX_ADDRESSES = 10;

/** The account at `handle`, which must be the caller's own: 401 anonymous, 404 unknown, 403 someone else's. */
function requireSelf(ctx: Ctx, actor: Principal, handle: string): User {
  if (actor.kind === "anonymous") throw Unauthorized();
  const user = ctx.db.read.select().from(users).where(sql`lower(${users.handle}) = lower(${handle})`).get();
  if (!user || user.disabledAt !== null) throw NotFound("no such user");
  const me = personOf(actor);
  // Why: addresses are account-level; a token bound to one repository does not speak for the account.
  if (!me || me.id !== user.id || (actor.kind === "token" && actor.token.repoId !== null)) throw Forbidden("you can only manage your own addresses");
  return user;
}

function emailBody(row: typeof emails.$inferSelect) {
  return { address: row.address, verified_at: row.verifiedAt, private: row.private, primary: row.primary, created_at: row.createdAt };
}

/** GET /v1/users/{handle}/emails: the sign-in address first, then by age. */
export function listEmails(ctx: Ctx, actor: Principal, handle: string) {
  const user = requireSelf(ctx, actor, handle);
  const rows = ctx.db.read.select().from(emails).where(eq(emails.userId, user.id)).orderBy(sql`${emails.primary} DESC`, emails.createdAt).all();
  return { emails: rows.map(emailBody) };
}

/** POST /v1/users/{handle}/emails: adds an unproved address and mails it a claim link. */
export async function addEmail(ctx: Ctx, actor: Principal, handle: string, input: { email?: unknown }) {
  const user = requireSelf(ctx, actor, handle);
  const address = checkAddress(input.email);
  await ctx.db.transaction(async (tx) => {
    const mine = tx.select().from(emails).where(and(eq(emails.userId, user.id), sql`lower(${emails.address}) = lower(${address})`)).get();
    if (mine) throw Conflict("this address is already on your account");
    // Why: one message for every other holder, so the answer never tells whose address it is.
    if (addressTaken(tx, address, now() - LINK_TTL_MS.claim)) throw Conflict("this address is already in use");
    const count = tx.select({ n: sql<number>`count(*)` }).from(emails).where(eq(emails.userId, user.id)).get()!.n;
    if (count >= MAX_ADDRESSES) throw Invalid(`an account may have at most ${MAX_ADDRESSES} addresses`);
    tx.insert(emails).values({ id: newId(), userId: user.id, address, verifiedAt: null, createdAt: now() }).run();
    const token = issueLink(tx, "claim", user.id, address);
    enqueueMail(ctx, tx, claimMail({ to: address, handle: user.handle, token, baseUrl: ctx.baseUrl }));
  });
  notifyMail();
  return { address, status: "pending", detail: "A confirmation link was mailed to the address. It works once, for one day." };
}

/** POST /v1/users/{handle}/emails/verify: proves an address with its claim link; 404 for every bad token. */
export function verifyEmail(ctx: Ctx, actor: Principal, handle: string, input: { token?: unknown }) {
  const user = requireSelf(ctx, actor, handle);
  const dead = () => NotFound("this confirmation link is invalid or has expired");
  return ctx.db.transaction(async (tx) => {
    const link = findLiveLink(tx, "claim", input.token);
    // Why: a link issued to another account is as dead as an unknown one.
    if (!link || link.userId !== user.id) throw dead();
    const row = tx.select().from(emails).where(and(eq(emails.userId, user.id), sql`lower(${emails.address}) = lower(${link.address})`)).get();
    if (!row || !spendLink(tx, link.id)) throw dead();
    tx.update(emails).set({ verifiedAt: now() }).where(eq(emails.id, row.id)).run();
    return { address: row.address, verified: true as const };
  });
}

/** DELETE /v1/users/{handle}/emails/{email}: the sign-in address cannot be removed (404, like an unknown one). */
export async function deleteEmail(ctx: Ctx, actor: Principal, handle: string, address: string): Promise<void> {
  const user = requireSelf(ctx, actor, handle);
  await ctx.db.transaction(async (tx) => {
    const row = tx.select().from(emails).where(and(eq(emails.userId, user.id), sql`lower(${emails.address}) = lower(${address})`)).get();
    if (!row || row.primary || row.address.toLowerCase() === user.email.toLowerCase()) throw NotFound("no such address on this account");
    tx.delete(emails).where(eq(emails.id, row.id)).run();
    // Outstanding claim links for the address die with it.
    tx.update(emailTokens).set({ spentAt: now() }).where(and(eq(emailTokens.userId, user.id), eq(emailTokens.purpose, "claim"), sql`lower(${emailTokens.address}) = lower(${address})`, sql`${emailTokens.spentAt} IS NULL`)).run();
  });
}
