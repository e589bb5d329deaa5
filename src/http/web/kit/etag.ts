// Validators for pages whose content cannot change: a tree, file or commit addressed by a full
// commit id. The page still carries who is looking (the header, the sign-out form's token), so
// the tag covers the viewer, the session's form token, the asset versions and this process's
// boot (a new release may draw the same content differently). Cache-Control stays
// `private, no-cache`: every view revalidates, so a revoked reader is refused at once, and a 304
// costs the access check but no drawing.
import { createHash, randomUUID } from "node:crypto";
import { SCRIPT, STYLE } from "./assets.ts";
import { pageHeaders, type Frame } from "./layout.ts";

const BOOT = randomUUID();

/** Whether a ref segment is a full commit id (immutable), not a branch, tag or abbreviation. */
export function isFullSha(ref: string): boolean {
  return /^[0-9a-f]{40}$/.test(ref);
}

/** A page's validator, its headers and the 304 answer to send when it matches. */
export interface PageTag {
  etag: string;
  headers: Record<string, string>;
  notModified: Response;
}

/** The validator of an immutable page: `content` names what it shows (kind, repository, commit, path). */
export function immutablePage(frame: Frame, content: string[]): PageTag {
  const h = createHash("sha256");
  for (const part of [...content, frame.viewer?.id ?? "-", frame.csrf ?? "-", STYLE.url, SCRIPT.url, BOOT]) h.update(part).update("\0");
  const etag = `W/"${h.digest("base64url").slice(0, 27)}"`;
  const headers = { etag };
  return { etag, headers, notModified: new Response(null, { status: 304, headers: pageHeaders(headers) }) };
}

/** Whether the request's If-None-Match names this tag (weak comparison, as RFC 9110 asks for GET). */
export function notModified(request: Request, tag: PageTag): boolean {
  const sent = request.headers.get("if-none-match");
  if (!sent) return false;
  const want = tag.etag.replace(/^W\//, "");
  return sent.split(",").some((t) => t.trim() === "*" || t.trim().replace(/^W\//, "") === want);
}
