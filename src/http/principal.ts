// Resolves the caller of an HTTP request once, and applies the CSRF rule for cookie sessions.
import { Forbidden } from "../errors.ts";
import { resolvePrincipal } from "../services/access/credentials.ts";
import { SESSION_COOKIE, SESSION_TTL_MS } from "../services/people/auth.ts";
import type { Ctx } from "../services/context.ts";
import { ANONYMOUS, type Principal } from "../services/access/principal.ts";
import { whenReady, type MaybePromise } from "../services/access/fact-cache.ts";
import { pathOf } from "./path.ts";
import { sourceOf } from "./source.ts";

const cache = new WeakMap<Request, Principal>();
const SAFE: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/** The value of one cookie from the Cookie header. */
export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return null; // a malformed cookie is no credential at all
      }
    }
  }
  return null;
}

/**
 * Resolves the caller of `request` once (the front door does it before routing); throws 401 for a
 * presented but unusable credential and 403 for a cross-site cookie request.
 */
export function resolveCaller(ctx: Ctx, request: Request): MaybePromise<Principal> {
  const known = cache.get(request);
  if (known) return known;
  const authorization = request.headers.get("authorization");
  // An Authorization header wins over the cookie (resolvePrincipal), which is then not read at all.
  const session = authorization?.trim() ? null : readCookie(request, SESSION_COOKIE);
  return whenReady(resolvePrincipal(ctx, { authorization, session, source: sourceOf(request) }), (p) => admitCaller(ctx, request, p));
}

/** Applies the CSRF rule to a resolved caller and remembers it for the request. */
function admitCaller(ctx: Ctx, request: Request, p: Principal): Principal {
  // Why (CSRF): a browser attaches the cookie to cross-site requests; a JSON body needs a CORS
  // preflight and a matching Origin proves the page is ours, so one of the two is required.
  // Logout is exempt: it only ends the session and must answer 204 always (SPEC §4.3).
  if (p.kind === "session" && !SAFE.has(request.method) && pathOf(request.url) !== "/v1/auth/logout") {
    const type = request.headers.get("content-type") ?? "";
    const origin = request.headers.get("origin");
    if (!type.toLowerCase().startsWith("application/json") && origin !== ctx.baseUrl) {
      throw Forbidden("cross-site request refused: send a JSON body or an Origin header matching this site");
    }
    if (origin !== null && origin !== ctx.baseUrl) throw Forbidden("cross-site request refused: Origin does not match this site");
  }
  cache.set(request, p);
  return p;
}

/** The caller the front door resolved for `request` (anonymous when it was not resolved). */
export function callerOf(request: Request): Principal {
  return cache.get(request) ?? ANONYMOUS;
}

/** The Set-Cookie value that starts a session. */
export function sessionCookie(ctx: Ctx, secret: string): string {
  const secure = ctx.baseUrl.startsWith("https:") ? "; Secure" : "";
  return `${SESSION_COOKIE}=${secret}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${SESSION_TTL_MS / 1000}${secure}`;
}

/** The Set-Cookie value that clears the session cookie. */
export function clearedSessionCookie(ctx: Ctx): string {
  const secure = ctx.baseUrl.startsWith("https:") ? "; Secure" : "";
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${secure}`;
}
