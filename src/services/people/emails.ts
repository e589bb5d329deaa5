// A person's email addresses (SPEC §2.10, §4.2, §8): at most ten, claimed by a mailed `svce_`
// link that is never returned, the holder of a taken address never disclosed.
import { Conflict, Invalid, NotFound, Unauthorized } from "../../errors.ts";
import type { User } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { authorizeAccount } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { LINK_TTL_MS, findLiveLink, issueLink, linkTokenOf, spendLink } from "./links.ts";
import { claimMail, verifyMail } from "../mail/messages.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { takeRateSlot } from "./rate-limit.ts";
import { addressTaken, checkAddress } from "./signup.ts";
import type { EmailList, EmailPatch, EmailPending, EmailRecord, EmailRequest, EmailVerified } from "./schemas.ts";
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

/**
 * POST /v1/users/{handle}/emails/{email}/resend: mails a fresh claim link for an unproved address
 * (the previous link is spent); for the sign-in address of an unconfirmed account, the account's
 * confirmation link. 404 for an address not on the account or already proved; the mail rate
 * limits apply per address and globally, and a limited request answers the same 202.
 */
export async function resendEmailClaim(ctx: Ctx, actor: Principal, handle: string, address: string): Promise<EmailPending> {
  const user = await requireSelf(ctx, actor, handle);
  const row = await ctx.db.transaction(async (tx) => {
    const row = await store.emailOf(tx, user.id, address);
    if (!row || row.verifiedAt !== null) throw NotFound("no unconfirmed address by that name on this account");
    // Why the same limits as signup: this mails an address the account does not own yet, so it must not become a way to flood one.
    if (!(await takeRateSlot(tx, "claim", row.address, { perAddress: ctx.config.signupLimitPerAddress, global: ctx.config.signupLimitGlobal }))) return row;
    // The sign-in address of an unconfirmed account is confirmed by the account's own link (it also confirms the account).
    if (row.primary) {
      const token = await issueLink(tx, "verify", user.id, row.address);
      await enqueueMail(ctx, tx, verifyMail({ to: row.address, name: user.name, token, baseUrl: ctx.baseUrl }));
    } else {
      const token = await issueLink(tx, "claim", user.id, row.address);
      await enqueueMail(ctx, tx, claimMail({ to: row.address, handle: user.handle, token, baseUrl: ctx.baseUrl }));
    }
    return row;
  });
  return { address: row.address, status: "pending", detail: "A confirmation link was mailed to the address. It works once, for one day." };
}

/**
 * PATCH /v1/users/{handle}/emails/{email} `{ primary: true }`: makes a proved address the sign-in
 * address (the former one stays on the account, proved). 404 for an address not on the account;
 * 400 for an unproved one or another request than `primary: true`.
 */
export async function makePrimaryEmail(ctx: Ctx, actor: Principal, handle: string, address: string, input: EmailPatch): Promise<EmailRecord> {
  const user = await requireSelf(ctx, actor, handle);
  if (input.primary !== true) throw Invalid('only { "primary": true } can be set: the sign-in address changes by making another one primary');
  return ctx.db.transaction(async (tx) => {
    const row = await store.emailOf(tx, user.id, address);
    if (!row) throw NotFound("no such address on this account");
    // Why: signing in and password resets go to the primary address, so it must be one the person has shown they receive mail at.
    if (row.verifiedAt === null) throw Invalid("confirm this address before making it your sign-in address");
    if (!row.primary) await store.setPrimaryEmail(tx, user.id, row.id, row.address, row.verifiedAt);
    return emailBody({ ...row, primary: true });
  });
}
