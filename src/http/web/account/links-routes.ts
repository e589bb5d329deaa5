// Sign-up, forgotten passwords and the pages mailed links open, at the addresses the mails use
// (/verify, /reset-password, /invite, /settings/emails/verify; services/mail/messages.ts). Each
// page only shows a form; its POST calls the same service as the /v1 route.
import { Elysia } from "elysia";
import { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { acceptInvite, previewInvite } from "../../../services/orgs/invites.ts";
import { verifyEmail } from "../../../services/people/emails.ts";
import { RESET_ACCEPTED, forgotPassword, resetPassword } from "../../../services/people/recovery.ts";
import { SIGNUP_ACCEPTED, resendVerification, signup, verifyAddress } from "../../../services/people/signup.ts";
import { sessionCookie } from "../../principal.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { errorPage, layout, page, type Frame } from "../kit/layout.ts";
import { field, formHandler, me, seeOther, signInRequired } from "../kit/account-forms.ts";
import { claimPage, forgotPage, invitePage, resetPage, signupPage, signupSentPage, verifyPage } from "./links-page.ts";
import { seg } from "../kit/html.ts";

/**
 * Why: a link's token sits in the page address, so the page is never cached; and it leaves in no
 * Referer to another site (the pages' same-origin policy). Not no-referrer: a browser then sends
 * `Origin: null` with the page's own form, which the CSRF check must refuse.
 */
const LINK_HEADERS = { "referrer-policy": "same-origin", "cache-control": "no-store" };

/** The pages of sign-up and of the mailed links. */
export function accountLinkRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  const post = formHandler(ctx);
  const signedInTo = (location: string, secret: string) => seeOther(location, { "set-cookie": sessionCookie(ctx, secret) });
  // A dead link, a disabled account: the error page, never the sign-in form.
  const linkError = (error: AppError, frame: Frame) => (error.status === 401 || error.status === 404 ? errorPage(ctx, frame, error) : null);

  return new Elysia({ name: "routes.web.account.links" })
    .get("/signup", ({ request }) =>
      draw(request, async (_actor, frame) => (frame.viewer ? seeOther("/") : page(layout(frame, "Sign up", signupPage(frame.csrf))))), HIDE)
    .post("/signup", ({ request, body }) =>
      post(request, body, "/signup", async ({ form }) => {
        await signup(ctx, { email: field(form, "email"), name: field(form, "name"), handle: field(form, "handle"), password: form.get("password") ?? "" });
        return seeOther("/signup/sent");
      }, (error, { frame, form }) => {
        if (error.status !== 400 && error.status !== 409) return null;
        const values = { email: field(form, "email"), name: field(form, "name"), handle: field(form, "handle") };
        return page(layout(frame, "Sign up", signupPage(frame.csrf, { error: error.message, values })), error.status);
      }), HIDE)
    .get("/signup/sent", ({ request }) =>
      draw(request, async (_actor, frame) => page(layout(frame, "Check your email", signupSentPage(frame.csrf, SIGNUP_ACCEPTED.detail)))), HIDE)
    .post("/signup/resend", ({ request, body }) =>
      post(request, body, "/signup/sent", async ({ form }) => {
        await resendVerification(ctx, { email: field(form, "email") });
        return seeOther("/signup/sent");
      }), HIDE)
    .get("/login/forgot", ({ request, query }) =>
      draw(request, async (_actor, frame) => page(layout(frame, "Reset your password", forgotPage(frame.csrf, queryParam(query, "sent") ? RESET_ACCEPTED.detail : null)))), HIDE)
    .post("/login/forgot", ({ request, body }) =>
      post(request, body, "/login/forgot", async ({ form }) => {
        await forgotPassword(ctx, { email: field(form, "email") });
        return seeOther("/login/forgot?sent=1");
      }), HIDE)
    .get("/verify", ({ request, query }) =>
      draw(request, async (_actor, frame) => page(layout(frame, "Confirm your address", verifyPage(frame.csrf, queryParam(query, "token") ?? "")), 200, LINK_HEADERS)), HIDE)
    .post("/verify", ({ request, body }) =>
      post(request, body, "/", async ({ form }) => {
        const { sessionSecret } = await verifyAddress(ctx, { token: form.get("token") ?? "" });
        return signedInTo("/", sessionSecret);
      }, (error, { frame }) => linkError(error, frame)), HIDE)
    .get("/reset-password", ({ request, query }) =>
      draw(request, async (_actor, frame) => page(layout(frame, "Choose a new password", resetPage(frame.csrf, queryParam(query, "token") ?? "")), 200, LINK_HEADERS)), HIDE)
    .post("/reset-password", ({ request, body }) =>
      post(request, body, "/", async ({ form }) => {
        const { sessionSecret } = await resetPassword(ctx, { token: form.get("token") ?? "", new_password: form.get("new_password") ?? "" });
        return signedInTo("/", sessionSecret);
      }, (error, { frame, form }) => {
        if (error.status === 400) return page(layout(frame, "Choose a new password", resetPage(frame.csrf, form.get("token") ?? "", error.message)), 400, LINK_HEADERS);
        return linkError(error, frame);
      }), HIDE)
    .get("/invite", ({ request, query }) =>
      draw(request, async (_actor, frame) => {
        const token = queryParam(query, "token") ?? "";
        const preview = await previewInvite(ctx, { invite: token });
        return page(layout(frame, `Join ${preview.org}`, invitePage(frame.csrf, token, preview)), 200, LINK_HEADERS);
      }), HIDE)
    .post("/invite", ({ request, body }) =>
      post(request, body, "/", async ({ form }) => {
        const token = form.get("token") ?? "";
        const handle = field(form, "handle");
        const { org } = await previewInvite(ctx, { invite: token });
        const { sessionSecret } = await acceptInvite(ctx, { invite: token, name: field(form, "name"), password: form.get("password") ?? "", handle: handle || undefined });
        return signedInTo(`/${seg(org)}`, sessionSecret);
      }, async (error, { frame, form }) => {
        if (error.status !== 400 && error.status !== 409) return linkError(error, frame);
        const token = form.get("token") ?? "";
        // The form again while the invitation lives; once it is dead, the error page says so.
        const preview = await previewInvite(ctx, { invite: token }).catch(() => null);
        if (!preview) return errorPage(ctx, frame, error);
        const values = { name: field(form, "name"), handle: field(form, "handle") };
        return page(layout(frame, `Join ${preview.org}`, invitePage(frame.csrf, token, preview, { error: error.message, values })), error.status, LINK_HEADERS);
      }), HIDE)
    .get("/settings/emails/verify", ({ request, query }) =>
      draw(request, async (_actor, frame) => {
        if (!frame.viewer) return signInRequired(request, frame);
        return page(layout(frame, "Confirm an address", claimPage(frame.csrf, queryParam(query, "token") ?? "", frame.viewer.handle)), 200, LINK_HEADERS);
      }), HIDE)
    .post("/settings/emails/verify", ({ request, body }) =>
      post(request, body, "/settings/emails", async (i) => {
        await verifyEmail(ctx, i.actor, me(i), { token: i.form.get("token") ?? "" });
        return seeOther("/settings/emails?done=verified");
      }, (error, { frame }) => (error.status === 404 ? errorPage(ctx, frame, error) : null)), HIDE);
}
