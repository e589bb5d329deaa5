// Sign-in, signup, confirmation, recovery and invitation acceptance (SPEC §4.3; DECISIONS §2).
import { Elysia } from "elysia";
import { Unauthorized } from "../../../errors.ts";
import { SESSION_COOKIE, accountBody, login, logout } from "../../../services/people/auth.ts";
import type { Ctx } from "../../../services/context.ts";
import { acceptInvite, previewInvite } from "../../../services/orgs/invites.ts";
import { personOf } from "../../../services/access/principal.ts";
import { forgotPassword, resetPassword } from "../../../services/people/recovery.ts";
import { resendVerification, signup, verifyAddress } from "../../../services/people/signup.ts";
import {
  Accepted,
  AcceptInviteRequest,
  Account,
  EmailRequest,
  InvitePreview,
  InvitePreviewRequest,
  LinkRequest,
  LoginRequest,
  ResetRequest,
  SignupRequest,
} from "../../../services/people/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { clearedSessionCookie, callerOf, readCookie, sessionCookie } from "../../principal.ts";
import { noContent } from "../../responses.ts";
import { sourceOf } from "../../source.ts";
import { JSON_BODY, documentedBody } from "./bodies.ts";
import { policy } from "../../policy.ts";

/**
 * Sign-in routes: open to anonymous callers (policy.ts). Those whose answer is uniform whatever the
 * body read it leniently (bodies.ts); logout is resolved leniently and answers 204 whatever came.
 */
export function authRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.auth" })
    .post(
      "/v1/auth/login",
      async ({ request, body, set }) => {
        const { user, sessionSecret } = await login(ctx, body, sourceOf(request));
        const account = await accountBody(ctx, user);
        set.headers["set-cookie"] = sessionCookie(ctx, sessionSecret);
        return account;
      },
      {
        response: { 200: Account, ...errors(401, 429) },
        detail: {
          summary: "Sign in with email and password; sets the svc_session cookie",
          description:
            "Every failure (unknown address, wrong password, a missing or non-string field, no body, a disabled account) is the same 401. " +
            "After repeated failures from one source address, or for one address from sources it never signed in from, the next attempt must wait (1 s, doubling): sooner is 429 with Retry-After.",
          requestBody: documentedBody(LoginRequest, "email and password"),
          ...policy({ caller: "anonymous", body: "uniform" }),
        },
      },
    )
    .post(
      "/v1/auth/logout",
      async ({ request, set }) => {
        await logout(ctx, readCookie(request, SESSION_COOKIE));
        set.headers["set-cookie"] = clearedSessionCookie(ctx);
        return noContent(set);
      },
      {
        response: { 204: noContent.schema },
        detail: {
          summary: "Sign out; 204 always (whatever credential or body came with it), and the cookie is cleared",
          ...policy({ caller: "lenient", body: "uniform" }),
        },
      },
    )
    .post(
      "/v1/auth/signup",
      async ({ body, set }) => {
        const out = await signup(ctx, body);
        set.status = 202;
        return out;
      },
      {
        ...JSON_BODY,
        body: SignupRequest,
        response: { 202: Accepted, ...errors(400, 401, 409) },
        detail: { summary: "Create an account; a confirmation link is mailed (same 202 whatever happened)", ...policy({ caller: "anonymous" }) },
      },
    )
    .post(
      "/v1/auth/verify",
      async ({ body, set }) => {
        const { user, sessionSecret } = await verifyAddress(ctx, body);
        const account = await accountBody(ctx, user);
        set.headers["set-cookie"] = sessionCookie(ctx, sessionSecret);
        return account;
      },
      {
        response: { 200: Account, ...errors(401, 404) },
        detail: {
          summary: "Confirm an address with its svcv_ link; signs in",
          description: "404 for every dead link: malformed, unknown, spent, expired, a reset token, or no token at all.",
          requestBody: documentedBody(LinkRequest, "the svcv_ token of the mailed link"),
          ...policy({ caller: "anonymous", body: "uniform" }),
        },
      },
    )
    .post(
      "/v1/auth/resend-verification",
      async ({ body, set }) => {
        const out = await resendVerification(ctx, body);
        set.status = 202;
        return out;
      },
      {
        response: { 202: Accepted, ...errors(401) },
        detail: {
          summary: "Mail a fresh confirmation link (same 202 for every address and every body)",
          requestBody: documentedBody(EmailRequest, "the address of the unconfirmed account"),
          ...policy({ caller: "anonymous", body: "uniform" }),
        },
      },
    )
    .post(
      "/v1/auth/forgot-password",
      async ({ body, set }) => {
        const out = await forgotPassword(ctx, body);
        set.status = 202;
        return out;
      },
      {
        response: { 202: Accepted, ...errors(401) },
        detail: {
          summary: "Mail a password reset link (same 202 for every address and every body)",
          requestBody: documentedBody(EmailRequest, "the sign-in address"),
          ...policy({ caller: "anonymous", body: "uniform" }),
        },
      },
    )
    .post(
      "/v1/auth/reset-password",
      async ({ body, set }) => {
        const { user, sessionSecret } = await resetPassword(ctx, body);
        const account = await accountBody(ctx, user);
        set.headers["set-cookie"] = sessionCookie(ctx, sessionSecret);
        return account;
      },
      {
        response: { 200: Account, ...errors(400, 401, 404) },
        detail: {
          summary: "Set a new password with an svcrs_ link; ends other sessions and signs in",
          description: "404 for every dead link (or no token), checked first; then 400 for a new password under 12 characters, which leaves the link live.",
          requestBody: documentedBody(ResetRequest, "the svcrs_ token and the new password"),
          ...policy({ caller: "anonymous", body: "uniform" }),
        },
      },
    )
    .post("/v1/auth/invite/preview", ({ body }) => previewInvite(ctx, (body ?? {}) as { invite?: unknown }), {
      response: { 200: InvitePreview, ...errors(401, 404) },
      detail: {
        summary: "What an invitation offers, without spending it",
        description: "404 for every dead invitation: malformed, unknown, revoked, used, expired, or no token at all.",
        requestBody: documentedBody(InvitePreviewRequest, "the svcinv_ token"),
        ...policy({ caller: "anonymous", body: "uniform" }),
      },
    })
    .post(
      "/v1/auth/accept-invite",
      async ({ body, set }) => {
        const { user, sessionSecret } = await acceptInvite(ctx, body);
        const account = await accountBody(ctx, user);
        set.status = 201;
        set.headers["set-cookie"] = sessionCookie(ctx, sessionSecret);
        return account;
      },
      {
        ...JSON_BODY,
        body: AcceptInviteRequest,
        response: { 201: Account, ...errors(400, 401, 409) },
        detail: { summary: "Accept an invitation: creates the account if new, joins the org, signs in", ...policy({ caller: "anonymous" }) },
      },
    )
    .get(
      "/v1/auth/me",
      ({ request }) => {
        const person = personOf(callerOf(request));
        if (!person) throw Unauthorized("not signed in");
        return accountBody(ctx, person);
      },
      { response: { 200: Account, ...errors(401) }, detail: { summary: "The signed-in account (a session, or a personal token's person)" } },
    );
}
