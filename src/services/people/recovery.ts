// Password recovery: forgot-password mails a one-hour reset link; reset-password spends it (SPEC §4.3, §5.4).
import { Value } from "@sinclair/typebox/value";
import { NotFound, Unauthorized } from "../../errors.ts";
import type { User } from "../../db/schema/index.ts";
import { hashPassword, startSession } from "./auth.ts";
import type { Ctx } from "../context.ts";
import { findLiveLink, linkTokenOf, mailLinkToAccount, proveAddress, requestedAddress, spendLink } from "./links.ts";
import { resetMail } from "../mail/messages.ts";
import { checkPassword } from "./signup.ts";
import { ResetRequest, type Accepted } from "./schemas.ts";
import * as store from "./store.ts";

/** The one answer of forgot-password, whatever happened (SPEC §7). */
export const RESET_ACCEPTED: Readonly<Accepted> = {
  status: "accepted",
  detail: "If an account uses this address, a password reset link is on its way to it. The link works once, for one hour.",
};

/** POST /v1/auth/forgot-password: mails a reset link to the sign-in address; the same 202 for every address, and for a body without one. */
export async function forgotPassword(ctx: Ctx, input: unknown): Promise<Accepted> {
  await mailLinkToAccount(
    ctx,
    "reset",
    requestedAddress(input),
    // Why: a disabled account gets no link, and says so to nobody (SPEC §4.3).
    (user) => user.disabledAt === null,
    (user, token) => resetMail({ to: user.email, name: user.name, token, baseUrl: ctx.baseUrl }),
  );
  return RESET_ACCEPTED;
}

/**
 * POST /v1/auth/reset-password `{ token, new_password }`: a dead link (or a body without one) is
 * 404 first; then the password is checked (400) before the link is spent. Success sets the
 * password, proves the address, ends every other session and signs in.
 */
export async function resetPassword(ctx: Ctx, input: unknown): Promise<{ user: User; sessionSecret: string }> {
  const dead = () => NotFound("this reset link is invalid or has expired");
  const token = linkTokenOf(input);
  if (!(await findLiveLink(ctx.db.read, "reset", token))) throw dead();
  const password = checkPassword(Value.Check(ResetRequest, input) ? input.new_password : null, "new_password");
  const passwordHash = await hashPassword(password);
  return ctx.db.transaction(async (tx) => {
    const link = await findLiveLink(tx, "reset", token);
    if (!link) throw dead();
    const user = await store.userById(tx, link.userId);
    if (!user) throw dead();
    if (user.disabledAt !== null) throw Unauthorized("this account is disabled");
    if (!(await spendLink(tx, link.id))) throw dead();
    await store.setPasswordHash(tx, user.id, passwordHash);
    // The link arrived at the address, which proves it (SPEC §3.2).
    const proved = await proveAddress(tx, { ...user, passwordHash }, link.address);
    // Why: whoever knew the old password may hold a session; a reset ends all of them.
    await store.deleteSessionsOf(tx, user.id);
    return { user: proved, sessionSecret: await startSession(tx, user.id) };
  });
}
