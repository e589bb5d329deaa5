// Password recovery: forgot-password mails a one-hour reset link; reset-password spends it (SPEC §4.3, §5.4).
import { and, eq, sql } from "drizzle-orm";
import { NotFound, Unauthorized } from "../errors.ts";
import { emails, sessions, users, type User } from "../db/schema.ts";
import { hashPassword, startSession } from "./auth.ts";
import { now, type Ctx } from "./context.ts";
import { findLiveLink, issueLink, spendLink } from "./links.ts";
import { resetMail } from "./messages.ts";
import { isEmail } from "./names.ts";
import { enqueueMail, notifyMail } from "./outbox.ts";
import { takeRateSlot } from "./rate-limit.ts";
import { checkPassword } from "./signup.ts";

/** The one answer of forgot-password, whatever happened (SPEC §7). */
export const RESET_ACCEPTED = {
  status: "accepted",
  detail: "If an account uses this address, a password reset link is on its way to it. The link works once, for one hour.",
} as const;

/** POST /v1/auth/forgot-password: mails a reset link to the sign-in address; the same 202 for every address. */
export function forgotPassword(ctx: Ctx, input: { email?: unknown }) {
  const address = typeof input.email === "string" ? input.email.trim() : "";
  if (!isEmail(address)) return RESET_ACCEPTED;
  const queued = ctx.db.transaction((tx) => {
    const limits = { perAddress: ctx.config.signupLimitPerAddress, global: ctx.config.signupLimitGlobal };
    if (!takeRateSlot(tx, "reset", address, limits)) return false;
    const user = tx.select().from(users).where(sql`lower(${users.email}) = lower(${address})`).get();
    // Why: a disabled account gets no link, and says so to nobody (SPEC §4.3).
    if (!user || user.disabledAt !== null) return false;
    const token = issueLink(tx, "reset", user.id, user.email);
    return enqueueMail(ctx, tx, resetMail({ to: user.email, name: user.name, token, baseUrl: ctx.baseUrl })) !== null;
  }, { behavior: "immediate" });
  if (queued) notifyMail();
  return RESET_ACCEPTED;
}

/**
 * POST /v1/auth/reset-password: the password is checked before the link is spent; success sets the
 * password, proves the address, ends every other session and signs in.
 */
export async function resetPassword(ctx: Ctx, input: { token?: unknown; new_password?: unknown }): Promise<{ user: User; sessionSecret: string }> {
  const password = checkPassword(input.new_password, "new_password");
  const dead = () => NotFound("this reset link is invalid or has expired");
  const probe = findLiveLink(ctx.db, "reset", input.token);
  if (!probe) throw dead();
  const passwordHash = await hashPassword(password);
  return ctx.db.transaction((tx) => {
    const link = findLiveLink(tx, "reset", input.token);
    if (!link) throw dead();
    const user = tx.select().from(users).where(eq(users.id, link.userId)).get();
    if (!user) throw dead();
    if (user.disabledAt !== null) throw Unauthorized("this account is disabled");
    if (!spendLink(tx, link.id)) throw dead();
    const t = now();
    // The link arrived at the address, which proves it (SPEC §3.2).
    const verifiedAt = user.emailVerifiedAt ?? (user.email.toLowerCase() === link.address.toLowerCase() ? t : null);
    tx.update(users).set({ passwordHash, emailVerifiedAt: verifiedAt }).where(eq(users.id, user.id)).run();
    tx.update(emails).set({ verifiedAt: t }).where(and(eq(emails.userId, user.id), sql`lower(${emails.address}) = lower(${link.address})`, sql`${emails.verifiedAt} IS NULL`)).run();
    // Why: whoever knew the old password may hold a session; a reset ends all of them.
    tx.delete(sessions).where(eq(sessions.userId, user.id)).run();
    return { user: { ...user, passwordHash, emailVerifiedAt: verifiedAt }, sessionSecret: startSession(tx, user.id) };
  }, { behavior: "immediate" });
}
