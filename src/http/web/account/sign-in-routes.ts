// Signing in and out: the sign-in page and its form (/login), and the sign-out button of every
// page's header (/logout).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { SESSION_COOKIE, login, logout } from "../../../services/people/auth.ts";
import { clearedSessionCookie, readCookie, sessionCookie } from "../../principal.ts";
import { sourceOf } from "../../source.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { postForm, seeOther } from "../kit/forms.ts";
import { layout, page } from "../kit/layout.ts";
import { loginPage, safeNext } from "../kit/sign-in.ts";

/** The sign-in and sign-out routes. */
export function signInRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return new Elysia({ name: "routes.web.account.sign-in" })
    .get(
      "/login",
      ({ request, query }) =>
        draw(request, async (_actor, frame) => {
          const next = safeNext(queryParam(query, "next"));
          if (frame.viewer) return Response.redirect(new URL(next, ctx.baseUrl).toString(), 303);
          return page(layout(frame, "Sign in", loginPage({ next, csrf: frame.csrf })));
        }),
      HIDE,
    )
    .post(
      "/login",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          kind: "session",
          read: (form) => ({ next: safeNext(form.get("next")), email: form.get("email") ?? "" }),
          act: async ({ form }, { next, email }) => {
            const { sessionSecret } = await login(ctx, { email, password: form.get("password") ?? "" }, sourceOf(request));
            return seeOther(next, { "set-cookie": sessionCookie(ctx, sessionSecret) });
          },
          // A 401 is a wrong address or password (never which one); a 429 says how long to wait (Retry-After).
          again: async ({ frame }, error, { next, email }) =>
            page(
              layout(
                frame,
                "Sign in",
                loginPage({ next, email, error: error.code === "unauthenticated" ? "Wrong email or password." : error.message, csrf: frame.csrf }),
              ),
              error.status,
            ),
        }),
      HIDE,
    )
    .post(
      "/logout",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          kind: "session",
          act: async () => {
            await logout(ctx, readCookie(request, SESSION_COOKIE));
            return seeOther("/", { "set-cookie": clearedSessionCookie(ctx) });
          },
        }),
      HIDE,
    );
}
