// App-provider mode (SVC_APP_ID, SVC_APP_PRIVATE_KEY, SVC_APP_API_URL): the server acts as an
// installed app of the provider. It proves itself with a short JWT signed RS256 with the app's
// private key, trades it for an installation token (POST /app/installations/{id}/access_tokens),
// and fetches `owner/name` from the clone URL the provider names (GET /repos/{owner}/{name}),
// presenting the token as Basic `x-access-token:<token>`. Tokens are cached until a minute
// before they expire. The API URL is the operator's, so it is trusted; the clone URL still goes
// through the origin egress checks.
import { createPrivateKey, sign, type KeyObject } from "node:crypto";
import type { RemoteAuth } from "../../git/fetch-client.ts";
import { FetchError } from "../../git/fetch-client.ts";
import { now, type Ctx } from "../context.ts";

/** A context's app credentials (`ctx.caches.appTokens`): installation tokens until a minute before they expire, and the parsed private key. */
export class AppTokens {
  readonly tokens = new Map<string, { token: string; expiresAt: number }>();
  private parsed: { pem: string; key: KeyObject } | null = null;

  /** The private key of `pem`, parsed once. */
  keyOf(pem: string): KeyObject {
    if (this.parsed?.pem !== pem) this.parsed = { pem, key: createPrivateKey(pem) };
    return this.parsed.key;
  }
}
const API_TIMEOUT_MS = 30_000;

function b64url(data: string | Uint8Array): string {
  return Buffer.from(data).toString("base64url");
}

/** The app's JWT: issued a minute in the past (clock drift), valid nine minutes (the provider allows ten). */
export function appJwt(appId: string, key: KeyObject, at = now()): string {
  const iat = Math.floor(at / 1000) - 60;
  const head = b64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const body = b64url(JSON.stringify({ iat, exp: iat + 600, iss: appId }));
  const signed = sign("sha256", Buffer.from(`${head}.${body}`), key);
  return `${head}.${body}.${b64url(signed)}`;
}

async function api(ctx: Ctx, method: string, path: string, authorization: string): Promise<any> {
  const app = ctx.config.app!;
  let res: Response;
  try {
    res = await fetch(`${app.apiUrl}${path}`, {
      method,
      headers: { authorization, accept: "application/vnd.github+json", "user-agent": "svc-mirrors/0.1" },
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
      redirect: "manual",
    });
  } catch (e) {
    throw new FetchError("http", `app provider unreachable: ${(e as { code?: string }).code ?? String(e)}`);
  }
  const text = await res.text();
  if (res.status === 401 || res.status === 403) throw new FetchError("auth", `app provider refused ${method} ${path} (HTTP ${res.status})`);
  if (res.status === 404) throw new FetchError("not-found", `app provider: ${path} not found (HTTP 404)`);
  if (res.status < 200 || res.status >= 300) throw new FetchError("http", `app provider answered HTTP ${res.status} to ${method} ${path}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new FetchError("protocol", `app provider sent malformed JSON for ${method} ${path}`);
  }
}

/** An installation token (cached until a minute before it expires). */
export async function installationToken(ctx: Ctx, installation: string): Promise<string> {
  const tokens = ctx.caches.appTokens.tokens;
  const hit = tokens.get(installation);
  if (hit && hit.expiresAt - 60_000 > now()) return hit.token;
  const app = ctx.config.app;
  if (!app) throw new FetchError("auth", "the app provider is not configured on this server (SVC_APP_ID)");
  const out = await api(
    ctx,
    "POST",
    `/app/installations/${encodeURIComponent(installation)}/access_tokens`,
    `Bearer ${appJwt(app.id, ctx.caches.appTokens.keyOf(app.privateKey))}`,
  );
  if (typeof out?.token !== "string" || !out.token) throw new FetchError("protocol", "app provider answered without a token");
  const expires = typeof out.expires_at === "string" ? Date.parse(out.expires_at) : Number.NaN;
  tokens.set(installation, { token: out.token, expiresAt: Number.isFinite(expires) ? expires : now() + 10 * 60_000 });
  return out.token;
}

/** Where and how to fetch an app origin `owner/name` of `installation`. */
export async function appOrigin(ctx: Ctx, fullName: string, installation: string): Promise<{ url: string; auth: RemoteAuth }> {
  const token = await installationToken(ctx, installation);
  const [owner, name] = fullName.split("/");
  const repo = await api(ctx, "GET", `/repos/${encodeURIComponent(owner!)}/${encodeURIComponent(name!)}`, `token ${token}`);
  if (typeof repo?.clone_url !== "string") throw new FetchError("protocol", `app provider sent no clone_url for ${fullName}`);
  return { url: repo.clone_url, auth: { kind: "basic", username: "x-access-token", password: token } };
}
