// Password recovery: forgot-password mails a one-hour reset link; reset-password spends it (SPEC §4.3, §5.4).
import { eq } from "drizzle-orm";
import { NotFound, Unauthorized } from "../../errors.ts";
import { sessions, users, type User } from "../../db/schema/index.ts";
import { hashPassword, startSession } from "./auth.ts";
import type { Ctx } from "../context.ts";
import { findLiveLink, mailLinkToAccount, proveAddress, spendLink } from "./links.ts";
import { resetMail } from "../mail/messages.ts";
import { checkPassword } from "./signup.ts";

/** The one answer of forgot-password, whatever happened (SPEC §7). */
export const RESET_ACCEPTED = {
  status: "accepted",
  detail: "If an account uses this address, a password reset link is on its way to it. The link works once, for one hour.",
} as const;

/** POST /v1/auth/forgot-password: mails a reset link to the sign-in address; the same 202 for every address. */
export async function forgotPassword(ctx: Ctx, input: { email?: unknown }) {
  await mailLinkToAccount(
    ctx, "reset", input.email,
    // Why: a disabled account gets no link, and says so to nobody (SPEC §4.3).
    (user) => user.disabledAt === null,
    (user, token) => resetMail({ to: user.email, name: user.name, token, baseUrl: ctx.baseUrl }),
  );
  return RESET_ACCEPTED;
}

/**
 * POST /v1/auth/reset-password: the password is checked before the link is spent; success sets the
 * password, proves the address, ends every other session and signs in.
 */
export async function resetPassword(ctx: Ctx, input: { token?: unknown; new_password?: unknown }): Promise<{ user: User; sessionSecret: string }> {
  const password = checkPassword(input.new_password, "new_password");
  const dead = () => NotFound("this reset link is invalid or has expired");
  const probe = findLiveLink(ctx.db.read, "reset", input.token);
  if (!probe) throw dead();
  const passwordHash = await hashPassword(password);
  return ctx.db.transaction(async (tx) => {
    const link = findLiveLink(tx, "reset", input.token);
    if (!link) throw dead();
    const user = tx.select().from(users).where(eq(users.id, link.userId)).get();
    if (!user) throw dead();
    if (user.disabledAt !== null) throw Unauthorized("this account is disabled");
    if (!spendLink(tx, link.id)) throw dead();
    tx.update(users).set({ passwordHash }).where(eq(users.id, user.id)).run();
    // The link arrived at the address, which proves it (SPEC §3.2).
    const proved = proveAddress(tx, { ...user, passwordHash }, link.address);
    // Why: whoever knew the old password may hold a session; a reset ends all of them.
    tx.delete(sessions).where(eq(sessions.userId, user.id)).run();
    return { user: proved, sessionSecret: await startSession(tx, user.id) };
  });
}
