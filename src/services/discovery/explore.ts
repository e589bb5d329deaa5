// Explore (issue 33): public repositories, most recently active first (`repos.active_at`, moved by
// every write that moves a ref: git/publish.ts), paged by a cursor of the last one's (active_at, id).
// Stars-free: activity is the only order. Private repositories are never listed, whoever asks.
import { Unauthorized } from "../../errors.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import type { RepoHit } from "./schemas.ts";
import * as store from "./store.ts";

/** A repository on the explore page. */
export type ExploreRepo = RepoHit & { active_at: number };

/** One page of explore. */
export interface ExploreList {
  repos: ExploreRepo[];
  next_cursor: string | null;
}

function isPosition(k: unknown): k is [number, string] {
  return Array.isArray(k) && k.length === 2 && Number.isSafeInteger(k[0]) && typeof k[1] === "string" && k[1].length <= 64;
}

/** Public repositories by recent activity, a page at a time (the same list for every caller). */
export async function exploreRepos(ctx: Ctx, actor: Principal, q: { limit?: unknown; cursor?: unknown }): Promise<ExploreList> {
  if (actor.kind === "runner" || actor.kind === "runner-registration") throw Unauthorized("a runner credential is good only for runner calls");
  const page = parsePage(q, isPosition);
  const rows = await store.publicByActivity(ctx.db.read, page.after, page.limit + 1);
  const more = rows.length > page.limit;
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  return {
    repos: items.map((r) => ({
      id: r.id,
      org_id: r.org_id,
      org: r.org,
      name: r.name,
      description: r.description,
      public: !!r.public,
      kind: r.kind,
      created_at: Number(r.created_at),
      active_at: Number(r.active_at),
    })),
    next_cursor: more && last ? encodeCursor([Number(last.active_at), last.id]) : null,
  };
}
