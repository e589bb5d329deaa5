// The people domain's credentials (API tokens and session cookies: verified here, registered into
// access as credential kinds) and sign-in (SPEC §4.3, §5).
import { Value } from "@sinclair/typebox/value";
import { Unauthorized } from "../../errors.ts";
import type { User } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret, secretMatches, storedDigest } from "../../util/secrets.ts";
import { now, type Ctx } from "../context.ts";
import type { Principal } from "../access/principal.ts";
import { whenReady, type MaybePromise } from "../access/fact-cache.ts";
import type { CredentialKind } from "../access/credentials.ts";
import * as store from "./store.ts";
import { LoginRequest, type Account } from "./schemas.ts";
import { noteTokenUse } from "./token-use.ts";
import { checkLoginAllowed, noteLoginFailed, noteLoginSucceeded } from "./throttle.ts";

export const SESSION_COOKIE = "svc_session";
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
/** A session's expiry slides forward at most this often (one write per day per session). */
const SESSION_SLIDE_MS = 24 * 3600 * 1000;

const TOKEN_RE = /^svc_[a-z2-7]{16}_[a-z2-7]{32}$/;
const SESSION_RE = /^[a-z2-7]{32}$/;

/** Splits an API token `svc_<id>_<secret>` (null when malformed). */
export function parseToken(raw: string): { id: string; secret: string } | null {
  const token = raw.trim();
  // The two parts have fixed lengths: `svc_` + 16 characters, `_`, 32 characters.
  return TOKEN_RE.test(token) ? { id: token.slice(4, 20), secret: token.slice(21) } : null;
}

/** Verifies an API token against the database on every call, so revocation is immediate. */
export function verifyToken(ctx: Ctx, raw: string): MaybePromise<Principal | null> {
  const parsed = parseToken(raw);
  if (!parsed) return null;
  const found = ctx.facts.get("token", parsed.id, async () => {
    const row = await store.tokenById(ctx.db.read, parsed.id);
    if (!row) return null;
    const user = row.userId ? await store.userById(ctx.db.read, row.userId) : null;
    return { row, user, digest: storedDigest(row.secretHash) };
  });
  return whenReady(found, (f): Principal | null => {
    // Why: compare the digest in constant time so timing does not reveal how much of a secret matched.
    if (!f || !secretMatches(parsed.secret, f.digest)) return null;
    const { row, user } = f;
    if (row.userId && (!user || user.disabledAt !== null)) return null;
    // Why not a job token's use: it lives for one job, is never listed, and a stamp would be one more write per job.
    if (row.kind !== "job") noteTokenUse(ctx, row);
    return { kind: "token", token: row, user: row.userId ? user : null };
  });
}

/** Resolves the session cookie (null when absent, unknown, expired or the account is disabled). */
export function verifySession(ctx: Ctx, secret: string): MaybePromise<Principal | null> {
  if (!SESSION_RE.test(secret)) return null;
  const t = now();
  const hash = hashSecret(secret);
  const found = ctx.facts.get("session", hash, async () => {
    const row = await store.sessionByHash(ctx.db.read, hash);
    return row ? { row, user: await store.userById(ctx.db.read, row.userId) } : null;
  });
  return whenReady(found, (f): MaybePromise<Principal | null> => {
    if (!f || f.row.expiresAt <= t) return null;
    const { row, user } = f;
    if (!user || user.disabledAt !== null) return null;
    const principal: Principal = { kind: "session", user, sessionId: row.id };
    if (row.expiresAt - t >= SESSION_TTL_MS - SESSION_SLIDE_MS) return principal;
    return ctx.db.transaction((tx) => store.slideSession(tx, row.id, t + SESSION_TTL_MS)).then(() => principal);
  });
}

/** API tokens (`svc_…`): as a bearer, or in either field of git's Basic. */
export const TOKEN_CREDENTIAL: CredentialKind = Object.freeze<CredentialKind>({
  name: "token",
  carriers: ["bearer", "basic"],
  matches: (raw) => parseToken(raw) !== null,
  resolve: verifyToken,
});

/** The session cookie's secret. */
export const SESSION_CREDENTIAL: CredentialKind = Object.freeze<CredentialKind>({
  name: "session",
  carriers: ["cookie"],
  matches: (raw) => SESSION_RE.test(raw),
  resolve: verifySession,
});

/** The account body of login and me: `{ id, email, name, handle, created_at, orgs }`. */
export async function accountBody(ctx: Ctx, user: User): Promise<Account> {
  const rows = await store.orgsOfUser(ctx.db.read, user.id);
  return { id: user.id, email: user.email, name: user.name, handle: user.handle, created_at: user.createdAt, orgs: rows };
}

/** A real argon2id hash of a random password, verified for unknown addresses so timing matches (made once per context). */
function dummy(ctx: Ctx): Promise<string> {
  ctx.auth.dummyHash ??= Bun.password.hash(newSecret(), ARGON2);
  return ctx.auth.dummyHash;
}

/** Hashes a password with argon2id. */
export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, ARGON2);
}

/** argon2id at the OWASP baseline (19 MiB, 2 passes): strong, and many logins at once stay affordable. */
const ARGON2 = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;

/** The longest sign-in fields considered (characters); longer ones fail like a wrong password. */
export const LOGIN_FIELD_LIMITS = { email: 254, password: 1024 } as const;

/**
 * POST /v1/auth/login: checks email + password. Every failure, a body of any other shape
 * included, is the same 401 with the same work done.
 */
export async function login(ctx: Ctx, input: unknown, source = "unknown"): Promise<{ user: User; sessionSecret: string }> {
  const fail = () => Unauthorized("invalid email or password");
  // Why the caps: no address is longer than 254 characters (RFC 5321's path limit) and no
  // password longer than 1,024 (checkPassword); a longer field is an unusable body, answered
  // like any other, and never becomes a throttle key or a hash input (issue 25 row 7).
  const usable = Value.Check(LoginRequest, input) && input.email.length <= LOGIN_FIELD_LIMITS.email && input.password.length <= LOGIN_FIELD_LIMITS.password;
  const body: LoginRequest = usable ? (input as LoginRequest) : { email: "", password: "" };
  const address = body.email.trim();
  const pw = body.password;
  // Why before the lookup: a source or account that must wait costs no password hash (throttle.ts).
  checkLoginAllowed(ctx, source, address);
  const user = address ? await store.userByEmail(ctx.db.read, address) : null;
  const ok = await Bun.password.verify(pw, user ? user.passwordHash : await dummy(ctx));
  if (!user || !ok || user.disabledAt !== null) {
    noteLoginFailed(ctx, source, address);
    throw fail();
  }
  noteLoginSucceeded(ctx, source, address);
  return { user, sessionSecret: await ctx.db.transaction((tx) => startSession(tx, user.id)) };
}

/** Creates a session row and returns the cookie secret (only its hash is stored). */
export async function startSession(tx: Tx, userId: string): Promise<string> {
  const secret = newSecret();
  const t = now();
  await store.insertSession(tx, { id: newId(), userId, secretHash: hashSecret(secret), expiresAt: t + SESSION_TTL_MS, createdAt: t });
  return secret;
}

/** Ends the session behind a cookie value, if it is one. */
export async function logout(ctx: Ctx, secret: string | null | undefined): Promise<void> {
  if (secret && /^[a-z2-7]{32}$/.test(secret)) await ctx.db.transaction((tx) => store.deleteSessionByHash(tx, hashSecret(secret)));
}

/** Warms the dummy hash so the first failed login is not faster than later ones. */
export async function warmAuth(ctx: Ctx): Promise<void> {
  await dummy(ctx);
}
