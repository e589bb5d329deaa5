// Naming rules shared by orgs, handles, repositories and addresses (DECISIONS §1): one place,
// below every domain, so people, orgs, repos and discovery check names the same way.
import { Invalid } from "../errors.ts";

export const RESERVED_NAMESPACES: ReadonlySet<string> = new Set([
  "v1",
  "api",
  "admin",
  "webhooks",
  "login",
  "logout",
  "signup",
  "settings",
  "new",
  "explore",
  "static",
  "assets",
  "ssh",
  "git",
  "runner",
  "runners",
  "svc",
  // The web pages mailed links open (a namespace of that name could never be reached at /{name}).
  "invite",
  "verify",
  "reset-password",
  "forgot-password",
  // The notification inbox and its mailed unsubscribe links (issue 28).
  "notifications",
  // Header search (issue 33; `explore` is above).
  "search",
  // People's pictures (issue 33).
  "avatars",
]);

const NAMESPACE_RE = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$/;
const REPO_RE = /^[A-Za-z0-9._-]{1,100}$/;

/** Whether a namespace (org or handle) name is well formed; case-insensitive. */
export function isNamespaceName(name: unknown): name is string {
  return typeof name === "string" && NAMESPACE_RE.test(name.toLowerCase()) && name.length <= 39;
}

/** Validates a namespace name for creation: 400 when malformed (reserved is the caller's 409). */
export function checkNamespaceName(name: unknown): string {
  if (!isNamespaceName(name)) {
    throw Invalid("invalid name: 1-39 characters of a-z, 0-9 and single hyphens, not starting or ending with a hyphen");
  }
  return name.toLowerCase();
}

/** Whether a repository name is well formed. */
export function isRepoName(name: unknown): name is string {
  return typeof name === "string" && REPO_RE.test(name) && name !== "." && name !== ".." && !name.toLowerCase().endsWith(".git");
}

/** Validates a repository name: 400 when malformed. */
export function checkRepoName(name: unknown): string {
  if (!isRepoName(name)) {
    throw Invalid("invalid repository name: 1-100 characters of A-Z, a-z, 0-9, '.', '-' and '_', not '.' or '..', not ending in .git");
  }
  return name;
}

const EMAIL_RE = /^[^\s@<>()[\]\\,;:"]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** Whether a string is a plausible email address. */
export function isEmail(s: unknown): s is string {
  return typeof s === "string" && s.length <= 254 && EMAIL_RE.test(s);
}
