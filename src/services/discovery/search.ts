// Repository search (SPEC §2.2; DECISIONS §3 "ranked name match first"): GET
// /v1/search/repos?q=&limit=&cursor=. Answers only what the caller may read (the set form of the
// read decision, `readableScope` in access.ts), ranked in four tiers: the exact name, then names
// starting with the query, then names whose words start with every word of the query (`lib-<word>`),
// then repositories matched through their description (FTS5 word matches). The first two tiers are
// by folded name (then id); the word tiers are in the order repositories were made (FTS5 document
// order, so a common word never sorts all its matches). The cursor is the tier and the last hit's
// (folded name, id), or in a word tier its document id (as text) and id.
import { Invalid, Unauthorized } from "../../errors.ts";
import { callerFacts, readableScope } from "../access/access.ts";
import { personOf, type Principal } from "../access/principal.ts";
import type { Queryable } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import type { RepoHit, SearchResult } from "./schemas.ts";
import * as store from "./store.ts";

/** The longest query, in characters. */
export const MAX_QUERY = 200;
/** Words of a query used for the word tier. */
const MAX_WORDS = 8;

type Position = [tier: number, name: string, id: string];

function isPosition(k: unknown): k is Position {
  return Array.isArray(k) && k.length === 3 && [0, 1, 2, 3].includes(k[0] as number) && typeof k[1] === "string" && typeof k[2] === "string";
}

/** The FTS5 query of the word tier: every word (letters and digits) as a quoted prefix, all required; null when there is none. */
export function wordQuery(q: string): string | null {
  const words =
    q
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu)
      ?.slice(0, MAX_WORDS) ?? [];
  return words.length ? words.map((w) => `"${w}"*`).join(" AND ") : null;
}

function hitOf(r: store.HitRow): RepoHit {
  return { id: r.id, org_id: r.org_id, org: r.org, name: r.name, description: r.description, public: !!r.public, kind: r.kind, created_at: r.created_at };
}

/** GET /v1/search/repos. */
export async function searchRepos(ctx: Ctx, actor: Principal, q: { q?: string; limit?: unknown; cursor?: unknown }): Promise<SearchResult> {
  const text = (q.q ?? "").trim();
  if (!text) throw Invalid("q is required: the text to search for");
  if ([...text].length > MAX_QUERY) throw Invalid(`q is longer than ${MAX_QUERY} characters`);
  const page = parsePage(q, isPosition);
  const person = personOf(actor);
  const scope = readableScope(callerFacts(actor), person ? await store.memberOrgIds(ctx.db.read, person.id) : []);
  if (!scope) throw Unauthorized("a runner credential is good only for runner calls");
  const term = text.toLowerCase();
  const match = wordQuery(text);
  const want = page.limit + 1;
  const rows: (store.HitRow & { tier: number })[] = [];
  // Tiers `from` to `to` on `q`, until the page is full.
  const collect = async (q: Queryable, from: number, to: number) => {
    for (let tier = from; tier <= to && rows.length < want; tier++) {
      const after = page.after && page.after[0] === tier ? ([page.after[1], page.after[2]] as [string, string]) : null;
      const n = want - rows.length;
      if (tier >= 2) {
        if (after && !/^\d{1,15}$/.test(after[0])) throw Invalid("invalid cursor");
        const afterDoc = after ? Number(after[0]) : null;
        const batch = match ? await store.searchWords(q, match, tier === 2 ? "name" : "description", term, scope, afterDoc, n) : [];
        for (const r of batch) rows.push({ ...r, tier, sort: String(r.docid) });
        continue;
      }
      const batch = tier === 0 ? await store.searchExact(q, term, scope, after, n) : await store.searchPrefix(q, term, scope, after, n);
      for (const r of batch) rows.push({ ...r, tier });
    }
  };
  const first = page.after?.[0] ?? 0;
  await collect(ctx.db.read, first, 1);
  // The word tiers only when the name tiers left room, in a view where each is planned for its words.
  if (rows.length < want) await (match ? store.inWordView(ctx.db, (q) => collect(q, Math.max(first, 2), 3)) : collect(ctx.db.read, Math.max(first, 2), 3));
  const more = rows.length > page.limit;
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  return { hits: items.map(hitOf), next_cursor: more && last ? encodeCursor([last.tier, last.sort, last.id]) : null };
}

/** The most a search count reads; beyond it the page says "1,000+". */
export const COUNT_CAP = 1000;

/** How many repositories `searchRepos` would answer for `q` in all (at most COUNT_CAP), with the same visibility. */
export async function countRepos(ctx: Ctx, actor: Principal, q: { q?: string }): Promise<number> {
  const text = (q.q ?? "").trim();
  if (!text) throw Invalid("q is required: the text to search for");
  if ([...text].length > MAX_QUERY) throw Invalid(`q is longer than ${MAX_QUERY} characters`);
  const person = personOf(actor);
  const scope = readableScope(callerFacts(actor), person ? await store.memberOrgIds(ctx.db.read, person.id) : []);
  if (!scope) throw Unauthorized("a runner credential is good only for runner calls");
  return store.countSearchHits(ctx.db.read, text.toLowerCase(), wordQuery(text), scope, COUNT_CAP);
}
