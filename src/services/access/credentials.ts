// Resolving the caller from what a transport found (SPEC §4.3, §5): an Authorization bearer (or
// Basic, for git) or the session cookie. Each kind of credential belongs to the domain that
// issues it (people: tokens and sessions; ci: runner credentials and registration tokens) and is
// registered on the context (src/wiring.ts), so access resolves every kind without importing the
// domains above it.
import { Unauthorized } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { whenReady, type MaybePromise } from "./fact-cache.ts";
import { ANONYMOUS, type Principal } from "./principal.ts";

/** Where a credential is presented. */
export type Carrier = "bearer" | "basic" | "cookie";

/** One kind of credential, as the domain that issues it resolves it. */
export interface CredentialKind {
  readonly name: string;
  /** Where this kind is accepted: an `Authorization: Bearer` value, either field of git's Basic, the session cookie. */
  readonly carriers: readonly Carrier[];
  /** Whether a value has this kind's shape (no I/O). The first kind in order that matches resolves it. */
  matches(raw: string): boolean;
  /** The principal behind the value, or null when it is unknown, spent, expired or revoked. */
  resolve(ctx: Ctx, raw: string): MaybePromise<Principal | null>;
}

/** `ctx.resolvers.credentials`: the kinds in order, and the limit on presenting unusable ones. */
export interface CredentialResolvers {
  readonly kinds: readonly CredentialKind[];
  /**
   * Runs the resolution of an Authorization value under the per-source limit of unusable
   * credentials (people/throttle.ts): 429 before a source over the limit is looked at, and each
   * 401 the resolution throws counts as one failure.
   */
  guard<T>(ctx: Ctx, source: string | undefined, resolve: () => MaybePromise<T>): MaybePromise<T>;
}

/** Raw credentials as a transport found them. */
export interface Credentials {
  /** Authorization header value, if any. */
  authorization?: string | null;
  /** svc_session cookie value, if any. */
  session?: string | null;
  /** The source address the transport saw (rate limits of unusable credentials, throttle.ts). */
  source?: string;
}

/** What a Basic credential carrying a password instead of a token is told (git shows it as `remote:`). */
export const PASSWORD_REFUSED = "passwords are not accepted for git; use a token";

const SPACE = /\s/;
const BEARER = /^bearer$/i;
const BASIC = /^basic$/i;

/** The scheme and credential of a trimmed Authorization value: its first two words (hot path). */
function splitAuthorization(auth: string): [scheme: string, value: string] {
  const gap = auth.search(SPACE);
  if (gap < 0) return [auth, ""];
  const rest = auth.slice(gap).trimStart();
  const end = rest.search(SPACE);
  return [auth.slice(0, gap), end < 0 ? rest : rest.slice(0, end)];
}

/** The first registered kind accepted on `carrier` whose shape `raw` has, or undefined. */
function kindOf(ctx: Ctx, carrier: Carrier, raw: string): CredentialKind | undefined {
  for (const k of ctx.resolvers.credentials.kinds) if (k.carriers.includes(carrier) && k.matches(raw)) return k;
  return undefined;
}

/** The principal behind `raw` on `carrier`, or null (no kind has its shape, or its kind knows nothing of it). */
function resolveOn(ctx: Ctx, carrier: Carrier, raw: string): MaybePromise<Principal | null> {
  const kind = kindOf(ctx, carrier, raw);
  return kind ? kind.resolve(ctx, raw) : null;
}

/**
 * Resolves the caller. A bearer (or Basic, for git) credential wins over the cookie; a presented
 * but unusable credential is a 401, never a silent fall-back to anonymous.
 */
export function resolvePrincipal(ctx: Ctx, cred: Credentials): MaybePromise<Principal> {
  const auth = cred.authorization?.trim();
  if (auth) return ctx.resolvers.credentials.guard(ctx, cred.source, () => resolveAuthorization(ctx, auth));
  if (cred.session) return whenReady(resolveOn(ctx, "cookie", cred.session), (p) => p ?? ANONYMOUS);
  return ANONYMOUS;
}

/** The principal of an Authorization header; 401 when it is unusable. */
function resolveAuthorization(ctx: Ctx, auth: string): MaybePromise<Principal> {
  const [scheme, value] = splitAuthorization(auth);
  if (BEARER.test(scheme)) {
    return whenReady(resolveOn(ctx, "bearer", value), (p) => {
      if (!p) throw Unauthorized("invalid or revoked token");
      return p;
    });
  }
  if (BASIC.test(scheme)) {
    // Git over HTTP: the token may sit in either the user or the password field.
    let decoded = "";
    try {
      decoded = Buffer.from(value, "base64").toString("utf8");
    } catch {
      throw Unauthorized("invalid credentials");
    }
    const i = decoded.indexOf(":");
    const user = i < 0 ? decoded : decoded.slice(0, i);
    const pass = i < 0 ? "" : decoded.slice(i + 1);
    const passFits = kindOf(ctx, "basic", pass) !== undefined;
    const candidate = passFits ? pass : user;
    // Why a distinct message: an account password in git's prompt is the most common mistake,
    // and the answer (make a token) is not guessable from "invalid credentials". It depends only
    // on the shape of what was sent, so it tells nothing about any account.
    if (pass !== "" && !passFits && kindOf(ctx, "basic", user) === undefined) throw Unauthorized(PASSWORD_REFUSED);
    return whenReady(resolveOn(ctx, "basic", candidate), (p) => {
      if (!p) throw Unauthorized("invalid credentials");
      return p;
    });
  }
  throw Unauthorized("unsupported authorization scheme");
}
