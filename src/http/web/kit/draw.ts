// What every web route file shares: drawing a page for the resolved caller (refusals become HTML
// error pages with the API's status), and reading the path parameters the way pages name things.
import { NotFoundError } from "elysia";
import { NotFound } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { viewerOf } from "../../../services/web/views.ts";
import { RESERVED_NAMESPACES } from "../../../services/names.ts";
import { unreadCount } from "../../../services/notify/inbox.ts";
import { resolveCaller } from "../../principal.ts";
import { formToken } from "./csrf.ts";
import { errorPage, type Frame } from "./layout.ts";
import { movedPage } from "./moved.ts";

/** Route options of every page: kept out of the OpenAPI document (it describes the JSON API). */
export const HIDE = { detail: { hide: true } } as const;

/** A page body: given the caller and the frame, the response. */
export type PageBody = (actor: Principal, frame: Frame) => Promise<Response>;

/** Resolves the caller and draws a page; refusals become HTML error pages. */
export function pageDrawer(ctx: Ctx): (request: Request, body: PageBody) => Promise<Response> {
  return async (request, body) => {
    const actor = await resolveCaller(ctx, request);
    const viewer = viewerOf(actor);
    const frame: Frame = { viewer, csrf: formToken(request), unread: viewer ? await unreadOf(ctx, actor) : null };
    try {
      return await body(actor, frame);
    } catch (error) {
      return (await movedPage(ctx, actor, request, error)) ?? errorPage(ctx, frame, error);
    }
  };
}

/** The header bell's count (one grouped query, filtered by read access); null when it cannot be had. */
async function unreadOf(ctx: Ctx, actor: Principal): Promise<number | null> {
  try {
    return await unreadCount(ctx, actor);
  } catch {
    return null;
  }
}

/** Whether a first path segment belongs to the API or another fixed route rather than an org. */
export function isReservedSegment(segment: string): boolean {
  return RESERVED_NAMESPACES.has(segment.toLowerCase());
}

/** Refuses names that are not orgs (the API, fixed routes) exactly as an unrouted path. */
export function orgParam(org: string): string {
  if (isReservedSegment(org)) throw new NotFoundError();
  return org;
}

/** `widgets.git` (a clone URL pasted in a browser) shows the repository page. */
export function repoParam(repo: string): string {
  return repo.toLowerCase().endsWith(".git") ? repo.slice(0, -4) : repo;
}

/** The path segments after a wildcard route's fixed part, percent-decoded (the router leaves a wildcard encoded). */
export function restOf(wild: string | undefined): string[] {
  return (wild ?? "")
    .split("/")
    .filter((s) => s !== "")
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        throw NotFound("malformed percent-escape in the path");
      }
    });
}

/** The form a POST page route received (see `readForm`); an empty one for anything else. */
export function formOf(body: unknown): URLSearchParams {
  return body instanceof URLSearchParams ? body : new URLSearchParams();
}

/** A query parameter as a string (the last one when repeated), or undefined. */
export function queryParam(query: unknown, name: string): string | undefined {
  const v = (query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
}
