// What the explore and search pages show (issue 33), read through the services the API answers
// with: explore lists public repositories by recent activity; search finds repositories (the
// API's repository search, so the same visibility) and the issues of one repository (the API's
// issue list with `q=`, so the same read check). Code is not searched: nothing indexes it.
import { AppError, type ErrorCode, Invalid, NotFound } from "../../errors.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { exploreRepos, type ExploreList } from "../discovery/explore.ts";
import type { RepoHit } from "../discovery/schemas.ts";
import { COUNT_CAP, countRepos, MAX_QUERY, searchRepos } from "../discovery/search.ts";
import { listIssues } from "../issues/issues.ts";
import type { Issue } from "../issues/schemas.ts";
import { openRepoPage } from "./views.ts";

/** Repositories on one explore page. */
export const EXPLORE_PAGE = 30;
/** Results on one search page. */
export const SEARCH_PAGE = 20;
/** The longest `repo=` scope read (an org name is at most 39 characters, a repository name 100). */
const MAX_SCOPE = 141;

/** Refusals the search page shows beside the form rather than as an error page. */
const SAID_ON_PAGE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "invalid",
  "not_found",
  "unprocessable",
  "too_large",
  "rate_limited",
  "gone",
  "conflict",
  "payment_required",
]);

/** One page of explore. */
export async function exploreView(ctx: Ctx, actor: Principal, cursor: string | undefined): Promise<ExploreList> {
  return exploreRepos(ctx, actor, { limit: EXPLORE_PAGE, cursor });
}

/** What can be searched for. */
export const SEARCH_TYPES = ["repos", "issues", "code"] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** The search page's query, bounded before anything reads it. */
export interface SearchQuery {
  /** The words, trimmed; at most MAX_QUERY + 1 characters kept (so "too long" can still be said). */
  q: string;
  type: SearchType;
  /** `org/name` of the repository the search is scoped to, or "". */
  repo: string;
  cursor: string | undefined;
}

/** Reads the search page's query (unknown types fall back: issues when scoped to a repository, else repositories). */
export function searchQueryOf(get: (name: string) => string | undefined): SearchQuery {
  const q = [...(get("q") ?? "").slice(0, 4 * (MAX_QUERY + 1))]
    .slice(0, MAX_QUERY + 1)
    .join("")
    .trim();
  const repo = (get("repo") ?? "").trim().slice(0, MAX_SCOPE + 1);
  const type = get("type") ?? "";
  return {
    q,
    type: (SEARCH_TYPES as readonly string[]).includes(type) ? (type as SearchType) : repo ? "issues" : "repos",
    repo,
    cursor: get("cursor")?.slice(0, 1024) || undefined,
  };
}

/** A count as the page says it: exact, or "at least" at the cap. */
export interface Count {
  n: number;
  more: boolean;
}

/** The search page: the query, the counts per type (null: that type is not searched here), one page of the chosen type's results. */
export interface SearchView {
  query: SearchQuery;
  /** The repository of the scope as named by the viewer, resolved; null when unscoped. */
  scope: { org: string; name: string } | null;
  counts: { repos: Count | null; issues: Count | null };
  results:
    | { kind: "none" }
    | { kind: "repos"; hits: RepoHit[]; next: string | null }
    | { kind: "issues"; issues: Issue[]; next: string | null }
    | { kind: "code" };
  /** Why the query cannot be answered (too long, a bad cursor, an unknown repository), or null. */
  problem: { status: number; message: string } | null;
}

/** Splits `org/name`; null when it is not that shape. */
function scopeOf(repo: string): { org: string; name: string } | null {
  const m = /^([^/\s]{1,39})\/([^/\s]{1,100})$/.exec(repo);
  return m ? { org: m[1]!, name: m[2]! } : null;
}

/** The search page's data; a refusal of the query (not of the page) comes back as `problem`. */
export async function searchView(ctx: Ctx, actor: Principal, query: SearchQuery): Promise<SearchView> {
  const view: SearchView = { query, scope: null, counts: { repos: null, issues: null }, results: { kind: "none" }, problem: null };
  try {
    if (query.repo) {
      const s = scopeOf(query.repo);
      // Why the same words for a malformed, missing or hidden repository: the page must not tell them apart.
      const hidden = `no repository ${query.repo} that you can see`;
      if (!s) throw NotFound(hidden);
      try {
        const t = await openRepoPage(ctx, actor, s.org, s.name);
        view.scope = { org: t.org.name, name: t.repo.name };
      } catch (e) {
        if (e instanceof AppError && (e.code === "not_found" || e.code === "unauthenticated")) throw NotFound(hidden);
        throw e;
      }
    }
    if (!query.q) return view;
    if ([...query.q].length > MAX_QUERY) throw Invalid(`the search is longer than ${MAX_QUERY} characters`);
    const repos = await countRepos(ctx, actor, { q: query.q });
    view.counts.repos = { n: repos, more: repos >= COUNT_CAP };
    let issues: Awaited<ReturnType<typeof listIssues>> | null = null;
    if (view.scope) {
      const t = await openRepoPage(ctx, actor, view.scope.org, view.scope.name);
      const wanted = query.type === "issues";
      issues = await listIssues(ctx, t, {
        q: query.q,
        state: "all",
        sort: "created",
        direction: "desc",
        limit: String(wanted ? SEARCH_PAGE : 1),
        cursor: wanted ? query.cursor : undefined,
      });
      view.counts.issues = { n: issues.counts.open + issues.counts.closed, more: false };
    }
    if (query.type === "repos") {
      const r = await searchRepos(ctx, actor, { q: query.q, limit: SEARCH_PAGE, cursor: query.cursor });
      view.results = { kind: "repos", hits: r.hits, next: r.next_cursor };
    } else if (query.type === "issues") {
      view.results = issues ? { kind: "issues", issues: issues.issues, next: issues.next_cursor } : { kind: "none" };
    } else {
      view.results = { kind: "code" };
    }
  } catch (e) {
    // A query the person can fix (bad cursor, unknown repository, rate limit) is said on the page; anything else is the page's error.
    if (!(e instanceof AppError) || !SAID_ON_PAGE.has(e.code)) throw e;
    view.problem = { status: e.status, message: e.message };
  }
  return view;
}
