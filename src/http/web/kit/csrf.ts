// CSRF for the web forms, on top of the cookie-session rule of the API (principal.ts): a form
// post must carry our own Origin, and a signed-in form also a token bound to the session.
import { createHmac, timingSafeEqual } from "node:crypto";
import { Forbidden } from "../../../errors.ts";
import { SESSION_COOKIE } from "../../../services/people/auth.ts";
import type { Ctx } from "../../../services/context.ts";
import { readCookie } from "../../principal.ts";

/** The name of the hidden form field. */
export const CSRF_FIELD = "csrf";

/**
 * The form token of the session `request` carries, or null without one. Why an HMAC keyed by the
 * cookie: another site can neither read the cookie (HttpOnly) nor our page, so it cannot make the
 * token; and nothing is stored, so every tab and every page of one session share it.
 */
export function formToken(request: Request): string | null {
  const secret = readCookie(request, SESSION_COOKIE);
  return secret ? createHmac("sha256", secret).update("svc web form").digest("base64url") : null;
}

/**
 * Refuses a cross-site form post (403): the Origin must be this site's base URL (a browser sends it
 * on every form POST), and when a session cookie came, the token must match it.
 */
export function checkForm(ctx: Ctx, request: Request, form: URLSearchParams): void {
  const origin = request.headers.get("origin");
  // Why no fallback to Referer or a missing Origin: the browsers we support always send Origin on
  // a POST, so its absence means a client that is not a browser page of ours.
  if (origin !== ctx.baseUrl) throw Forbidden("cross-site form refused: the page that sent it is not ours (Origin)");
  const expected = formToken(request);
  if (expected === null) return;
  const sent = Buffer.from(form.get(CSRF_FIELD) ?? "");
  const want = Buffer.from(expected);
  if (sent.length !== want.length || !timingSafeEqual(sent, want)) throw Forbidden("form expired or not ours: reload the page and try again");
}

/** The largest form body a page accepts (sign-in and small settings forms). */
export const FORM_LIMIT = 64 * 1024;
