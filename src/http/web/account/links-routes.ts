// Sign-up, forgotten passwords and the pages mailed links open, at the addresses the mails use
// (/verify, /reset-password, /invite, /settings/emails/verify; services/mail/messages.ts). Each
// page only shows a form; its POST calls the same service as the /v1 route.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { acceptInvite, previewInvite } from "../../../services/orgs/invites.ts";
import { verifyEmail } from "../../../services/people/emails.ts";
import { RESET_ACCEPTED, forgotPassword, resetPassword } from "../../../services/people/recovery.ts";
import { SIGNUP_ACCEPTED, resendVerification, signup, verifyAddress } from "../../../services/people/signup.ts";
import { sessionCookie } from "../../principal.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { errorPage, layout, page } from "../kit/layout.ts";
import { field, me, postForm, seeOther, signInRequired } from "../kit/forms.ts";
import { claimPage, forgotPage, invitePage, resetPage, signupPage, signupSentPage, verifyPage } from "./links-page.ts";
import { seg } from "../kit/html.ts";

/**
 * Why: a link's token sits in the page address, so the page is never cached; and it leaves in no
 * Referer to another site (the pages' same-origin policy). Not no-referrer: a browser then sends
 * `Origin: null` with the page's own form, which the CSRF check must refuse.
 */
const LINK_HEADERS = { "referrer-policy": "same-origin", "cache-control": "no-store" } as const;

/** The pages of sign-up and of the mailed links. */
export function accountLinkRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  const signedInTo = (location: string, secret: string) => seeOther(location, { "set-cookie": sessionCookie(ctx, secret) });

  return new Elysia({ name: "routes.web.account.links" })
    .get(
      "/signup",
      ({ request }) => draw(request, async (_actor, frame) => (frame.viewer ? seeOther("/") : page(layout(frame, "Sign up", signupPage(frame.csrf))))),
      HIDE,
    )
    .post(
      "/signup",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/signup",
          read: (form) => ({ email: field(form, "email"), name: field(form, "name"), handle: field(form, "handle") }),
          act: async ({ form }, values) => {
            await signup(ctx, { ...values, password: form.get("password") ?? "" });
            return "/signup/sent";
          },
          again: async ({ frame }, error, values) => page(layout(frame, "Sign up", signupPage(frame.csrf, { error: error.message, values })), error.status),
        }),
      HIDE,
    )
    .get(
      "/signup/sent",
      ({ request }) => draw(request, async (_actor, frame) => page(layout(frame, "Check your email", signupSentPage(frame.csrf, SIGNUP_ACCEPTED.detail)))),
      HIDE,
    )
    .post(
      "/signup/resend",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/signup/sent",
          act: async ({ form }) => {
            await resendVerification(ctx, { email: field(form, "email") });
            return "/signup/sent";
          },
        }),
      HIDE,
    )
    .get(
      "/login/forgot",
      ({ request, query }) =>
        draw(request, async (_actor, frame) =>
          page(layout(frame, "Reset your password", forgotPage(frame.csrf, queryParam(query, "sent") ? RESET_ACCEPTED.detail : null))),
        ),
      HIDE,
    )
    .post(
      "/login/forgot",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/login/forgot",
          act: async ({ form }) => {
            await forgotPassword(ctx, { email: field(form, "email") });
            return "/login/forgot?sent=1";
          },
        }),
      HIDE,
    )
    .get(
      "/verify",
      ({ request, query }) =>
        draw(request, async (_actor, frame) =>
          page(layout(frame, "Confirm your address", verifyPage(frame.csrf, queryParam(query, "token") ?? "")), 200, LINK_HEADERS),
        ),
      HIDE,
    )
    .post(
      "/verify",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          kind: "link",
          act: async ({ form }) => {
            const { sessionSecret } = await verifyAddress(ctx, { token: form.get("token") ?? "" });
            return signedInTo("/", sessionSecret);
          },
        }),
      HIDE,
    )
    .get(
      "/reset-password",
      ({ request, query }) =>
        draw(request, async (_actor, frame) =>
          page(layout(frame, "Choose a new password", resetPage(frame.csrf, queryParam(query, "token") ?? "")), 200, LINK_HEADERS),
        ),
      HIDE,
    )
    .post(
      "/reset-password",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          kind: "link",
          act: async ({ form }) => {
            const { sessionSecret } = await resetPassword(ctx, { token: form.get("token") ?? "", new_password: form.get("new_password") ?? "" });
            return signedInTo("/", sessionSecret);
          },
          again: async ({ frame, form }, error) =>
            page(layout(frame, "Choose a new password", resetPage(frame.csrf, form.get("token") ?? "", error.message)), error.status, LINK_HEADERS),
        }),
      HIDE,
    )
    .get(
      "/invite",
      ({ request, query }) =>
        draw(request, async (_actor, frame) => {
          const token = queryParam(query, "token") ?? "";
          const preview = await previewInvite(ctx, { invite: token });
          return page(layout(frame, `Join ${preview.org}`, invitePage(frame.csrf, token, preview)), 200, LINK_HEADERS);
        }),
      HIDE,
    )
    .post(
      "/invite",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          kind: "link",
          act: async ({ form }) => {
            const token = form.get("token") ?? "";
            const handle = field(form, "handle");
            const { org } = await previewInvite(ctx, { invite: token });
            const { sessionSecret } = await acceptInvite(ctx, {
              invite: token,
              name: field(form, "name"),
              password: form.get("password") ?? "",
              handle: handle || undefined,
            });
            return signedInTo(`/${seg(org)}`, sessionSecret);
          },
          again: async ({ frame, form }, error) => {
            const token = form.get("token") ?? "";
            // The form again while the invitation lives; once it is dead, the error page says so.
            const preview = await previewInvite(ctx, { invite: token }).catch(() => null);
            if (!preview) return errorPage(ctx, frame, error);
            const values = { name: field(form, "name"), handle: field(form, "handle") };
            return page(
              layout(frame, `Join ${preview.org}`, invitePage(frame.csrf, token, preview, { error: error.message, values })),
              error.status,
              LINK_HEADERS,
            );
          },
        }),
      HIDE,
    )
    .get(
      "/settings/emails/verify",
      ({ request, query }) =>
        draw(request, async (_actor, frame) => {
          if (!frame.viewer) return signInRequired(request, frame);
          return page(layout(frame, "Confirm an address", claimPage(frame.csrf, queryParam(query, "token") ?? "", frame.viewer.handle)), 200, LINK_HEADERS);
        }),
      HIDE,
    )
    .post(
      "/settings/emails/verify",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/emails",
          act: async (i) => {
            await verifyEmail(ctx, i.actor, me(i), { token: i.form.get("token") ?? "" });
            return "/settings/emails?done=verified";
          },
        }),
      HIDE,
    );
}
