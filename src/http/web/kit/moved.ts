// Rename redirects of the pages (issue 33): a page at a repository's old name, `/{org}/{old}` and
// every path below it, answers 301 to the same path at the current name; a form posted there (a
// page opened before the rename) answers 308, which a browser follows by posting the same form
// to the new address. Asked only once a page or form was refused as missing (404, or 401 for an
// anonymous caller), so one that resolves costs nothing, and only when the caller may see the
// repository: otherwise the refusal stands, the same answer as for a repository that never existed.
import { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { movedRepo } from "../../../services/repos/repos.ts";
import { pathOf } from "../../path.ts";
import { RESERVED_NAMESPACES } from "../../../services/names.ts";
import { seg } from "./html.ts";

/** The 301 (a page) or 308 (a posted form) to the repository's current address for a request refused as missing at an old name, or null. */
export async function movedPage(ctx: Ctx, actor: Principal, request: Request, error: unknown): Promise<Response | null> {
  if (!(error instanceof AppError) || (error.code !== "not_found" && error.code !== "unauthenticated")) return null;
  if (request.method !== "GET" && request.method !== "HEAD" && request.method !== "POST") return null;
  const path = pathOf(request.url);
  const m = /^\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
  if (!m || RESERVED_NAMESPACES.has(m[1]!.toLowerCase())) return null;
  let org: string;
  let name: string;
  try {
    org = decodeURIComponent(m[1]!);
    name = decodeURIComponent(m[2]!);
  } catch {
    return null;
  }
  // `/{org}/{old}.git` (a clone URL pasted in a browser) is the repository page too.
  if (name.toLowerCase().endsWith(".git")) name = name.slice(0, -4);
  const moved = await movedRepo(ctx, actor, org, name);
  if (!moved) return null;
  const search = new URL(request.url).search;
  // Why no-store: the answer depends on the caller (a private repository) and ends when a
  // repository takes the name again; a browser must not keep it as a permanent redirect would be.
  return new Response(null, {
    // Why 308 for a form: a 301 turns a POST into a GET of the action's address; 308 keeps the
    // method and the body, so the form (its CSRF token tied to the session, not the address) acts.
    status: request.method === "POST" ? 308 : 301,
    headers: { location: `/${seg(moved.org)}/${seg(moved.name)}${m[3] ?? ""}${search}`, "cache-control": "no-store" },
  });
}
