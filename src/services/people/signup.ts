// Self-service signup and address confirmation (SPEC §4.3, §5.4, §7 uniform answers).
import { Conflict, Invalid, NotFound, Unauthorized } from "../../errors.ts";
import type { User } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { MIN_PASSWORD, checkPersonName, insertUser, namespaceAvailable } from "./accounts.ts";
import { hashPassword, startSession } from "./auth.ts";
import { now, type Ctx } from "../context.ts";
import { newId } from "../../util/ids.ts";
import { LINK_TTL_MS, findLiveLink, issueLink, linkTokenOf, mailLinkToAccount, proveAddress, requestedAddress, spendLink } from "./links.ts";
import { verifyMail } from "../mail/messages.ts";
import { checkNamespaceName, isEmail } from "../names.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { takeRateSlot } from "./rate-limit.ts";
import type { Accepted, SignupRequest } from "./schemas.ts";
import * as store from "./store.ts";

/** The one answer of signup and resend-verification, whatever happened (SPEC §7). */
export const SIGNUP_ACCEPTED: Readonly<Accepted> = {
  status: "accepted",
  detail: "If this address can be used, a confirmation link is on its way to it. The link works once, for one day.",
};

/** Validates a person's name (accounts.ts: the one rule for signup, invitations and `svc user-create`). */
export { checkPersonName };

/** Validates a new password (at least 12 characters, at most 1024). */
export function checkPassword(value: unknown, field = "password"): string {
  if (typeof value !== "string" || value.length < MIN_PASSWORD) throw Invalid(`${field} must be at least ${MIN_PASSWORD} characters`);
  if (value.length > 1024) throw Invalid(`${field} must be at most 1024 characters`);
  return value;
}

/** Validates an address (400 when it is not one). */
export function checkAddress(value: unknown): string {
  const address = typeof value === "string" ? value.trim() : "";
  if (!isEmail(address)) throw Invalid("invalid email address");
  return address;
}

/** The account whose sign-in address or any proved address is `address`, if any. */
export async function accountByAddress(q: Queryable, address: string): Promise<User | null> {
  const direct = await store.userByEmail(q, address);
  if (direct) return direct;
  const row = await store.emailByAddress(q, address);
  if (!row || row.verifiedAt === null) return null;
  return store.userById(q, row.userId);
}

/**
 * Whether any account holds `address`, proved or not. An unproved claim older than its link
 * (created before `claimLapseBefore`) has lapsed: it is removed here and the address is free.
 */
export async function addressTaken(tx: Tx, address: string, claimLapseBefore: number): Promise<boolean> {
  if (await store.userByEmail(tx, address)) return true;
  const row = await store.emailByAddress(tx, address);
  if (!row) return false;
  // Why: an unproved claim must not squat an address forever; once its link has lapsed it is released.
  if (row.verifiedAt === null && !row.primary && row.createdAt < claimLapseBefore) {
    await store.deleteEmail(tx, row.id);
    return false;
  }
  return true;
}

/** The sign-in address of a held handle's account: unique, and in a domain that can never receive mail (RFC 2606). */
function heldAddress(): string {
  return `held-${newId()}@signup.invalid`;
}

/**
 * POST /v1/auth/signup. Validation errors and a taken handle answer 400/409; everything else,
 * including a registered address and rate limiting, answers the same 202 body.
 *
 * Why a registered address still takes the handle (issue 25 row 11): when it did not, a second
 * signup with the same handle answered 202 after a registered address and 409 after a new one,
 * which told anyone whether an address has an account. So both take it: a new address gets its
 * account; a registered one gets an unconfirmed account under a held address nobody can use or
 * receive mail at (it reads like any unconfirmed account: the same profile, the same 409 for the
 * handle). Both paths hash the password and write the same rows (an account and a confirmation
 * link); only the new address is mailed. bench/signup-timing.ts measures both.
 */
export async function signup(ctx: Ctx, input: SignupRequest): Promise<Accepted> {
  const handle = checkNamespaceName(input.handle);
  const address = checkAddress(input.email);
  const name = checkPersonName(input.name);
  const password = checkPassword(input.password);
  if (!(await namespaceAvailable(ctx.db.read, handle))) throw Conflict(`the handle ${handle} is taken or reserved`);
  // Hashed whatever happens next, so a registered address takes as long as a new one.
  const passwordHash = await hashPassword(password);
  await ctx.db.transaction(async (tx) => {
    if (!(await namespaceAvailable(tx, handle))) throw Conflict(`the handle ${handle} is taken or reserved`);
    const limits = { perAddress: ctx.config.signupLimitPerAddress, global: ctx.config.signupLimitGlobal };
    if (!(await takeRateSlot(tx, "signup", address, limits))) return false;
    const taken = await addressTaken(tx, address, now() - LINK_TTL_MS.claim);
    const signIn = taken ? heldAddress() : address;
    const user = await insertUser(tx, { email: signIn, name, passwordHash, handle, confirmed: false });
    const token = await issueLink(tx, "verify", user.id, signIn);
    if (taken) return false;
    return (await enqueueMail(ctx, tx, verifyMail({ to: address, name, token, baseUrl: ctx.baseUrl }))) !== null;
  });
  return SIGNUP_ACCEPTED;
}

/**
 * POST /v1/auth/resend-verification: a fresh link for an unconfirmed account. The same 202 for
 * every address, and for a body without one.
 */
export async function resendVerification(ctx: Ctx, input: unknown): Promise<Accepted> {
  await mailLinkToAccount(
    ctx,
    "verify",
    requestedAddress(input),
    (user) => user.emailVerifiedAt === null && user.disabledAt === null,
    (user, token) => verifyMail({ to: user.email, name: user.name, token, baseUrl: ctx.baseUrl }),
  );
  return SIGNUP_ACCEPTED;
}

/** POST /v1/auth/verify: spends a confirmation link, confirms the address and signs in; 404 for every dead link or a body without one. */
export function verifyAddress(ctx: Ctx, input: unknown): Promise<{ user: User; sessionSecret: string }> {
  const dead = () => NotFound("this confirmation link is invalid or has expired");
  const token = linkTokenOf(input);
  return ctx.db.transaction(async (tx) => {
    const link = await findLiveLink(tx, "verify", token);
    if (!link) throw dead();
    const user = await store.userById(tx, link.userId);
    if (!user) throw dead();
    if (user.disabledAt !== null) throw Unauthorized("this account is disabled");
    if (!(await spendLink(tx, link.id))) throw dead();
    return { user: await proveAddress(tx, user, link.address), sessionSecret: await startSession(tx, user.id) };
  });
}
