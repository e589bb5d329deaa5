// Self-service signup and address confirmation (SPEC §4.3, §5.4, §7 uniform answers).
import { eq, sql } from "drizzle-orm";
import { Conflict, Invalid, NotFound, Unauthorized } from "../../errors.ts";
import { emails, users, type User } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { MIN_PASSWORD, insertUser, namespaceFree } from "./accounts.ts";
import { hashPassword, startSession } from "./auth.ts";
import { now, type Ctx } from "../context.ts";
import { LINK_TTL_MS, findLiveLink, issueLink, mailLinkToAccount, proveAddress, spendLink } from "./links.ts";
import { verifyMail } from "../mail/messages.ts";
import { checkNamespaceName, isEmail } from "../orgs/names.ts";
import { enqueueMail, notifyMail } from "../mail/outbox.ts";
import { takeRateSlot } from "../rate-limit.ts";

/** The one answer of signup and resend-verification, whatever happened (SPEC §7). */
export const SIGNUP_ACCEPTED = {
  status: "accepted",
  detail: "If this address can be used, a confirmation link is on its way to it. The link works once, for one day.",
} as const;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Validates a person's name: 1–100 characters, no control characters. */
export function checkPersonName(value: unknown): string {
  const name = typeof value === "string" ? value.trim() : "";
  if (!name || name.length > 100 || CONTROL.test(name)) throw Invalid("invalid name: 1-100 characters, no control characters");
  return name;
}

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
export function accountByAddress(db: DbOrTx, address: string): User | null {
  const direct = db.select().from(users).where(sql`lower(${users.email}) = lower(${address})`).get();
  if (direct) return direct;
  const row = db.select({ userId: emails.userId, verifiedAt: emails.verifiedAt }).from(emails).where(sql`lower(${emails.address}) = lower(${address})`).get();
  if (!row || row.verifiedAt === null) return null;
  return db.select().from(users).where(eq(users.id, row.userId)).get() ?? null;
}

/** Whether any account holds `address`, proved or not (an unproved claim older than its link has lapsed). */
export function addressTaken(db: DbOrTx, address: string, claimLapseBefore: number): boolean {
  if (db.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = lower(${address})`).get()) return true;
  const row = db.select({ id: emails.id, verifiedAt: emails.verifiedAt, createdAt: emails.createdAt, primary: emails.primary }).from(emails).where(sql`lower(${emails.address}) = lower(${address})`).get();
  if (!row) return false;
  // Why: an unproved claim must not squat an address forever; once its link has lapsed it is released.
  if (row.verifiedAt === null && !row.primary && row.createdAt < claimLapseBefore) {
    db.delete(emails).where(eq(emails.id, row.id)).run();
    return false;
  }
  return true;
}

/**
 * POST /v1/auth/signup. Validation errors and a taken handle answer 400/409; everything else,
 * including a registered address and rate limiting, answers the same 202 body.
 */
export async function signup(ctx: Ctx, input: { email?: unknown; name?: unknown; password?: unknown; handle?: unknown }) {
  const handle = checkNamespaceName(input.handle);
  const address = checkAddress(input.email);
  const name = checkPersonName(input.name);
  const password = checkPassword(input.password);
  if (!namespaceFree(ctx.db.read, handle)) throw Conflict(`the handle ${handle} is taken or reserved`);
  // Hashed whatever happens next, so a registered address takes as long as a new one.
  const passwordHash = await hashPassword(password);
  const queued = await ctx.db.transaction(async (tx) => {
    if (!namespaceFree(tx, handle)) throw Conflict(`the handle ${handle} is taken or reserved`);
    const limits = { perAddress: ctx.config.signupLimitPerAddress, global: ctx.config.signupLimitGlobal };
    if (!takeRateSlot(tx, "signup", address, limits)) return false;
    if (addressTaken(tx, address, now() - LINK_TTL_MS.claim)) return false;
    const user = insertUser(tx, { email: address, name, passwordHash, handle, confirmed: false });
    const token = issueLink(tx, "verify", user.id, address);
    return enqueueMail(ctx, tx, verifyMail({ to: address, name, token, baseUrl: ctx.baseUrl })) !== null;
  });
  if (queued) notifyMail();
  return SIGNUP_ACCEPTED;
}

/** POST /v1/auth/resend-verification: a fresh link for an unconfirmed account; the same 202 for every address. */
export async function resendVerification(ctx: Ctx, input: { email?: unknown }) {
  await mailLinkToAccount(
    ctx, "verify", input.email,
    (user) => user.emailVerifiedAt === null && user.disabledAt === null,
    (user, token) => verifyMail({ to: user.email, name: user.name, token, baseUrl: ctx.baseUrl }),
  );
  return SIGNUP_ACCEPTED;
}

/** POST /v1/auth/verify: spends a confirmation link, confirms the address and signs in. */
export function verifyAddress(ctx: Ctx, input: { token?: unknown }): Promise<{ user: User; sessionSecret: string }> {
  const dead = () => NotFound("this confirmation link is invalid or has expired");
  return ctx.db.transaction(async (tx) => {
    const link = findLiveLink(tx, "verify", input.token);
    if (!link) throw dead();
    const user = tx.select().from(users).where(eq(users.id, link.userId)).get();
    if (!user) throw dead();
    if (user.disabledAt !== null) throw Unauthorized("this account is disabled");
    if (!spendLink(tx, link.id)) throw dead();
    return { user: proveAddress(tx, user, link.address), sessionSecret: await startSession(tx, user.id) };
  });
}
