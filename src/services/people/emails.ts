// A person's email addresses (SPEC §2.10, §4.2, §8): at most ten, claimed by a mailed `svce_`
// link that is never returned, the holder of a taken address never disclosed.
import { Conflict, Invalid, NotFound, Unauthorized } from "../../errors.ts";
import type { User } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { authorizeAccount } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { LINK_TTL_MS, findLiveLink, issueLink, linkTokenOf, spendLink } from "./links.ts";
import { claimMail } from "../mail/messages.ts";
import { enqueueMail, notifyMail } from "../mail/outbox.ts";
import { addressTaken, checkAddress } from "./signup.ts";
import type { EmailList, EmailPending, EmailRecord, EmailRequest, EmailVerified } from "./schemas.ts";
import * as store from "./store.ts";
import type { EmailRow } from "./store.ts";

export const MAX_ADDRESSES = 10;

/** The account at `handle`, which must be the caller's own: 401 anonymous, 404 unknown, 403 someone else's. */
async function requireSelf(ctx: Ctx, actor: Principal, handle: string): Promise<User> {
  if (actor.kind === "anonymous") throw Unauthorized();
  const user = await store.userByHandle(ctx.db.read, handle);
  if (!user || user.disabledAt !== null) throw NotFound("no such user");
  authorizeAccount(actor, { kind: "account:self", userId: user.id });
  return user;
}

function emailBody(row: EmailRow): EmailRecord {
  return { address: row.address, verified_at: row.verifiedAt, private: row.private, primary: row.primary, created_at: row.createdAt };
}

/** GET /v1/users/{handle}/emails: the sign-in address first, then by age. */
export async function listEmails(ctx: Ctx, actor: Principal, handle: string): Promise<EmailList> {
  const user = await requireSelf(ctx, actor, handle);
  return { emails: (await store.emailsOf(ctx.db.read, user.id)).map(emailBody) };
}

/** POST /v1/users/{handle}/emails: adds an unproved address and mails it a claim link. */
export async function addEmail(ctx: Ctx, actor: Principal, handle: string, input: EmailRequest): Promise<EmailPending> {
  const user = await requireSelf(ctx, actor, handle);
  const address = checkAddress(input.email);
  await ctx.db.transaction(async (tx) => {
    if (await store.emailOf(tx, user.id, address)) throw Conflict("this address is already on your account");
    // Why: one message for every other holder, so the answer never tells whose address it is.
    if (await addressTaken(tx, address, now() - LINK_TTL_MS.claim)) throw Conflict("this address is already in use");
    if ((await store.emailCount(tx, user.id)) >= MAX_ADDRESSES) throw Invalid(`an account may have at most ${MAX_ADDRESSES} addresses`);
    await store.insertEmail(tx, { id: newId(), userId: user.id, address, verifiedAt: null, private: true, primary: false, createdAt: now() });
    const token = await issueLink(tx, "claim", user.id, address);
    await enqueueMail(ctx, tx, claimMail({ to: address, handle: user.handle, token, baseUrl: ctx.baseUrl }));
  });
  notifyMail();
  return { address, status: "pending", detail: "A confirmation link was mailed to the address. It works once, for one day." };
}

/** POST /v1/users/{handle}/emails/verify: proves an address with its claim link; 404 for every bad token, or a body without one. */
export async function verifyEmail(ctx: Ctx, actor: Principal, handle: string, input: unknown): Promise<EmailVerified> {
  const user = await requireSelf(ctx, actor, handle);
  const dead = () => NotFound("this confirmation link is invalid or has expired");
  const token = linkTokenOf(input);
  return ctx.db.transaction(async (tx) => {
    const link = await findLiveLink(tx, "claim", token);
    // Why: a link issued to another account is as dead as an unknown one.
    if (!link || link.userId !== user.id) throw dead();
    const row = await store.emailOf(tx, user.id, link.address);
    if (!row || !(await spendLink(tx, link.id))) throw dead();
    await store.proveEmail(tx, user.id, row.address, now());
    return { address: row.address, verified: true as const };
  });
}

/** DELETE /v1/users/{handle}/emails/{email}: the sign-in address cannot be removed (404, like an unknown one). */
export async function deleteEmail(ctx: Ctx, actor: Principal, handle: string, address: string): Promise<void> {
  const user = await requireSelf(ctx, actor, handle);
  await ctx.db.transaction(async (tx) => {
    const row = await store.emailOf(tx, user.id, address);
    if (!row || row.primary || row.address.toLowerCase() === user.email.toLowerCase()) throw NotFound("no such address on this account");
    await store.deleteEmail(tx, row.id);
    // Outstanding claim links for the address die with it.
    await store.spendLinksFor(tx, user.id, "claim", address, now());
  });
}
