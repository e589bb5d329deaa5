// A mirror's origin (SPEC §2.1, §6.2): a fetchable URL (generic provider) or `owner/name` at the
// app-based provider, checked at creation, and the key an inbound push names it by.
import { Invalid, Unprocessable } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { EgressError, parseEgressUrl, resolveEgress } from "../../util/egress.ts";

/** A validated origin, ready to store. */
export interface MirrorOrigin {
  provider: "generic" | "app";
  /** What Repo.origin_url shows: the URL without credentials, or `owner/name`. */
  url: string;
  /** What inbound pushes are matched on (see originKey). */
  key: string;
  installation: string | null;
  /** Basic credentials taken out of the URL (generic provider). */
  username: string | null;
  password: string | null;
}

const APP_NAME = /^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/;
const MAX_URL = 2000;

/**
 * The match key of a generic origin URL: scheme and host lowercased, default port, credentials,
 * query, fragment, trailing slashes and a trailing `.git` dropped, so `https://Host/a/b.git` and
 * `https://host/a/b/` name the same origin. Null when `raw` is not an http(s) URL.
 */
export function genericOriginKey(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) return null;
  const path = u.pathname
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")
    .replace(/\/+$/, "");
  return `generic:${u.protocol}//${u.host.toLowerCase()}${path}`;
}

/** The match key of an app origin `owner/name` (the provider ignores case). */
export function appOriginKey(fullName: string): string {
  return `app:${fullName.trim().toLowerCase()}`;
}

/** Validates the mirror fields of a repository create (DECISIONS §3); refuses what could never sync. */
export async function parseOrigin(ctx: Ctx, input: { origin_url?: unknown; origin_provider?: unknown; origin_installation?: unknown }): Promise<MirrorOrigin> {
  const provider = input.origin_provider ?? "generic";
  if (provider !== "generic" && provider !== "app") throw Unprocessable("origin_provider must be app or generic");
  if (typeof input.origin_url !== "string" || !input.origin_url.trim()) throw Invalid("a mirror needs origin_url");
  const raw = input.origin_url.trim();
  if (raw.length > MAX_URL) throw Invalid(`origin_url is longer than ${MAX_URL} characters`);
  if (provider === "app") {
    if (!APP_NAME.test(raw)) throw Invalid("origin_url of an app mirror is owner/name");
    if (typeof input.origin_installation !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(input.origin_installation))
      throw Invalid("an app mirror needs origin_installation (the app installation id)");
    if (!ctx.config.app) throw Invalid("app mirrors need the app provider configured on this server (SVC_APP_ID)");
    return { provider, url: raw, key: appOriginKey(raw), installation: input.origin_installation, username: null, password: null };
  }
  if (input.origin_installation !== undefined && input.origin_installation !== null) throw Invalid("origin_installation is only for app mirrors");
  let url: URL;
  try {
    url = parseEgressUrl(raw, "origin_url", { allowCredentials: true });
  } catch (e) {
    throw e instanceof EgressError ? Invalid(e.message) : e;
  }
  // Refuse now what every sync would refuse; a name that does not resolve yet may later.
  try {
    await resolveEgress(url, ctx.config.mirrorAllowPrivate);
  } catch (e) {
    if (e instanceof EgressError && !e.message.startsWith("cannot resolve")) throw Invalid(`origin_url: ${e.message}`);
  }
  const username = url.username ? decodeURIComponent(url.username) : null;
  const password = url.password ? decodeURIComponent(url.password) : null;
  url.username = "";
  url.password = "";
  url.hash = "";
  const shown = url.href;
  return { provider, url: shown, key: genericOriginKey(shown)!, installation: null, username: username ?? (password ? "" : null), password };
}
