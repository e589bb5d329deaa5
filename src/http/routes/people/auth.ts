// Sign-in, signup, confirmation, recovery and invitation acceptance (SPEC §4.3; DECISIONS §2).
import { Elysia, t } from "elysia";
import { Unauthorized } from "../../../errors.ts";
import { SESSION_COOKIE, accountBody, login, logout } from "../../../services/people/auth.ts";
import type { Ctx } from "../../../services/context.ts";
import { acceptInvite, previewInvite } from "../../../services/orgs/invites.ts";
import { personOf } from "../../../services/access/principal.ts";
import { forgotPassword, resetPassword } from "../../../services/people/recovery.ts";
import { resendVerification, signup, verifyAddress } from "../../../services/people/signup.ts";
import { clearedSessionCookie, callerOf, readCookie, sessionCookie } from "../../principal.ts";

const LoginBody = t.Object({ email: t.Unknown(), password: t.Unknown() }, { description: "email and password" });
const SignupBody = t.Object({ email: t.String(), name: t.String(), password: t.String(), handle: t.String() });
// Link tokens are Unknown: any malformed value is a dead link (404), not a validation error.
const TokenBody = t.Object({ token: t.Optional(t.Unknown({ description: "the link token" })) });
const EmailBody = t.Object({ email: t.Unknown() });
const ResetBody = t.Object({ token: t.Optional(t.Unknown({ description: "svcrs_… token" })), new_password: t.Unknown() });
const InviteBody = t.Object({ invite: t.Optional(t.Unknown({ description: "svcinv_… token" })) });
const AcceptBody = t.Object({ invite: t.String(), name: t.String(), password: t.String(), handle: t.Optional(t.Nullable(t.String())) });

/** Sign-in routes. */
export function authRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.auth" })
    .post(
      "/v1/auth/login",
      async ({ body, set }) => {
        const b = (body ?? {}) as { email?: unknown; password?: unknown };
        const { user, sessionSecret } = await login(ctx, b.email, b.password);
        set.headers["set-cookie"] = sessionCookie(ctx, sessionSecret);
        return accountBody(ctx, user);
      },
      { body: t.Optional(t.Union([LoginBody, t.Unknown()])), detail: { summary: "Sign in with email and password; sets the svc_session cookie" } },
    )
    .post(
      "/v1/auth/logout",
      async ({ request, set }) => {
        await logout(ctx, readCookie(request, SESSION_COOKIE));
        set.status = 204;
        set.headers["set-cookie"] = clearedSessionCookie(ctx);
        return null;
      },
      { detail: { summary: "Sign out; always 204" } },
    )
    .post(
      "/v1/auth/signup",
      async ({ body, set }) => {
        const out = await signup(ctx, body);
        set.status = 202;
        return out;
      },
      { body: SignupBody, detail: { summary: "Create an account; a confirmation link is mailed (same 202 whatever happened)" } },
    )
    .post(
      "/v1/auth/verify",
      async ({ body, set }) => {
        const { user, sessionSecret } = await verifyAddress(ctx, body);
        set.headers["set-cookie"] = sessionCookie(ctx, sessionSecret);
        return accountBody(ctx, user);
      },
      { body: TokenBody, detail: { summary: "Confirm an address with its svcv_ link; signs in" } },
    )
    .post(
      "/v1/auth/resend-verification",
      ({ body, set }) => {
        set.status = 202;
        return resendVerification(ctx, body);
      },
      { body: EmailBody, detail: { summary: "Mail a fresh confirmation link (same 202 for every address)" } },
    )
    .post(
      "/v1/auth/forgot-password",
      ({ body, set }) => {
        set.status = 202;
        return forgotPassword(ctx, body);
      },
      { body: EmailBody, detail: { summary: "Mail a password reset link (same 202 for every address)" } },
    )
    .post(
      "/v1/auth/reset-password",
      async ({ body, set }) => {
        const { user, sessionSecret } = await resetPassword(ctx, body);
        set.headers["set-cookie"] = sessionCookie(ctx, sessionSecret);
        return accountBody(ctx, user);
      },
      { body: ResetBody, detail: { summary: "Set a new password with an svcrs_ link; ends other sessions and signs in" } },
    )
    .post("/v1/auth/invite/preview", ({ body }) => previewInvite(ctx, body), {
      body: InviteBody,
      detail: { summary: "What an invitation offers, without spending it" },
    })
    .post(
      "/v1/auth/accept-invite",
      async ({ body, set }) => {
        const { user, sessionSecret } = await acceptInvite(ctx, body);
        set.status = 201;
        set.headers["set-cookie"] = sessionCookie(ctx, sessionSecret);
        return accountBody(ctx, user);
      },
      { body: AcceptBody, detail: { summary: "Accept an invitation: creates the account if new, joins the org, signs in" } },
    )
    .get(
      "/v1/auth/me",
      ({ request }) => {
        const person = personOf(callerOf(request));
        if (!person) throw Unauthorized("not signed in");
        return accountBody(ctx, person);
      },
      { detail: { summary: "The signed-in account" } },
    );
}
