// POST /v1/auth/login, POST /v1/auth/logout, GET /v1/auth/me (SPEC §4.3).
import { Elysia, t } from "elysia";
import { Unauthorized } from "../../errors.ts";
import { SESSION_COOKIE, accountBody, login, logout } from "../../services/auth.ts";
import type { Ctx } from "../../services/context.ts";
import { personOf } from "../../services/principal.ts";
import { clearedSessionCookie, principalOf, readCookie, sessionCookie } from "../principal.ts";

const LoginBody = t.Object({ email: t.Unknown(), password: t.Unknown() }, { description: "email and password" });

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
      ({ request, set }) => {
        logout(ctx, readCookie(request, SESSION_COOKIE));
        set.status = 204;
        set.headers["set-cookie"] = clearedSessionCookie(ctx);
        return null;
      },
      { detail: { summary: "Sign out; always 204" } },
    )
    .get(
      "/v1/auth/me",
      ({ request }) => {
        const person = personOf(principalOf(ctx, request));
        if (!person) throw Unauthorized("not signed in");
        return accountBody(ctx, person);
      },
      { detail: { summary: "The signed-in account" } },
    );
}
