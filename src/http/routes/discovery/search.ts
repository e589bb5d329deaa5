// Repository search (SPEC §2.2; DECISIONS §3).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { searchRepos } from "../../../services/discovery/search.ts";
import { SearchQuery, SearchResult } from "../../../services/discovery/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** Search routes. */
export function searchRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.search" }).get("/v1/search/repos", ({ request, query }) => searchRepos(ctx, callerOf(request), query), {
    query: SearchQuery,
    response: { 200: SearchResult, ...errors(400) },
    detail: { summary: "Search repositories you may see: exact name, then name prefix, then name and description words; paged" },
  });
}
